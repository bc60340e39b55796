/**
 * `--transport http`: each tool call is a `POST /tools/<name>` on a real loopback socket to the
 * HTTP fault proxy, which applies the scenario's fault plan and records the exchange, in front of
 * the mock tool server serving the run's world (its catalog state and virtual now). Both servers
 * run on the run's virtual clock through the gate, so injected latency and holds cost no real
 * time. The client is node:http, so socket failures arrive as the errno errors Node raises.
 */
import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { startHttpFaultProxy, type HttpFaultProxy } from '../../faults/http-proxy/http-proxy.js';
import type { Tool, ToolContext } from '../../runtime/define-tool.js';
import { startMockToolServer } from '../../tools/http-server.js';
import type { ScenarioWorld } from '../world.js';
import { createFaultLedger, HANG_MS } from './fault-ledger.js';
import { createIoGate } from './io-gate.js';
import { exchange, recordSink, wireOf, type Wire, type WireOptions } from './wire.js';
import { failureError } from './wire-failure.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

function post(url: URL, agent: HttpAgent, body: string, headers: Record<string, string>, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const req = httpRequest(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.once('error', reject);
    });
    const onAbort = () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    signal.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => signal.removeEventListener('abort', onAbort));
    req.once('error', (error) => reject(signal.aborted ? signal.reason : error));
    req.end(body);
  });
}

function parsed(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** The tool's output from a 2xx answer (a body that does not parse is the text itself, as a lenient client returns it), or the error a client throws. */
function outcomeOf(answer: Answer, nowMs: number): unknown {
  const body = parsed(answer.text);
  if (answer.status >= 200 && answer.status < 300) return body.ok ? body.value : answer.text;
  const headers = flatHeaders(answer.headers);
  throw failureError({ status: answer.status, headers, body: body.ok ? body.value : answer.text, injectedDrop: headers['x-faultline-fault'] !== undefined }, nowMs);
}

export async function openHttpWire(world: ScenarioWorld, options: WireOptions): Promise<Wire> {
  const gate = createIoGate(world.clock);
  const ledger = createFaultLedger(world.faults);
  const server = await startMockToolServer({ catalog: world.catalog, clock: gate.serverClock, wireClock: gate.serverClock });
  let proxy: HttpFaultProxy;
  try {
    proxy = await startHttpFaultProxy({
      target: server.url,
      plan: ledger.plan,
      port: 0,
      clock: gate.serverClock,
      adminToken: randomUUID(),
      // Records name each tool as the catalog does, with its own idempotency, not the POST's.
      routes: world.catalog.tools.map((t) => ({ match: `POST /tools/${t.name}`, tool: t.name, idempotent: t.idempotent })),
      context: options.context,
      holdCapMs: HANG_MS,
      ...recordSink(options, gate, ledger),
    });
  } catch (error) {
    await server.close();
    throw error;
  }
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 16 });
  const base = proxy.url;

  const call = (tool: Tool, args: unknown, ctx: ToolContext): Promise<unknown> =>
    // The proxy records the Idempotency-Key header, which the ledger matches the record by.
    exchange(gate, ledger, tool.name, ctx.idempotencyKey, async () => {
      const headers = { 'idempotency-key': ctx.idempotencyKey, 'x-trace-id': ctx.traceId };
      const answer = await post(new URL(`/tools/${encodeURIComponent(tool.name)}`, base), agent, JSON.stringify(args ?? {}), headers, ctx.signal);
      return outcomeOf(answer, ctx.clock.now());
    });

  return wireOf(call, ledger, async () => {
    agent.destroy();
    await proxy.close();
    await server.close();
  });
}
