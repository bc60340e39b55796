/**
 * The data the Store contracts run on, and what the stores must answer for it.
 *
 * Expected values are computed here from the raw records, independently of `rollup.ts`, so an
 * adapter cannot pass by sharing a bug with the rollup code. Percentiles are checked against the
 * exact nearest-rank percentile within the sketch's relative error.
 */
import { expect } from 'vitest';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import { seededRandom } from '../../core/seeded-random.js';
import type { AttemptRecord, ToolExecutionRecord } from '../../core/record-types.js';
import type { CallStatus, FailureCategory, FailureStage } from '../../core/taxonomy.js';
import { assembleTrajectory, stepFailure } from '../../trajectory/assemble.js';
import type { Trajectory, TrajectorySource, TrajectoryStep } from '../../core/trajectory-types.js';
import { exactPercentile, SKETCH_RELATIVE_ERROR } from '../duration-sketch.js';
import type { FailureBreakdownRow, StatsFilter, ToolStats } from '../../core/store-types.js';

export const HOUR = 3_600_000;
/** Monday 2025-03-10 08:00:00Z: every fixture timestamp is fixed relative to this. */
export const CONTRACT_T0 = Date.UTC(2025, 2, 10, 8, 0, 0, 0);
export const iso = (ms: number): string => new Date(ms).toISOString();

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
export function expectedToolStats(records: readonly ToolExecutionRecord[]): (ToolStats & { durations: number[] })[] {
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

export function expectedBreakdown(records: readonly ToolExecutionRecord[]): FailureBreakdownRow[] {
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

export function expectWithinSketchError(actual: number | null, exact: number | null): void {
  if (exact === null) {
    expect(actual).toBeNull();
    return;
  }
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - exact)).toBeLessThanOrEqual(exact * SKETCH_RELATIVE_ERROR + 1e-9);
}

export function createdMs(r: ToolExecutionRecord): number {
  return Date.parse(r.created_at);
}

export const byId = (a: ToolExecutionRecord, b: ToolExecutionRecord) =>
  a.execution_id < b.execution_id ? -1 : a.execution_id > b.execution_id ? 1 : 0;

/** A record that exercises every field: nested JSON, unicode, multi-attempt history, fallback link. */
export function richRecord(): ToolExecutionRecord {
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
export function summaryRecord(): ToolExecutionRecord {
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
export function fallbackRecord(primaryId: string): ToolExecutionRecord {
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

/** A window holding every record of {@link contractDataset} (and every other fixture). */
export const CONTRACT_WINDOW: StatsFilter = { since: CONTRACT_T0 - 24 * HOUR, until: CONTRACT_T0 + 48 * HOUR };
