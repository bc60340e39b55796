/**
 * The Store contract: one vitest suite that every adapter runs (memory, sqlite, postgres).
 *
 * Expected values are computed here from the raw records, independently of `rollup.ts`, so an
 * adapter cannot pass by sharing a bug with the rollup code. Percentiles are checked against the
 * exact nearest-rank percentile within the sketch's relative error.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import { seededRandom } from '../core/seeded-random.js';
import type { AttemptRecord, ToolExecutionRecord } from '../core/record-types.js';
import type { CallStatus, FailureCategory, FailureStage } from '../core/taxonomy.js';
import { assembleTrajectory, stepFailure } from '../trajectory/assemble.js';
import { hasTrajectoryStore } from './trajectory-row.js';
import type { Trajectory, TrajectorySource, TrajectoryStep } from '../core/trajectory-types.js';
import { correctionMemoryContract } from './corrections-contract.test-helpers.js';
import { exactPercentile, SKETCH_RELATIVE_ERROR } from './duration-sketch.js';
import { createMemoryStore } from './memory/memory-store.js';
import type { FailureBreakdownRow, Store, StatsFilter, ToolStats } from '../core/store-types.js';

const HOUR = 3_600_000;
/** Monday 2025-03-10 08:00:00Z: every fixture timestamp is fixed relative to this. */
export const CONTRACT_T0 = Date.UTC(2025, 2, 10, 8, 0, 0, 0);
const iso = (ms: number): string => new Date(ms).toISOString();

interface Shape {
  status: Exclude<CallStatus, 'success'>;
  stage: FailureStage;
  category: FailureCategory;
  type: string;
  code: string | null;
  message: (n: number) => string;
}

const TOOL_SHAPES: Record<string, Shape[]> = {
  get_weather: [
    { status: 'timeout', stage: 'execution', category: 'network', type: 'timeout', code: 'TIMEOUT', message: (n) => `timed out after ${3000 + n}ms` },
    { status: 'failure', stage: 'result_parse', category: 'system', type: 'output_schema_mismatch', code: null, message: () => 'output.temperature: expected number, got string' },
  ],
  search_orders: [
    { status: 'failure', stage: 'execution', category: 'business', type: 'not_found', code: 'HTTP_404', message: (n) => `order ${1000 + n} not found` },
    { status: 'rejected', stage: 'param_validation', category: 'parameter', type: 'missing_required', code: null, message: () => "must have required property 'customer_id'" },
    { status: 'rejected', stage: 'param_validation', category: 'parameter', type: 'enum_mismatch', code: null, message: (n) => `status must be one of open, closed (got "pending-${n}")` },
  ],
  send_email: [
    { status: 'failure', stage: 'execution', category: 'rate_limit', type: 'rate_limited', code: 'HTTP_429', message: (n) => `429 Too Many Requests, retry after ${n % 30}s` },
    { status: 'failure', stage: 'execution', category: 'auth', type: 'credential_expired', code: 'HTTP_401', message: (n) => `token for ops+${n}@example.com expired` },
    { status: 'timeout', stage: 'execution', category: 'network', type: 'connection_reset', code: 'ECONNRESET', message: () => 'socket hang up' },
  ],
  query_db: [
    { status: 'failure', stage: 'execution', category: 'system', type: 'server_error', code: 'HTTP_503', message: (n) => `upstream https://db-${n % 3}.internal:5432/q returned 503` },
    { status: 'rejected', stage: 'execution', category: 'system', type: 'circuit_open', code: 'CIRCUIT_OPEN', message: () => 'circuit open for query_db' },
  ],
};
const TOOLS = Object.keys(TOOL_SHAPES);

function attemptsFor(startMs: number, retryCount: number, last: Pick<AttemptRecord, 'outcome' | 'failure_type' | 'error_code'>, durationMs: number): AttemptRecord[] {
  const attempts: AttemptRecord[] = [];
  let t = startMs;
  const each = Math.max(0, Math.floor(durationMs / (retryCount + 1)));
  for (let a = 0; a <= retryCount; a++) {
    const delay = a === 0 ? 0 : 100 * 2 ** (a - 1);
    t += delay;
    const isLast = a === retryCount;
    attempts.push({
      attempt: a,
      started_at: iso(t),
      duration_ms: each,
      outcome: isLast ? last.outcome : 'failure',
      failure_type: isLast ? last.failure_type : 'timeout',
      error_code: isLast ? last.error_code : 'TIMEOUT',
      delay_before_ms: delay,
    });
    t += each;
  }
  return attempts;
}

/**
 * A varied, deterministic dataset: four tools over hours 0, 1 and 2 after {@link CONTRACT_T0}
 * (plus a few records in hour 5), with successes, every status, retries, breaker trips, parameter
 * rejections and repeated error messages that differ only in ids.
 */
export function contractDataset(count = 240): ToolExecutionRecord[] {
  // Seeded, so the dataset is varied but identical on every run.
  const rand = seededRandom(20250310);
  const out: ToolExecutionRecord[] = [];
  for (let i = 0; i < count; i++) {
    const tool = TOOLS[i % TOOLS.length]!;
    const hour = i % 17 === 0 ? 5 : Math.floor(rand() * 3);
    const createdMs = CONTRACT_T0 + hour * HOUR + Math.floor(rand() * HOUR);
    // Log-uniform durations from 1 ms to ~4 s, with exact zeros for cached answers.
    const duration = rand() < 0.05 ? 0 : Math.round(Math.exp(rand() * Math.log(4000)));
    const failing = rand() < 0.45;
    const traceId = `trace-${Math.floor(i / 6)}`;
    const common = {
      created_at: iso(createdMs),
      tool_name: tool,
      trace_id: traceId,
      step_index: i % 6,
      duration_ms: duration,
      input_params: { q: `query ${i}`, page: i % 4, tags: i % 2 === 0 ? ['a', 'b'] : [] },
      params_hash: `h${(i * 2654435761) % 4294967296}`,
      context_snapshot: { intent: i % 3 === 0 ? 'lookup' : 'update', session_id: `s-${i % 5}` },
    } satisfies Partial<ToolExecutionRecord>;
    if (!failing) {
      const retryCount = rand() < 0.2 ? 1 + Math.floor(rand() * 2) : 0;
      out.push(
        makeRecord({
          ...common,
          retry_count: retryCount,
          attempts: attemptsFor(createdMs, retryCount, { outcome: 'success', failure_type: null, error_code: null }, duration),
          recovery: retryCount > 0 ? 'auto_recovered' : 'none',
          summary_only: i % 11 === 0,
        }),
      );
      continue;
    }
    const shapes = TOOL_SHAPES[tool]!;
    const shape = shapes[Math.floor(rand() * shapes.length)]!;
    const retryCount = shape.category === 'network' || shape.category === 'rate_limit' ? Math.floor(rand() * 4) : 0;
    const breakerState =
      shape.type === 'circuit_open' ? 'open' : shape.category === 'system' && rand() < 0.3 ? 'open' : 'closed';
    out.push(
      makeFailureRecord({
        ...common,
        status: shape.status,
        failure_stage: shape.stage,
        failure_category: shape.category,
        failure_type: shape.type,
        error_code: shape.code,
        error_message: shape.message(Math.floor(rand() * 50)),
        retry_count: retryCount,
        attempts:
          shape.status === 'rejected'
            ? []
            : attemptsFor(createdMs, retryCount, { outcome: shape.status === 'timeout' ? 'timeout' : 'failure', failure_type: shape.type, error_code: shape.code }, duration),
        breaker_state: breakerState,
        idempotent: tool !== 'send_email',
      }),
    );
  }
  return out;
}

