import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectNoPieceOf } from '../../record/secret-pieces.test-helpers.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { Store } from '../../core/store-types.js';
import { createToolCatalog, type ToolCatalog } from '../../tools/catalog.js';
import { startMockToolServer, type MockToolServer } from '../../tools/http-server.js';
import type { FaultRule } from '../plan-spec.js';
import { createFaultPlan, type FaultPlan } from '../plan.js';
import { PROXY_RECORDER_BATCH_SIZE, startHttpFaultProxy, type HttpFaultProxy, type HttpFaultProxyOptions } from './http-proxy.js';
import { until } from './loopback.test-helpers.js';
import { refusedPort } from '../../refused-port.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-http-proxy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'test-admin-token-0123';
const order = { customer_id: 'CUS-002', items: [{ sku: 'SKU-1005', quantity: 1 }] };

interface Rig {
  catalog: ToolCatalog;
  upstream: MockToolServer;
  plan: FaultPlan;
  store: Store;
  proxy: HttpFaultProxy;
  /** Records as the proxy emits them. */
  records: ToolExecutionRecord[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let dbCount = 0;
/** Whether rig() proxies start with the fast path. */
let rigFastPath = true;
async function rig(rules: FaultRule[] = [], extra: Partial<HttpFaultProxyOptions> = {}): Promise<Rig> {
  const catalog = createToolCatalog({ seed: 1 });
  const upstream = await startMockToolServer({ catalog, port: 0 });
  cleanups.push(() => upstream.close());
  const plan = createFaultPlan({ version: 1, seed: 7, rules });
  const store = createSqliteStore({ path: join(dir, `proxy-${++dbCount}.db`) });
  cleanups.push(() => store.close());
  const records: ToolExecutionRecord[] = [];
  const proxy = await startHttpFaultProxy({
    target: upstream.url,
    plan,
    port: 0,
    store,
    recording: { spool: false, flushIntervalMs: 20 },
    adminToken: TOKEN,
    onRecord: (r) => records.push(r),
    fastPath: rigFastPath,
    ...extra,
  });
  cleanups.push(() => proxy.close());
  return { catalog, upstream, plan, store, proxy, records };
}

/** Closes the proxy (which flushes its recorder) and reads back what reached SQLite. */
async function stored(r: Rig): Promise<ToolExecutionRecord[]> {
  await r.proxy.close();
  return r.store.query({ limit: 1000 });
}

function call(r: Rig, tool: string, args: unknown, headers: Record<string, string> = {}, init: RequestInit = {}): Promise<Response> {
  return fetch(`${r.proxy.url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(args), ...init });
}

async function upstreamState(r: Rig): Promise<any> {
  return (await fetch(`${r.upstream.url}/state`)).json();
}

const toolOrders = async (r: Rig) => (await upstreamState(r)).orders.filter((o: { source: string }) => o.source === 'tool').length;

/** A plain upstream for shapes the mock tool server does not produce. */
async function plainUpstream(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

function causeCode(error: unknown): string | undefined {
  return ((error as { cause?: { code?: string } }).cause ?? {}).code;
}

/** Pass-through runs on both paths: the fast path (the default) and node:http's (`fastPath: false`). */
for (const fastPath of [true, false]) {
  describe(`http fault proxy: pass-through and records (${fastPath ? 'fast path' : 'node:http path'})`, () => {
    beforeEach(() => {
      rigFastPath = fastPath;
    });
    afterAll(() => {
      rigFastPath = true;
    });

    it('binds loopback, forwards POST /tools/<name> unchanged and records the call in SQLite with its trace and step', async () => {
      const r = await rig();
      expect(r.proxy.host).toBe('127.0.0.1');
      expect(r.proxy.url).toBe(`http://127.0.0.1:${r.proxy.port}`);
      const first = await call(r, 'get_weather', { city: 'Shanghai', date: '2026-03-30' }, { 'x-trace-id': 'trace-1' });
      expect(first.status).toBe(200);
      expect(await first.json()).toMatchObject({ city: 'Shanghai', date: '2026-03-30', kind: 'forecast' });
      const second = await call(r, 'get_order', { order_id: 'ORD-99999' }, { 'x-trace-id': 'trace-1' });
      expect(second.status).toBe(404);
      await second.arrayBuffer();
      expect(r.proxy.stats()).toMatchObject({ requests: 2, fastPath: fastPath ? 2 : 0, recorded: 2 });

      const records = await stored(r);
      expect(records).toHaveLength(2);
      const [ok, missing] = records;
      expect(ok).toMatchObject({
        tool_name: 'get_weather',
        trace_id: 'trace-1',
        step_index: 0,
        status: 'success',
        failure_type: null,
        input_params: { city: 'Shanghai', date: '2026-03-30' },
        fault: null,
        feedback: null,
        recovery: 'none',
        context_snapshot: { transport: 'http', method: 'POST', path: '/tools/get_weather', route: 'POST /tools/:name', upstream_status: 200, response_status: 200 },
      });
      expect(JSON.parse(ok!.raw_output!)).toMatchObject({ city: 'Shanghai', kind: 'forecast' });
      expect(ok!.output_length).toBe(ok!.raw_output!.length);
      expect(missing).toMatchObject({
        tool_name: 'get_order',
        trace_id: 'trace-1',
        step_index: 1,
        status: 'failure',
        failure_stage: 'execution',
        failure_category: 'business',
        failure_type: 'not_found',
        error_code: 'HTTP_404',
        fault: null,
        recovery: 'needs_decision',
        feedback: { action: 'try_alternative' },
      });
      expect(missing!.error_message).toMatch(/^HTTP 404: /);
      expect(r.catalog.state.calls['get_weather']).toBe(1);
    });

    it('takes the trace id from traceparent when there is no X-Trace-Id', async () => {
      const r = await rig();
      const res = await call(r, 'get_weather', { city: 'Paris' }, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
      await res.arrayBuffer();
      const [record] = await stored(r);
      expect(record!.trace_id).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect(record!.context_snapshot['traceparent']).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
    });

    it('streams a large response: the first bytes reach the client before the upstream has finished', async () => {
      const chunk = Buffer.alloc(256 * 1024, 'a');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let upstreamFinished = false;
      const target = await plainUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        for (let i = 0; i < 8; i++) res.write(chunk);
        void gate.then(() => {
          for (let i = 0; i < 8; i++) res.write(chunk);
          res.end(() => (upstreamFinished = true));
        });
      });
      const r = await rig([], { target });
      const res = await fetch(`${r.proxy.url}/download/big`);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const head = await reader.read();
      expect(head.value!.length).toBeGreaterThan(0);
      expect(upstreamFinished).toBe(false);
      let total = head.value!.length;
      release();
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        total += next.value.length;
      }
      expect(total).toBe(16 * chunk.length);
      expect(upstreamFinished).toBe(true);
      const [record] = await stored(r);
      expect(record).toMatchObject({ tool_name: 'GET /download/big', status: 'success', output_length: 16 * chunk.length, idempotent: true });
      expect(record!.raw_output).toBe('a'.repeat(2000));
    });

    it('names requests by configured routes, else METHOD plus the path with ids replaced, and takes query parameters as arguments', async () => {
      const r = await rig([{ id: 'weather-down', tool: 'get_weather', fault: 'http_status', params: { status: 503, retry_after: 7 } }], {
        routes: [{ match: 'GET /v1/weather', tool: 'get_weather' }],
      });
      const res = await fetch(`${r.proxy.url}/v1/weather?city=Paris`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('7');
      await res.arrayBuffer();
      const other = await fetch(`${r.proxy.url}/orders/ORD-10041?expand=items`);
      expect(other.status).toBe(404);
      await other.arrayBuffer();
      const [weather, orders] = await stored(r);
      expect(weather).toMatchObject({
        tool_name: 'get_weather',
        input_params: { city: 'Paris' },
        idempotent: true,
        status: 'failure',
        failure_category: 'system',
        failure_type: 'dependency_down',
        error_code: 'HTTP_503',
        fault: { kind: 'http_status', rule_id: 'weather-down', transport: 'http' },
        feedback: { retry_after_ms: 7000 },
        context_snapshot: { route: 'GET /v1/weather', upstream_status: null, response_status: 503 },
      });
      expect(orders).toMatchObject({ tool_name: 'GET /orders/:id', input_params: { expand: 'items' }, failure_type: 'not_found', context_snapshot: { path: '/orders/ORD-10041?expand=items' } });
    });

    it('applies plan rules written against its own tool names, globs included: tool "GET /orders/*"', async () => {
      let forwarded = 0;
      const target = await plainUpstream((req, res) => {
        forwarded++;
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
      });
      const r = await rig([{ id: 'orders-down', tool: 'GET /orders/*', fault: 'http_status', params: { status: 503, retry_after: 3 } }], { target });
      const order = await fetch(`${r.proxy.url}/orders/ORD-10041`);
      expect(order.status).toBe(503);
      expect(order.headers.get('retry-after')).toBe('3');
      await order.arrayBuffer();
      const items = await fetch(`${r.proxy.url}/orders/ORD-10041/items`);
      expect(items.status).toBe(503);
      await items.arrayBuffer();
      // Neither the bare collection nor another method matches the rule.
      expect((await (await fetch(`${r.proxy.url}/orders`)).json()) as unknown).toEqual({ path: '/orders' });
      expect((await fetch(`${r.proxy.url}/orders/ORD-10041`, { method: 'DELETE' })).status).toBe(200);
      expect(forwarded).toBe(2);
      const records = await stored(r);
      expect(records.map((x) => [x.tool_name, x.fault?.rule_id ?? null, x.error_code])).toEqual([
        ['GET /orders/:id', 'orders-down', 'HTTP_503'],
        ['GET /orders/:id/items', 'orders-down', 'HTTP_503'],
        ['GET /orders', null, null],
        ['DELETE /orders/:id', null, null],
      ]);
      expect(r.plan.state().rules['orders-down']).toMatchObject({ matched: { 'GET /orders/:id': 1, 'GET /orders/:id/items': 1 }, injections: 2 });
    });

    it('answers 502 naming the errno code when the upstream refuses, and records a network failure with no fault', async () => {
      const port = await refusedPort();
      const r = await rig([], { target: `http://127.0.0.1:${port}` });
      const res = await call(r, 'get_weather', { city: 'Paris' });
      expect(res.status).toBe(502);
      expect(res.headers.get('x-faultline-fault')).toBeNull();
      expect(((await res.json()) as any).error).toMatchObject({ type: 'connection_refused', code: 'ECONNREFUSED' });
      const [record] = await stored(r);
      expect(record).toMatchObject({
        status: 'failure',
        failure_category: 'network',
        failure_type: 'connection_refused',
        error_code: 'ECONNREFUSED',
        fault: null,
        feedback: { action: 'retry', retryable: true },
        context_snapshot: { upstream_error: 'ECONNREFUSED', upstream_status: null, response_status: 502 },
      });
    });

    it('streams a request body larger than maxArgsBytes, taking the arguments from the URL', async () => {
      let received = '';
      const target = await plainUpstream((req, res) => {
        void readBody(req).then((body) => {
          received = body;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes: body.length, path: req.url }));
        });
      });
      const r = await rig([], { target, maxArgsBytes: 1024 });
      const upload = 'x'.repeat(200_000);
      const res = await fetch(`${r.proxy.url}/upload//files?name=a.txt`, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: upload });
      expect(await res.json()).toEqual({ bytes: upload.length, path: '/upload//files?name=a.txt' });
      expect(received).toBe(upload);
      const [record] = await stored(r);
      expect(record).toMatchObject({ tool_name: 'PUT /upload/files', input_params: { name: 'a.txt' }, context_snapshot: { request_body: 'streamed (over 1024 bytes)' } });
    });

    it('drains a large body it answered without forwarding, so the connection serves the next request', async () => {
      const r = await rig([], { maxArgsBytes: 1024 });
      const big = JSON.stringify({ city: 'Paris', notes: 'n'.repeat(300_000) });
      const small = JSON.stringify({ city: 'Paris' });
      const head = (body: string, extra = '') => `POST /tools/get_weather HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n`;
      // Two requests on one keep-alive connection, the way a client reuses its socket.
      const socket = connect(r.proxy.port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.write(head(big, 'x-inject-error: 429\r\n') + big);
      await until(() => (received.includes('"HTTP_429"') ? true : undefined), 'the 429');
      socket.write(head(small) + small);
      await until(() => (/HTTP\/1\.1 200 OK[\s\S]*"city":"Paris"/.test(received) ? true : undefined), 'the second answer on the same connection', 3000);
      socket.destroy();
    });

    it('cuts the client connection when the upstream breaks off mid-body, and records a reset', async () => {
      const target = await plainUpstream((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"items":[1,2,3');
        setTimeout(() => req.socket.destroy(), 20);
      });
      const r = await rig([], { target });
      const res = await fetch(`${r.proxy.url}/tools/list_items`, { method: 'POST', body: '{}' });
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
      const [record] = await stored(r);
      expect(record).toMatchObject({ status: 'failure', failure_category: 'network', failure_type: 'connection_reset', raw_output: '{"items":[1,2,3', context_snapshot: { upstream_status: 200 } });
    });

    it('forwards end-to-end headers as sent, drops hop-by-hop ones both ways, and adds X-Forwarded-*', async () => {
      let seen: string[] = [];
      const target = await plainUpstream((req, res) => {
        seen = req.rawHeaders;
        req.resume();
        res.writeHead(200, ['Content-Type', 'application/json', 'Connection', 'keep-alive, X-Upstream-Hop', 'X-Upstream-Hop', '1', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']);
        res.end('{"ok":true}');
      });
      // A name that fronts the proxy on purpose, as --allow-host lets it.
      const r = await rig([], { target, allowedHosts: ['agents.local'] });
      const socket = connect(r.proxy.port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.write('GET /things/1?x=1 HTTP/1.1\r\nHost: agents.local\r\nX-Custom: Mixed-Case\r\nConnection: keep-alive, X-Private\r\nX-Private: secret-hop\r\nX-Forwarded-For: 10.0.0.1\r\n\r\n');
      await until(() => (received.includes('{"ok":true}') ? true : undefined), 'the answer');
      socket.destroy();
      const pairs = (raw: string[]) => Array.from({ length: raw.length / 2 }, (_, i) => `${raw[2 * i]}: ${raw[2 * i + 1]}`);
      expect(pairs(seen)).toEqual(expect.arrayContaining(['X-Custom: Mixed-Case', `host: 127.0.0.1:${new URL(target).port}`, 'x-forwarded-for: 10.0.0.1, 127.0.0.1', 'x-forwarded-host: agents.local', 'x-forwarded-proto: http']));
      expect(pairs(seen).some((line) => /^x-private/i.test(line))).toBe(false);
      expect(received).toMatch(/Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n/);
      expect(received).not.toMatch(/X-Upstream-Hop/i);
      const [record] = await stored(r);
      expect(record).toMatchObject({ tool_name: 'GET /things/:id', input_params: { x: '1' }, status: 'success' });
    });

    it('redacts an Authorization header and a password in the body from every recorded field', async () => {
      const target = await plainUpstream((req, res) => {
        void readBody(req).then((body) => {
          const text = JSON.stringify({ saw_headers: req.headers, saw_body: JSON.parse(body) });
          res.writeHead(200, { 'content-type': 'application/json' }).end(text);
        });
      });
      const r = await rig([], { target });
      const token = 'Bearer tok_live_9f8e7d6c5b4a39281706abcdef';
      const res = await fetch(`${r.proxy.url}/tools/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: token },
        body: JSON.stringify({ user: 'ann', password: 'hunter2-very-secret' }),
      });
      // The wire is untouched: the upstream got the credentials.
      const echoed = (await res.json()) as any;
      expect(echoed.saw_headers.authorization).toBe(token);
      expect(echoed.saw_body.password).toBe('hunter2-very-secret');
      const [record] = await stored(r);
      const text = JSON.stringify(record);
      expect(text).not.toContain('hunter2-very-secret');
      expect(text).not.toContain('9f8e7d6c5b4a39281706');
      expect(record!.input_params).toEqual({ user: 'ann', password: '[REDACTED]' });
      expect(record!.raw_output).toContain('saw_headers');
    });
  });
}

describe('http fault proxy: X-Inject-Error', () => {
  it('answers 429 with Retry-After without calling the upstream, and keeps the request away from the plan', async () => {
    const r = await rig([{ tool: 'get_weather', fault: 'http_status', params: { status: 500 } }]);
    const res = await call(r, 'get_weather', { city: 'Paris' }, { 'x-inject-error': '429' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(((await res.json()) as any).error.code).toBe('HTTP_429');
    expect(r.catalog.state.calls['get_weather']).toBe(0);
    expect(r.plan.state().calls['get_weather']).toBeUndefined();
    const [record] = await stored(r);
    expect(record).toMatchObject({
      failure_category: 'rate_limit',
      failure_type: 'rate_limited',
      error_code: 'HTTP_429',
      feedback: { action: 'wait_and_retry', retry_after_ms: 2000 },
      fault: { kind: 'http_status', rule_id: 'x-inject-error', params: { status: 429, retry_after: 2 }, transport: 'http' },
    });
  });

  it('answers 400 with an invalid-parameters body and records a parameter failure that is not to be retried unchanged', async () => {
    const r = await rig();
    const res = await call(r, 'create_order', order, { 'x-inject-error': '400' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatchObject({ type: 'schema_mismatch', code: 'HTTP_400' });
    expect(r.catalog.state.calls['create_order']).toBe(0);
    const [record] = await stored(r);
    expect(record).toMatchObject({
      status: 'failure',
      failure_stage: 'execution',
      failure_category: 'parameter',
      failure_type: 'schema_mismatch',
      error_code: 'HTTP_400',
      feedback: { action: 'retry_with_fixed_params' },
      fault: { kind: 'http_status', rule_id: 'x-inject-error', params: { status: 400 }, transport: 'http' },
    });
    expect(record!.error_message).toMatch(/^HTTP 400: Bad Request: invalid parameters/);
  });

  it('strips the injection headers before forwarding, so only the proxy applies them', async () => {
    const r = await rig();
    const res = await call(r, 'list_orders', { customer_id: 'CUS-002' }, { 'x-inject-error': 'partial' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.warning).toMatch(/^partial result/);
    const committed = await call(r, 'create_order', order, { 'x-inject-error': '500', 'x-inject-commit': 'true' });
    expect(committed.status).toBe(500);
    await committed.arrayBuffer();
    // The upstream ran both calls, and injected nothing itself: it never saw the headers.
    expect(r.upstream.injected).toEqual([]);
    expect(r.catalog.state.calls['list_orders']).toBe(1);
    expect(await toolOrders(r)).toBe(1);
    const records = await stored(r);
    expect(records.map((x) => x.fault?.kind)).toEqual(['partial', 'http_status']);
    expect(records[1]).toMatchObject({ failure_type: 'server_error', context_snapshot: { upstream_status: 200, response_status: 500 }, feedback: { action: 'verify_state' } });
  });

  it('delays the real answer for slow:<ms>', async () => {
    const r = await rig();
    const started = Date.now();
    const res = await call(r, 'get_weather', { city: 'Paris' }, { 'x-inject-error': 'slow:150' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).city).toBe('Paris');
    expect(Date.now() - started).toBeGreaterThanOrEqual(145);
    const [record] = await stored(r);
    expect(record).toMatchObject({ status: 'success', fault: { kind: 'latency', params: { ms: 150 } } });
    expect(record!.duration_ms).toBeGreaterThanOrEqual(145);
  });

  it('refuses an unknown injection with 400 and records the request as rejected', async () => {
    const r = await rig();
    const res = await call(r, 'get_weather', { city: 'Paris' }, { 'x-inject-error': 'explode' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatchObject({ code: 'INVALID_INJECTION' });
    expect(r.catalog.state.calls['get_weather']).toBe(0);
    const [record] = await stored(r);
    expect(record).toMatchObject({ status: 'rejected', failure_stage: 'request_build', failure_category: 'parameter', error_code: 'INVALID_INJECTION', fault: null });
  });
});

describe('http fault proxy: plan effects on the wire', () => {
  it("keeps no piece of a secret the plan's author wrote into a fault (body, message, headers) in the stored record", async () => {
    // Built by concatenation so this file does not look like it holds secrets.
    const password = 'correct-horse-' + 'battery-staple';
    const key = 'sk-proj-' + 'Zx9'.repeat(16);
    const r = await rig([
      { id: 'leaky', tool: 'get_weather', fault: 'http_status', params: { status: 401, message: `the key ${key} was revoked`, body: { error: 'unauthorized', password }, headers: { 'x-api-key': key } } },
    ]);
    const res = await call(r, 'get_weather', { city: 'Paris' });
    // The wire carries what the plan says; only the record is redacted.
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'unauthorized', password });
    const [record] = await stored(r);
    expect(record).toMatchObject({ status: 'failure', fault: { kind: 'http_status', rule_id: 'leaky', transport: 'http', params: { status: 401 } } });
    for (const secret of [password, key.slice('sk-proj-'.length)]) expectNoPieceOf(secret, JSON.stringify(record), 'the stored record');
  });

  it('reset: the client sees its connection reset, and the record says connection_reset', async () => {
    const r = await rig([{ id: 'rst', tool: 'get_weather', fault: 'connection_reset' }]);
    const error = await call(r, 'get_weather', { city: 'Paris' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(causeCode(error));
    expect(r.catalog.state.calls['get_weather']).toBe(0);
    const [record] = await stored(r);
    expect(record).toMatchObject({
      status: 'failure',
      failure_category: 'network',
      failure_type: 'connection_reset',
      error_code: 'ECONNRESET',
      raw_output: null,
      fault: { kind: 'connection_reset', rule_id: 'rst', transport: 'http' },
    });
  });

  it('connection_refused and dns_failure: 502 naming the code, marked with X-Faultline-Fault', async () => {
    const r = await rig([
      { tool: 'get_weather', fault: 'connection_refused' },
      { tool: 'get_order', fault: 'dns_failure' },
    ]);
    const refused = await call(r, 'get_weather', { city: 'Paris' });
    expect(refused.status).toBe(502);
    expect(refused.headers.get('x-faultline-fault')).toBe('connection_refused');
    expect(((await refused.json()) as any).error).toMatchObject({ type: 'connection_refused', code: 'ECONNREFUSED' });
    const dns = await call(r, 'get_order', { order_id: 'ORD-10001' });
    expect(dns.status).toBe(502);
    expect(dns.headers.get('x-faultline-fault')).toBe('dns_failure');
    expect(((await dns.json()) as any).error).toMatchObject({ type: 'dns_failure', code: 'ENOTFOUND' });
    const records = await stored(r);
    expect(records.map((x) => [x.failure_type, x.error_code, x.fault?.kind])).toEqual([
      ['connection_refused', 'ECONNREFUSED', 'connection_refused'],
      ['dns_failure', 'ENOTFOUND', 'dns_failure'],
    ]);
    expect(r.catalog.state.calls['get_weather']).toBe(0);
  });

  it('hang: the request is held until the client gives up, and recorded as a timeout', async () => {
    const r = await rig([{ tool: 'get_weather', fault: 'hang' }]);
    const started = Date.now();
    const error = await call(r, 'get_weather', { city: 'Paris' }, {}, { signal: AbortSignal.timeout(250) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as DOMException).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    await until(() => (r.records.length === 1 ? true : undefined), 'the record');
    const [record] = await stored(r);
    expect(record).toMatchObject({ status: 'timeout', failure_category: 'network', failure_type: 'timeout', error_code: 'TIMEOUT', fault: { kind: 'hang' } });
    // Held until the client's own deadline, however late the request reached the proxy.
    expect(Date.parse(record!.created_at) + record!.duration_ms).toBeGreaterThanOrEqual(started + 240);
  });

  it('a held request is answered 504 at holdCapMs when the client waits longer', async () => {
    const r = await rig([], { holdCapMs: 100 });
    const res = await call(r, 'get_weather', { city: 'Paris' }, { 'x-inject-error': 'timeout' });
    expect(res.status).toBe(504);
    expect(((await res.json()) as any).error.message).toBe('Gateway Timeout: get_weather did not answer within 100 ms');
    expect(r.catalog.state.calls['get_weather']).toBe(0);
  });

  it('timeout with a delay: 504 after it, as a gateway answers', async () => {
    const r = await rig([{ tool: 'get_weather', fault: 'timeout', params: { delay_ms: 120 } }]);
    const started = Date.now();
    const res = await call(r, 'get_weather', { city: 'Paris' });
    expect(res.status).toBe(504);
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
    expect(((await res.json()) as any).error.code).toBe('HTTP_504');
    const [record] = await stored(r);
    // Recorded as the timeout it stands for, as the runtime and the MCP proxy record it.
    expect(record).toMatchObject({ status: 'timeout', failure_category: 'network', failure_type: 'timeout', error_code: 'TIMEOUT', fault: { kind: 'timeout' } });
  });

  it('auth_expiry: 401 with WWW-Authenticate once the credential expires, recorded as credential_expired', async () => {
    const r = await rig([{ tool: '*', fault: 'auth_expiry', params: { after_calls: 1 } }]);
    expect((await call(r, 'get_weather', { city: 'Paris' })).status).toBe(200);
    const denied = await call(r, 'get_weather', { city: 'Paris' });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('www-authenticate')).toMatch(/invalid_token/);
    await denied.arrayBuffer();
    const records = await stored(r);
    expect(records[1]).toMatchObject({ failure_category: 'auth', failure_type: 'credential_expired', error_code: 'HTTP_401', feedback: { action: 'escalate_to_user' } });
  });

  it('latency: the real answer, late', async () => {
    const r = await rig([{ tool: 'get_weather', fault: 'latency', params: { ms: 120 } }]);
    const started = Date.now();
    const res = await call(r, 'get_weather', { city: 'Paris' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).city).toBe('Paris');
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
    const [record] = await stored(r);
    expect(record).toMatchObject({ status: 'success', fault: { kind: 'latency', params: { delay_ms: 120 } } });
  });

  it('malformed_json: a 200 whose body does not parse, with a correct Content-Length', async () => {
    const r = await rig([{ tool: 'get_weather', fault: 'malformed_json' }]);
    const res = await call(r, 'get_weather', { city: 'Paris' });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(text.startsWith('{"city":"Paris"')).toBe(true);
    const again = await call(r, 'get_weather', { city: 'Paris' });
    await expect(again.json()).rejects.toThrow(SyntaxError);
    const [record] = await stored(r);
    expect(record).toMatchObject({ status: 'success', raw_output: text, fault: { kind: 'malformed_json' }, context_snapshot: { upstream_status: 200 } });
  });

  it('partial, empty, schema_drift and semantic_drift: rewritten 200s with their new length', async () => {
    const r = await rig([
      { tool: 'get_weather', when: { city: 'Paris' }, fault: 'partial', params: { drop_fields: ['humidity_pct'] } },
      { tool: 'get_weather', when: { city: 'Tokyo' }, fault: 'schema_drift', params: { rename: { temp_high: 'high_c' } } },
      { tool: 'get_weather', when: { city: 'Berlin' }, fault: 'semantic_drift', params: { shift_date: 1, fields: ['date'] } },
      { tool: 'list_orders', fault: 'empty' },
    ]);
    const read = async (res: Response) => {
      const text = await res.text();
      expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text));
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      return JSON.parse(text);
    };
    const partial = await read(await call(r, 'get_weather', { city: 'Paris', date: '2026-03-30' }));
    expect(partial).not.toHaveProperty('humidity_pct');
    expect(partial.warning).toBe('partial result: humidity_pct unavailable');
    const drifted = await read(await call(r, 'get_weather', { city: 'Tokyo', date: '2026-03-30' }));
    expect(drifted).toHaveProperty('high_c');
    expect(drifted).not.toHaveProperty('temp_high');
    const shifted = await read(await call(r, 'get_weather', { city: 'Berlin', date: '2026-03-30' }));
    expect(shifted.date).toBe('2026-03-31');
    const empty = await read(await call(r, 'list_orders', { customer_id: 'CUS-002' }));
    const direct = (await (await fetch(`${r.upstream.url}/tools/list_orders`, { method: 'POST', body: JSON.stringify({ customer_id: 'CUS-002' }) })).json()) as any;
    expect(direct.orders.length).toBeGreaterThan(0);
    expect(empty.orders).toEqual([]);
    const records = await stored(r);
    expect(records.map((x) => [x.status, x.fault?.kind])).toEqual([
      ['success', 'partial'],
      ['success', 'schema_drift'],
      ['success', 'semantic_drift'],
      ['success', 'empty'],
    ]);
    expect(JSON.parse(records[0]!.raw_output!)).toEqual(partial);
  });

  it('passes an error answer through untouched when a rewrite has nothing to rewrite', async () => {
    const r = await rig([{ tool: 'get_order', fault: 'partial', params: { drop_fraction: 0.5 } }]);
    const res = await call(r, 'get_order', { order_id: 'ORD-99999' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.type).toBe('not_found');
    const [record] = await stored(r);
    // Nothing was injected, so the ground truth says no fault; what the plan decided is kept aside.
    expect(record).toMatchObject({ failure_type: 'not_found', fault: null, context_snapshot: { fault_not_applied: { kind: 'partial' } } });
  });

  it('commit_then_drop: the order is created upstream while the client waits for an answer that never comes', async () => {
    const r = await rig([{ id: 'lost-ack', tool: 'create_order', fault: 'commit_then_drop' }]);
    expect(await toolOrders(r)).toBe(0);
    const error = await call(r, 'create_order', order, { 'idempotency-key': 'agent-key-1' }, { signal: AbortSignal.timeout(300) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as DOMException).name).toBe('TimeoutError');
    expect(await toolOrders(r)).toBe(1);
    await until(() => (r.records.length === 1 ? true : undefined), 'the record');
    const [record] = await stored(r);
    expect(record).toMatchObject({
      tool_name: 'create_order',
      idempotent: false,
      status: 'timeout',
      failure_type: 'timeout',
      fault: { kind: 'commit_then_drop', rule_id: 'lost-ack' },
      feedback: { action: 'verify_state' },
      context_snapshot: { upstream_status: 200, response_status: null, idempotency_key: 'agent-key-1' },
    });
    // A client that waits longer gets the gateway's 504 at holdCapMs, recorded as the same timeout.
    const patient = await rig([{ tool: 'create_order', fault: 'commit_then_drop' }], { holdCapMs: 100 });
    const res = await call(patient, 'create_order', order, { 'idempotency-key': 'agent-key-2' });
    expect(res.status).toBe(504);
    expect(await toolOrders(patient)).toBe(1);
    expect((await stored(patient))[0]).toMatchObject({ status: 'timeout', fault: { kind: 'commit_then_drop' } });
  });

  it('lost_write: the upstream answers the call run dry, 200 as usual, and no order exists; a dry-run header from a client is dropped', async () => {
    const r = await rig([{ id: 'lost', tool: 'create_order', trigger: 'first_call_only', fault: 'lost_write' }]);
    const res = await call(r, 'create_order', order, { 'idempotency-key': 'agent-key-1' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ order_id: 'ORD-10041', customer_id: 'CUS-002', replayed: false });
    expect(await toolOrders(r)).toBe(0);
    // Not the proxy's decision, so not a dry run: the order is created, under the same key it did not remember.
    const again = await call(r, 'create_order', order, { 'idempotency-key': 'agent-key-1', 'x-faultline-dry-run': '1' });
    expect(await again.json()).toMatchObject({ order_id: 'ORD-10041', replayed: false });
    expect(await toolOrders(r)).toBe(1);
    const records = await stored(r);
    expect(records.map((x) => [x.status, x.fault?.kind ?? null])).toEqual([
      ['success', 'lost_write'],
      ['success', null],
    ]);
    // A dry run the upstream refuses is its refusal, and no fault.
    const refused = await rig([{ tool: 'create_order', fault: 'lost_write' }]);
    const sold = await call(refused, 'create_order', { customer_id: 'CUS-002', items: [{ sku: 'SKU-1010', quantity: 1 }] });
    expect(sold.status).toBe(409);
    expect((await stored(refused))[0]).toMatchObject({ failure_type: 'conflict', fault: null, context_snapshot: { fault_not_applied: { kind: 'lost_write' } } });
  });

  it('a fault after the write passes an upstream that refused the write through, with no fault in the record', async () => {
    const r = await rig([{ id: 'lost-ack', tool: 'create_order', fault: 'commit_then_drop' }]);
    const unknownCustomer = { ...order, customer_id: 'CUS-999' };
    const res = await call(r, 'create_order', unknownCustomer, {}, { signal: AbortSignal.timeout(3000) });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const body = (await res.json()) as any;
    expect(body.error.message).toContain('CUS-999');
    // The same with X-Inject-Error and a commit: the upstream's refusal, not the injected 500.
    const injected = await call(r, 'create_order', unknownCustomer, { 'x-inject-error': '500', 'x-inject-commit': 'true' });
    expect(injected.status).toBe(res.status);
    await injected.arrayBuffer();
    expect(await toolOrders(r)).toBe(0);
    const records = await stored(r);
    expect(records.map((x) => [x.status, x.error_code, x.fault])).toEqual([
      ['failure', `HTTP_${res.status}`, null],
      ['failure', `HTTP_${res.status}`, null],
    ]);
    expect(records[0]!.context_snapshot).toMatchObject({ upstream_status: res.status, response_status: res.status, fault_not_applied: { kind: 'commit_then_drop', rule_id: 'lost-ack' } });
    expect(records[1]!.context_snapshot).toMatchObject({ fault_not_applied: { kind: 'http_status', params: { status: 500, commit: true } } });
  });

  it('a fault after the write passes a refused upstream connection through as the 502 the proxy sends for it, with no fault', async () => {
    const port = await refusedPort();
    const r = await rig([{ id: 'lost-ack', tool: 'create_order', fault: 'commit_then_drop' }], { target: `http://127.0.0.1:${port}` });
    const res = await call(r, 'create_order', order, {}, { signal: AbortSignal.timeout(3000) });
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.code).toBe('ECONNREFUSED');
    const [record] = await stored(r);
    expect(record).toMatchObject({ failure_type: 'connection_refused', fault: null, context_snapshot: { fault_not_applied: { kind: 'commit_then_drop' } } });
  });

  it('stale: replays an output it saw earlier for the same arguments, whether or not that answer had a fault', async () => {
    let served = 0;
    const target = await plainUpstream((req, res) => {
      void readBody(req).then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ version: ++served })));
    });
    const r = await rig([{ tool: 'get_config', trigger: { nth: [2, 3] }, fault: 'stale', params: { age_ms: 60_000, age_calls: 1 } }], { target });
    const get = async (headers: Record<string, string> = {}) => (await (await call(r, 'get_config', { key: 'a' }, headers)).json()) as any;
    expect(await get()).toEqual({ version: 1 });
    expect(await get()).toEqual({ version: 1 });
    // A delayed answer is still a real one (the plan never saw this request): the next replay serves it.
    expect(await get({ 'x-inject-error': 'slow:1' })).toEqual({ version: 3 });
    expect(await get()).toEqual({ version: 3 });
    expect(served).toBe(4);
    const records = await stored(r);
    expect(records.map((x) => x.fault?.kind ?? null)).toEqual([null, 'stale', 'latency', 'stale']);
    expect(records[1]).toMatchObject({ fault: { params: { served: 'replay' } } });
  });

  it('close() cuts a held request and still records it', async () => {
    const r = await rig();
    const pending = call(r, 'get_weather', { city: 'Paris' }, { 'x-inject-error': 'timeout' }).then(
      () => 'answered',
      () => 'cut',
    );
    await until(() => (r.proxy.stats().inFlight === 1 ? true : undefined), 'the held request');
    const records = await stored(r);
    expect(await pending).toBe('cut');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 'timeout', fault: { kind: 'timeout' }, context_snapshot: { proxy_closed: true } });
  });
});

