// An in-process SDK MCP server with one read-only tool, `get_weather`, linked to a client over the
// SDK's InMemoryTransport: the upstream the MCP benchmarks measure against (no pipes or sockets).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

export const weatherArgs = { city: 'Paris', unit: 'celsius' };

/** The server, and the client end of its transport (not yet connected). */
export async function weatherServer() {
  const server = new McpServer({ name: 'weather', version: '1.0.0' });
  server.registerTool(
    'get_weather',
    { description: 'Current weather', inputSchema: { city: z.string(), unit: z.enum(['celsius', 'fahrenheit']) }, annotations: { readOnlyHint: true } },
    async ({ city }) => ({ content: [{ type: 'text', text: JSON.stringify({ city, temperature: 18, condition: 'cloudy' }) }] }),
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  return { server, clientSide };
}

export async function connectedClient(transport) {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return client;
}
