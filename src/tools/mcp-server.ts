/**
 * The mock tool catalog as an MCP server (an SDK Server; connect it to any transport). Tools are
 * listed with their schemas and annotations; a call runs the tool on the catalog's state. A tool's
 * failure goes out the way the MCP fault proxy sends an injected HTTP failure (see
 * faults/mcp-proxy/fault-answers.ts), from the status the HTTP server would answer with
 * (http-error-response.ts): an `isError` result with `{ status, message, retry_after?, body }`,
 * or a JSON-RPC error with `{ status, body }` for 400 and 5xx. A client reading one convention
 * reads both, and the same tool fails the same way over HTTP and over MCP.
 *
 * `_meta` of a tools/call may carry `faultline/idempotency_key` (the key of the logical call, the
 * same on every retry, as the HTTP server's Idempotency-Key header), `faultline/trace_id`, and
 * `faultline/dry_run` (run it dry: answer, change nothing; faults/dry-run.ts).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { DRY_RUN_META } from '../faults/dry-run.js';
import { respondAnswer } from '../faults/mcp-proxy/fault-answers.js';
import { JsonRpcError } from '../faults/mcp-proxy/rpc-error.js';
import type { Clock } from '../core/clock.js';
import type { Tool, ToolContext } from '../runtime/define-tool.js';
import { describeIssues, failureTypeOf } from '../runtime/validate.js';
import { anchoredClock } from './anchored-clock.js';
import type { ToolCatalog } from './catalog.js';
import { errorReply, invalidArgumentsReply, type HttpReply } from './http-error-response.js';

export const IDEMPOTENCY_KEY_META = 'faultline/idempotency_key';
export const TRACE_ID_META = 'faultline/trace_id';

export interface MockToolWorld {
  catalog: ToolCatalog;
  clock: Clock;
}

export interface MockToolMcpServerOptions {
  /** The tools listed, and the catalog calls run on unless `worldOf` sends them elsewhere. */
  catalog: ToolCatalog;
  /** The tools' clock. Default: starts at the catalog's anchor and runs in real time. */
  clock?: Clock;
  /**
   * Picks the world (catalog state and clock) a call runs in from its `_meta`, so that one server
   * serves many isolated worlds at once; undefined: the call fails with -32602. Without it every
   * call runs on `catalog`.
   */
  worldOf?: (meta: Record<string, unknown> | undefined) => MockToolWorld | undefined;
  /** serverInfo. Default `faultline-mock-tools`. */
  name?: string;
}

function listed(tool: Tool): McpTool {
  const out: McpTool = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema as McpTool['inputSchema'] };
  // MCP output schemas describe structuredContent, which is always an object.
  if (tool.outputSchema !== undefined && (tool.outputSchema as { type?: unknown }).type === 'object') out.outputSchema = tool.outputSchema as McpTool['outputSchema'];
  if (tool.annotations !== undefined) out.annotations = { ...tool.annotations };
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A successful output: JSON text always, and the same object as structuredContent when it is one. */
function resultOf(output: unknown): CallToolResult {
  const text = JSON.stringify(output ?? null);
  return isPlainObject(output) ? { content: [{ type: 'text', text }], structuredContent: output } : { content: [{ type: 'text', text }] };
}

/** A failure in the MCP form of its HTTP reply: thrown as a JSON-RPC error, or returned as an `isError` result. */
function failureOf(reply: HttpReply, hasOutputSchema: boolean): CallToolResult {
  const detail = isPlainObject(reply.body) && isPlainObject(reply.body['error']) ? reply.body['error'] : undefined;
  const message = typeof detail?.['message'] === 'string' ? detail['message'] : `HTTP ${reply.status}`;
  const answer = respondAnswer({ type: 'respond', status: reply.status, headers: reply.headers, body: reply.body, message }, hasOutputSchema);
  if (answer.form === 'error') throw answer.error;
  return answer.served;
}

function metaString(meta: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = meta?.[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * An MCP server over a catalog's tools.
 * @example
 * const [a, b] = InMemoryTransport.createLinkedPair();
 * await createMockToolMcpServer({ catalog: createToolCatalog({ seed: 1 }) }).connect(a);
 */
export function createMockToolMcpServer(options: MockToolMcpServerOptions): Server {
  const own: MockToolWorld = { catalog: options.catalog, clock: options.clock ?? anchoredClock(Date.parse(options.catalog.state.anchor)) };
  const listing = options.catalog.tools.map(listed);
  const worlds = new WeakMap<ToolCatalog, Map<string, Tool>>();
  const toolsOf = (catalog: ToolCatalog) => {
    let tools = worlds.get(catalog);
    if (tools === undefined) worlds.set(catalog, (tools = new Map(catalog.tools.map((t) => [t.name, t]))));
    return tools;
  };
  const server = new Server({ name: options.name ?? 'faultline-mock-tools', version: '1.0.0' }, { capabilities: { tools: {} } });
  let calls = 0;

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const n = ++calls;
    const meta = request.params._meta as Record<string, unknown> | undefined;
    const world = options.worldOf === undefined ? own : options.worldOf(meta);
    if (world === undefined) throw new JsonRpcError(ErrorCode.InvalidParams, 'the call names no world this server serves');
    const { clock } = world;
    const tool = toolsOf(world.catalog).get(request.params.name);
    if (tool === undefined) throw new JsonRpcError(ErrorCode.InvalidParams, `there is no tool named "${request.params.name}"`);
    const hasOutputSchema = listed(tool).outputSchema !== undefined;
    const validated = tool.validateInput(request.params.arguments ?? {});
    if (!validated.ok) return failureOf(invalidArgumentsReply(tool.name, failureTypeOf(validated.issues), describeIssues(validated.issues), validated.issues), hasOutputSchema);
    const ctx: ToolContext = {
      signal: extra.signal,
      attempt: 0,
      // Without a key every call gets its own: nothing is deduplicated unless the client asks.
      idempotencyKey: metaString(meta, IDEMPOTENCY_KEY_META) ?? `mcp-request-${n}`,
      traceId: metaString(meta, TRACE_ID_META) ?? `mcp-${n}`,
      toolName: tool.name,
      clock,
      ...(meta?.[DRY_RUN_META] === true ? { dryRun: true } : {}),
    };
    try {
      return resultOf(await tool.execute(validated.value, ctx));
    } catch (error) {
      return failureOf(errorReply(error, clock.now()), hasOutputSchema);
    }
  });
  return server;
}
