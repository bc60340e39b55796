/**
 * Hourly rollups shared by every Store adapter.
 *
 * On insert, an adapter calls {@link aggregateBatch} on the records it actually inserted and
 * applies the resulting {@link RollupDelta} with a few upserts (add counts; min/max the signature
 * times). On read, it selects the rollup rows of a window and hands them to the `*FromRows`
 * helpers here, so rates, percentiles, fallbacks for unclassified failures and result ordering are
 * computed identically in memory, SQLite and PostgreSQL.
 *
 * Windows are hour-granular: a stats window covers every hour that overlaps `[since, until)`
 * (see {@link hourRange}). Signatures keep exact first/last-seen times.
 */
import { ConfigError } from '../core/errors.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { categoryOfType, type FailureCategory, type FailureStage } from '../core/taxonomy.js';
import { bucketOf, mergeBuckets, percentileFromBuckets } from './duration-sketch.js';
import { cachedFailureSignature, effectiveFailureType, UNCLASSIFIED_STAGE, type FailureSignatureKey } from '../core/failure-signature.js';
import type { FailureBreakdownRow, FailureSignature, HourlyPoint, TimeWindow, ToolStats } from '../core/store-types.js';

export const HOUR_MS = 3_600_000;

/** Database drivers return sums as bigint or numeric strings (pg); every reader accepts all three. */
export type Numeric = number | bigint | string;

/** The additive counters kept per (tool, hour). */
export interface RollupCounters {
  total: number;
  success: number;
  failure: number;
  timeout: number;
  rejected: number;
  /** Calls with retry_count > 0. */
  retried_calls: number;
  /** Sum of retry_count. */
  retries: number;
  /** Calls whose failure opened the breaker: breaker_state 'open' and not rejected by it. */
  breaker_trips: number;
  param_validation_failures: number;
  duration_sum: number;
}

/** Names of {@link RollupCounters}, in a fixed order adapters can use for column lists. */
export const ROLLUP_COUNTER_FIELDS = [
  'total',
  'success',
  'failure',
  'timeout',
  'rejected',
  'retried_calls',
  'retries',
  'breaker_trips',
  'param_validation_failures',
  'duration_sum',
] as const satisfies readonly (keyof RollupCounters)[];

export interface HourlyRollupRow extends RollupCounters {
  tool_name: string;
  /** Start of the hour, epoch ms. */
  hour_ms: number;
}

export interface DurationRollupRow {
  tool_name: string;
  hour_ms: number;
  bucket: number;
  count: number;
}

export interface FailureRollupRow {
  tool_name: string;
  hour_ms: number;
  failure_stage: FailureStage;
  failure_category: FailureCategory;
  failure_type: string;
  count: number;
}

export interface SignatureRollupRow extends FailureSignatureKey {
  first_seen_ms: number;
  last_seen_ms: number;
  count: number;
}

/** What one batch adds to the rollups. Every array holds one row per distinct key. */
export interface RollupDelta {
  hourly: HourlyRollupRow[];
  durations: DurationRollupRow[];
  failures: FailureRollupRow[];
  signatures: SignatureRollupRow[];
}

// ---------------------------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------------------------

/** Start of the UTC hour containing `ms`. */
export function hourStartMs(ms: number): number {
  return Math.floor(ms / HOUR_MS) * HOUR_MS;
}

/** UTC ISO-8601 text of an epoch-ms instant. */
export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The hours a stats window covers: every hour overlapping `[since, until)`, as
 * `fromHourMs <= hour_ms < untilHourMs`.
 */
export function hourRange(window: TimeWindow): { fromHourMs: number; untilHourMs: number } {
  return { fromHourMs: hourStartMs(window.since), untilHourMs: Math.ceil(window.until / HOUR_MS) * HOUR_MS };
}

function digit(s: string, i: number): number {
  const d = s.charCodeAt(i) - 48;
  // NaN or out-of-range digits poison the sum, so one check at the end catches any bad char.
  return d >= 0 && d <= 9 ? d : NaN;
}

/**
 * Epoch ms of an ISO-8601 timestamp. `toISOString()` output (`YYYY-MM-DDTHH:mm:ss.sssZ`, what
 * records carry) is parsed by hand, several times faster than `Date.parse`; anything else goes
 * through `Date.parse`. Returns NaN when the text is not a date.
 */