describe('http fault proxy: admin API', () => {
  /** `token` null sends no Authorization header. */
  const admin = (r: Rig, path: string, init: RequestInit = {}, token: string | null = TOKEN) =>
    fetch(`${r.proxy.adminUrl}${path}`, { ...init, headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...(init.headers as Record<string, string>) } });

  it('requires the bearer token: none 401, wrong 401, right 200', async () => {
    const r = await rig([{ id: 'slow', tool: 'get_weather', fault: 'latency', params: { ms: 1 } }]);
    expect(r.proxy.adminUrl).toBe(`${r.proxy.url}/__faultline`);
    const none = await admin(r, '/plan', {}, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await admin(r, '/plan', {}, 'wrong-token')).status).toBe(401);
    const ok = await admin(r, '/plan');
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).rules[0]).toMatchObject({ id: 'slow', fault: 'latency' });
    // Admin calls are not tool calls.
    expect(r.proxy.stats().requests).toBe(0);
    expect(await stored(r)).toEqual([]);
  });

  it('rejects a bad plan with 400 and the one-line error, and applies a good one to the next request', async () => {
    const r = await rig();
    const bad = await admin(r, '/plan', { method: 'PUT', body: 'version: 1\nrules:\n  - tool: get_weather\n    fault: explode\n' });
    expect(bad.status).toBe(400);
    const problem = ((await bad.json()) as any).error;
    expect(problem.code).toBe('INVALID_PLAN');
    expect(problem.message).toMatch(/rules\[0\]\.fault/);
    expect(problem.message).not.toContain('\n');
    expect((await call(r, 'get_weather', { city: 'Paris' })).status).toBe(200);

    const put = await admin(r, '/plan', { method: 'PUT', body: 'version: 1\nrules:\n  - id: outage\n    tool: get_weather\n    fault: http_status\n    params: { status: 503 }\n' });
    expect(put.status).toBe(200);
    expect((await call(r, 'get_weather', { city: 'Paris' })).status).toBe(503);
    const json = await admin(r, '/plan', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: 1, rules: [] }) });
    expect(json.status).toBe(200);
    expect((await call(r, 'get_weather', { city: 'Paris' })).status).toBe(200);

    const state = (await (await admin(r, '/state')).json()) as any;
    // { plan, proxy }, as the MCP proxy's admin answers.
    expect(Object.keys(state)).toEqual(['plan', 'proxy']);
    expect(state.plan).toEqual(r.plan.state());
    expect(state.plan.calls.get_weather).toBe(3);
    expect(state.proxy).toMatchObject({ requests: 3, injected: 1, target: r.upstream.url.replace(/\/?$/, '/') });
    expect((await admin(r, '/state', { method: 'DELETE' })).status).toBe(405);
    expect((await admin(r, '/nothing')).status).toBe(404);
  });

  it("answers HEAD /plan as GET without a body, and PUT with the plan now in force, as the MCP proxy's admin does", async () => {
    const r = await rig([{ id: 'slow', tool: 'get_weather', fault: 'latency', params: { ms: 1 } }]);
    const get = await admin(r, '/plan');
    const getBody = await get.text();
    const head = await admin(r, '/plan', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(getBody)));
    expect(await head.text()).toBe('');
    expect((await admin(r, '/state', { method: 'HEAD' })).status).toBe(200);

    const put = await admin(r, '/plan', { method: 'PUT', body: 'version: 1\nrules:\n  - id: outage\n    tool: get_weather\n    fault: http_status\n    params: { status: 503 }\n' });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual(r.plan.spec);
    const deleted = await admin(r, '/plan', { method: 'DELETE' });
    expect(deleted.status).toBe(405);
    expect(deleted.headers.get('allow')).toBe('GET, HEAD, PUT');
  });

  it("answers a failure of its own with 500 INTERNAL_ERROR, the code the MCP proxy's admin uses", async () => {
    const real = createFaultPlan({ version: 1, rules: [] });
    const plan = Object.assign(Object.create(real) as FaultPlan, {
      state: () => {
        throw new Error('the counters are unavailable');
      },
    });
    const r = await rig([], { plan });
    const res = await admin(r, '/state');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'the counters are unavailable' } });
  });

  it('refuses a plan over 1 MiB with 413 PLAN_TOO_LARGE and keeps the plan it had', async () => {
    const r = await rig([{ id: 'slow', tool: 'get_weather', fault: 'latency', params: { ms: 1 } }]);
    const huge = `version: 1\nrules: []\n# ${'x'.repeat(1024 * 1024)}\n`;
    const res = await admin(r, '/plan', { method: 'PUT', body: huge });
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error).toEqual({ code: 'PLAN_TOO_LARGE', message: 'the plan exceeds 1048576 bytes' });
    expect(((await (await admin(r, '/plan')).json()) as any).rules.map((rule: { id: string }) => rule.id)).toEqual(['slow']);
  });

  it("lists its routes in a 404 as the MCP proxy's admin does, under /__faultline and on its own port", async () => {
    const r = await rig();
    const missing = await admin(r, '/plans?x=1', { method: 'PUT', body: 'version: 1\nrules: []\n' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: { code: 'NO_ROUTE', message: 'no admin route PUT /__faultline/plans; use GET /__faultline/plan, PUT /__faultline/plan or GET /__faultline/state' },
    });

    const own = await rig([], { adminPort: 0 });
    const elsewhere = await fetch(`${new URL(own.proxy.adminUrl).origin}/metrics`, { method: 'POST', body: '{}' });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers.get('cache-control')).toBe('no-store');
    expect(await elsewhere.json()).toEqual({
      error: { code: 'NO_ROUTE', message: 'no admin route POST /metrics; use GET /__faultline/plan, PUT /__faultline/plan or GET /__faultline/state' },
    });
    // Neither reached the upstream.
    expect([r.proxy.stats().requests, own.proxy.stats().requests]).toEqual([0, 0]);
  });

  it('serves the admin API on its own port when asked, and then forwards /__faultline on the proxy port', async () => {
    const r = await rig([], { adminPort: 0 });
    expect(r.proxy.adminUrl).not.toContain(`:${r.proxy.port}/`);
    expect((await admin(r, '/state')).status).toBe(200);
    expect((await admin(r, '/state', {}, null)).status).toBe(401);
    const forwarded = await fetch(`${r.proxy.url}/__faultline/state`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(forwarded.status).toBe(404);
    expect(((await forwarded.json()) as any).error.code).toBe('NO_ROUTE');
  });
});

