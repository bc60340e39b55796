/**
 * `--transport mcp`: each tool call is a `tools/call` from an SDK Client over Streamable HTTP (a
 * real loopback socket) to the MCP fault proxy, which applies the scenario's fault plan and
 * records the call, in front of an MCP server over the mock tool catalog (tools/mcp-server.ts,
 * linked to the proxy in memory). One such stack serves every run of a suite: each call names its
 * run in `_meta`, and the proxy (its `route` option) and the tool server (`worldOf`) pick the
 * run's plan, clock, trace and world. The records keep the call's idempotency key from `_meta`,
 * as the HTTP proxy's keep the Idempotency-Key header: the fault ledger matches them by it. Proxy
 * and tools run on the run's virtual clock through the run's gate.
 *
 * The client reads answers by the convention the proxy and the mock server share (an `isError`
 * result or a JSON-RPC error carrying the HTTP status and body, the errno of a dropped
 * connection, -32001 for a timeout) and throws what the in-process transport throws, so the
 * agent and the runtime see the same failure over every transport. tools/call goes through
 * `client.request` rather than `callTool`, so that the SDK does not check results against the
 * output schema itself: drifted outputs reach the runtime's own validation, as in process.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { ConfigError } from '../../core/errors.js';
import { serveMcpOverHttp } from '../../faults/mcp-proxy/http-downstream.js';
import { startMcpProxy } from '../../faults/mcp-proxy/proxy.js';
import type { CallSession } from '../../faults/mcp-proxy/tool-call.js';
import { createFaultPlan } from '../../faults/plan.js';
import type { Tool, ToolContext } from '../../runtime/define-tool.js';
import { createToolCatalog } from '../../tools/catalog.js';
import { createMockToolMcpServer, IDEMPOTENCY_KEY_META, TRACE_ID_META, type MockToolWorld } from '../../tools/mcp-server.js';
import { createFaultLedger, type FaultLedger } from './fault-ledger.js';
import { createIoGate, type IoGate } from './io-gate.js';
import { exchange, wireOf, type WireHost, type WireOptions } from './wire.js';
import { dropError, failureError, timeoutError } from './wire-failure.js';

/** The `_meta` key naming the run a call belongs to. */
export const RUN_META = 'faultline/run';

/** The SDK's own request timeout, in real time: far beyond any call, which the run's virtual timeouts end first. */
const REQUEST_TIMEOUT_MS = 120_000;

type Obj = Record<string, unknown>;
const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function texts(result: CallToolResult): string[] {
  return result.content.filter((block) => block.type === 'text').map((block) => (block as { text: string }).text);
}

/** The output of a successful result: structuredContent, else the JSON of its text, else the text (a body that does not parse), else the content. */
function outputOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = texts(result);
  if (text.length === 1 && result.content.length === 1) {
    const json = parseJson(text[0]!);
    return json.ok ? json.value : text[0];
  }
  return result.content;
}

/** An `isError` result's details: structuredContent, or the JSON on the last line of its text (tools with an output schema). */
function errorDetails(result: CallToolResult): Obj | undefined {
  const structured = asObject(result.structuredContent);
  if (structured !== undefined) return structured;
  const lines = texts(result).join('\n').split('\n');
  const last = lines[lines.length - 1];
  const json = last === undefined ? undefined : parseJson(last);
  return json?.ok === true ? asObject(json.value) : undefined;
}

function headersOf(details: Obj): Record<string, string> {
  const headers: Record<string, string> = {};
  const retryAfter = details['retry_after'];
  if (typeof retryAfter === 'number' || typeof retryAfter === 'string') headers['retry-after'] = String(retryAfter);
  if (typeof details['www_authenticate'] === 'string') headers['www-authenticate'] = details['www_authenticate'];
  return headers;
}

function outcomeOf(result: CallToolResult, nowMs: number): unknown {
  if (result.isError !== true) return outputOf(result);
  const details = errorDetails(result);
  const status = details?.['status'];
  // An error result without a status is a tool's own report: the runtime classifies the result itself.
  if (details === undefined || typeof status !== 'number') return result;
  throw failureError({ status, headers: headersOf(details), body: details['body'] }, nowMs);
}

/** What a client throws for a JSON-RPC error: the HTTP failure or dropped connection it stands for, a timeout, or the error as it came. */
function rpcFailure(error: unknown, nowMs: number): unknown {
  if (!(error instanceof McpError)) return error;
  const data = asObject(error.data);
  if (typeof data?.['status'] === 'number') return failureError({ status: data['status'], headers: {}, body: data['body'] }, nowMs);
  if (error.code === ErrorCode.ConnectionClosed) return dropError(data?.['code']) ?? error;
  if (error.code === ErrorCode.RequestTimeout) return timeoutError();
  return error;
}

interface McpRun {
  world: MockToolWorld;
  gate: IoGate;
  ledger: FaultLedger;
  /** The run's session for one call, whose records keep the call's idempotency key (see fault-ledger.ts). */
  session(idempotencyKey: unknown): CallSession;
  options: WireOptions;
}

interface SharedStack {
  client: Client;
  close(): Promise<void>;
}