export function parseIsoMs(iso: string): number {
  if (
    iso.length === 24 &&
    iso.charCodeAt(23) === 90 && // Z
    iso.charCodeAt(10) === 84 && // T
    iso.charCodeAt(4) === 45 &&
    iso.charCodeAt(7) === 45 &&
    iso.charCodeAt(13) === 58 &&
    iso.charCodeAt(16) === 58 &&
    iso.charCodeAt(19) === 46
  ) {
    const year = digit(iso, 0) * 1000 + digit(iso, 1) * 100 + digit(iso, 2) * 10 + digit(iso, 3);
    const month = digit(iso, 5) * 10 + digit(iso, 6);
    const day = digit(iso, 8) * 10 + digit(iso, 9);
    const hour = digit(iso, 11) * 10 + digit(iso, 12);
    const minute = digit(iso, 14) * 10 + digit(iso, 15);
    const second = digit(iso, 17) * 10 + digit(iso, 18);
    const milli = digit(iso, 20) * 100 + digit(iso, 21) * 10 + digit(iso, 22);
    if (month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59 && milli >= 0) {
      const ms = Date.UTC(year, month - 1, day, hour, minute, second, milli);
      // Date.UTC rolls 2024-02-30 over into March; Date.parse rejects it. Agree with Date.parse.
      if (day <= 28 || new Date(ms).getUTCDate() === day) return ms;
      return NaN;
    }
  }
  return Date.parse(iso);
}

/** `created_at` in epoch ms, or a RangeError naming the record when it is not a date. */
export function createdAtMs(record: Pick<ToolExecutionRecord, 'created_at' | 'execution_id'>): number {
  const ms = parseIsoMs(record.created_at);
  if (Number.isNaN(ms)) {
    // Worded as check-record.ts words the other fields: every store's insert reaches here.
    throw new ConfigError(
      `store.insert: record ${record.execution_id} has an invalid created_at: expected an ISO-8601 date-time, got ${JSON.stringify(record.created_at)}`,
      'created_at',
    );
  }
  return ms;
}

// ---------------------------------------------------------------------------------------------
// Write side
// ---------------------------------------------------------------------------------------------

/** The breakdown cell a non-success record is counted in, with fallbacks for missing labels. */
export function failureCell(
  record: Pick<ToolExecutionRecord, 'status' | 'failure_stage' | 'failure_category' | 'failure_type'>,
): { failure_stage: FailureStage; failure_category: FailureCategory; failure_type: string } {
  const type = effectiveFailureType(record);
  return {
    failure_stage: record.failure_stage ?? UNCLASSIFIED_STAGE,
    failure_category: record.failure_category ?? categoryOfType(type) ?? 'system',
    failure_type: type,
  };
}

/** Zeroed counters. */
export function emptyCounters(): RollupCounters {
  return {
    total: 0,
    success: 0,
    failure: 0,
    timeout: 0,
    rejected: 0,
    retried_calls: 0,
    retries: 0,
    breaker_trips: 0,
    param_validation_failures: 0,
    duration_sum: 0,
  };
}

/** Adds `from` into `into` (mutates and returns `into`); accepts driver-typed numbers. */
export function addCounters(into: RollupCounters, from: { [K in keyof RollupCounters]: Numeric }): RollupCounters {
  for (const field of ROLLUP_COUNTER_FIELDS) into[field] += Number(from[field]);
  return into;
}

const SEP = '\u001f';

/** The fields of a record that the rollups read: all scalars, so a stored row can supply them. */
export type RollupRecord = Pick<
  ToolExecutionRecord,
  | 'execution_id'
  | 'tool_name'
  | 'status'
  | 'failure_stage'
  | 'failure_category'
  | 'failure_type'
  | 'error_code'
  | 'error_message'
  | 'duration_ms'
  | 'retry_count'
  | 'breaker_state'
  | 'created_at'
>;

/** Accumulators of one (tool, hour) while a batch is aggregated. */
interface HourCell {
  row: HourlyRollupRow;
  buckets: Map<number, number>;
  /** Keyed by stage, category and type. */
  failures: Map<string, FailureRollupRow>;
}

/**
 * Aggregates a batch of newly inserted records into a rollup delta. Pass `createdMs` (parallel to
 * `records`) when the caller already parsed `created_at`, to skip parsing it twice.
 *
 * Only pass records that were really inserted: the delta is added to the rollups as-is.
 * @throws RangeError when a record's `created_at` is not a date.
 */
