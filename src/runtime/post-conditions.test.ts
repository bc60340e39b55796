import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createVirtualClock } from '../core/clock.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { evaluateAlerts } from '../monitor/alert-rules.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const START = Date.UTC(2026, 2, 29, 12);

/** A weather tool whose answer the test sets: the checks see what a drifting upstream returns. */
function weather(answer: { city: string; date: string; as_of: string }) {
  return defineTool({
    name: 'get_weather',
    description: 'weather for a city on a date',
    input: { type: 'object', properties: { city: { type: 'string' }, date: { type: 'string' } }, required: ['city', 'date'] },
    output: {
      type: 'object',
      properties: {
        city: { type: 'string', 'x-echoes': 'city' },
        date: { type: 'string', 'x-echoes': 'date' },
        as_of: { type: 'string', 'x-max-age-ms': 3_600_000 },
        temp: { type: 'number' },
      },
    },
    idempotent: true,
    execute: () => ({ ...answer, temp: 18 }),
  });
}

function orders(rows: Array<{ id: string; created_at: string }>) {
  return defineTool({
    name: 'list_orders',
    description: 'orders in a window, or one by id',
    input: { type: 'object', properties: { start_date: { type: 'string' }, end_date: { type: 'string' }, order_id: { type: 'string' } } },
    output: {
      type: 'object',
      properties: {
        orders: {
          type: 'array',
          'x-non-empty-when': ['order_id'],
          items: { type: 'object', properties: { id: { type: 'string' }, created_at: { type: 'string', 'x-within': { from: 'start_date', to: 'end_date' } } } },
        },
      },
    },
    idempotent: true,
    execute: () => ({ orders: rows }),
  });
}

