/**
 * Every fault kind through a real runtime on a virtual clock. The assertions are about what the
 * runtime made of the injected failure (its own classification, retries and waits), which is
 * the point of producing faults in the shapes real clients throw.
 */
import { describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { isoTime } from '../record/iso-time.js';
import { createVirtualClock, type VirtualClock } from '../core/clock.js';
import { defineTool, type ToolSpec } from '../runtime/define-tool.js';
import { createRuntime, type ExecuteResult, type Runtime, type RuntimeOptions } from '../runtime/runtime.js';
import { HttpError } from '../runtime/tool-errors.js';
import { createFaultPlan, type FaultPlan } from './plan.js';
import type { FaultRule } from './plan-spec.js';

interface World {
  weatherCalls: number;
  orders: number;
  stock: number;
}

const noInput = { type: 'object', properties: {} } as const;

function toolSpecs(world: World, clock: VirtualClock): Record<string, ToolSpec<any, unknown>> {
  return {
    get_weather: {
      name: 'get_weather',
      description: 'Weather for a city on a date.',
      input: { type: 'object', properties: { city: { type: 'string' } } },
      output: {
        type: 'object',
        properties: { city: { type: 'string' }, temperature: { type: 'number' }, date: { type: 'string' }, observed_at: { type: 'string' } },
        required: ['city', 'temperature', 'date', 'observed_at'],
      },
      idempotent: true,
      timeoutMs: 5000,
      execute: ({ city }: { city?: string }) => {
        world.weatherCalls++;
        return { city: city ?? 'Paris', temperature: 18, date: '2026-03-29', observed_at: '2026-03-29T14:23:11Z' };
      },
    },
    get_forecast: {
      name: 'get_forecast',
      description: 'Hourly forecast; no output schema.',
      input: noInput,
      idempotent: true,
      execute: () => ({ city: 'Paris', humidity: 71, hours: [{ t: 14 }, { t: 15 }, { t: 16 }, { t: 17 }] }),
    },
    list_cities: {
      name: 'list_cities',
      description: 'All cities.',
      input: noInput,
      idempotent: true,
      execute: () => ['Paris', 'Lyon'],
    },
    create_order: {
      name: 'create_order',
      description: 'Creates an order. Not idempotent.',
      input: noInput,
      timeoutMs: 2000,
      // A dry run (lost_write) answers with the order it would create, and creates none.
      execute: (_args: unknown, ctx: { dryRun?: boolean }) => (ctx.dryRun === true ? { id: world.orders + 1 } : { id: ++world.orders }),
    },
    cancel_order: {
      name: 'cancel_order',
      description: 'Cancels an order; there are none to cancel.',
      input: { type: 'object', properties: { id: { type: 'number' } } },
      execute: ({ id }: { id?: number }) => {
        throw new HttpError(404, `no order ${id ?? '?'}`, {}, { error: 'not_found', id: id ?? null });
      },
    },
    get_stock: {
      name: 'get_stock',
      description: 'Stock level, as of now.',
      input: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
      idempotent: true,
      execute: () => ({ qty: world.stock--, as_of: isoTime(clock.now()) }),
    },
  };
}

interface Setup {
  clock: VirtualClock;
  faults: FaultPlan;
  rt: Runtime;
  world: World;
  records: ToolExecutionRecord[];
}

function setup(rules: FaultRule[], options: { retries?: number; runtime?: Partial<RuntimeOptions> } = {}): Setup {
  const clock = createVirtualClock();
  const world: World = { weatherCalls: 0, orders: 0, stock: 10 };
  const faults = createFaultPlan({ version: 1, seed: 1, rules }, { clock });
  const records: ToolExecutionRecord[] = [];
  const specs = Object.values(toolSpecs(world, clock)).map((spec) => (options.retries === undefined ? spec : { ...spec, retry: { maxRetries: options.retries } }));
  const rt = createRuntime({ tools: specs.map((spec) => defineTool(spec)), clock, faults, seed: 7, onRecord: (r) => records.push(r), ...options.runtime });
  return { clock, faults, rt, world, records };
}

function failed(r: ExecuteResult): Extract<ExecuteResult, { ok: false }> {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.output)}`);
  return r;
}

function succeeded(r: ExecuteResult): Extract<ExecuteResult, { ok: true }> {
  if (!r.ok) throw new Error(`expected a success, got ${r.error.code}: ${r.error.message}`);
  return r;
}

describe('http_status', () => {
  it('429 with retry_after 30: rate_limit/rate_limited, the runtime waits 30 s of virtual time, then recovers', async () => {
    const { rt, clock, world } = setup([{ id: 'weather-429', tool: 'get_weather', trigger: 'first_call_only', fault: 'http_status', params: { status: 429, retry_after: 30 } }]);
    const r = succeeded(await rt.execute('get_weather', { city: 'Paris' }));
    expect(clock.slept).toBe(30_000);
    expect(world.weatherCalls).toBe(1);
    expect(r.record).toMatchObject({
      status: 'success',
      recovery: 'auto_recovered',
      retry_count: 1,
      fault: { kind: 'http_status', rule_id: 'weather-429', params: { status: 429, retry_after: 30 }, transport: 'inprocess' },
    });
    expect(r.record.attempts).toMatchObject([
      { failure_type: 'rate_limited', error_code: 'HTTP_429', fault_kind: 'http_status', delay_before_ms: 0 },
      { outcome: 'success', fault_kind: null, delay_before_ms: 30_000 },
    ]);
  });

  it('429 handed to the agent when retries are off, with the Retry-After it carried', async () => {
    const { rt, world } = setup([{ tool: 'get_weather', fault: 'http_status', params: { status: 429, retry_after: 30 } }], { retries: 0 });
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.error).toMatchObject({ stage: 'execution', category: 'rate_limit', type: 'rate_limited', code: 'HTTP_429', status: 429, retryAfterMs: 30_000 });
    expect(r.error.body).toEqual({ error: { status: 429, message: 'Too Many Requests' } });
    expect(r.feedback.action).toBe('wait_and_retry');
    expect(world.weatherCalls).toBe(0);
  });

  it('a 429 rule without retry_after carries the default Retry-After; retry_after: null carries none', async () => {
    const plain = setup([{ tool: 'get_weather', fault: 'http_status', params: { status: 429 } }], { retries: 0 });
    const limited = failed(await plain.rt.execute('get_weather', {}));
    expect(limited.error).toMatchObject({ code: 'HTTP_429', retryAfterMs: 2000 });
    expect(limited.record.fault).toMatchObject({ params: { status: 429, retry_after: 2 } });
    const silent = setup([{ tool: 'get_weather', fault: 'http_status', params: { status: 429, retry_after: null } }], { retries: 0 });
    const noHint = failed(await silent.rt.execute('get_weather', {}));
    expect(noHint.error.code).toBe('HTTP_429');
    expect(noHint.error.retryAfterMs).toBeUndefined();
    expect(noHint.record.feedback?.retry_after_ms).toBeNull();
  });

  it('Retry-After as an HTTP-date is resolved on the runtime clock', async () => {
    const { rt, clock } = setup([{ tool: 'get_weather', trigger: 'first_call_only', fault: 'http_status', params: { status: 503, retry_after: 'Thu, 01 Jan 2026 00:00:45 GMT' } }]);
    succeeded(await rt.execute('get_weather', {}));
    expect(clock.slept).toBe(45_000);
  });

  it.each([
    [400, 'parameter', 'schema_mismatch'],
    [401, 'auth', 'unauthorized'],
    [403, 'auth', 'forbidden'],
    [404, 'business', 'not_found'],
    [409, 'business', 'conflict'],
    [500, 'system', 'server_error'],
    [502, 'system', 'server_error'],
    [503, 'system', 'dependency_down'],
    [504, 'system', 'server_error'],
  ] as const)('%i is classified as %s/%s', async (status, category, type) => {
    const { rt, world, records } = setup([{ tool: 'get_weather', fault: 'http_status', params: { status } }], { retries: 0 });
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.error).toMatchObject({ category, type, code: `HTTP_${status}`, status });
    expect(world.weatherCalls).toBe(0);
    expect(records[0]!.fault).toEqual({ kind: 'http_status', rule_id: 'rule-0', params: { status }, transport: 'inprocess' });
  });

  it('a 502 after the upstream committed: the write happened once, and the agent is told to check', async () => {
    const { rt, world } = setup([{ tool: 'create_order', fault: 'http_status', params: { status: 502, commit: true } }]);
    const r = failed(await rt.execute('create_order', {}));
    expect(world.orders).toBe(1);
    expect(r.error).toMatchObject({ category: 'system', type: 'server_error', code: 'HTTP_502' });
    expect(r.record.attempts).toHaveLength(1);
    expect(r.feedback.action).toBe('verify_state');
  });

  it('a slow error arrives after delay_ms', async () => {
    const { rt } = setup([{ tool: 'get_weather', fault: 'http_status', params: { status: 500, delay_ms: 1200 } }], { retries: 0 });
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.record.duration_ms).toBe(1200);
    expect(r.error.type).toBe('server_error');
  });
});

describe('connection faults', () => {
  it('connection_refused: not ambiguous, so even a non-idempotent write is retried, and runs once', async () => {
    const { rt, world } = setup([{ tool: 'create_order', trigger: 'first_call_only', fault: 'connection_refused' }]);
    const r = succeeded(await rt.execute('create_order', {}));
    expect(world.orders).toBe(1);
    expect(r.record.attempts).toMatchObject([{ failure_type: 'connection_refused', error_code: 'ECONNREFUSED' }, { outcome: 'success' }]);
    expect(r.record.recovery).toBe('auto_recovered');
  });

  it('connection_reset on a non-idempotent tool: executed once, not retried, verify_state', async () => {
    const { rt, world } = setup([{ tool: 'create_order', fault: 'connection_reset', params: { commit: true } }]);
    const r = failed(await rt.execute('create_order', {}));
    expect(world.orders).toBe(1);
    expect(r.error).toMatchObject({ category: 'network', type: 'connection_reset', code: 'ECONNRESET' });
    expect(r.record.attempts).toHaveLength(1);
    expect(r.feedback.action).toBe('verify_state');
    expect(r.record.fault).toMatchObject({ kind: 'connection_reset', params: { commit: true } });
  });

  it('connection_reset on an idempotent tool is retried', async () => {
    const { rt, world } = setup([{ tool: 'get_weather', trigger: { nth: [1] }, fault: 'connection_reset' }]);
    succeeded(await rt.execute('get_weather', {}));
    expect(world.weatherCalls).toBe(1);
  });

  it('dns_failure', async () => {
    const { rt } = setup([{ tool: 'get_weather', fault: 'dns_failure' }], { retries: 0 });
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.error).toMatchObject({ category: 'network', type: 'dns_failure', code: 'ENOTFOUND' });
    expect(r.feedback.action).toBe('retry');
  });
});

describe('timeouts', () => {
  it('timeout without a delay never answers: the runtime times out at the tool deadline, leaving no timers', async () => {
    const { rt, clock, world } = setup([{ tool: 'create_order', fault: 'timeout' }]);
    const r = failed(await rt.execute('create_order', {}));
    expect(r.record).toMatchObject({ status: 'timeout', failure_type: 'timeout', error_code: 'TIMEOUT', duration_ms: 2000 });
    expect(world.orders).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it("timeout with delay_seconds: the tool's client gives up first, with a TimeoutError", async () => {
    const { rt } = setup([{ tool: 'get_weather', fault: 'timeout', params: { delay_seconds: 2 } }], { retries: 0 });
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.record).toMatchObject({ status: 'timeout', failure_category: 'network', failure_type: 'timeout', error_code: 'TIMEOUT', duration_ms: 2000 });
  });

  it("seed 000's fault_config (35 s against a 5 s tool timeout) ends at the runtime's deadline", async () => {
    const { rt, clock } = setup([{ tool: 'get_weather', trigger: 'first_call_only', fault: 'timeout', params: { delay_seconds: 35 } }]);
    const r = succeeded(await rt.execute('get_weather', {}));
    expect(r.record.attempts[0]).toMatchObject({ outcome: 'timeout', duration_ms: 5000 });
    expect(r.record.recovery).toBe('auto_recovered');
    expect(clock.pending).toBe(0);
  });

  it('hang', async () => {
    const { rt, clock } = setup([{ tool: 'get_weather', fault: 'hang' }], { retries: 1 });
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.record.attempts.map((a) => [a.outcome, a.duration_ms, a.fault_kind])).toEqual([
      ['timeout', 5000, 'hang'],
      ['timeout', 5000, 'hang'],
    ]);
    expect(clock.pending).toBe(0);
  });

  it('commit_then_drop: the side effect happens once, the caller sees a timeout and is told to verify', async () => {
    const { rt, world, clock } = setup([{ tool: 'create_order', fault: 'commit_then_drop' }]);
    const r = failed(await rt.execute('create_order', {}));
    expect(world.orders).toBe(1);
    expect(r.record).toMatchObject({ status: 'timeout', duration_ms: 2000, fault: { kind: 'commit_then_drop' } });
    expect(r.record.attempts).toHaveLength(1);
    expect(r.feedback.action).toBe('verify_state');
    expect(clock.pending).toBe(0);
  });
});

describe('latency', () => {
  it('delays the answer on the virtual clock and records the delay applied', async () => {
    const { rt } = setup([{ tool: 'get_weather', fault: 'latency', params: { ms: 300 } }]);
    const r = succeeded(await rt.execute('get_weather', {}));
    expect(r.record.duration_ms).toBe(300);
    expect(r.record.fault).toEqual({ kind: 'latency', rule_id: 'rule-0', params: { ms: 300, delay_ms: 300 }, transport: 'inprocess' });
  });

  it('latency beyond the tool timeout is a timeout, and the tool never runs', async () => {
    const { rt, world, clock } = setup([{ tool: 'get_weather', fault: 'latency', params: { ms: 8000 } }], { retries: 0 });
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.record).toMatchObject({ status: 'timeout', duration_ms: 5000 });
    expect(world.weatherCalls).toBe(0);
    expect(clock.pending).toBe(0);
  });

  it('sampled latencies repeat with the seed', async () => {
    const durations = async () => {
      const { rt } = setup([{ tool: 'get_weather', fault: 'latency', params: { distribution: 'uniform', min_ms: 100, max_ms: 900 } }]);
      const out: number[] = [];
      for (let i = 0; i < 5; i++) out.push((await rt.execute('get_weather', {})).record.duration_ms);
      return out;
    };
    const first = await durations();
    expect(await durations()).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
    for (const d of first) expect(d >= 100 && d <= 900).toBe(true);
  });
});

describe('output faults', () => {
  it('malformed_json: the tool ran, its output is an unparseable string', async () => {
    const { rt } = setup([{ tool: 'get_forecast', fault: 'malformed_json' }]);
    const r = succeeded(await rt.execute('get_forecast', {}));
    expect(typeof r.output).toBe('string');
    expect(() => JSON.parse(r.output as string)).toThrow(SyntaxError);
    expect(r.output).toBe('{"city":"Paris","humidity":71,"hours":');
  });

  it('malformed_json against an output schema is a result_parse failure', async () => {
    const { rt, world } = setup([{ tool: 'get_weather', fault: 'malformed_json', params: { text: '<html>upstream error</html>' } }]);
    const r = failed(await rt.execute('get_weather', {}));
    expect(world.weatherCalls).toBe(1);
    expect(r.error).toMatchObject({ stage: 'result_parse', category: 'system', type: 'output_schema_mismatch', code: 'OUTPUT_SCHEMA_MISMATCH' });
    expect(r.error.body).toBe('<html>upstream error</html>');
  });

  it('partial: fields and trailing items dropped, with a note', async () => {
    const { rt } = setup([{ tool: 'get_forecast', fault: 'partial', params: { drop_fields: ['humidity', 'hours.t'], drop_fraction: 0.5 } }]);
    const r = succeeded(await rt.execute('get_forecast', {}));
    expect(r.output).toEqual({ city: 'Paris', hours: [{}, {}], warning: 'partial result: humidity, hours.t unavailable; 2 of 4 items returned' });
  });

  it('partial dropping a required field breaks the output schema', async () => {
    const { rt } = setup([{ tool: 'get_weather', fault: 'partial', params: { drop_fields: ['temperature'], note_field: 'note', note: 'sensor offline' } }]);
    const r = failed(await rt.execute('get_weather', {}));
    expect(r.error).toMatchObject({ stage: 'result_parse', type: 'output_schema_mismatch' });
    expect(r.error.body).toEqual({ city: 'Paris', date: '2026-03-29', observed_at: '2026-03-29T14:23:11Z', note: 'sensor offline' });
  });

  it('empty keeps the shape', async () => {
    const { rt } = setup([
      { tool: 'get_forecast', fault: 'empty' },
      { tool: 'list_cities', fault: 'empty' },
    ]);
    expect(succeeded(await rt.execute('get_forecast', {})).output).toEqual({ city: 'Paris', humidity: 71, hours: [] });
    expect(succeeded(await rt.execute('list_cities', {})).output).toEqual([]);
  });

  it('schema_drift against a tool with an output schema: result_parse/output_schema_mismatch', async () => {
    const { rt } = setup([
      { id: 'renamed', tool: 'get_weather', when: { city: 'Paris' }, fault: 'schema_drift', params: { rename: { temperature: 'temp_c' } } },
      { id: 'retyped', tool: 'get_weather', when: { city: 'Lyon' }, fault: 'schema_drift', params: { retype: { temperature: 'string' } } },
    ]);
    const renamed = failed(await rt.execute('get_weather', { city: 'Paris' }));
    expect(renamed.error).toMatchObject({ stage: 'result_parse', category: 'system', type: 'output_schema_mismatch', code: 'OUTPUT_SCHEMA_MISMATCH' });
    expect(renamed.error.issues).toEqual([expect.objectContaining({ code: 'missing_required', path: 'temperature' })]);
    expect(Object.keys(renamed.error.body as object)).toEqual(['city', 'temp_c', 'date', 'observed_at']);
    const retyped = failed(await rt.execute('get_weather', { city: 'Lyon' }));
    expect(retyped.error.issues).toEqual([expect.objectContaining({ code: 'type_mismatch', path: 'temperature' })]);
    expect(retyped.record.fault).toMatchObject({ kind: 'schema_drift', rule_id: 'retyped' });
    // Output validation is the runtime's: the fault never pre-classifies.
    expect(retyped.feedback.action).toBe('skip');
  });

  it('semantic_drift: success, schema-valid, and wrong in exactly the declared way', async () => {
    const { rt } = setup([
      { id: 'date', tool: 'get_weather', when: { city: 'Paris' }, fault: 'semantic_drift', params: { shift_date: 1 } },
      { id: 'city', tool: 'get_weather', when: { city: 'Lyon' }, fault: 'semantic_drift', params: { other_entity: { field: 'city', values: ['Lyon', 'Marseille'] } } },
      { id: 'zone', tool: 'get_weather', when: { city: 'Nice' }, fault: 'semantic_drift', params: { timezone_shift: -8 } },
    ]);
    const date = succeeded(await rt.execute('get_weather', { city: 'Paris' }));
    expect(date.output).toEqual({ city: 'Paris', temperature: 18, date: '2026-03-30', observed_at: '2026-03-30T14:23:11Z' });
    expect(date.record).toMatchObject({ status: 'success', fault: { kind: 'semantic_drift', rule_id: 'date', params: { shift_date: 1 } } });
    const city = succeeded(await rt.execute('get_weather', { city: 'Lyon' }));
    expect(city.output).toMatchObject({ city: 'Marseille', temperature: 18 });
    const zone = succeeded(await rt.execute('get_weather', { city: 'Nice' }));
    expect(zone.output).toMatchObject({ date: '2026-03-29', observed_at: '2026-03-29T06:23:11Z' });
  });

  it('stale: first the fresh data aged, then the output seen a call ago, while the stock moved on', async () => {
    const { rt, clock, world } = setup([{ id: 'cache', tool: 'get_stock', fault: 'stale', params: { age_ms: 60_000, age_calls: 1 } }]);
    const first = succeeded(await rt.execute('get_stock', { sku: 'A' }));
    expect(first.output).toEqual({ qty: 10, as_of: '2025-12-31T23:59:00.000Z' });
    expect(first.record.fault?.params).toMatchObject({ served: 'aged' });
    await clock.advance(5000);
    const second = succeeded(await rt.execute('get_stock', { sku: 'A' }));
    expect(world.stock).toBe(8);
    expect(second.output).toEqual({ qty: 10, as_of: '2026-01-01T00:00:00.000Z' });
    expect(second.record.fault?.params).toMatchObject({ served: 'replay', replayed_age_ms: 5000 });
  });
});

describe('lost_write', () => {
  it('the call answers 200 as it would, and nothing changes: the tool ran as a dry run', async () => {
    const { rt, world } = setup([{ id: 'dropped', tool: 'create_order', trigger: 'first_call_only', fault: 'lost_write' }]);
    const lost = succeeded(await rt.execute('create_order', {}));
    expect(lost.output).toEqual({ id: 1 });
    expect(world.orders).toBe(0);
    expect(lost.record).toMatchObject({ status: 'success', fault: { kind: 'lost_write', rule_id: 'dropped', transport: 'inprocess' } });
    const real = succeeded(await rt.execute('create_order', {}));
    expect(real.output).toEqual({ id: 1 });
    expect(world.orders).toBe(1);
    expect(real.record.fault).toBeNull();
  });
});

describe('stale replays what the tool answered before', () => {
  it('an answer the runtime passed on without a fault is what a later stale call replays', async () => {
    const { rt, clock, world } = setup([{ id: 'lagging', tool: 'get_stock', trigger: { nth: [2] }, fault: 'stale', params: { age_ms: 1000, age_calls: 1 } }]);
    const fresh = succeeded(await rt.execute('get_stock', { sku: 'A' }));
    expect(fresh.record.fault).toBeNull();
    await clock.advance(5000);
    const replayed = succeeded(await rt.execute('get_stock', { sku: 'A' }));
    expect(world.stock).toBe(8);
    expect(replayed.output).toEqual(fresh.output);
    expect(replayed.record.fault?.params).toMatchObject({ served: 'replay', replayed_age_ms: 5000 });
  });
});

describe("faults that meet the tool's own failure", () => {
  const rules: FaultRule[] = [
    { id: 'cut', tool: 'cancel_order', fault: 'partial', params: { drop_fields: ['id'] } },
    { id: 'none', tool: 'cancel_order', fault: 'empty' },
    { id: 'v2', tool: 'cancel_order', fault: 'schema_drift', params: { rename: { id: 'order_id' } } },
    { id: 'cache', tool: 'cancel_order', fault: 'stale', params: { age_ms: 60_000 } },
    { id: 'garble', tool: 'cancel_order', fault: 'malformed_json' },
    { id: 'other', tool: 'cancel_order', fault: 'semantic_drift', params: { other_entity: { field: 'id', value: 7 } } },
    { id: 'lost', tool: 'cancel_order', fault: 'commit_then_drop' },
    { id: 'committed-502', tool: 'cancel_order', fault: 'http_status', params: { status: 502, commit: true } },
    { id: 'dry', tool: 'cancel_order', fault: 'lost_write' },
  ];
  it.each(rules.map((rule) => [rule.fault, rule] as const))(
    '%s: the error passes unchanged, the record names no fault and keeps the decision as fault_not_applied, as the proxies do',
    async (_kind, rule) => {
      const { rt } = setup([rule], { runtime: { context: { agent: 'tester' } } });
      const r = failed(await rt.execute('cancel_order', { id: 3 }));
      expect(r.error).toMatchObject({ code: 'HTTP_404', type: 'not_found', message: 'no order 3' });
      expect(r.record).toMatchObject({ status: 'failure', failure_type: 'not_found', fault: null, raw_output: '{"error":"not_found","id":3}' });
      expect(r.record.context_snapshot).toEqual({ agent: 'tester', fault_not_applied: { kind: rule.fault, rule_id: rule.id, params: expect.any(Object), transport: 'inprocess' } });
      expect(r.record.attempts.map((a) => a.fault_kind)).toEqual([null]);
    },
  );

  it('a fault that does not need an answer (a refused connection) is still ground truth on a failing tool', async () => {
    const { rt } = setup([{ id: 'refused', tool: 'cancel_order', fault: 'connection_refused' }], { retries: 0 });
    const r = failed(await rt.execute('cancel_order', { id: 3 }));
    expect(r.record).toMatchObject({ failure_type: 'connection_refused', fault: { kind: 'connection_refused', rule_id: 'refused' } });
    expect(r.record.context_snapshot).not.toHaveProperty('fault_not_applied');
  });
});

describe('credentials and rate limits', () => {
  it('auth_expiry after 2: calls 3 and later fail as expired credentials', async () => {
    const { rt, world } = setup([{ id: 'token', tool: '*', fault: 'auth_expiry', params: { after_calls: 2 } }]);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await rt.execute('get_weather', {}));
    expect(results.map((r) => r.ok)).toEqual([true, true, false, false]);
    const third = failed(results[2]!);
    expect(third.error).toMatchObject({ stage: 'execution', category: 'auth', type: 'credential_expired', code: 'HTTP_401', status: 401 });
    // The agent sees the challenge's error code only (auth-disclosure.ts); the record keeps it all.
    expect(third.error.body).toEqual({ auth_error: 'invalid_token' });
    expect(third.record.raw_output).toContain('The access token expired');
    expect(third.feedback.action).toBe('escalate_to_user');
    expect(third.record.attempts).toHaveLength(1);
    expect(world.weatherCalls).toBe(2);
    // One credential for every tool the rule matches.
    expect(failed(await rt.execute('create_order', {})).error.type).toBe('credential_expired');
  });

  it('rate_limit_burst: 429s once the bucket is empty, recovery after the refill in virtual time', async () => {
    const { rt, clock } = setup([{ id: 'burst', tool: 'get_weather', fault: 'rate_limit_burst', params: { capacity: 2, refill_per_sec: 0.5 } }], { retries: 0 });
    const burst = [];
    for (let i = 0; i < 3; i++) burst.push(await rt.execute('get_weather', {}));
    expect(burst.map((r) => r.ok)).toEqual([true, true, false]);
    const limited = failed(burst[2]!);
    expect(limited.error).toMatchObject({ category: 'rate_limit', type: 'rate_limited', code: 'HTTP_429', retryAfterMs: 2000 });
    expect(limited.record.fault).toEqual({ kind: 'rate_limit_burst', rule_id: 'burst', params: { capacity: 2, refill_per_sec: 0.5, retry_after: 2 }, transport: 'inprocess' });
    expect(failed(await rt.execute('get_weather', {})).error.type).toBe('rate_limited');
    await clock.advance(2000);
    succeeded(await rt.execute('get_weather', {}));
    expect(failed(await rt.execute('get_weather', {})).error.retryAfterMs).toBe(2000);
  });

  it('rate_limit_burst with retries on: the runtime honours Retry-After and the retry finds a token', async () => {
    const { rt, clock } = setup([{ tool: 'get_weather', fault: 'rate_limit_burst', params: { capacity: 1, refill_per_sec: 0.25 } }]);
    succeeded(await rt.execute('get_weather', {}));
    const r = succeeded(await rt.execute('get_weather', {}));
    expect(clock.slept).toBe(4000);
    expect(r.record).toMatchObject({ recovery: 'auto_recovered', fault: { kind: 'rate_limit_burst' } });
    expect(r.record.attempts.map((a) => a.fault_kind)).toEqual(['rate_limit_burst', null]);
  });
});

describe('the plan inside a running runtime', () => {
  it('globs pick the tools; untouched calls carry no fault', async () => {
    const { rt, world } = setup([{ id: 'writes', tool: 'create_*', fault: 'http_status', params: { status: 503 } }], { retries: 0 });
    expect(failed(await rt.execute('create_order', {})).record.fault?.rule_id).toBe('writes');
    const weather = succeeded(await rt.execute('get_weather', {}));
    expect(weather.record.fault).toBeNull();
    expect(weather.record.attempts[0]!.fault_kind).toBeNull();
    expect(world.orders).toBe(0);
  });

  it('max_injections: the fault stops after its budget and the runtime recovers', async () => {
    const { rt, faults } = setup([{ tool: 'get_weather', fault: 'http_status', params: { status: 503 }, max_injections: 1 }]);
    const first = succeeded(await rt.execute('get_weather', {}));
    expect(first.record).toMatchObject({ recovery: 'auto_recovered', fault: { kind: 'http_status' } });
    const second = succeeded(await rt.execute('get_weather', {}));
    expect(second.record.fault).toBeNull();
    expect(faults.state().rules['rule-0']).toEqual({ matched: { get_weather: 3 }, injections: 1 });
  });

  it('update() while running changes what the next calls get, keeping counters', async () => {
    const { rt, faults } = setup([{ id: 'outage', tool: 'get_weather', fault: 'http_status', params: { status: 503 } }], { retries: 0 });
    const session = rt.session({ traceId: 'run-1' });
    expect(failed(await session.execute('get_weather', {})).error.type).toBe('dependency_down');
    const inFlight = session.execute('get_weather', {});
    faults.update({ version: 1, rules: [{ id: 'outage', tool: 'get_weather', trigger: { nth: [4] }, fault: 'dns_failure' }] });
    // The call already planned keeps its fault; the plan applies from the next call on.
    expect(failed(await inFlight).error.type).toBe('dependency_down');
    succeeded(await session.execute('get_weather', {}));
    expect(failed(await session.execute('get_weather', {})).error.type).toBe('dns_failure');
    faults.update({ version: 1, rules: [] });
    succeeded(await session.execute('get_weather', {}));
  });

  it('the record carries the first fault; attempts carry each one', async () => {
    const { rt } = setup([
      { id: 'a', tool: 'get_weather', trigger: { nth: [1] }, fault: 'connection_reset' },
      { id: 'b', tool: 'get_weather', trigger: { nth: [2] }, fault: 'http_status', params: { status: 500 } },
      { id: 'c', tool: 'get_weather', trigger: { nth: [3] }, fault: 'semantic_drift', params: { shift_date: -2 } },
    ]);
    const r = succeeded(await rt.execute('get_weather', {}));
    expect(r.record.fault).toEqual({ kind: 'connection_reset', rule_id: 'a', params: {}, transport: 'inprocess' });
    expect(r.record.attempts.map((a) => [a.fault_kind, a.error_code])).toEqual([
      ['connection_reset', 'ECONNRESET'],
      ['http_status', 'HTTP_500'],
      ['semantic_drift', null],
    ]);
    expect(r.output).toMatchObject({ date: '2026-03-27' });
  });
});