export function aggregateBatch(records: readonly RollupRecord[], createdMs?: readonly number[]): RollupDelta {
  // Nested maps instead of concatenated string keys: this runs once per inserted record, and
  // building "tool|hour|bucket" strings was the bulk of its cost.
  const cells = new Map<string, Map<number, HourCell>>();
  const signatures = new Map<string, SignatureRollupRow>();

  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const ms = createdMs?.[i] ?? createdAtMs(r);
    const hourMs = hourStartMs(ms);

    let byHour = cells.get(r.tool_name);
    if (byHour === undefined) cells.set(r.tool_name, (byHour = new Map()));
    let cell = byHour.get(hourMs);
    if (cell === undefined) {
      cell = { row: { tool_name: r.tool_name, hour_ms: hourMs, ...emptyCounters() }, buckets: new Map(), failures: new Map() };
      byHour.set(hourMs, cell);
    }
    const h = cell.row;
    h.total += 1;
    h[r.status] += 1;
    if (r.retry_count > 0) {
      h.retried_calls += 1;
      h.retries += r.retry_count;
    }
    if (r.breaker_state === 'open' && r.status !== 'rejected') h.breaker_trips += 1;
    if (r.failure_stage === 'param_validation') h.param_validation_failures += 1;
    h.duration_sum += r.duration_ms;
    const bucket = bucketOf(r.duration_ms);
    cell.buckets.set(bucket, (cell.buckets.get(bucket) ?? 0) + 1);

    if (r.status === 'success') continue;

    // Keyed by the resolved cell, not the raw labels: a record missing a label and one carrying
    // the fallback value must share a row, since adapters upsert each row once per statement.
    const resolved = failureCell(r);
    const failureKey = resolved.failure_stage + SEP + resolved.failure_category + SEP + resolved.failure_type;
    const f = cell.failures.get(failureKey);
    if (f === undefined) cell.failures.set(failureKey, { tool_name: r.tool_name, hour_ms: hourMs, ...resolved, count: 1 });
    else f.count += 1;

    // Normalizing and hashing is the costliest step per failure; repeated raw messages are common
    // (a failing dependency repeats itself), so it runs once per distinct raw shape, across batches.
    const sig = cachedFailureSignature(r);
    if (sig === null) continue;
    const s = signatures.get(sig.signature);
    if (s === undefined) {
      signatures.set(sig.signature, { ...sig, first_seen_ms: ms, last_seen_ms: ms, count: 1 });
    } else {
      s.count += 1;
      if (ms < s.first_seen_ms) s.first_seen_ms = ms;
      if (ms > s.last_seen_ms) s.last_seen_ms = ms;
    }
  }

  const delta: RollupDelta = { hourly: [], durations: [], failures: [], signatures: [...signatures.values()] };
  for (const byHour of cells.values()) {
    for (const cell of byHour.values()) {
      const { tool_name, hour_ms } = cell.row;
      delta.hourly.push(cell.row);
      for (const [bucket, count] of cell.buckets) delta.durations.push({ tool_name, hour_ms, bucket, count });
      for (const f of cell.failures.values()) delta.failures.push(f);
    }
  }
  return delta;
}

/**
 * The delta that takes `delta`'s records back out of the rollups: every count negated. Applied
 * with an adapter's usual upserts, it subtracts; first/last-seen times merge as min/max, which
 * leaves a signature's stored times as they are (its records span at least as wide). Rows left at
 * zero are the adapter's to delete ({@link pruneSweepHourMs}).
 */
export function negatedDelta(delta: RollupDelta): RollupDelta {
  return {
    hourly: delta.hourly.map((row) => {
      const negated: HourlyRollupRow = { ...row };
      for (const field of ROLLUP_COUNTER_FIELDS) negated[field] = -row[field];
      return negated;
    }),
    durations: delta.durations.map((row) => ({ ...row, count: -row.count })),
    failures: delta.failures.map((row) => ({ ...row, count: -row.count })),
    signatures: delta.signatures.map((row) => ({ ...row, count: -row.count })),
  };
}

