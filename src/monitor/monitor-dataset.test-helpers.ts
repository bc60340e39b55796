/**
 * A day of tool calls built so that every alert rule and every stats figure has a known answer.
 * Shared by the monitor and CLI tests.
 *
 * "Now" is 2026-03-29T14:30Z, so the default alert window is 13:00-14:30; the per-day rules
 * (failure types, breaker trips) read from 2026-03-28T14:00, and the failure-type baseline is the
 * 7 days before that.
 *
 * - search_flights (timeout 2500 ms in {@link MONITOR_ALERT_CONFIG}):
 *   - baseline, 03:00-12:59: 10 hours x 20 calls; a rate limit in each of hours 03-11, a timeout
 *     that trips the breaker and one call rejected by the open circuit in hour 12;
 *   - 13:00-13:59: 40 calls, 5 failed (12.5%): 3 timeouts of 7.9 s after 2 retries (the third
 *     trips the breaker), 1 rate limit retried once, 1 schema mismatch (never seen before); 6
 *     successes needed one retry, so 10 calls (25%) were retried;
 *   - 14:00-14:30: 9 successes (2 after a retry), then a call rejected by the open circuit at
 *     14:27. Over 13:00-14:30 that is 12 of 50 calls retried (24%).
 * - get_weather: healthy. One not_found in the baseline; at 14:00 19 of 20 succeed (exactly 95%).
 * - create_order: 20 of 25 calls at 13:00 fail parameter validation (missing_required, never seen
 *   before): 20% failure and validation rate.
 * - send_email: 3 calls at 14:00, one unauthorized (seen in the baseline): too few to judge.
 * - One call on 2026-03-22, outside every default window.
 */
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import type { AttemptRecord, BreakerStateName, ToolExecutionRecord } from '../core/record-types.js';
import type { CallStatus, FailureCategory, FailureStage } from '../core/taxonomy.js';
import type { AlertConfig } from './alert-rules.js';

export const MONITOR_NOW = Date.UTC(2026, 2, 29, 14, 30, 0);
export const MONITOR_ALERT_CONFIG: AlertConfig = { timeouts: { search_flights: 2500 } };

/** The alerts the dataset breaks at MONITOR_NOW, as [severity, rule, tool], critical first. */
export const MONITOR_EXPECTED_ALERTS = [
  ['critical', 'p95_latency', 'search_flights'],
  ['warning', 'success_rate', 'create_order'],
  ['warning', 'success_rate', 'search_flights'],
  ['warning', 'failure_type_jump', 'create_order'],
  ['warning', 'failure_type_jump', 'search_flights'],
  ['warning', 'failure_type_jump', 'search_flights'],
  ['warning', 'retry_rate', 'search_flights'],
  ['warning', 'breaker_trip', 'search_flights'],
  ['warning', 'param_validation_rate', 'create_order'],
  ['warning', 'new_failure_signature', 'create_order'],
  ['warning', 'new_failure_signature', 'search_flights'],
];
const MINUTE = 60_000;
const at = (h: number, m: number, s = 0): number => Date.UTC(2026, 2, 29, h, m, s);

interface Failure {
  status: Exclude<CallStatus, 'success'>;
  stage: FailureStage;
  category: FailureCategory;
  type: string;
  code: string | null;
  message: string;
}

const TIMEOUT: Failure = { status: 'timeout', stage: 'execution', category: 'network', type: 'timeout', code: 'TIMEOUT', message: 'search_flights timed out after 2500ms' };
const RATE_LIMITED: Failure = { status: 'failure', stage: 'execution', category: 'rate_limit', type: 'rate_limited', code: 'HTTP_429', message: '429 Too Many Requests' };
const SCHEMA_MISMATCH: Failure = { status: 'rejected', stage: 'param_validation', category: 'parameter', type: 'schema_mismatch', code: null, message: 'date must match format "date"' };
const CIRCUIT_OPEN: Failure = { status: 'rejected', stage: 'execution', category: 'system', type: 'circuit_open', code: 'CIRCUIT_OPEN', message: 'circuit open for search_flights' };
const NOT_FOUND: Failure = { status: 'failure', stage: 'execution', category: 'business', type: 'not_found', code: 'HTTP_404', message: 'city Atlantis not found' };
const MISSING_REQUIRED: Failure = { status: 'rejected', stage: 'param_validation', category: 'parameter', type: 'missing_required', code: null, message: "must have required property 'customer_id'" };
const UNAUTHORIZED: Failure = { status: 'failure', stage: 'execution', category: 'auth', type: 'unauthorized', code: 'HTTP_401', message: 'invalid API key' };

interface Call {
  tool: string;
  ms: number;
  durationMs: number;
  failure?: Failure;
  retries?: number;
  breaker?: BreakerStateName;
}

