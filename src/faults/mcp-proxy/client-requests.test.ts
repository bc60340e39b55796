/**
 * Requests the server sends its client (sampling/createMessage, elicitation/create, roots/list)
 * go through the proxy to the real client and its answer goes back, as on a direct connection:
 * server-everything's sampling and elicitation tools, and server-filesystem started without
 * directories, which takes its allowed directories from the client's roots. A client that did not
 * declare a capability gets what it gets straight (capabilities.test.ts compares more).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ElicitationCompleteNotificationSchema,
  ListRootsRequestSchema,
  type CallToolResult,
  type CreateMessageRequest,
  type ElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { pathToFileURL } from 'node:url';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMcpOverHttp } from './http-downstream.js';
import { EVERYTHING_SERVER, everythingUpstream, FILESYSTEM_SERVER, startTestProxy, tempDir, type TestProxy } from './mcp-proxy.test-helpers.js';
import type { McpProxy } from './proxy.js';


async function connect(client: Client, proxy: McpProxy): Promise<Client> {
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await proxy.connect(serverSide);
  await client.connect(clientSide);
  return client;
}

function textOf(result: unknown): string {
  return ((result as CallToolResult).content as Array<{ type: string; text?: string }>).map((block) => block.text ?? '').join('\n');
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('server-to-client requests through the proxy (server-everything)', () => {
  let t: TestProxy;
  let agent: Client;
  const sampled: CreateMessageRequest[] = [];
  const elicited: ElicitRequest[] = [];

  beforeAll(async () => {
    t = await startTestProxy(everythingUpstream(), { version: 1, rules: [] });
    agent = new Client({ name: 'capable-agent', version: '2.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
    agent.setRequestHandler(CreateMessageRequestSchema, (request) => {
      sampled.push(request);
      return { model: 'test-model-7', role: 'assistant', content: { type: 'text', text: 'sampled by the real client' }, stopReason: 'endTurn' };
    });
    agent.setRequestHandler(ElicitRequestSchema, (request) => {
      elicited.push(request);
      if (request.params.mode === 'url') return { action: 'accept' };
      return { action: 'accept', content: { name: 'Ada', check: true, email: 'ada@example.com' } };
    });
    agent.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///srv/project-alpha', name: 'alpha' }] }));
    await connect(agent, t.proxy);
  });
  afterAll(async () => {
    await agent?.close();
    await t?.close();
  });

  it("lists the server's sampling, elicitation and roots tools, which it offers only to a client that can answer them", async () => {
    const names = (await agent.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['trigger-sampling-request', 'trigger-elicitation-request', 'trigger-url-elicitation', 'get-roots-list']));
  });

  it("relays sampling/createMessage to the client that made the call and the client's answer back", async () => {
    const result = await agent.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } });
    expect(sampled).toHaveLength(1);
    expect(sampled[0]!.params).toMatchObject({ maxTokens: 20, systemPrompt: 'You are a helpful test server.', messages: [{ role: 'user', content: { type: 'text', text: expect.stringContaining('say hi') } }] });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toContain('sampled by the real client');
    expect(textOf(result)).toContain('test-model-7');
    const records = await t.records();
    expect(records.at(-1)).toMatchObject({ tool_name: 'trigger-sampling-request', status: 'success' });
  });

  it('relays a form elicitation/create and the answer back', async () => {
    const result = await agent.callTool({ name: 'trigger-elicitation-request', arguments: {} });
    // As the server sent it: server-everything leaves `mode` out of a form request.
    expect(elicited.at(-1)!.params).toMatchObject({ requestedSchema: { type: 'object' } });
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toContain('User provided the requested information');
    expect(textOf(result)).toContain('Ada');
  });

  it('relays a URL elicitation to a client that offers URL mode', async () => {
    const result = await agent.callTool({ name: 'trigger-url-elicitation', arguments: { url: 'https://example.com/authorize' } });
    expect(elicited.at(-1)!.params).toMatchObject({ mode: 'url', url: 'https://example.com/authorize' });
    expect(textOf(result)).toContain('User completed the URL elicitation flow');
  });

  it("answers roots/list with the client's roots, which the server asks for once the client is initialized", async () => {
    const text = await until(async () => {
      const listed = textOf(await agent.callTool({ name: 'get-roots-list', arguments: {} }));
      return listed.includes('file:///srv/project-alpha') ? listed : undefined;
    }, "the client's roots in get-roots-list");
    expect(text).toContain('1. alpha');
  });

  it('offers a client without sampling or URL elicitation what the server offers it straight, and answers its calls as straight', async () => {
    for (const capabilities of [{}, { elicitation: { form: {} } }]) {
      const proxied = await connect(new Client({ name: 'plain-agent', version: '1.0.0' }, { capabilities }), t.proxy);
      const direct = new Client({ name: 'plain-agent', version: '1.0.0' }, { capabilities });
      await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' }));
      try {
        const before = sampled.length;
        const tools = (await proxied.listTools()).tools.map((tool) => tool.name);
        expect(tools).toEqual((await direct.listTools()).tools.map((tool) => tool.name));
        expect(tools).not.toContain('trigger-url-elicitation');
        for (const name of ['trigger-sampling-request', 'trigger-url-elicitation']) {
          const call = { name, arguments: { prompt: 'say hi', url: 'https://example.com/authorize' } };
          expect(await proxied.callTool(call).catch((e: unknown) => String(e))).toEqual(await direct.callTool(call).catch((e: unknown) => String(e)));
        }
        // The capable client of the other session was not asked.
        expect(sampled).toHaveLength(before);
      } finally {
        await proxied.close();
        await direct.close();
      }
    }
  });
});

describe('server-to-client requests to a client of the proxy over Streamable HTTP', () => {
  it('relays sampling on the stream of the call that caused it, and the answer back', async () => {
    const t = await startTestProxy(everythingUpstream(), { version: 1, rules: [] });
    const endpoint = await serveMcpOverHttp(t.proxy);
    const agent = new Client({ name: 'http-agent', version: '1.0.0' }, { capabilities: { sampling: {} } });
    agent.setRequestHandler(CreateMessageRequestSchema, () => ({ model: 'http-model', role: 'assistant', content: { type: 'text', text: 'over http' } }));
    try {
      await agent.connect(new StreamableHTTPClientTransport(new URL(endpoint.url)));
      const result = await agent.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hello' } });
      expect(result.isError).toBeUndefined();
      expect(textOf(result)).toContain('over http');
    } finally {
      await agent.close();
      await endpoint.close();
      await t.close();
    }
  });
});

describe('notifications/elicitation/complete', () => {
  it('reaches a client that offers URL elicitation; one that does not gets what it gets straight', async () => {
    // A server per connection, as a stdio command would start one for each client.
    const oauthBroker = () => {
      const server = new McpServer({ name: 'oauth-broker', version: '1.0.0' });
      server.registerTool('finish_login', { description: 'tells the client a URL elicitation is done' }, async () => {
        await server.server.createElicitationCompletionNotifier('login-42')();
        return { content: [{ type: 'text', text: 'done' }] };
      });
      return server;
    };
    const linked = () => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      void oauthBroker().connect(serverSide);
      return clientSide;
    };
    const t = await startTestProxy({ transport: linked }, { version: 1, rules: [] });
    const urlClient = new Client({ name: 'browser-capable', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    const completed = new Promise<string>((resolve) => urlClient.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => resolve(n.params.elicitationId)));
    const formClient = new Client({ name: 'forms-only', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    const formDirect = new Client({ name: 'forms-only', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    try {
      await connect(urlClient, t.proxy);
      await connect(formClient, t.proxy);
      await formDirect.connect(linked());
      expect(textOf(await urlClient.callTool({ name: 'finish_login', arguments: {} }))).toBe('done');
      expect(await completed).toBe('login-42');
      const call = { name: 'finish_login', arguments: {} };
      expect(await formClient.callTool(call)).toEqual(await formDirect.callTool(call));
    } finally {
      await urlClient.close();
      await formClient.close();
      await formDirect.close();
      await t.close();
    }
  });
});

describe('roots through the proxy (server-filesystem started without directories)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let t: TestProxy;
  let agent: Client;

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-roots-');
    await writeFile(join(dir.path, 'hello.txt'), 'from the root the client gave\n');
    // No directory argument: the server serves only what the client's roots allow.
    t = await startTestProxy({ command: process.execPath, args: [FILESYSTEM_SERVER], stderr: 'ignore' }, { version: 1, rules: [] });
    agent = new Client({ name: 'ide', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    agent.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(dir.path).href, name: 'workspace' }] }));
    await connect(agent, t.proxy);
  });
  afterAll(async () => {
    await agent?.close();
    await t?.close();
    await dir?.remove();
  });

  it("serves the directory the client's roots name, as it does for that client straight", async () => {
    const allowed = await until(async () => {
      const text = textOf(await agent.callTool({ name: 'list_allowed_directories', arguments: {} }));
      return text.includes(dir.path) ? text : undefined;
    }, "the client's root among the allowed directories");
    expect(allowed).toContain(dir.path);
    const read = await agent.callTool({ name: 'read_text_file', arguments: { path: join(dir.path, 'hello.txt') } });
    expect(textOf(read)).toBe('from the root the client gave\n');
  });
});