describe('post-condition checks', () => {
  it('passes an answer that echoes the request, with a date matching a timestamp on it', async () => {
    const rt = createRuntime({ tools: [weather({ city: 'shanghai ', date: '2026-03-30T00:00:00Z', as_of: '2026-03-29T11:30:00Z' })], clock: createVirtualClock({ startMs: START }) });
    const r = await rt.execute('get_weather', { city: 'Shanghai', date: '2026-03-30' });
    expect(r.ok).toBe(true);
  });

  it('fails an answer for another date as result_parse / semantic / result_mismatch, naming the field and both values', async () => {
    const rt = createRuntime({ tools: [weather({ city: 'Shanghai', date: '2026-03-29', as_of: '2026-03-29T11:30:00Z' })], clock: createVirtualClock({ startMs: START }) });
    const r = await rt.execute('get_weather', { city: 'Shanghai', date: '2026-03-30' });
    if (r.ok) throw new Error('expected a failed check');
    expect(r.error).toMatchObject({ stage: 'result_parse', category: 'semantic', type: 'result_mismatch', code: 'RESULT_MISMATCH' });
    expect(r.error.message).toBe('response field "date" is "2026-03-29" but the request\'s "date" was "2026-03-30"');
    expect(r.feedback.action).toBe('try_alternative');
    expect(r.feedback.hint).toContain('"date" is "2026-03-29"');
    expect(r.record).toMatchObject({ status: 'failure', failure_category: 'semantic', retry_count: 0 });
    // What came back is kept: the record shows the wrong answer.
    expect(r.record.raw_output).toContain('2026-03-29');
  });

  it('fails an old answer as stale_result, on the runtime clock', async () => {
    const rt = createRuntime({ tools: [weather({ city: 'Paris', date: '2026-03-29', as_of: '2026-03-29T09:00:00Z' })], clock: createVirtualClock({ startMs: START }) });
    const r = await rt.execute('get_weather', { city: 'Paris', date: '2026-03-29' });
    if (r.ok) throw new Error('expected a failed check');
    expect(r.error.type).toBe('stale_result');
    expect(r.error.message).toContain('"as_of" is "2026-03-29T09:00:00Z", 3 h old');
    expect(r.feedback.action).toBe('retry');
  });

  it('fails a timestamp outside the requested window (a date-only end includes its day), naming the item', async () => {
    const rows = [
      { id: 'a', created_at: '2026-03-30T23:59:00Z' },
      { id: 'b', created_at: '2026-03-22T10:00:00Z' },
    ];
    const rt = createRuntime({ tools: [orders(rows)], clock: createVirtualClock({ startMs: START }) });
    const r = await rt.execute('list_orders', { start_date: '2026-03-23', end_date: '2026-03-30' });
    if (r.ok) throw new Error('expected a failed check');
    expect(r.error.type).toBe('out_of_window');
    expect(r.error.message).toBe('response field "orders[1].created_at" is "2026-03-22T10:00:00Z", outside the requested window start_date = "2026-03-23" .. end_date = "2026-03-30"');
  });

  it('fails an empty result under a narrow filter, and lets an empty one under a broad filter pass', async () => {
    const rt = createRuntime({ tools: [orders([])], clock: createVirtualClock({ startMs: START }) });
    const narrow = await rt.execute('list_orders', { order_id: 'A-17' });
    if (narrow.ok) throw new Error('expected a failed check');
    expect(narrow.error.type).toBe('suspicious_empty');
    expect(narrow.error.message).toBe('response field "orders" is empty although the request narrowed it by order_id = "A-17"');
    expect(narrow.feedback.action).toBe('verify_state');
    expect((await rt.execute('list_orders', { start_date: '2026-03-01' })).ok).toBe(true);
  });

  it('runs verify(args, output, ctx) after the annotations, with the clock, and a throwing verify is a system failure', async () => {
    const seen: number[] = [];
    const convert = defineTool({
      name: 'convert',
      description: 'converts an amount',
      input: { type: 'object', properties: { amount: { type: 'number' }, currency: { type: 'string' } } },
      execute: ({ currency }: { currency: string }) => ({ value: 10, currency: currency === 'EUR' ? 'USD' : currency }),
      verify: (args: { currency: string }, out: { currency: string }, ctx) => {
        seen.push(ctx.now);
        if (args.currency === 'boom') throw new Error('verify bug');
        return out.currency === args.currency ? undefined : { field: 'currency', expected: args.currency, actual: out.currency };
      },
    });
    const rt = createRuntime({ tools: [convert], clock: createVirtualClock({ startMs: START }) });
    expect((await rt.execute('convert', { amount: 1, currency: 'GBP' })).ok).toBe(true);
    const wrong = await rt.execute('convert', { amount: 1, currency: 'EUR' });
    if (wrong.ok) throw new Error('expected a failed check');
    expect(wrong.error).toMatchObject({ category: 'semantic', type: 'result_mismatch', message: 'response field "currency" is "USD" but the request asked for "EUR"' });
    const broken = await rt.execute('convert', { amount: 1, currency: 'boom' });
    if (broken.ok) throw new Error('expected a failure');
    expect(broken.error).toMatchObject({ stage: 'result_parse', category: 'system', type: 'runtime_error', code: 'VERIFY_FAILED' });
    expect(seen).toEqual([START, START, START]);
  });

  it('a write whose answer fails its check took effect: the feedback is verify_state, a read is try_alternative', async () => {
    const orders: string[] = [];
    const spec = (name: string, idempotent: boolean) =>
      defineTool({
        name,
        description: 'places an order',
        input: { type: 'object', properties: { customer: { type: 'string' } } },
        idempotent,
        execute: ({ customer }: { customer: string }) => {
          orders.push(customer);
          return { customer: 'CUS-999' };
        },
        verify: (args: { customer: string }, out: { customer: string }) => (out.customer === args.customer ? undefined : { field: 'customer', expected: args.customer, actual: out.customer }),
      });
    const rt = createRuntime({ tools: [spec('place_order', false), spec('find_order', true)], clock: createVirtualClock({ startMs: START }) });
    const write = await rt.execute('place_order', { customer: 'CUS-1' });
    const read = await rt.execute('find_order', { customer: 'CUS-1' });
    if (write.ok || read.ok) throw new Error('expected failed checks');
    expect(write.feedback).toMatchObject({ action: 'verify_state', retryable: true });
    expect(write.feedback.hint).toMatch(/^place_order ran, but its answer does not match the request: .*Read the current state/);
    expect(read.feedback.action).toBe('try_alternative');
    // Neither is retried by the runtime: the write ran once.
    expect(orders).toEqual(['CUS-1', 'CUS-1']);
  });

  it('stores the failed checks in SQLite, where stats and the new-signature alert see them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-post-'));
    dirs.push(dir);
    const path = join(dir, 'f.db');
    const clock = createVirtualClock({ startMs: START });
    const rt = createRuntime({ tools: [weather({ city: 'Lyon', date: '2026-03-29', as_of: '2026-03-29T11:59:00Z' })], store: `sqlite:${path}`, clock });
    for (let i = 0; i < 3; i++) await rt.execute('get_weather', { city: 'Paris', date: '2026-03-29' }, { traceId: `t${i}` });
    await rt.close();
    const store = createSqliteStore({ path });
    const window = { since: START - 3_600_000, until: START + 3_600_000 };
    expect(await store.failureBreakdown(window)).toEqual([
      { tool_name: 'get_weather', failure_stage: 'result_parse', failure_category: 'semantic', failure_type: 'result_mismatch', count: 3 },
    ]);
    const alerts = await evaluateAlerts(store, { window });
    expect(alerts.find((a) => a.rule === 'new_failure_signature')?.message).toContain('result_parse/result_mismatch');
    await store.close();
  });
});