/**
 * The mcp transport's host: one MCP stack for every run of a suite (the session handshake is
 * what costs, tens of milliseconds a run), with each call routed to its run by `_meta`: the proxy
 * takes the run's plan, clock and trace (its `route` option), the tool server the run's world.
 * Started on the first run, closed by {@link WireHost.close}.
 */
export interface McpHostOptions {
  /**
   * How the client reaches the proxy: `http` (the default), Streamable HTTP on a loopback port,
   * as any MCP client would; `memory`, a linked in-process transport (no socket; the proxy and
   * the tool server are the same), for runs where the SDK's HTTP handling would dominate.
   */
  link?: 'http' | 'memory';
}

export function createMcpHost(hostOptions: McpHostOptions = {}): WireHost {
  const runs = new Map<string, McpRun>();
  const byTrace = new Map<string, McpRun>();
  let stack: Promise<SharedStack> | undefined;

  const runOf = (meta: unknown): McpRun | undefined => {
    const key = asObject(meta)?.[RUN_META];
    return typeof key === 'string' ? runs.get(key) : undefined;
  };

  async function start(): Promise<SharedStack> {
    const [upstreamEnd, toolsEnd] = InMemoryTransport.createLinkedPair();
    // Lists every catalog tool; each call runs in its own run's world.
    const tools = createMockToolMcpServer({ catalog: createToolCatalog({ seed: 1 }), worldOf: (meta) => runOf(meta)?.world });
    await tools.connect(toolsEnd);
    const proxy = await startMcpProxy({
      upstream: { transport: upstreamEnd },
      // Only calls that name no run (none do) would meet this plan.
      plan: createFaultPlan({ version: 1, rules: [] }),
      route: (request) => {
        const meta = request.params._meta;
        const run = runOf(meta);
        return run === undefined ? undefined : { plan: run.ledger.plan, clock: run.gate.serverClock, session: run.session(asObject(meta)?.[IDEMPOTENCY_KEY_META]) };
      },
      onRecord: (record) => {
        const run = byTrace.get(record.trace_id);
        run?.ledger.recorded(record);
        run?.gate.recorded();
      },
      recorder: { enqueue: (record) => byTrace.get(record.trace_id)?.options.sink?.enqueue(record) },
    });
    const cleanup: Array<() => Promise<unknown>> = [() => proxy.close(), () => tools.close()];
    const closeAll = async () => {
      for (const step of cleanup.splice(0)) await step().catch(() => undefined);
    };
    try {
      const client = new Client({ name: 'faultline-failbench', version: '1.0.0' });
      if (hostOptions.link === 'memory') {
        const [clientEnd, proxyEnd] = InMemoryTransport.createLinkedPair();
        await proxy.connect(proxyEnd);
        await client.connect(clientEnd);
      } else {
        const http = await serveMcpOverHttp(proxy, { port: 0 });
        cleanup.unshift(() => http.close());
        await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      }
      cleanup.unshift(() => client.close());
      return { client, close: closeAll };
    } catch (error) {
      await closeAll();
      throw error;
    }
  }

  return {
    transport: 'mcp',
    async open(world, options) {
      if (byTrace.has(options.traceId)) throw new ConfigError(`two runs in flight record under trace ${options.traceId}`, 'traceId');
      stack ??= start();
      const { client } = await stack;
      const key = randomUUID();
      const gate = createIoGate(world.clock);
      const ledger = createFaultLedger(world.faults);
      let step = 0;
      const nextStep = () => step++;
      const context = { ...options.context, transport: 'mcp', mcp_server: 'faultline-mock-tools' };
      const run: McpRun = {
        world: { catalog: world.catalog, clock: gate.serverClock },
        gate,
        ledger,
        // As the HTTP proxy records the Idempotency-Key header.
        session: (idempotencyKey) => ({
          traceId: options.traceId,
          nextStep,
          context: typeof idempotencyKey === 'string' ? () => ({ ...context, idempotency_key: idempotencyKey }) : () => context,
        }),
        options,
      };
      runs.set(key, run);
      byTrace.set(options.traceId, run);

      const call = (tool: Tool, args: unknown, ctx: ToolContext): Promise<unknown> =>
        exchange(gate, ledger, tool.name, ctx.idempotencyKey, async () => {
          let result: CallToolResult;
          try {
            const _meta = { [RUN_META]: key, [IDEMPOTENCY_KEY_META]: ctx.idempotencyKey, [TRACE_ID_META]: ctx.traceId };
            result = await client.request(
              { method: 'tools/call', params: { name: tool.name, arguments: (args ?? {}) as Record<string, unknown>, _meta } },
              CallToolResultSchema,
              { signal: ctx.signal, timeout: REQUEST_TIMEOUT_MS },
            );
          } catch (error) {
            throw rpcFailure(error, ctx.clock.now());
          }
          return outcomeOf(result, ctx.clock.now());
        });

      return wireOf(call, ledger, async () => {
        // Calls the runtime gave up on are still being cancelled: their records come first.
        await gate.drained();
        runs.delete(key);
        byTrace.delete(options.traceId);
      });
    },
    async close() {
      const started = stack;
      stack = undefined;
      if (started !== undefined) await (await started.catch(() => undefined))?.close();
    },
  };
}