/** What toolStats must return, computed from raw records (percentiles exact, checked loosely). */
function expectedToolStats(records: readonly ToolExecutionRecord[]): (ToolStats & { durations: number[] })[] {
  const byTool = new Map<string, ToolExecutionRecord[]>();
  for (const r of records) byTool.set(r.tool_name, [...(byTool.get(r.tool_name) ?? []), r]);
  return [...byTool.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([tool, rs]) => {
      const n = (p: (r: ToolExecutionRecord) => boolean) => rs.filter(p).length;
      const total = rs.length;
      const durations = rs.map((r) => r.duration_ms);
      return {
        tool_name: tool,
        total,
        success: n((r) => r.status === 'success'),
        failure: n((r) => r.status === 'failure'),
        timeout: n((r) => r.status === 'timeout'),
        rejected: n((r) => r.status === 'rejected'),
        failure_rate: n((r) => r.status !== 'success') / total,
        retried_calls: n((r) => r.retry_count > 0),
        retry_rate: n((r) => r.retry_count > 0) / total,
        retries: rs.reduce((s, r) => s + r.retry_count, 0),
        breaker_trips: n((r) => r.breaker_state === 'open' && r.status !== 'rejected'),
        param_validation_failures: n((r) => r.failure_stage === 'param_validation'),
        param_validation_failure_rate: n((r) => r.failure_stage === 'param_validation') / total,
        p50_ms: exactPercentile(durations, 0.5),
        p95_ms: exactPercentile(durations, 0.95),
        avg_ms: durations.reduce((s, d) => s + d, 0) / total,
        durations,
      };
    });
}

function expectedBreakdown(records: readonly ToolExecutionRecord[]): FailureBreakdownRow[] {
  const cells = new Map<string, FailureBreakdownRow>();
  for (const r of records) {
    if (r.status === 'success') continue;
    const key = JSON.stringify([r.tool_name, r.failure_stage, r.failure_category, r.failure_type]);
    const cell = cells.get(key);
    if (cell) cell.count += 1;
    else {
      cells.set(key, {
        tool_name: r.tool_name,
        failure_stage: r.failure_stage!,
        failure_category: r.failure_category!,
        failure_type: r.failure_type!,
        count: 1,
      });
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...cells.values()].sort(
    (a, b) =>
      b.count - a.count ||
      cmp(a.tool_name, b.tool_name) ||
      cmp(a.failure_stage, b.failure_stage) ||
      cmp(a.failure_category, b.failure_category) ||
      cmp(a.failure_type, b.failure_type),
  );
}

function expectWithinSketchError(actual: number | null, exact: number | null): void {
  if (exact === null) {
    expect(actual).toBeNull();
    return;
  }
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - exact)).toBeLessThanOrEqual(exact * SKETCH_RELATIVE_ERROR + 1e-9);
}

function createdMs(r: ToolExecutionRecord): number {
  return Date.parse(r.created_at);
}

const byId = (a: ToolExecutionRecord, b: ToolExecutionRecord) =>
  a.execution_id < b.execution_id ? -1 : a.execution_id > b.execution_id ? 1 : 0;

/** A record that exercises every field: nested JSON, unicode, multi-attempt history, fallback link. */
function richRecord(): ToolExecutionRecord {
  const createdMsValue = CONTRACT_T0 + 17 * 60_000 + 123;
  return makeFailureRecord({
    created_at: iso(createdMsValue),
    trace_id: 'trace-🌍-rich',
    step_index: 7,
    tool_name: 'book_flight',
    status: 'timeout',
    failure_stage: 'execution',
    failure_category: 'network',
    failure_type: 'timeout',
    error_code: 'TIMEOUT',
    input_params: {
      from: 'Zürich',
      to: '東京',
      passengers: [{ name: 'Zoë Ünal', age: 34 }, { name: '李雷', age: null }],
      flexible: true,
      budget: { amount: 1234.5, currency: 'CHF' },
      note: 'line1\nline2\t"quoted" \\ backslash \u2028 sep',
    },
    params_hash: 'a1b2c3d4e5f60718',
    raw_output: '{"partial":true,"message":"Zeitüberschreitung — 超时 ⏱"}',
    output_length: 48213,
    error_message: 'timed out after 5000ms waiting for https://api.example.com/v2/flights?id=88',
    error_stack: 'TimeoutError: timed out\n    at fetchFlights (flights.ts:42:11)\n    at async run (executor.ts:88:5)',
    duration_ms: 15123.25,
    retry_count: 2,
    attempts: [
      { attempt: 0, started_at: iso(createdMsValue), duration_ms: 5000, outcome: 'timeout', failure_type: 'timeout', error_code: 'TIMEOUT', delay_before_ms: 0 },
      { attempt: 1, started_at: iso(createdMsValue + 5250), duration_ms: 5000, outcome: 'timeout', failure_type: 'timeout', error_code: 'TIMEOUT', delay_before_ms: 250 },
      { attempt: 2, started_at: iso(createdMsValue + 10_873), duration_ms: 4250.25, outcome: 'timeout', failure_type: 'timeout', error_code: 'TIMEOUT', delay_before_ms: 623 },
    ],
    breaker_state: 'half_open',
    idempotent: false,
    fault: { kind: 'latency', rule_id: 'slow-flights', params: { delay_ms: 6000, jitter: [0.1, 0.2], nested: { on: true } }, transport: 'http' },
    feedback: { action: 'verify_state', hint: 'Booking may have happened; check before retrying. 予約を確認してください。', retryable: false, retry_after_ms: null },
    recovery: 'needs_decision',
    fallback: { role: 'primary', to: 'book_flight_backup', reason: 'timeout' },
    context_snapshot: { intent: 'book a flight ✈️', session_id: 'sess-42', agent: 'planner', model: 'gpt-x', extra: { depth: [1, [2, [3]]], empty: {} } },
  });
}

