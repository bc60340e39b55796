import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startHttpFaultProxy } from '../faults/http-proxy/http-proxy.js';
import { createFaultPlan } from '../faults/plan.js';
import { createVirtualClock, type VirtualClock } from '../core/clock.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW, type ToolCatalog } from './catalog.js';
import { startMockToolServer, type MockToolServer, type MockToolServerOptions } from './http-server.js';

let catalog: ToolCatalog;
let clock: VirtualClock;
let server: MockToolServer;

async function start(extra: Partial<MockToolServerOptions> = {}): Promise<void> {
  await server?.close();
  server = await startMockToolServer({ catalog, clock, port: 0, ...extra });
}

beforeEach(async () => {
  catalog = createToolCatalog({ seed: 1 });
  clock = createVirtualClock({ startMs: DEFAULT_CATALOG_NOW, autoAdvance: false });
  server = await startMockToolServer({ catalog, clock, port: 0 });
});

afterEach(async () => {
  await server.close();
});

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

async function call(name: string, args: unknown, headers: Record<string, string> = {}, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(`${server.url}/tools/${name}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(args), ...init });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

async function get(path: string): Promise<Reply> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, headers: res.headers, body: await res.json() };
}

const order = { customer_id: 'CUS-002', items: [{ sku: 'SKU-1005', quantity: 1 }] };
const toolOrders = () => catalog.state.orders.filter((o) => o.source === 'tool').length;

describe('mock tool server: listing and calls', () => {
  it('binds to loopback by default and lists the tools with schemas and annotations', async () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const { status, body } = await get('/tools');
    expect(status).toBe(200);
    expect(body.tools).toHaveLength(catalog.tools.length);
    const create = body.tools.find((t: { name: string }) => t.name === 'create_order');
    expect(create).toMatchObject({ name: 'create_order', idempotent: false, idempotencyKey: true, annotations: { readOnlyHint: false, idempotentHint: false } });
    expect(create.inputSchema).toMatchObject({ type: 'object', required: ['customer_id', 'items'] });
    expect(create.description).toMatch(/409 conflict/);
    expect((await get('/tools/get_weather')).body).toMatchObject({ name: 'get_weather', annotations: { readOnlyHint: true } });
  });

  it('runs a tool and returns its output', async () => {
    const r = await call('get_weather', { city: 'Shanghai', date: '2026-03-30', unit: 'f' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/application\/json/);
    expect(r.body).toMatchObject({ city: 'Shanghai', date: '2026-03-30', unit: 'fahrenheit', kind: 'forecast' });
  });

  it('answers 404 unknown_tool with suggestions, 405 for wrong methods and 404 for unknown routes', async () => {
    const unknown = await call('get_wether', { city: 'Paris' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ type: 'unknown_tool', suggestions: ['get_weather'] });
    const res = await fetch(`${server.url}/state`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect((await get('/nowhere')).status).toBe(404);
  });

  it('answers 400 with the issues for invalid arguments, bodies that are not JSON, and non-object bodies', async () => {
    const invalid = await call('get_weather', { date: 'tomorrow' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(invalid.body.error.issues.map((i: { path: string }) => i.path).sort()).toEqual(['city', 'date']);
    const res = await fetch(`${server.url}/tools/get_weather`, { method: 'POST', body: '{"city": "Par' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe('INVALID_JSON');
    expect((await call('get_weather', ['Paris'])).body.error.code).toBe('INVALID_ARGUMENTS');
    expect(catalog.state.calls['get_weather']).toBe(0);
  });

  it('answers typed tool errors with the status a real API would use', async () => {
    const delivered = catalog.state.orders.find((o) => o.status === 'delivered')!.order_id;
    const authorized = catalog.state.payments.find((p) => p.status === 'authorized')!.payment_id;
    const cases: [string, unknown, number, string][] = [
      ['get_order', { order_id: 'ORD-99999' }, 404, 'not_found'],
      ['search_documents', { query: 'zebra submarine' }, 404, 'no_results'],
      ['get_weather', { city: 'Shanghai', date: '2026-06-01' }, 400, 'boundary_violation'],
      ['send_message', { channel: 'announcements', text: 'hi' }, 403, 'forbidden'],
      ['cancel_order', { order_id: delivered }, 409, 'conflict'],
      ['create_refund', { payment_id: authorized }, 412, 'precondition_failed'],
    ];
    for (const [tool, args, status, type] of cases) {
      const r = await call(tool, args);
      expect([tool, r.status, r.body.error.type]).toEqual([tool, status, type]);
      expect(typeof r.body.error.message).toBe('string');
    }
    const range = await call('get_weather', { city: 'Shanghai', date: '2026-06-01' });
    expect(range.body.error).toMatchObject({ code: 'DATE_OUT_OF_RANGE', details: { max: '2026-04-12' } });
  });

  it('answers a real 429 with Retry-After when a channel is over its rate limit', async () => {
    for (let i = 0; i < 10; i++) expect((await call('send_message', { channel: 'general', text: `m${i}` })).status).toBe(200);
    const limited = await call('send_message', { channel: 'general', text: 'm10' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('60');
    expect(limited.body.error).toMatchObject({ type: 'rate_limited', code: 'CHANNEL_RATE_LIMITED' });
  });

  it('deduplicates create_order on the Idempotency-Key header, and answers 422 on reuse with other items', async () => {
    const a = await call('create_order', order, { 'idempotency-key': 'http-key-1' });
    const b = await call('create_order', order, { 'idempotency-key': 'http-key-1' });
    expect(a.status).toBe(200);
    expect(b.body).toMatchObject({ order_id: a.body.order_id, replayed: true });
    expect(toolOrders()).toBe(1);
    const reused = await call('create_order', { ...order, items: [{ sku: 'SKU-1005', quantity: 2 }] }, { 'idempotency-key': 'http-key-1' });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    await call('create_order', order);
    await call('create_order', order);
    expect(toolOrders()).toBe(3);
  });

  it('holds the Idempotency-Key header to the idempotency_key argument\'s length, before anything runs', async () => {
    const before = toolOrders();
    for (const key of ['short', 'k'.repeat(129)]) {
      const res = await call('create_order', order, { 'idempotency-key': key });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        type: 'boundary_violation',
        code: 'INVALID_ARGUMENTS',
        issues: [{ code: 'boundary_violation', path: 'Idempotency-Key header' }],
      });
      expect(res.body.error.message).toContain(`must be 8 to 128 characters, got ${key.length}`);
    }
    expect(toolOrders()).toBe(before);
    // A tool that takes no key ignores the header.
    expect((await call('get_weather', { city: 'Shanghai', date: '2026-03-30', unit: 'f' }, { 'idempotency-key': 'x' })).status).toBe(200);
  });

  it('serves the catalog state for checkers', async () => {
    await call('create_order', order);
    await call('create_order', order);
    const { status, body } = await get('/state');
    expect(status).toBe(200);
    expect(body.calls.create_order).toBe(2);
    expect(body.duplicates.orders.extra).toBe(1);
    expect(body).toEqual(JSON.parse(JSON.stringify(catalog.state.snapshot())));
  });
});

describe('mock tool server: X-Inject-Error', () => {
  const STATUSES: [string, number, string][] = [
    ['400', 400, 'schema_mismatch'],
    ['401', 401, 'unauthorized'],
    ['403', 403, 'forbidden'],
    ['404', 404, 'not_found'],
    ['409', 409, 'conflict'],
    ['429', 429, 'rate_limited'],
    ['500', 500, 'server_error'],
    ['502', 502, 'server_error'],
    ['503', 503, 'dependency_down'],
    ['504', 504, 'timeout'],
  ];

  it.each(STATUSES)('%s answers that status with a JSON error, without running the tool', async (value, status, type) => {
    const r = await call('create_order', order, { 'x-inject-error': value });
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ type, code: `HTTP_${status}` });
    expect(catalog.state.calls['create_order']).toBe(0);
    expect(toolOrders()).toBe(0);
    if (status === 429) expect(r.headers.get('retry-after')).toBe('2');
    else expect(r.headers.get('retry-after')).toBeNull();
    if (status === 401) expect(r.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(server.injected.at(-1)).toMatchObject({ tool: 'create_order', source: 'header', fault: { kind: 'http_status', params: { status } } });
  });

  it('sets Retry-After from 429:<s> and 503:<s>', async () => {
    expect((await call('get_weather', { city: 'Paris' }, { 'x-inject-error': '429:7' })).headers.get('retry-after')).toBe('7');
    expect((await call('get_weather', { city: 'Paris' }, { 'x-inject-error': '503:5' })).headers.get('retry-after')).toBe('5');
  });

  it('with X-Inject-Commit, runs the tool before failing: the write lands, the response is lost', async () => {
    const r = await call('create_order', order, { 'x-inject-error': '500', 'x-inject-commit': 'true' });
    expect(r.status).toBe(500);
    expect(toolOrders()).toBe(1);
  });

  it('timeout holds the request until the client gives up', async () => {
    const started = Date.now();
    const error = await fetch(`${server.url}/tools/create_order`, {
      method: 'POST',
      headers: { 'x-inject-error': 'timeout' },
      body: JSON.stringify(order),
      signal: AbortSignal.timeout(300),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DOMException);
    expect((error as DOMException).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(toolOrders()).toBe(0);
    expect(server.injected.map((f) => f.fault.kind)).toEqual(['timeout']);
  });

  it('timeout with commit lands the write although the client never hears back', async () => {
    const error = await call('create_order', order, { 'x-inject-error': 'timeout', 'x-inject-commit': 'true' }, { signal: AbortSignal.timeout(200) }).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(toolOrders()).toBe(1);
    expect(server.injected.at(-1)!.fault.kind).toBe('commit_then_drop');
  });

  it('a fault after the write sends a refused write as it is, and /faults does not list it', async () => {
    await start({ plan: createFaultPlan({ version: 1, rules: [{ id: 'lost-ack', tool: 'create_order', fault: 'commit_then_drop' }] }, { clock }) });
    const unknownCustomer = { ...order, customer_id: 'CUS-999' };
    const dropped = await call('create_order', unknownCustomer, {}, { signal: AbortSignal.timeout(2000) });
    expect(dropped.status).toBe(404);
    expect(dropped.body.error.message).toContain('CUS-999');
    const committed = await call('create_order', unknownCustomer, { 'x-inject-error': '500', 'x-inject-commit': 'true' });
    expect(committed.status).toBe(404);
    expect(toolOrders()).toBe(0);
    expect(server.injected).toEqual([]);
  });

  it('timeout answers 504 itself once its cap runs out (per request, or server-wide)', async () => {
    const res = await fetch(`${server.url}/tools/get_weather?timeout_cap_ms=50`, { method: 'POST', headers: { 'x-inject-error': 'timeout' }, body: JSON.stringify({ city: 'Paris' }) });
    expect(res.status).toBe(504);
    expect(((await res.json()) as any).error.type).toBe('timeout');
    await start({ timeoutCapMs: 30 });
    expect((await call('get_weather', { city: 'Paris' }, { 'x-inject-error': 'timeout' })).status).toBe(504);
    expect((await fetch(`${server.url}/tools/get_weather?timeout_cap_ms=-1`, { method: 'POST', body: '{}' })).status).toBe(400);
  });

  it('reset drops the connection: fetch rejects with a socket error', async () => {
    const error = await call('get_weather', { city: 'Paris' }, { 'x-inject-error': 'reset' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    const cause = (error as { cause?: { code?: string } }).cause;
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(cause?.code);
    expect(catalog.state.calls['get_weather']).toBe(0);
  });

  it('reset with commit runs the tool first', async () => {
    await call('send_message', { channel: 'general', text: 'landed' }, { 'x-inject-error': 'reset', 'x-inject-commit': 'true' }).catch(() => undefined);
    expect(catalog.state.messages.at(-1)).toMatchObject({ text: 'landed', source: 'tool' });
  });

  it('partial returns 200 with fields or items missing, and says so', async () => {
    const weather = await call('get_weather', { city: 'Paris', date: '2026-03-29' }, { 'x-inject-error': 'partial' });
    const full = await call('get_weather', { city: 'Paris', date: '2026-03-29' });
    expect(weather.status).toBe(200);
    // The first half of the fields survive, plus the note.
    expect(Object.keys(weather.body)).toEqual([...Object.keys(full.body).slice(0, Math.ceil(Object.keys(full.body).length / 2)), 'warning']);
    expect(weather.body.city).toBe('Paris');
    expect(weather.body).not.toHaveProperty('as_of');
    expect(weather.body.warning).toMatch(/partial result/);
    const search = await call('search_documents', { query: 'apollo', limit: 10 }, { 'x-inject-error': 'partial' });
    expect(search.body.results).toHaveLength(5);
    expect(search.body.total).toBeGreaterThan(5);
  });

  it('empty returns 200 with the same shape and no data', async () => {
    const r = await call('search_documents', { query: 'apollo' }, { 'x-inject-error': 'empty' });
    expect(r.status).toBe(200);
    expect(r.body.results).toEqual([]);
    expect(r.body.total).toBeGreaterThan(0);
  });

  it('malformed returns 200 with JSON cut off half way', async () => {
    const res = await fetch(`${server.url}/tools/get_weather`, { method: 'POST', headers: { 'x-inject-error': 'malformed' }, body: JSON.stringify({ city: 'Paris' }) });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text.startsWith('{"city":"Paris"')).toBe(true);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
  });

  it('malformed, partial and empty leave an error answer as it is, and /faults does not list them', async () => {
    const straight = await call('get_weather', { city: 'Atlantis' });
    expect(straight.status).toBe(404);
    for (const fault of ['malformed', 'partial', 'empty']) {
      const r = await call('get_weather', { city: 'Atlantis' }, { 'x-inject-error': fault });
      expect([r.status, r.body], fault).toEqual([404, straight.body]);
    }
    expect((await get('/faults')).body.injected).toEqual([]);
  });

  it('slow:<ms> answers normally, that much later', async () => {
    const started = Date.now();
    const r = await call('get_weather', { city: 'Paris' }, { 'x-inject-error': 'slow:200' });
    expect(r.status).toBe(200);
    expect(r.body.city).toBe('Paris');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('answers 400 for an injection it does not understand, without running the tool', async () => {
    const r = await call('get_weather', { city: 'Paris' }, { 'x-inject-error': 'explode' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('INVALID_INJECTION');
    expect(r.body.error.message).toContain('(use 400, 401, 403, 404, 409, 429, 500, 502, 503, 504, timeout,');
    expect(catalog.state.calls['get_weather']).toBe(0);
  });

  it('lists injected faults at /faults', async () => {
    await call('get_weather', { city: 'Paris' }, { 'x-inject-error': '503' });
    await call('get_weather', { city: 'Paris' });
    const { body } = await get('/faults');
    expect(body.injected).toEqual([{ at: '2026-03-29T14:00:00.000Z', tool: 'get_weather', source: 'header', fault: expect.objectContaining({ kind: 'http_status' }) }]);
  });

  it('close() ends held requests instead of waiting for them', async () => {
    const pending = call('get_weather', { city: 'Paris' }, { 'x-inject-error': 'timeout' }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    await server.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await pending).toBeInstanceOf(TypeError);
  });
});

describe('mock tool server: fault plan', () => {
  it('applies the plan to requests without a header, and lets the header win', async () => {
    const plan = createFaultPlan(
      { version: 1, rules: [{ id: 'weather-503', tool: 'get_weather', trigger: { nth: [1, 3] }, fault: 'http_status', params: { status: 503, retry_after: 1 } }] },
      { clock },
    );
    await start({ plan });
    const first = await call('get_weather', { city: 'Paris' });
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('1');
    expect((await call('get_weather', { city: 'Paris' })).status).toBe(200);
    // With a header the plan is not consulted, so this is not its third call.
    expect((await call('get_weather', { city: 'Paris' }, { 'x-inject-error': '401' })).status).toBe(401);
    expect((await call('get_weather', { city: 'Paris' })).status).toBe(503);
    expect(plan.state().calls).toEqual({ get_weather: 3 });
    expect(server.injected.map((f) => [f.source, f.fault.kind, f.fault.rule_id, f.fault.transport])).toEqual([
      ['plan', 'http_status', 'weather-503', 'http'],
      ['header', 'http_status', 'x-inject-error', 'http'],
      ['plan', 'http_status', 'weather-503', 'http'],
    ]);
  });

  it('applies committing resets and output rewrites from the plan', async () => {
    const plan = createFaultPlan(
      {
        version: 1,
        rules: [
          { tool: 'send_message', fault: 'connection_reset', params: { commit: true } },
          { tool: 'get_weather', fault: 'semantic_drift', params: { shift_date: 1, fields: ['date'] } },
        ],
      },
      { clock },
    );
    await start({ plan });
    const error = await call('send_message', { channel: 'sales', text: 'quarter closed' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(catalog.state.messages.at(-1)).toMatchObject({ text: 'quarter closed', source: 'tool' });
    const drifted = await call('get_weather', { city: 'Paris', date: '2026-03-29' });
    expect(drifted.status).toBe(200);
    expect(drifted.body.date).toBe('2026-03-30');
  });

  it("answers connection_refused and dns_failure from the plan with the HTTP proxy's 502 and errno, not a reset", async () => {
    const rules = [
      { id: 'refused', tool: 'get_weather', fault: 'connection_refused' as const },
      { id: 'no-dns', tool: 'get_order', fault: 'dns_failure' as const },
    ];
    await start({ plan: createFaultPlan({ version: 1, rules }, { clock }) });
    // The same plan in the HTTP proxy, in front of a mock-tools server without one.
    const upstream = await startMockToolServer({ catalog: createToolCatalog({ seed: 1 }), clock, port: 0 });
    const proxy = await startHttpFaultProxy({ target: upstream.url, plan: createFaultPlan({ version: 1, rules }, { clock }), port: 0, adminToken: 'test-token', recording: { spool: false } });
    try {
      const host = new URL(server.url).host;
      for (const [tool, args, code, type, message] of [
        ['get_weather', { city: 'Paris' }, 'ECONNREFUSED', 'connection_refused', `connect ECONNREFUSED ${host}`],
        ['get_order', { order_id: 'ORD-10041' }, 'ENOTFOUND', 'dns_failure', 'getaddrinfo ENOTFOUND 127.0.0.1'],
      ] as const) {
        const direct = await call(tool, args);
        const viaProxy = await fetch(`${proxy.url}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
        const proxied = { status: viaProxy.status, headers: viaProxy.headers, body: (await viaProxy.json()) as any };
        expect(direct.status).toBe(502);
        expect(direct.body).toEqual({ error: { type, code, message } });
        for (const reply of [direct, proxied]) {
          expect(reply.status).toBe(502);
          expect(reply.headers.get('x-faultline-fault')).toBe(type);
          expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
          expect(reply.body.error).toMatchObject({ type, code });
        }
      }
      expect(server.injected.map((f) => f.fault.rule_id)).toEqual(['refused', 'no-dns']);
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  it('feeds served outputs to the plan, so stale faults replay them', async () => {
    const plan = createFaultPlan({ version: 1, rules: [{ tool: 'get_order', trigger: { nth: [2] }, fault: 'stale', params: { age_ms: 60_000 } }] }, { clock });
    await start({ plan });
    const created = await call('create_order', order);
    const id = created.body.order_id as string;
    expect((await call('get_order', { order_id: id })).body.status).toBe('pending');
    await clock.advance(3 * 3_600_000);
    const stale = await call('get_order', { order_id: id });
    expect(stale.body.status).toBe('pending');
    expect((await call('get_order', { order_id: id })).body.status).toBe('shipped');
  });
});