/** UUIDv7-shaped ids that follow `created_at`, whatever other tests minted before. */
function idFor(ms: number, seq: number): string {
  const time = ms.toString(16).padStart(12, '0');
  const n = seq.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7000-8000-${n}`;
}

function toRecord(call: Call, seq: number): ToolExecutionRecord {
  const retries = call.retries ?? 0;
  const started = new Date(call.ms).toISOString();
  const attempts: AttemptRecord[] = Array.from({ length: retries + 1 }, (_, i) => ({
    attempt: i,
    started_at: started,
    duration_ms: Math.round(call.durationMs / (retries + 1)),
    outcome: i < retries || call.failure !== undefined ? (call.failure?.status === 'timeout' ? 'timeout' : 'failure') : 'success',
    failure_type: i < retries || call.failure !== undefined ? (call.failure?.type ?? 'server_error') : null,
    error_code: call.failure?.code ?? null,
    delay_before_ms: i === 0 ? 0 : 200 * 2 ** (i - 1),
  }));
  const common = {
    execution_id: idFor(call.ms, seq),
    trace_id: `trace-${Math.floor(seq / 4)}`,
    step_index: seq % 4,
    tool_name: call.tool,
    created_at: started,
    duration_ms: call.durationMs,
    retry_count: retries,
    attempts,
    breaker_state: call.breaker ?? 'closed',
  };
  if (call.failure === undefined) {
    return makeRecord({ ...common, recovery: retries > 0 ? 'auto_recovered' : 'none' });
  }
  const f = call.failure;
  return makeFailureRecord({
    ...common,
    status: f.status,
    failure_stage: f.stage,
    failure_category: f.category,
    failure_type: f.type,
    error_code: f.code,
    error_message: f.message,
  });
}

/** The dataset, in time order (and so in execution_id order). */
export function monitorDataset(): ToolExecutionRecord[] {
  const calls: Call[] = [];
  const add = (call: Call) => calls.push(call);

  add({ tool: 'get_weather', ms: Date.UTC(2026, 2, 22, 9, 0), durationMs: 70 });

  for (let h = 3; h <= 12; h++) {
    for (let i = 0; i < 20; i++) {
      const ms = at(h, i * 3);
      if (i === 10 && h <= 11) add({ tool: 'search_flights', ms, durationMs: 900, failure: RATE_LIMITED, retries: 1 });
      else if (i === 10 && h === 12) add({ tool: 'search_flights', ms, durationMs: 7900, failure: TIMEOUT, retries: 2, breaker: 'open' });
      else if (i === 11 && h === 12) add({ tool: 'search_flights', ms, durationMs: 0, failure: CIRCUIT_OPEN, breaker: 'open' });
      else add({ tool: 'search_flights', ms, durationMs: 150 + i });
      add({ tool: 'get_weather', ms: ms + 30_000, durationMs: h === 5 && i === 0 ? 40 : 60 + i, ...(h === 5 && i === 0 ? { failure: NOT_FOUND } : {}) });
    }
  }
  add({ tool: 'send_email', ms: at(4, 10), durationMs: 300, failure: UNAUTHORIZED });
  add({ tool: 'send_email', ms: at(4, 20), durationMs: 250 });

  // 13:00-13:59
  for (let i = 0; i < 40; i++) {
    const ms = at(13, 0) + i * 90_000;
    if (i === 7 || i === 19) add({ tool: 'search_flights', ms, durationMs: 7900, failure: TIMEOUT, retries: 2 });
    else if (i === 31) add({ tool: 'search_flights', ms, durationMs: 7900, failure: TIMEOUT, retries: 2, breaker: 'open' });
    else if (i === 12) add({ tool: 'search_flights', ms, durationMs: 900, failure: RATE_LIMITED, retries: 1 });
    else if (i === 25) add({ tool: 'search_flights', ms, durationMs: 1, failure: SCHEMA_MISMATCH });
    else add({ tool: 'search_flights', ms, durationMs: 100 + i * 5, retries: i % 5 === 1 && i < 30 ? 1 : 0 });
  }
  for (let i = 0; i < 30; i++) add({ tool: 'get_weather', ms: at(13, 1) + i * MINUTE, durationMs: 50 + i });
  for (let i = 0; i < 25; i++) {
    add({ tool: 'create_order', ms: at(13, 2) + i * 2 * MINUTE, durationMs: i % 5 === 0 ? 2 : 180, ...(i % 5 === 0 ? { failure: MISSING_REQUIRED } : {}) });
  }

  // 14:00-14:30
  for (let i = 0; i < 9; i++) add({ tool: 'search_flights', ms: at(14, 1) + i * 2 * MINUTE, durationMs: 140, retries: i < 2 ? 1 : 0 });
  add({ tool: 'search_flights', ms: at(14, 27), durationMs: 0, failure: CIRCUIT_OPEN, breaker: 'open' });
  for (let i = 0; i < 20; i++) add({ tool: 'get_weather', ms: at(14, 0, 30) + i * MINUTE, durationMs: 55, ...(i === 12 ? { failure: NOT_FOUND } : {}) });
  add({ tool: 'send_email', ms: at(14, 5), durationMs: 240 });
  add({ tool: 'send_email', ms: at(14, 6), durationMs: 310, failure: UNAUTHORIZED });
  add({ tool: 'send_email', ms: at(14, 7), durationMs: 260 });

  calls.sort((a, b) => a.ms - b.ms);
  return calls.map(toRecord);
}

/** Records a query would select, for computing expected figures independently of the stores. */
export function recordsIn(records: readonly ToolExecutionRecord[], since: number, until: number, tool?: string): ToolExecutionRecord[] {
  return records.filter((r) => {
    const ms = Date.parse(r.created_at);
    return ms >= since && ms < until && (tool === undefined || r.tool_name === tool);
  });
}