/** A success kept as a summary only: the nullable fields are null, attempts empty. */
function summaryRecord(): ToolExecutionRecord {
  return makeRecord({
    created_at: iso(CONTRACT_T0 + 18 * 60_000),
    trace_id: 'trace-summary',
    tool_name: 'get_weather',
    input_params: null,
    raw_output: null,
    output_length: null,
    attempts: [],
    summary_only: true,
    duration_ms: 0,
    context_snapshot: {},
  });
}

/** A record carrying a fallback link back to its primary, and input params that are not an object. */
function fallbackRecord(primaryId: string): ToolExecutionRecord {
  return makeRecord({
    created_at: iso(CONTRACT_T0 + 19 * 60_000),
    trace_id: 'trace-🌍-rich',
    step_index: 8,
    tool_name: 'book_flight_backup',
    input_params: ['ZRH', 'NRT', 2],
    recovery: 'auto_recovered',
    fallback: { role: 'fallback', from: 'book_flight', primary_execution_id: primaryId, reason: 'timeout' },
    feedback: { action: 'use_fallback', hint: 'served by the backup tool', retryable: true, retry_after_ms: 1500 },
    fault: { kind: 'none' },
  });
}

/** A trajectory with a failure, a recovery and awkward content (unicode, nesting, nulls). */
export function contractTrajectory(n: number, source: TrajectorySource = 'openai', sourceId: string | null = `conv-${n}`): Trajectory {
  const failed: TrajectoryStep = {
    step_index: 1,
    tool_name: 'query_sales_data',
    input_params: { month: '2026-03', region: '华南', granularity: 'daily', n },
    response: { status_code: 500, error_code: 'HTTP_500', message: 'Database connection timeout after 30s' },
    status: 'failure',
    ...stepFailure('system', 'server_error', 'execution'),
    agent_decision: { action: 'wait_and_retry', wait_seconds: 5, reasoning: '服务端超时，等待后重试' },
    decision_correctness: 'correct',
    correctness_reason: 'timeouts suit backoff',
    correct_action: null,
    source_ref: `call_${n}_a`,
  };
  const recovered: TrajectoryStep = {
    ...failed,
    step_index: 2,
    response: { status_code: 200, body: { records: 31, data: [1.5, null, 'x', { deep: [true] }] } },
    status: 'success',
    ...stepFailure('system', 'server_error', 'execution'),
    failure_type: null,
    failure_subtype: null,
    failure_category: null,
    failure_stage: null,
    failure_kind: null,
    agent_decision: { action: 'proceed' },
    decision_correctness: null,
    correctness_reason: null,
    source_ref: `call_${n}_b`,
  };
  return assembleTrajectory({
    source,
    source_id: sourceId,
    task_description: n % 2 === 0 ? `帮用户查询本月销售数据 #${n}` : null,
    final_outcome: n % 3 === 0 ? 'failure' : 'success',
    created_at: iso(CONTRACT_T0 + n * 1000),
    steps: n % 4 === 3 ? [recovered] : [failed, recovered],
    metadata: { domain: 'business_analytics', difficulty: 'easy' },
  });
}

/**
 * Registers the Store contract suite for one adapter. `makeStore` must return a fresh, empty
 * store each time it is called; each test closes the store it made. `cleanup` runs once at the end.
 */
