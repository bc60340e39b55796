/**
 * An MCP server's tools as faultline tools: list them once from a connected SDK `Client`, and run
 * every `tools/call` through a runtime (validation against the server's input schema, timeouts,
 * classified retries, a breaker, feedback, a record).
 *
 * - Idempotency comes from the server's annotations: `readOnlyHint` or `idempotentHint` make a
 *   tool idempotent; a tool with neither is not, as everywhere in faultline.
 * - The result is the server's `CallToolResult` as it came. An `isError: true` result is a
 *   classified failure (its structured content's HTTP status when it has one, otherwise a
 *   business error the tool reported); a JSON-RPC error (the SDK's McpError) is classified by its
 *   code (-32602 invalid params, -32001 request timeout, -32000 connection closed, ...).
 * - The runtime's deadline cancels the request on the wire (the SDK sends
 *   `notifications/cancelled`), so a timed-out call does not keep running on the server.
 *
 * @example
 * const client = new Client({ name: 'my-agent', version: '1.0.0' });
 * await client.connect(new StdioClientTransport({ command: 'npx', args: ['@modelcontextprotocol/server-memory'] }));
 * const rt = createRuntime({ tools: await mcpClientTools(client, { prefix: 'memory_' }), store: 'sqlite:.faultline/faultline.db' });
 * const r = await rt.execute('memory_read_graph', {});
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { defineTool, type JsonSchema, type Tool, type ToolAnnotations, type ToolSpec } from '../runtime/define-tool.js';

/** Per-tool faultline settings the server cannot declare. */
export type McpToolSettings = Partial<Pick<ToolSpec<unknown, unknown>, 'idempotent' | 'idempotencyKey' | 'timeoutMs' | 'retry' | 'breaker' | 'fallback' | 'feedback'>>;

export interface McpClientToolsOptions {
  /** Only these server tools (by the server's names). */
  only?: readonly string[];
  /** Prepended to every name, to keep several servers' tools apart in one runtime. */
  prefix?: string;
  /** Per server tool name. */
  settings?: Record<string, McpToolSettings>;
  /**
   * The SDK's own request timeout, as a backstop behind the runtime's deadline (default: the
   * tool's `timeoutMs` plus one second, so the runtime's classification is the one that speaks).
   */
  requestTimeoutMs?: number;
}

/** Every tool the server lists, following pagination. */
async function listAll(client: Client): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** faultline tools for a connected MCP client's server. */
export async function mcpClientTools(client: Client, options: McpClientToolsOptions = {}): Promise<Tool[]> {
  const listed = await listAll(client);
  const byName = new Map(listed.map((t) => [t.name, t]));
  for (const name of [...(options.only ?? []), ...Object.keys(options.settings ?? {})]) {
    if (!byName.has(name)) throw new RangeError(`the MCP server has no tool "${name}" (it lists: ${[...byName.keys()].join(', ')})`);
  }
  const wanted = options.only === undefined ? listed : options.only.map((name) => byName.get(name)!);
  const prefix = options.prefix ?? '';
  return wanted.map((tool) => {
    let deadlineMs = 0;
    const defined = defineTool<Record<string, unknown>, unknown>({
      name: `${prefix}${tool.name}`,
      description: tool.description ?? tool.title ?? tool.name,
      input: tool.inputSchema as JsonSchema,
      // readOnlyHint / idempotentHint declare idempotency (defineTool reads them).
      ...(tool.annotations !== undefined ? { annotations: definedOnly(tool.annotations) } : {}),
      ...options.settings?.[tool.name],
      execute: (args, ctx) =>
        client.callTool({ name: tool.name, arguments: args }, undefined, { signal: ctx.signal, timeout: options.requestTimeoutMs ?? deadlineMs + 1000 }),
    });
    deadlineMs = defined.timeoutMs;
    return defined;
  });
}

/** The annotations without their undefined members. */
function definedOnly(annotations: NonNullable<McpTool['annotations']>): ToolAnnotations {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(annotations)) if (value !== undefined) out[key] = value;
  return out as ToolAnnotations;
}
