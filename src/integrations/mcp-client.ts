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
 * - A protocol error can come back as an `isError` result (the TypeScript SDK's `McpServer` sends
 *   `MCP error <code>: <message>` as its text); the runtime classifies it by that code, as the
 *   JSON-RPC error it was, not as a failure the tool reported.
 * - The protocol answers both an unknown tool and invalid arguments with -32602, so on -32602 the
 *   server's tool list is read again: a tool it no longer lists (removed or disabled since it was
 *   listed) is `request_build` / `unknown_tool`; otherwise the arguments were rejected, which is
 *   `param_validation` / `schema_mismatch` (the server checks more than its JSON Schema says).
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
import { ErrorCode, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { mcpErrorCodeOf } from '../runtime/classify.js';
import { defineTool, type JsonSchema, type Tool, type ToolAnnotations, type ToolSpec } from '../runtime/define-tool.js';
import { ToolError } from '../runtime/tool-errors.js';

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
async function listAll(client: Client, signal?: AbortSignal): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, signal === undefined ? undefined : { signal });
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
      execute: async (args, ctx) => {
        let result: Awaited<ReturnType<Client['callTool']>>;
        try {
          result = await client.callTool({ name: tool.name, arguments: args }, undefined, { signal: ctx.signal, timeout: options.requestTimeoutMs ?? deadlineMs + 1000 });
        } catch (error) {
          const code = (error as { code?: unknown } | null)?.code;
          if (code === ErrorCode.InvalidParams && (await noLongerListed(client, tool.name, ctx.signal))) throw unknownTool(tool.name, error instanceof Error ? error.message : String(error), error);
          throw error;
        }
        // Any other protocol error in the result is classified by its code by the runtime.
        if (mcpErrorCodeOf(result) === ErrorCode.InvalidParams && (await noLongerListed(client, tool.name, ctx.signal))) throw unknownTool(tool.name, firstText(result) ?? 'invalid params', result);
        return result;
      },
    });
    deadlineMs = defined.timeoutMs;
    return defined;
  });
}

/**
 * Whether a -32602 was about the tool rather than its arguments: the server no longer lists it
 * (removed or disabled since it was listed). A list that cannot be read says no.
 */
async function noLongerListed(client: Client, name: string, signal: AbortSignal): Promise<boolean> {
  const listed = await listAll(client, signal).catch(() => undefined);
  return listed !== undefined && !listed.some((t) => t.name === name);
}

function unknownTool(name: string, message: string, cause: unknown): ToolError {
  return new ToolError('parameter', 'unknown_tool', `the MCP server no longer lists a tool "${name}" (${message})`, { stage: 'request_build', code: `MCP_${ErrorCode.InvalidParams}`, cause });
}

/** The text of a CallToolResult's first content part, if it is text. */
function firstText(result: unknown): string | undefined {
  const part = (result as { content?: { type?: unknown; text?: unknown }[] } | undefined)?.content?.[0];
  return part?.type === 'text' && typeof part.text === 'string' ? part.text : undefined;
}

/** The annotations without their undefined members. */
function definedOnly(annotations: NonNullable<McpTool['annotations']>): ToolAnnotations {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(annotations)) if (value !== undefined) out[key] = value;
  return out as ToolAnnotations;
}