export function runStoreContract(name: string, makeStore: () => Promise<Store>, cleanup?: () => Promise<void>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });
    if (cleanup !== undefined) afterAll(cleanup);

    const everything: StatsFilter = { since: CONTRACT_T0 - 24 * HOUR, until: CONTRACT_T0 + 48 * HOUR };

    describe('empty store', () => {
      it('returns empty results everywhere', async () => {
        expect(await store.get('0195d1a0-0000-7000-8000-000000000000')).toBeNull();
        expect(await store.query({})).toEqual([]);
        expect(await store.count()).toBe(0);
        expect(await store.count({ toolName: 'get_weather' })).toBe(0);
        expect(await store.toolStats(everything)).toEqual([]);
        expect(await store.failureBreakdown(everything)).toEqual([]);
        expect(await store.hourly(everything)).toEqual([]);
        expect(await store.signatures(everything)).toEqual([]);
      });

      it('accepts an empty batch', async () => {
        await store.insert([]);
        expect(await store.count()).toBe(0);
      });

      it('reports its kind', () => {
        expect(['memory', 'sqlite', 'postgres']).toContain(store.kind);
      });

      it('refuses a window or query bound that is not epoch ms, naming the field', async () => {
        const now = new Date(CONTRACT_T0);
        const bad = { since: now, until: CONTRACT_T0 } as unknown as StatsFilter;
        for (const read of [
          () => store.toolStats(bad),
          () => store.failureBreakdown(bad),
          () => store.hourly(bad),
          () => store.signatures(bad),
        ]) {
          await expect(read()).rejects.toMatchObject({ name: 'ConfigError', field: 'since', message: expect.stringMatching(/since must be epoch milliseconds .*a Date .*getTime/) });
        }
        await expect(store.toolStats({ since: CONTRACT_T0 } as StatsFilter)).rejects.toMatchObject({ field: 'until', message: expect.stringContaining('got undefined') });
        await expect(store.query({ until: '2026-12-01' as unknown as number })).rejects.toMatchObject({ field: 'until', message: expect.stringContaining('"2026-12-01"') });
        await expect(store.count({ since: Number.NaN })).rejects.toMatchObject({ field: 'since' });
        await expect(store.query({ limit: '10' as unknown as number })).rejects.toMatchObject({ field: 'limit' });
        // Numbers still work, and an empty window is an empty answer, not an error.
        expect(await store.toolStats({ since: CONTRACT_T0, until: CONTRACT_T0 })).toEqual([]);
        expect(await store.query({ since: CONTRACT_T0, limit: 0 })).toEqual([]);
      });
    });

    describe('insert and get', () => {
      it('refuses a batch holding a malformed record, naming its execution_id and the field, and stores none of it', async () => {
        const [good, base] = contractDataset(2) as [ToolExecutionRecord, ToolExecutionRecord];
        const malformed: [field: keyof ToolExecutionRecord, value: unknown][] = [
          ['duration_ms', Number.NaN],
          ['duration_ms', Number.POSITIVE_INFINITY],
          ['retry_count', 1.5],
          ['step_index', '3'],
          ['schema_version', 2 ** 40],
          ['output_length', -0.5],
          ['idempotent', 'yes'],
          ['summary_only', null],
          ['trace_id', undefined],
          ['status', 7],
          ['attempts', null],
          ['context_snapshot', null],
          ['created_at', 'yesterday'],
        ];
        for (const [field, value] of malformed) {
          const bad = { ...base, [field]: value } as ToolExecutionRecord;
          const inserting = store.insert([good, bad]);
          await expect(inserting, field).rejects.toSatisfy(ConfigError.isInstance);
          await expect(inserting, field).rejects.toMatchObject({
            field,
            message: expect.stringMatching(new RegExp(`^store\\.insert: record ${base.execution_id} has an invalid ${field}: expected .*, got `)),
          });
        }
        expect(await store.count()).toBe(0);
        expect(await store.toolStats(everything)).toEqual([]);
        // Valid records with the nullable numbers null still go in.
        await store.insert([good, { ...base, output_length: null }]);
        expect(await store.count()).toBe(2);
      });

      it('round-trips every field of rich, summary and fallback records', async () => {
        const rich = richRecord();
        const summary = summaryRecord();
        const fallback = fallbackRecord(rich.execution_id);
        await store.insert([rich, summary, fallback]);
        expect(await store.get(rich.execution_id)).toStrictEqual(rich);
        expect(await store.get(summary.execution_id)).toStrictEqual(summary);
        expect(await store.get(fallback.execution_id)).toStrictEqual(fallback);
        expect(await store.query({ traceId: rich.trace_id })).toStrictEqual([rich, fallback]);
      });

      it('round-trips the whole varied dataset through query', async () => {
        const data = contractDataset();
        await store.insert(data);
        expect(await store.query({ limit: 10_000 })).toStrictEqual([...data].sort(byId));
      });

      it('does not let later mutation of the inserted object change what is stored', async () => {
        const record = richRecord();
        const expected = structuredClone(record);
        await store.insert([record]);
        record.context_snapshot['intent'] = 'changed';
        record.attempts.length = 0;
        expect(await store.get(expected.execution_id)).toStrictEqual(expected);
      });

      it('gives arguments back with their keys in the order they were recorded', async () => {
        // JSON.stringify compares the text: toStrictEqual ignores key order, which is what a
        // model's training data keeps (jsonb, for one, sorts keys shortest first).
        const record = { ...richRecord(), input_params: { zone: 'UTC+8', date: '2026-03-29', a: { z: 1, b: [{ yy: 2, x: 3 }] } } };
        await store.insert([record]);
        expect(JSON.stringify((await store.get(record.execution_id))?.input_params)).toBe(JSON.stringify(record.input_params));
        expect(JSON.stringify((await store.query({ traceId: record.trace_id }))[0]?.input_params)).toBe(
          JSON.stringify(record.input_params),
        );
      });

      it('returns null for an unknown id', async () => {
        await store.insert([richRecord()]);
        expect(await store.get('0195d1a0-0000-7000-8000-000000000000')).toBeNull();
      });
    });

    describe('idempotent insert', () => {
      it('inserting the same batch twice changes neither counts nor stats', async () => {
        const data = contractDataset();
        await store.insert(data);
        const before = {
          count: await store.count(),
          stats: await store.toolStats(everything),
          breakdown: await store.failureBreakdown(everything),
          hourly: await store.hourly(everything),
          signatures: await store.signatures(everything),
        };
        await store.insert(data);
        await store.insert(data.slice(10, 50));
        expect(await store.count()).toBe(data.length);
        expect(await store.toolStats(everything)).toEqual(before.stats);
        expect(await store.failureBreakdown(everything)).toEqual(before.breakdown);
        expect(await store.hourly(everything)).toEqual(before.hourly);
        expect(await store.signatures(everything)).toEqual(before.signatures);
      });

      it('keeps the first copy when a batch repeats an id, and counts it once', async () => {
        const original = makeRecord({ created_at: iso(CONTRACT_T0 + 1000), tool_name: 'dup_tool' });
        const changed = { ...original, status: 'failure' as const, failure_stage: 'execution' as const, failure_category: 'system' as const, failure_type: 'server_error', error_message: 'boom' };
        await store.insert([original, changed]);
        await store.insert([changed]);
        expect(await store.count()).toBe(1);
        expect(await store.get(original.execution_id)).toStrictEqual(original);
        const [stats] = await store.toolStats(everything);
        expect(stats).toMatchObject({ tool_name: 'dup_tool', total: 1, success: 1, failure: 0 });
        expect(await store.signatures(everything)).toEqual([]);
      });

      it('counts only the new records of a partly known batch', async () => {
        const data = contractDataset(80);
        await store.insert(data.slice(0, 50));
        await store.insert(data.slice(30));
        expect(await store.count()).toBe(80);
        const stats = await store.toolStats(everything);
        expect(stats.reduce((s, t) => s + t.total, 0)).toBe(80);
        expect(stats.map((s) => [s.tool_name, s.total, s.retries])).toEqual(
          expectedToolStats(data).map((s) => [s.tool_name, s.total, s.retries]),
        );
      });
    });

    describe('query', () => {
      let data: ToolExecutionRecord[];
      let sorted: ToolExecutionRecord[];
      beforeEach(async () => {
        data = contractDataset();
        sorted = [...data].sort(byId);
        // Out of order on purpose: the store, not the caller, orders by execution_id.
        await store.insert(data.slice(120));
        await store.insert(data.slice(0, 120));
      });

      it('orders by execution_id ascending by default and descending on request', async () => {
        expect((await store.query({})).map((r) => r.execution_id)).toEqual(sorted.map((r) => r.execution_id));
        expect((await store.query({ order: 'desc' })).map((r) => r.execution_id)).toEqual(
          [...sorted].reverse().map((r) => r.execution_id),
        );
      });

      it('filters by trace, tool and statuses', async () => {
        const trace = await store.query({ traceId: 'trace-3' });
        expect(trace).toStrictEqual(sorted.filter((r) => r.trace_id === 'trace-3'));
        expect(trace.length).toBeGreaterThan(0);

        const tool = await store.query({ toolName: 'send_email' });
        expect(tool.map((r) => r.execution_id)).toEqual(sorted.filter((r) => r.tool_name === 'send_email').map((r) => r.execution_id));

        const bad = await store.query({ statuses: ['timeout', 'rejected'] });
        const expectedBad = sorted.filter((r) => r.status === 'timeout' || r.status === 'rejected');
        expect(expectedBad.length).toBeGreaterThan(0);
        expect(bad.map((r) => r.execution_id)).toEqual(expectedBad.map((r) => r.execution_id));

        expect(await store.query({ statuses: [] })).toEqual([]);

        const combined = await store.query({ toolName: 'query_db', statuses: ['failure'] });
        expect(combined.map((r) => r.execution_id)).toEqual(
          sorted.filter((r) => r.tool_name === 'query_db' && r.status === 'failure').map((r) => r.execution_id),
        );
        expect(await store.query({ toolName: 'no_such_tool' })).toEqual([]);
      });

      it('filters by created_at with since inclusive and until exclusive', async () => {
        const boundary = sorted[40]!;
        const since = createdMs(boundary);
        const until = since + HOUR / 2;
        const inWindow = (r: ToolExecutionRecord) => createdMs(r) >= since && createdMs(r) < until;
        const got = await store.query({ since, until });
        expect(got.map((r) => r.execution_id)).toEqual(sorted.filter(inWindow).map((r) => r.execution_id));
        expect(got.map((r) => r.execution_id)).toContain(boundary.execution_id);
        expect((await store.query({ until: since })).map((r) => r.execution_id)).not.toContain(boundary.execution_id);
        expect(await store.count({ since, until })).toBe(sorted.filter(inWindow).length);
        expect(await store.count({ since: CONTRACT_T0 + 5 * HOUR })).toBe(sorted.filter((r) => createdMs(r) >= CONTRACT_T0 + 5 * HOUR).length);
      });

      it('pages with limit and the afterId cursor in both orders', async () => {
        const pages: string[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await store.query({ limit: 37, ...(cursor === undefined ? {} : { afterId: cursor }) });
          expect(page.length).toBeLessThanOrEqual(37);
          if (page.length === 0) break;
          pages.push(...page.map((r) => r.execution_id));
          cursor = page[page.length - 1]!.execution_id;
        }
        expect(pages).toEqual(sorted.map((r) => r.execution_id));

        const pivot = sorted[100]!.execution_id;
        const after = await store.query({ afterId: pivot, limit: 5 });
        expect(after.map((r) => r.execution_id)).toEqual(sorted.slice(101, 106).map((r) => r.execution_id));
        const before = await store.query({ afterId: pivot, limit: 5, order: 'desc' });
        expect(before.map((r) => r.execution_id)).toEqual(sorted.slice(95, 100).reverse().map((r) => r.execution_id));

        const filtered = await store.query({ afterId: pivot, toolName: 'get_weather', limit: 3 });
        expect(filtered.map((r) => r.execution_id)).toEqual(
          sorted.slice(101).filter((r) => r.tool_name === 'get_weather').slice(0, 3).map((r) => r.execution_id),
        );
      });

      it('applies a default limit of 1000', async () => {
        const bulk = Array.from({ length: 900 }, (_, i) =>
          makeRecord({ tool_name: 'bulk_tool', trace_id: `bulk-${i % 30}`, created_at: iso(CONTRACT_T0 + 30 * HOUR + i) }),
        );
        await store.insert(bulk);
        expect(await store.count()).toBe(1140);
        expect(await store.query({})).toHaveLength(1000);
        expect(await store.query({ limit: 0 })).toEqual([]);
      });

      it('counts with the same filters as query', async () => {
        expect(await store.count()).toBe(data.length);
        expect(await store.count({ toolName: 'search_orders', statuses: ['rejected'] })).toBe(
          data.filter((r) => r.tool_name === 'search_orders' && r.status === 'rejected').length,
        );
        expect(await store.count({ traceId: 'trace-0' })).toBe(data.filter((r) => r.trace_id === 'trace-0').length);
      });
    });

    describe('toolStats', () => {
      it('matches totals, rates and percentiles computed from the raw records', async () => {
        const data = contractDataset();
        await store.insert(data);
        const stats = await store.toolStats(everything);
        const expected = expectedToolStats(data);
        expect(stats.map((s) => s.tool_name)).toEqual(expected.map((s) => s.tool_name));
        for (const [i, exp] of expected.entries()) {
          const got = stats[i]!;
          expect(got).toMatchObject({
            tool_name: exp.tool_name,
            total: exp.total,
            success: exp.success,
            failure: exp.failure,
            timeout: exp.timeout,
            rejected: exp.rejected,
            retried_calls: exp.retried_calls,
            retries: exp.retries,
            breaker_trips: exp.breaker_trips,
            param_validation_failures: exp.param_validation_failures,
          });
          expect(got.failure_rate).toBeCloseTo(exp.failure_rate, 12);
          expect(got.retry_rate).toBeCloseTo(exp.retry_rate, 12);
          expect(got.param_validation_failure_rate).toBeCloseTo(exp.param_validation_failure_rate, 12);
          expect(got.avg_ms).toBeCloseTo(exp.avg_ms!, 9);
          expectWithinSketchError(got.p50_ms, exp.p50_ms);
          expectWithinSketchError(got.p95_ms, exp.p95_ms);
        }
        // The dataset must exercise every counter, or the checks above prove little.
        const sum = (k: keyof ToolStats) => stats.reduce((s, t) => s + Number(t[k]), 0);
        for (const k of ['failure', 'timeout', 'rejected', 'retried_calls', 'breaker_trips', 'param_validation_failures'] as const) {
          expect(sum(k)).toBeGreaterThan(0);
        }
      });

      it('filters by tool', async () => {
        const data = contractDataset();
        await store.insert(data);
        const stats = await store.toolStats({ ...everything, toolName: 'search_orders' });
        expect(stats).toHaveLength(1);
        expect(stats[0]!.total).toBe(data.filter((r) => r.tool_name === 'search_orders').length);
        expect(await store.toolStats({ ...everything, toolName: 'nope' })).toEqual([]);
      });

      it('computes percentiles of a known distribution within the sketch error', async () => {
        const durations = [5, 7, 12.5, 12, 13, 20, 40, 41, 90, 120, 250, 800, 1500, 2100, 9000, 12, 13, 14.25, 15, 16];
        await store.insert(
          durations.map((d, i) => makeRecord({ tool_name: 'known', duration_ms: d, created_at: iso(CONTRACT_T0 + i * 1000) })),
        );
        const [stats] = await store.toolStats(everything);
        expectWithinSketchError(stats!.p50_ms, exactPercentile(durations, 0.5));
        expectWithinSketchError(stats!.p95_ms, exactPercentile(durations, 0.95));
        expect(stats!.avg_ms).toBeCloseTo(durations.reduce((a, b) => a + b, 0) / durations.length, 9);
        expect(stats).toMatchObject({ total: 20, success: 20, failure_rate: 0, retry_rate: 0, breaker_trips: 0 });
      });
    });

    describe('failureBreakdown', () => {
      it('counts failures per tool, stage, category and type, largest first', async () => {
        const data = contractDataset();
        await store.insert(data);
        const expected = expectedBreakdown(data);
        expect(expected.length).toBeGreaterThan(5);
        expect(await store.failureBreakdown(everything)).toEqual(expected);
        expect(await store.failureBreakdown({ ...everything, toolName: 'send_email' })).toEqual(
          expected.filter((r) => r.tool_name === 'send_email'),
        );
      });
    });

    describe('hourly', () => {
      it('returns one point per tool and hour, in hour order', async () => {
        const data = contractDataset();
        await store.insert(data);
        const points = await store.hourly(everything);
        const hours = new Set(points.map((p) => p.hour));
        expect(hours).toEqual(new Set([0, 1, 2, 5].map((h) => iso(CONTRACT_T0 + h * HOUR))));
        const keys = points.map((p) => `${p.hour} ${p.tool_name}`);
        expect(keys).toEqual([...keys].sort());
        for (const p of points) {
          const start = Date.parse(p.hour);
          const rs = data.filter((r) => r.tool_name === p.tool_name && createdMs(r) >= start && createdMs(r) < start + HOUR);
          expect(p).toMatchObject({
            total: rs.length,
            failures: rs.filter((r) => r.status !== 'success').length,
            retried_calls: rs.filter((r) => r.retry_count > 0).length,
            breaker_trips: rs.filter((r) => r.breaker_state === 'open' && r.status !== 'rejected').length,
          });
          expectWithinSketchError(p.p95_ms, exactPercentile(rs.map((r) => r.duration_ms), 0.95));
        }
        expect(points.reduce((s, p) => s + p.total, 0)).toBe(data.length);
      });
    });

    describe('windows', () => {
      it('exclude data outside them, at hour granularity', async () => {
        const data = contractDataset();
        await store.insert(data);
        const hour1 = { since: CONTRACT_T0 + HOUR, until: CONTRACT_T0 + 2 * HOUR };
        const inHour1 = data.filter((r) => createdMs(r) >= hour1.since && createdMs(r) < hour1.until);
        expect(inHour1.length).toBeGreaterThan(0);
        expect(inHour1.length).toBeLessThan(data.length);

        const stats = await store.toolStats(hour1);
        expect(stats.map((s) => [s.tool_name, s.total, s.failure, s.retries])).toEqual(
          expectedToolStats(inHour1).map((s) => [s.tool_name, s.total, s.failure, s.retries]),
        );
        expect(await store.failureBreakdown(hour1)).toEqual(expectedBreakdown(inHour1));
        const points = await store.hourly(hour1);
        expect(new Set(points.map((p) => p.hour))).toEqual(new Set([iso(hour1.since)]));

        // A window that is not hour-aligned covers every hour it overlaps.
        const ragged = { since: CONTRACT_T0 + HOUR + 20 * 60_000, until: CONTRACT_T0 + HOUR + 40 * 60_000 };
        expect((await store.toolStats(ragged)).reduce((s, t) => s + t.total, 0)).toBe(inHour1.length);

        const nothing = { since: CONTRACT_T0 + 10 * HOUR, until: CONTRACT_T0 + 20 * HOUR };
        expect(await store.toolStats(nothing)).toEqual([]);
        expect(await store.failureBreakdown(nothing)).toEqual([]);
        expect(await store.hourly(nothing)).toEqual([]);
        expect(await store.signatures(nothing)).toEqual([]);
        const before = { since: CONTRACT_T0 - 5 * HOUR, until: CONTRACT_T0 };
        expect(await store.toolStats(before)).toEqual([]);
      });
    });

    describe('signatures', () => {
      const notFound = (minute: number, orderId: number, code = 'HTTP_404') =>
        makeFailureRecord({
          created_at: iso(CONTRACT_T0 + minute * 60_000),
          tool_name: 'lookup_order',
          failure_stage: 'execution',
          failure_category: 'business',
          failure_type: 'not_found',
          error_code: code,
          error_message: `order ${orderId} not found`,
        });

      it('merges messages that differ only in ids and keeps first_seen across batches', async () => {
        const first = notFound(10, 123);
        await store.insert([first, notFound(12, 456)]);
        await store.insert([notFound(50, 789), notFound(30, 1011)]);
        await store.insert([notFound(20, 77, 'HTTP_410')]);

        const sigs = await store.signatures(everything);
        expect(sigs).toHaveLength(2);
        const [main, other] = sigs;
        expect(main).toMatchObject({
          tool_name: 'lookup_order',
          failure_stage: 'execution',
          failure_type: 'not_found',
          error_code: 'HTTP_404',
          normalized_message: 'order <n> not found',
          first_seen: first.created_at,
          last_seen: iso(CONTRACT_T0 + 50 * 60_000),
          count: 4,
        });
        expect(main!.signature).toMatch(/^[0-9a-f]{8,64}$/);
        expect(other).toMatchObject({ error_code: 'HTTP_410', count: 1, normalized_message: 'order <n> not found' });
        expect(other!.signature).not.toBe(main!.signature);

        // A later batch with an earlier record moves first_seen back; it never moves forward.
        await store.insert([notFound(5, 1)]);
        const [updated] = await store.signatures(everything);
        expect(updated).toMatchObject({ first_seen: iso(CONTRACT_T0 + 5 * 60_000), count: 5, signature: main!.signature });
      });

      it('returns signatures last seen in the window, with all-time first_seen and count', async () => {
        await store.insert([notFound(10, 1), notFound(70, 2), notFound(130, 3)]);
        const lastHour = { since: CONTRACT_T0 + 2 * HOUR, until: CONTRACT_T0 + 3 * HOUR };
        const [sig] = await store.signatures(lastHour);
        expect(sig).toMatchObject({ first_seen: iso(CONTRACT_T0 + 10 * 60_000), last_seen: iso(CONTRACT_T0 + 130 * 60_000), count: 3 });
        expect(await store.signatures({ since: CONTRACT_T0, until: CONTRACT_T0 + 2 * HOUR })).toEqual([]);
        expect(await store.signatures({ ...everything, toolName: 'other_tool' })).toEqual([]);
      });

      it('groups the varied dataset by shape, most frequent first', async () => {
        const data = contractDataset();
        await store.insert(data);
        const sigs = await store.signatures(everything);
        const failures = data.filter((r) => r.status !== 'success');
        expect(sigs.reduce((s, g) => s + g.count, 0)).toBe(failures.length);
        // Far fewer shapes than failures: ids, numbers, URLs and emails were normalized away.
        expect(sigs.length).toBeLessThan(failures.length / 4);
        expect(sigs.map((s) => s.count)).toEqual([...sigs.map((s) => s.count)].sort((a, b) => b - a));
        for (const s of sigs) {
          const members = failures.filter(
            (r) => r.tool_name === s.tool_name && r.failure_type === s.failure_type && r.error_code === s.error_code && r.failure_stage === s.failure_stage,
          );
          expect(members.length).toBeGreaterThanOrEqual(s.count);
          expect(s.normalized_message).not.toMatch(/\d/);
        }
        expect((await store.signatures({ ...everything, toolName: 'send_email' })).every((s) => s.tool_name === 'send_email')).toBe(true);
      });
    });

    describe('prune', () => {
      /** Stats answers with avg_ms rounded: subtracting durations from a float sum leaves a residue of 1e-12. */
      const statsOf = async (s: Store, filter: StatsFilter) => ({
        tools: (await s.toolStats(filter)).map((t) => ({ ...t, avg_ms: t.avg_ms === null ? null : Math.round(t.avg_ms * 1e6) / 1e6 })),
        breakdown: await s.failureBreakdown(filter),
        hourly: await s.hourly(filter),
        signatures: (await s.signatures(filter)).map(({ first_seen: _first, ...rest }) => rest),
      });
      /** The same answers from a store holding only `records`, computed afresh. */
      const recomputed = async (records: readonly ToolExecutionRecord[], filter: StatsFilter) => {
        const reference = createMemoryStore();
        await reference.insert(records);
        return statsOf(reference, filter);
      };
      const byCreated = (a: ToolExecutionRecord, b: ToolExecutionRecord) => createdMs(a) - createdMs(b);

      it('deletes the records before the cutoff and leaves stats equal to those of the records that remain', async () => {
        if (store.prune === undefined) return;
        const data = contractDataset();
        await store.insert(data);
        const sigsBefore = await store.signatures(everything);
        // Mid-hour, so the hour it falls in keeps part of its records.
        const cutoff = CONTRACT_T0 + HOUR + 30 * 60_000;
        const kept = data.filter((r) => createdMs(r) >= cutoff);
        expect(await store.prune(cutoff)).toBe(data.length - kept.length);
        expect(await store.count()).toBe(kept.length);
        expect((await store.query({ limit: 10_000 })).map((r) => r.execution_id)).toEqual(kept.map((r) => r.execution_id).sort());

        expect(await statsOf(store, everything)).toEqual(await recomputed(kept, everything));
        const cutHour = { since: CONTRACT_T0 + HOUR, until: CONTRACT_T0 + 2 * HOUR };
        expect(await statsOf(store, cutHour)).toEqual(await recomputed(kept, cutHour));
        for (const t of await store.toolStats(everything)) {
          const exact = expectedToolStats(kept).find((e) => e.tool_name === t.tool_name)!;
          expect(t.total).toBe(exact.total);
          expectWithinSketchError(t.p95_ms, exact.p95_ms);
        }
        // Nothing is left of the hour before the cut.
        expect(await store.hourly({ since: CONTRACT_T0 - HOUR, until: CONTRACT_T0 + HOUR })).toEqual([]);
        // A signature that still has records keeps when it was first seen; the others are gone.
        for (const sig of await store.signatures(everything)) {
          expect(sig.first_seen).toBe(sigsBefore.find((b) => b.signature === sig.signature)!.first_seen);
        }
        const keptFailures = new Set((await recomputed(kept, everything)).signatures.map((g) => g.signature));
        expect((await store.signatures(everything)).map((g) => g.signature).sort()).toEqual([...keptFailures].sort());

        expect(await store.prune(cutoff)).toBe(0);
        expect(await statsOf(store, everything)).toEqual(await recomputed(kept, everything));
      });

      it('with a limit deletes the oldest first, and stats stay consistent after every step', async () => {
        if (store.prune === undefined) return;
        const data = contractDataset(120);
        await store.insert(data);
        const cutoff = CONTRACT_T0 + 2 * HOUR + 10 * 60_000;
        const sorted = [...data].sort(byCreated);
        const doomed = sorted.filter((r) => createdMs(r) < cutoff).length;
        let pruned = 0;
        for (;;) {
          const n = await store.prune(cutoff, { limit: 25 });
          expect(n).toBe(Math.min(25, doomed - pruned));
          pruned += n;
          const left = sorted.slice(pruned);
          expect(await store.count()).toBe(left.length);
          expect(await statsOf(store, everything)).toEqual(await recomputed(left, everything));
          if (n < 25) break;
        }
        expect(pruned).toBe(doomed);
      });

      it('refuses a cutoff or limit that is not a number, and leaves trajectories and corrections alone', async () => {
        if (store.prune === undefined) return;
        await expect(store.prune(Number.NaN)).rejects.toSatisfy(ConfigError.isInstance);
        await expect(store.prune(CONTRACT_T0, { limit: 0 })).rejects.toSatisfy(ConfigError.isInstance);
        expect(await store.prune(CONTRACT_T0)).toBe(0);
        if (hasTrajectoryStore(store)) {
          await store.insertTrajectories([contractTrajectory(1)]);
          await store.prune(CONTRACT_T0 + 365 * 24 * HOUR);
          expect(await store.countTrajectories()).toBe(1);
        }
      });
    });

    describe('trajectories', () => {
      const trajectoryStore = () => {
        if (!hasTrajectoryStore(store)) throw new Error(`${store.kind} store does not implement the trajectory methods`);
        return store;
      };
      const byTrajectoryId = (a: Trajectory, b: Trajectory) => (a.trajectory_id < b.trajectory_id ? -1 : 1);

      it('starts empty', async () => {
        const ts = trajectoryStore();
        expect(await ts.countTrajectories()).toBe(0);
        expect(await ts.getTrajectory('traj_missing')).toBeNull();
        expect(await ts.queryTrajectories()).toEqual([]);
        expect(await ts.insertTrajectories([])).toBe(0);
      });

      it('round-trips whole trajectories and counts by source', async () => {
        const ts = trajectoryStore();
        const batch = [contractTrajectory(1), contractTrajectory(2, 'tau-bench', '7:0'), contractTrajectory(3, 'step-log', null)];
        expect(await ts.insertTrajectories(batch)).toBe(3);
        for (const t of batch) expect(await ts.getTrajectory(t.trajectory_id)).toStrictEqual(t);
        expect(await ts.queryTrajectories()).toStrictEqual([...batch].sort(byTrajectoryId));
        expect(await ts.countTrajectories()).toBe(3);
        expect(await ts.countTrajectories({ source: 'tau-bench' })).toBe(1);
        expect(await ts.queryTrajectories({ source: 'step-log' })).toStrictEqual([batch[2]]);
      });

      it('gives trajectories back with the keys of every object in the order they were stored', async () => {
        const ts = trajectoryStore();
        const t = contractTrajectory(5);
        const [first] = t.steps;
        if (first === undefined) throw new Error('contractTrajectory has no steps');
        first.input_params = { zone: 'UTC+8', date: '2026-03-29', a: { z: 1, b: 2 } };
        await ts.insertTrajectories([t]);
        expect(JSON.stringify(await ts.getTrajectory(t.trajectory_id))).toBe(JSON.stringify(t));
        const updated = { ...t, steps: t.steps.map((step) => ({ ...step, input_params: { zz: 1, date: 'x', b: null } })) };
        await ts.updateTrajectories([updated]);
        expect(JSON.stringify((await ts.queryTrajectories())[0])).toBe(JSON.stringify(updated));
      });

      it('skips trajectories already stored by id or by (source, source_id), also within one batch', async () => {
        const ts = trajectoryStore();
        const first = contractTrajectory(1);
        expect(await ts.insertTrajectories([first, first])).toBe(1);
        expect(await ts.insertTrajectories([first])).toBe(0);
        // Same source and source id under another trajectory id: a re-import of changed content.
        const sameSource = { ...contractTrajectory(2), source_id: first.source_id, trajectory_id: 'traj_other' };
        expect(await ts.insertTrajectories([sameSource, contractTrajectory(4)])).toBe(1);
        expect(await ts.getTrajectory('traj_other')).toBeNull();
        expect(await ts.getTrajectory(first.trajectory_id)).toStrictEqual(first);
        // The same source id under another source is a different trajectory.
        expect(await ts.insertTrajectories([contractTrajectory(5, 'anthropic', first.source_id)])).toBe(1);
        expect(await ts.countTrajectories()).toBe(3);
      });

      it('replaces stored trajectories by id with updateTrajectories, ignoring unknown ids', async () => {
        const ts = trajectoryStore();
        const first = contractTrajectory(1);
        await ts.insertTrajectories([first, contractTrajectory(2)]);
        const annotated = { ...first, final_outcome: 'failure', metadata: { ...first.metadata, annotator: 'rules_v1' } } as Trajectory;
        expect(await ts.updateTrajectories([annotated, contractTrajectory(9)])).toBe(1);
        expect(await ts.getTrajectory(first.trajectory_id)).toStrictEqual(annotated);
        expect(await ts.getTrajectory(contractTrajectory(9).trajectory_id)).toBeNull();
        expect(await ts.countTrajectories()).toBe(2);
        expect(await ts.updateTrajectories([])).toBe(0);
      });

      it('pages by trajectory_id with afterId and limit, filtered by source', async () => {
        const ts = trajectoryStore();
        const all = Array.from({ length: 25 }, (_, i) => contractTrajectory(i, i % 5 === 0 ? 'otel' : 'openai'));
        expect(await ts.insertTrajectories(all)).toBe(25);
        const pages: Trajectory[][] = [];
        for (let afterId: string | undefined; ; ) {
          const page = await ts.queryTrajectories({ limit: 10, ...(afterId === undefined ? {} : { afterId }) });
          pages.push(page);
          if (page.length < 10) break;
          afterId = page[page.length - 1]!.trajectory_id;
        }
        expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
        expect(pages.flat()).toStrictEqual([...all].sort(byTrajectoryId));
        const otel = await ts.queryTrajectories({ source: 'otel', limit: 100 });
        expect(otel.map((t) => t.source_id)).toEqual(all.filter((t) => t.metadata.source === 'otel').sort(byTrajectoryId).map((t) => t.source_id));
        expect(await ts.queryTrajectories({ limit: 0 })).toEqual([]);
      });

      it('rejects a batch holding an invalid trajectory without storing any of it', async () => {
        const ts = trajectoryStore();
        const bad = { ...contractTrajectory(2), created_at: 'yesterday' };
        await expect(ts.insertTrajectories([contractTrajectory(1), bad])).rejects.toThrow(/invalid created_at/);
        expect(await ts.countTrajectories()).toBe(0);
      });
    });

    correctionMemoryContract(() => store);

    describe('close', () => {
      it('is safe to call twice', async () => {
        await store.insert([richRecord()]);
        await store.close();
        await expect(store.close()).resolves.toBeUndefined();
      });
    });
  });
}
