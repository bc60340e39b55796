/**
 * End to end: runtime tools that call the mock tool server over fetch, the way an agent's tools
 * call a real API, and the runtime classifying what the wire delivers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVirtualClock } from '../core/clock.js';
import { defineTool, type Tool } from '../runtime/define-tool.js';
import { createRuntime, type ExecuteResult } from '../runtime/runtime.js';
import { HttpError } from '../runtime/tool-errors.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW, type ToolCatalog } from './catalog.js';
import { startMockToolServer, type MockToolServer } from './http-server.js';

let catalog: ToolCatalog;
let server: MockToolServer;

beforeAll(async () => {
  catalog = createToolCatalog({ seed: 3 });
  server = await startMockToolServer({ catalog, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW, autoAdvance: false }), port: 0 });
});

afterAll(async () => {
  await server.close();
});

/**
 * A tool backed by the server. `faults(attempt)` gives the fault headers per attempt; the
 * idempotency key travels as a header, as it would to a payments API.
 */
function remote(name: string, faults: (attempt: number) => Record<string, string>, extra: { timeoutMs?: number } = {}): Tool {
  const spec = catalog.tools.find((t) => t.name === name)!;
  return defineTool({
    name: spec.name,
    description: spec.description,
    input: spec.inputSchema,
    idempotent: spec.idempotent,
    idempotencyKey: spec.idempotencyKey,
    timeoutMs: extra.timeoutMs ?? 5000,
    async execute(args, ctx) {
      const headers = { 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey, ...faults(ctx.attempt) };
      const res = await fetch(`${server.url}/tools/${name}`, { method: 'POST', headers, body: JSON.stringify(args), signal: ctx.signal });
      const body = (await res.json()) as { error?: { message?: string } };
      if (!res.ok) throw new HttpError(res.status, body.error?.message ?? `HTTP ${res.status}`, res.headers, body);
      return body;
    },
  });
}

const always = (value: string) => () => ({ 'x-inject-error': value });
const firstOnly = (headers: Record<string, string>) => (attempt: number) => (attempt === 0 ? headers : {});

async function once(tool: Tool, args: unknown, retry: { maxRetries?: number } = { maxRetries: 0 }): Promise<ExecuteResult> {
  const rt = createRuntime({ tools: [tool], retry, seed: 1 });
  try {
    return await rt.execute(tool.name, args);
  } finally {
    await rt.close();
  }
}

describe('runtime over the mock tool server', () => {
  it('classifies an injected 429 as rate_limited, with the Retry-After', async () => {
    const r = await once(remote('get_weather', always('429')), { city: 'Shanghai' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'execution', category: 'rate_limit', type: 'rate_limited', code: 'HTTP_429', status: 429, retryAfterMs: 2000 });
    expect(r.feedback.action).toBe('wait_and_retry');
    expect(r.record.failure_category).toBe('rate_limit');
  });

  it('classifies an injected 503 as dependency_down', async () => {
    const r = await once(remote('query_sales_data', always('503')), { month: '2026-03', region: '华南' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ category: 'system', type: 'dependency_down', status: 503 });
  });

  it('classifies an injected 401 as an auth failure and escalates instead of retrying', async () => {
    const r = await once(remote('get_weather', always('401')), { city: 'Beijing' }, { maxRetries: 3 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ category: 'auth', type: 'unauthorized', status: 401 });
    expect(r.feedback.action).toBe('escalate_to_user');
    expect(r.record.attempts).toHaveLength(1);
  });

  it('classifies an injected 400 as invalid parameters and does not retry them unchanged', async () => {
    const before = catalog.state.calls['create_order'] ?? 0;
    const r = await once(remote('create_order', always('400')), { customer_id: 'CUS-003', items: [{ sku: 'SKU-1002', quantity: 1 }] }, { maxRetries: 3 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'execution', category: 'parameter', type: 'schema_mismatch', code: 'HTTP_400', status: 400 });
    expect(r.error.message).toMatch(/invalid parameters/);
    expect(r.feedback.action).toBe('retry_with_fixed_params');
    expect(r.record.attempts).toHaveLength(1);
    expect(r.record.failure_category).toBe('parameter');
    // The fault answered in place of the tool: no order was attempted.
    expect(catalog.state.calls['create_order'] ?? 0).toBe(before);
  });

  it('recovers from a 503 by retrying once, honouring Retry-After: 0', async () => {
    const r = await once(remote('get_weather', firstOnly({ 'x-inject-error': '503:0' })), { city: 'Tokyo', date: '2026-03-29' }, { maxRetries: 2 });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.output).toMatchObject({ city: 'Tokyo', date: '2026-03-29' });
    expect(r.record.attempts.map((a) => a.outcome)).toEqual(['failure', 'success']);
    expect(r.record.recovery).toBe('auto_recovered');
  });

  it('classifies a reset socket as connection_reset and does not repeat a non-idempotent write', async () => {
    const before = catalog.state.messages.length;
    const tool = remote('send_message', always('reset'));
    const r = await once(tool, { channel: 'general', text: 'hello' }, { maxRetries: 3 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ category: 'network', type: 'connection_reset' });
    expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain(r.error.code);
    expect(r.record.attempts).toHaveLength(1);
    expect(r.feedback.action).toBe('verify_state');
    expect(catalog.state.messages.length).toBe(before);
  });

  it('retries a keyed write after a committed 502 without creating a second order', async () => {
    const before = catalog.state.orders.length;
    // The first attempt's write lands before the 502; the retry carries the same Idempotency-Key.
    const tool = remote('create_order', firstOnly({ 'x-inject-error': '502', 'x-inject-commit': 'true' }));
    const r = await once(tool, { customer_id: 'CUS-007', items: [{ sku: 'SKU-1003', quantity: 1 }] }, { maxRetries: 2 });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.output).toMatchObject({ replayed: true });
    expect(catalog.state.orders.length).toBe(before + 1);
    expect(catalog.state.duplicates().orders.extra).toBe(0);
  });

  it('times out a held request with its own deadline', async () => {
    const r = await once(remote('get_weather', always('timeout'), { timeoutMs: 200 }), { city: 'Paris' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.record.status).toBe('timeout');
    expect(r.error).toMatchObject({ category: 'network', type: 'timeout' });
  });
});