/** The hours a pruned batch touched, `[fromHourMs, toHourMs]` inclusive: where rows may have reached zero. */
export function touchedHours(delta: RollupDelta): { fromHourMs: number; toHourMs: number } | undefined {
  if (delta.hourly.length === 0) return undefined;
  let fromHourMs = Number.POSITIVE_INFINITY;
  let toHourMs = Number.NEGATIVE_INFINITY;
  for (const row of delta.hourly) {
    if (row.hour_ms < fromHourMs) fromHourMs = row.hour_ms;
    if (row.hour_ms > toHourMs) toHourMs = row.hour_ms;
  }
  return { fromHourMs, toHourMs };
}

/**
 * Once no record before `beforeMs` is left, rollup rows of the hours that end by then describe no
 * stored record: `hour_ms < pruneSweepHourMs(beforeMs)` is what a finished prune deletes. (A row
 * there that is not zero counted records removed behind faultline's back.)
 */
export function pruneSweepHourMs(beforeMs: number): number {
  return hourStartMs(beforeMs);
}

/**
 * Checks a prune's cutoff and limit; returns the limit (Infinity for none).
 * @throws ConfigError naming the argument.
 */
export function checkPrune(beforeMs: unknown, limit: unknown): number {
  if (typeof beforeMs !== 'number' || !Number.isFinite(beforeMs)) {
    throw new ConfigError(`store.prune: beforeMs must be epoch milliseconds, got ${String(beforeMs)}`, 'beforeMs');
  }
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) {
    throw new ConfigError(`store.prune: limit must be a positive integer, got ${String(limit)}`, 'limit');
  }
  return limit;
}

// ---------------------------------------------------------------------------------------------
// Read side
// ---------------------------------------------------------------------------------------------

function ratio(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}

/**
 * One tool's stats from its summed counters and merged duration buckets. Rates are 0 and
 * percentiles null when there were no calls.
 */
export function toolStatsFromCounters(
  toolName: string,
  counters: RollupCounters,
  buckets: Map<number, number>,
): ToolStats {
  const { total } = counters;
  return {
    tool_name: toolName,
    total,
    success: counters.success,
    failure: counters.failure,
    timeout: counters.timeout,
    rejected: counters.rejected,
    failure_rate: ratio(total - counters.success, total),
    retried_calls: counters.retried_calls,
    retry_rate: ratio(counters.retried_calls, total),
    retries: counters.retries,
    breaker_trips: counters.breaker_trips,
    param_validation_failures: counters.param_validation_failures,
    param_validation_failure_rate: ratio(counters.param_validation_failures, total),
    p50_ms: total === 0 ? null : percentileFromBuckets(buckets, 0.5),
    p95_ms: total === 0 ? null : percentileFromBuckets(buckets, 0.95),
    avg_ms: total === 0 ? null : counters.duration_sum / total,
  };
}

/** A counter row as read back from a database: per (tool, hour) or summed per tool. */
export type CounterRowInput = { tool_name: string } & { [K in keyof RollupCounters]: Numeric };
/** A duration-bucket row as read back from a database. */
export type BucketRowInput = { tool_name: string; bucket: Numeric; count: Numeric };
/** A failure-cell row as read back from a database. */
export type BreakdownRowInput = Omit<FailureBreakdownRow, 'count'> & { count: Numeric };
/** A `failure_signatures` row as read back from a database. */
export type SignatureRowInput = Omit<SignatureRollupRow, 'first_seen_ms' | 'last_seen_ms' | 'count'> & {
  first_seen_ms: Numeric;
  last_seen_ms: Numeric;
  count: Numeric;
};

/**
 * Per-tool stats, sorted by tool name, from rollup rows of a window. Rows may be per hour or
 * already summed per tool (SQL `GROUP BY tool_name`); duplicates are summed either way.
 */
export function toolStatsFromRows(
  counterRows: Iterable<CounterRowInput>,
  durationRows: Iterable<BucketRowInput>,
): ToolStats[] {
  const counters = new Map<string, RollupCounters>();
  for (const row of counterRows) {
    let c = counters.get(row.tool_name);
    if (c === undefined) counters.set(row.tool_name, (c = emptyCounters()));
    addCounters(c, row);
  }
  const buckets = new Map<string, Map<number, number>>();
  for (const row of durationRows) {
    let b = buckets.get(row.tool_name);
    if (b === undefined) buckets.set(row.tool_name, (b = new Map()));
    mergeBuckets(b, [[Number(row.bucket), Number(row.count)]]);
  }
  return [...counters.entries()]
    .filter(([, c]) => c.total > 0)
    .sort(([a], [b]) => compareText(a, b))
    .map(([tool, c]) => toolStatsFromCounters(tool, c, buckets.get(tool) ?? new Map()));
}