describe('stage feedback', () => {
  const failing = defineTool({
    name: 'find_flight',
    description: 'no results',
    input: { type: 'object', properties: {} },
    execute: () => ({ isError: true, content: [{ type: 'text', text: 'nothing found' }] }),
  });

  it('records a failure while building the feedback at stage feedback; the agent gets the default feedback for its own failure', async () => {
    const records: ToolExecutionRecord[] = [];
    const rt = createRuntime({
      tools: [failing],
      clock: createVirtualClock(),
      onRecord: (r) => records.push(r),
      feedback: {
        tool_reported_error: {
          hint: () => {
            throw new Error('hint template bug');
          },
        },
      },
    });
    const r = await rt.execute('find_flight', {});
    if (r.ok) throw new Error('expected a failure');
    expect(r.error).toMatchObject({ stage: 'execution', type: 'tool_reported_error', message: 'nothing found' });
    expect(r.feedback.action).toBe('try_alternative');
    expect(records[0]).toMatchObject({ status: 'failure', failure_stage: 'feedback', failure_category: 'system', failure_type: 'feedback_failed', error_code: 'FEEDBACK_FAILED' });
    expect(records[0]!.error_message).toContain('hint template bug');
    expect(records[0]!.error_message).toContain('execution / tool_reported_error');
  });

  it('records a success whose record cannot be built at stage feedback, and still hands the agent the answer', async () => {
    const tool = defineTool({ name: 'ping', description: 'answers', input: { type: 'object', properties: {} }, execute: () => ({ pong: true }) });
    const records: ToolExecutionRecord[] = [];
    const rt = createRuntime({ tools: [tool], clock: createVirtualClock(), onRecord: (r) => records.push(r) });
    // A context the caller built with a getter that throws: reading it fails while the record is made.
    const context = Object.defineProperty({}, 'tenant', {
      enumerable: true,
      get() {
        throw new Error('unreadable context');
      },
    });
    const r = await rt.execute('ping', {}, { context });
    expect(r.ok && r.output).toEqual({ pong: true });
    expect(records[0]).toMatchObject({ status: 'failure', failure_stage: 'feedback', failure_type: 'feedback_failed', raw_output: null, context_snapshot: {} });
    expect(records[0]!.error_message).toContain('unreadable context');
    expect(records[0]!.error_message).toContain('the tool itself answered');
  });
});