describe('http fault proxy: its recorder', () => {
  /** A SQLite store that reports how many records each insert brought. */
  function countingStore(): { store: Store; sizes: number[] } {
    const inner = createSqliteStore({ path: join(dir, `proxy-batches-${++dbCount}.db`) });
    cleanups.push(() => inner.close());
    const sizes: number[] = [];
    const store: Store = Object.assign(Object.create(inner) as Store, {
      kind: inner.kind,
      insert: (records: readonly ToolExecutionRecord[]) => {
        sizes.push(records.length);
        return inner.insert(records);
      },
    });
    return { store, sizes };
  }

  async function burst(extra: Partial<HttpFaultProxyOptions>, requests: number) {
    const r = await rig([], extra);
    await Promise.all(Array.from({ length: requests }, (_, i) => call(r, 'get_weather', { city: `City ${i}` }).then((res) => res.arrayBuffer())));
    await r.proxy.close();
  }

  it(`writes in batches of ${PROXY_RECORDER_BATCH_SIZE} records by default (a batch is encoded on the proxy's event loop), and takes a batch size`, async () => {
    const small = countingStore();
    // A flush interval longer than the test, so only full batches (and the close) write.
    await burst({ store: small.store, recording: { spool: false, flushIntervalMs: 60_000 } }, 200);
    expect(small.sizes.reduce((a, b) => a + b, 0)).toBe(200);
    expect(Math.max(...small.sizes)).toBe(PROXY_RECORDER_BATCH_SIZE);
    const large = countingStore();
    await burst({ store: large.store, recording: { spool: false, flushIntervalMs: 60_000, batchSize: 500 } }, 200);
    expect(large.sizes).toStrictEqual([200]);
  });
});