/** Hourly points, sorted by hour then tool, from per-(tool, hour) rollup rows of a window. */
export function hourlyFromRows(
  counterRows: Iterable<CounterRowInput & { hour_ms: Numeric }>,
  durationRows: Iterable<BucketRowInput & { hour_ms: Numeric }>,
): HourlyPoint[] {
  const cells = new Map<string, { tool: string; hourMs: number; counters: RollupCounters; buckets: Map<number, number> }>();
  const cellOf = (tool: string, hourMs: number) => {
    const key = tool + SEP + hourMs;
    let cell = cells.get(key);
    if (cell === undefined) cells.set(key, (cell = { tool, hourMs, counters: emptyCounters(), buckets: new Map() }));
    return cell;
  };
  for (const row of counterRows) addCounters(cellOf(row.tool_name, Number(row.hour_ms)).counters, row);
  for (const row of durationRows) {
    mergeBuckets(cellOf(row.tool_name, Number(row.hour_ms)).buckets, [[Number(row.bucket), Number(row.count)]]);
  }
  return [...cells.values()]
    .filter((c) => c.counters.total > 0)
    .sort((a, b) => a.hourMs - b.hourMs || compareText(a.tool, b.tool))
    .map((c) => ({
      hour: isoOf(c.hourMs),
      tool_name: c.tool,
      total: c.counters.total,
      failures: c.counters.total - c.counters.success,
      retried_calls: c.counters.retried_calls,
      breaker_trips: c.counters.breaker_trips,
      p95_ms: percentileFromBuckets(c.buckets, 0.95),
    }));
}

/**
 * The failure breakdown, from failure rollup rows of a window (per hour or pre-summed): summed per
 * (tool, stage, category, type), sorted by count descending, then by tool, stage, category, type.
 */
export function failureBreakdownFromRows(rows: Iterable<BreakdownRowInput>): FailureBreakdownRow[] {
  const cells = new Map<string, FailureBreakdownRow>();
  for (const row of rows) {
    const key = row.tool_name + SEP + row.failure_stage + SEP + row.failure_category + SEP + row.failure_type;
    const cell = cells.get(key);
    if (cell === undefined) {
      cells.set(key, {
        tool_name: row.tool_name,
        failure_stage: row.failure_stage,
        failure_category: row.failure_category,
        failure_type: row.failure_type,
        count: Number(row.count),
      });
    } else {
      cell.count += Number(row.count);
    }
  }
  return [...cells.values()]
    .filter((c) => c.count > 0)
    .sort(
      (a, b) =>
        b.count - a.count ||
        compareText(a.tool_name, b.tool_name) ||
        compareText(a.failure_stage, b.failure_stage) ||
        compareText(a.failure_category, b.failure_category) ||
        compareText(a.failure_type, b.failure_type),
    );
}

/** Whether a signature row belongs in a `signatures(filter)` answer: last seen inside the window. */
export function signatureInWindow(lastSeenMs: number, window: TimeWindow): boolean {
  return lastSeenMs >= window.since && lastSeenMs < window.until;
}

/**
 * Signatures as returned by `Store.signatures`, sorted by count descending, then most recently
 * seen, then signature. Rows must already be filtered to the window and tool.
 */
export function signaturesFromRows(rows: Iterable<SignatureRowInput>): FailureSignature[] {
  const out: (FailureSignature & { lastMs: number })[] = [];
  for (const row of rows) {
    const lastMs = Number(row.last_seen_ms);
    out.push({
      signature: row.signature,
      tool_name: row.tool_name,
      failure_stage: row.failure_stage,
      failure_type: row.failure_type,
      error_code: row.error_code,
      normalized_message: row.normalized_message,
      first_seen: isoOf(Number(row.first_seen_ms)),
      last_seen: isoOf(lastMs),
      count: Number(row.count),
      lastMs,
    });
  }
  out.sort((a, b) => b.count - a.count || b.lastMs - a.lastMs || compareText(a.signature, b.signature));
  return out.map(({ lastMs: _lastMs, ...sig }) => sig);
}

/** Code-unit order, the same as SQLite's BINARY collation and PostgreSQL's `COLLATE "C"`. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
