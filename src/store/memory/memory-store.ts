/**
 * An in-process Store: records and rollups live in Maps. For tests, examples and embedding where
 * nothing has to survive the process. It keeps the same rollups as the database adapters, so its
 * analytics answers match theirs exactly.
 */
import { FaultlineError } from '../../core/errors.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { sourceKey, uniqueTrajectoryRows } from '../trajectory-row.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { checkRecordQuery, checkStatsFilter } from '../check-query.js';
import { checkRecords } from '../check-record.js';
import {
  addCounters,
  aggregateBatch,
  createdAtMs,
  failureBreakdownFromRows,
  hourlyFromRows,
  hourRange,
  negatedDelta,
  pruneSweepHourMs,
  checkPrune,
  signatureInWindow,
  signaturesFromRows,
  toolStatsFromRows,
  type DurationRollupRow,
  type FailureRollupRow,
  type HourlyRollupRow,
  type RollupDelta,
  type SignatureRollupRow,
} from '../rollup.js';
import { assertCorrection, assertCorrections, correctionLimits, CorrectionBuffer, normalizedCorrection } from '../corrections.js';
import type {
  CorrectionEntry,
  CorrectionLimits,
  CorrectionMemoryStore,
  CorrectionQuery,
  FailureBreakdownRow,
  NewCorrection,
  FailureSignature,
  HourlyPoint,
  PruneOptions,
  RecordQuery,
  StatsFilter,
  Store,
  ToolStats,
  TrajectoryQuery,
  TrajectoryStore,
} from '../../core/store-types.js';

const DEFAULT_LIMIT = 1000;
const SEP = '\u001f';

interface Entry {
  record: ToolExecutionRecord;
  createdMs: number;
}

/**
 * Creates an empty in-memory store.
 * @example
 * const store = createMemoryStore();
 * await store.insert([record]);
 */
export function createMemoryStore(): Store & TrajectoryStore & CorrectionMemoryStore {
  return new MemoryStore();
}

class MemoryStore implements Store, TrajectoryStore, CorrectionMemoryStore {
  readonly kind = 'memory' as const;
  /** JSON text, so what comes back is a copy, exactly as the database adapters return it. */
  readonly #trajectories = new Map<string, { source: string; json: string }>();
  readonly #trajectorySources = new Set<string>();
  readonly #byId = new Map<string, Entry>();
  /** Entries sorted by execution_id; rebuilt lazily because UUIDv7 batches usually arrive in order. */
  #sorted: Entry[] = [];
  #sortedIsStale = false;
  readonly #hourly = new Map<string, HourlyRollupRow>();
  readonly #durations = new Map<string, DurationRollupRow>();
  readonly #failures = new Map<string, FailureRollupRow>();
  readonly #signatures = new Map<string, SignatureRollupRow>();
  readonly #corrections = new CorrectionBuffer();
  #closed = false;

  async insert(records: readonly ToolExecutionRecord[]): Promise<void> {
    this.#assertOpen();
    checkRecords(records);
    const inserted: ToolExecutionRecord[] = [];
    const insertedMs: number[] = [];
    const fresh = new Map<string, Entry>();
    // Validate and clone everything before touching state, so a bad record leaves the store as it was.
    for (const record of records) {
      if (this.#byId.has(record.execution_id) || fresh.has(record.execution_id)) continue;
      const entry = { record: structuredClone(record), createdMs: createdAtMs(record) };
      fresh.set(record.execution_id, entry);
      inserted.push(entry.record);
      insertedMs.push(entry.createdMs);
    }
    if (inserted.length === 0) return;
    const delta = aggregateBatch(inserted, insertedMs);

    for (const [id, entry] of fresh) {
      const last = this.#sorted[this.#sorted.length - 1];
      if (last !== undefined && last.record.execution_id > id) this.#sortedIsStale = true;
      this.#sorted.push(entry);
      this.#byId.set(id, entry);
    }
    this.#applyDelta(delta);
  }

  async prune(beforeMs: number, options: PruneOptions = {}): Promise<number> {
    this.#assertOpen();
    const limit = checkPrune(beforeMs, options.limit);
    const doomed: Entry[] = [];
    for (const entry of this.#byId.values()) if (entry.createdMs < beforeMs) doomed.push(entry);
    doomed.sort((a, b) => a.createdMs - b.createdMs);
    const taken = doomed.length > limit ? doomed.slice(0, limit) : doomed;
    if (taken.length > 0) {
      for (const entry of taken) this.#byId.delete(entry.record.execution_id);
      this.#sorted = this.#sorted.filter((entry) => this.#byId.has(entry.record.execution_id));
      const delta = aggregateBatch(
        taken.map((entry) => entry.record),
        taken.map((entry) => entry.createdMs),
      );
      this.#applyDelta(negatedDelta(delta));
      const dropEmpty = <T extends { count: number }>(rows: Map<string, T>) => {
        for (const [key, row] of rows) if (row.count <= 0) rows.delete(key);
      };
      for (const [key, row] of this.#hourly) if (row.total <= 0) this.#hourly.delete(key);
      dropEmpty(this.#durations);
      dropEmpty(this.#failures);
      dropEmpty(this.#signatures);
    }
    if (taken.length === doomed.length) {
      const sweepMs = pruneSweepHourMs(beforeMs);
      for (const rows of [this.#hourly, this.#durations, this.#failures] as Map<string, { hour_ms: number }>[]) {
        for (const [key, row] of rows) if (row.hour_ms < sweepMs) rows.delete(key);
      }
      for (const [key, row] of this.#signatures) if (row.last_seen_ms < beforeMs) this.#signatures.delete(key);
    }
    return taken.length;
  }

  /** Adds a rollup delta (negative counts subtract) to the rollup maps. */
  #applyDelta(delta: RollupDelta): void {
    for (const row of delta.hourly) {
      const key = row.tool_name + SEP + row.hour_ms;
      const current = this.#hourly.get(key);
      if (current === undefined) this.#hourly.set(key, { ...row });
      else addCounters(current, row);
    }
    for (const row of delta.durations) {
      const key = row.tool_name + SEP + row.hour_ms + SEP + row.bucket;
      const current = this.#durations.get(key);
      if (current === undefined) this.#durations.set(key, { ...row });
      else current.count += row.count;
    }
    for (const row of delta.failures) {
      const key = [row.tool_name, row.hour_ms, row.failure_stage, row.failure_category, row.failure_type].join(SEP);
      const current = this.#failures.get(key);
      if (current === undefined) this.#failures.set(key, { ...row });
      else current.count += row.count;
    }
    for (const row of delta.signatures) {
      const current = this.#signatures.get(row.signature);
      if (current === undefined) {
        this.#signatures.set(row.signature, { ...row });
      } else {
        current.count += row.count;
        current.first_seen_ms = Math.min(current.first_seen_ms, row.first_seen_ms);
        current.last_seen_ms = Math.max(current.last_seen_ms, row.last_seen_ms);
      }
    }
  }

  async get(executionId: string): Promise<ToolExecutionRecord | null> {
    this.#assertOpen();
    const entry = this.#byId.get(executionId);
    return entry === undefined ? null : structuredClone(entry.record);
  }

  async query(query: RecordQuery): Promise<ToolExecutionRecord[]> {
    checkRecordQuery(query, 'query');
    this.#assertOpen();
    const limit = query.limit ?? DEFAULT_LIMIT;
    const desc = query.order === 'desc';
    const sorted = this.#sortedEntries();
    const out: ToolExecutionRecord[] = [];
    if (limit <= 0) return out;
    const matches = this.#matcher(query);
    const { afterId } = query;
    for (let k = 0; k < sorted.length; k++) {
      const entry = sorted[desc ? sorted.length - 1 - k : k]!;
      const id = entry.record.execution_id;
      // The cursor means "after it in the requested order", so descending pages move back in time.
      if (afterId !== undefined && (desc ? id >= afterId : id <= afterId)) continue;
      if (!matches(entry)) continue;
      out.push(structuredClone(entry.record));
      if (out.length >= limit) break;
    }
    return out;
  }

  async count(query: Omit<RecordQuery, 'afterId' | 'limit' | 'order'> = {}): Promise<number> {
    checkRecordQuery(query, 'count');
    this.#assertOpen();
    const matches = this.#matcher(query);
    let n = 0;
    for (const entry of this.#byId.values()) if (matches(entry)) n += 1;
    return n;
  }

  async toolStats(filter: StatsFilter): Promise<ToolStats[]> {
    checkStatsFilter(filter, 'toolStats');
    this.#assertOpen();
    return toolStatsFromRows(this.#inRange(this.#hourly.values(), filter), this.#inRange(this.#durations.values(), filter));
  }

  async failureBreakdown(filter: StatsFilter): Promise<FailureBreakdownRow[]> {
    checkStatsFilter(filter, 'failureBreakdown');
    this.#assertOpen();
    return failureBreakdownFromRows(this.#inRange(this.#failures.values(), filter));
  }

  async hourly(filter: StatsFilter): Promise<HourlyPoint[]> {
    checkStatsFilter(filter, 'hourly');
    this.#assertOpen();
    return hourlyFromRows(this.#inRange(this.#hourly.values(), filter), this.#inRange(this.#durations.values(), filter));
  }

  async signatures(filter: StatsFilter): Promise<FailureSignature[]> {
    checkStatsFilter(filter, 'signatures');
    this.#assertOpen();
    const rows = [...this.#signatures.values()].filter(
      (s) => signatureInWindow(s.last_seen_ms, filter) && (filter.toolName === undefined || s.tool_name === filter.toolName),
    );
    return signaturesFromRows(rows);
  }

  async insertTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    this.#assertOpen();
    let inserted = 0;
    for (const row of uniqueTrajectoryRows(trajectories)) {
      const key = sourceKey(row);
      if (this.#trajectories.has(row.trajectory_id) || (key !== undefined && this.#trajectorySources.has(key))) continue;
      this.#trajectories.set(row.trajectory_id, { source: row.source, json: row.json });
      if (key !== undefined) this.#trajectorySources.add(key);
      inserted += 1;
    }
    return inserted;
  }

  async updateTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    this.#assertOpen();
    let updated = 0;
    for (const row of uniqueTrajectoryRows(trajectories)) {
      const entry = this.#trajectories.get(row.trajectory_id);
      if (entry === undefined) continue;
      this.#trajectories.set(row.trajectory_id, { source: entry.source, json: row.json });
      updated += 1;
    }
    return updated;
  }

  async getTrajectory(trajectoryId: string): Promise<Trajectory | null> {
    this.#assertOpen();
    const entry = this.#trajectories.get(trajectoryId);
    return entry === undefined ? null : (JSON.parse(entry.json) as Trajectory);
  }

  async queryTrajectories(query: TrajectoryQuery = {}): Promise<Trajectory[]> {
    this.#assertOpen();
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (limit <= 0) return [];
    const ids = [...this.#trajectories.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const out: Trajectory[] = [];
    for (const id of ids) {
      if (query.afterId !== undefined && id <= query.afterId) continue;
      const entry = this.#trajectories.get(id)!;
      if (query.source !== undefined && entry.source !== query.source) continue;
      out.push(JSON.parse(entry.json) as Trajectory);
      if (out.length >= limit) break;
    }
    return out;
  }

  async countTrajectories(query: Pick<TrajectoryQuery, 'source'> = {}): Promise<number> {
    this.#assertOpen();
    if (query.source === undefined) return this.#trajectories.size;
    let n = 0;
    for (const entry of this.#trajectories.values()) if (entry.source === query.source) n += 1;
    return n;
  }

  async pushCorrection(correction: NewCorrection, limits?: Partial<CorrectionLimits>): Promise<CorrectionEntry> {
    this.#assertOpen();
    assertCorrection(correction);
    return this.#corrections.push(normalizedCorrection(correction), correctionLimits(limits));
  }

  async pushCorrections(corrections: readonly NewCorrection[], limits?: Partial<CorrectionLimits>): Promise<void> {
    this.#assertOpen();
    const resolved = assertCorrections(corrections, limits);
    for (const correction of corrections) this.#corrections.add(normalizedCorrection(correction), resolved);
  }

  async latestCorrection(signature: string): Promise<CorrectionEntry | null> {
    this.#assertOpen();
    return this.#corrections.list({ signature, limit: 1 })[0] ?? null;
  }

  async listCorrections(query: CorrectionQuery = {}): Promise<CorrectionEntry[]> {
    this.#assertOpen();
    return this.#corrections.list(query);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #assertOpen(): void {
    if (this.#closed) throw new FaultlineError('the memory store is closed');
  }

  #sortedEntries(): Entry[] {
    if (this.#sortedIsStale) {
      this.#sorted.sort((a, b) => (a.record.execution_id < b.record.execution_id ? -1 : 1));
      this.#sortedIsStale = false;
    }
    return this.#sorted;
  }

  #matcher(query: Omit<RecordQuery, 'afterId' | 'limit' | 'order'>): (entry: Entry) => boolean {
    const { traceId, toolName, statuses, since, until } = query;
    const statusSet = statuses === undefined ? undefined : new Set<string>(statuses);
    return (entry) => {
      const r = entry.record;
      if (traceId !== undefined && r.trace_id !== traceId) return false;
      if (toolName !== undefined && r.tool_name !== toolName) return false;
      if (statusSet !== undefined && !statusSet.has(r.status)) return false;
      if (since !== undefined && entry.createdMs < since) return false;
      if (until !== undefined && entry.createdMs >= until) return false;
      return true;
    };
  }

  *#inRange<T extends { tool_name: string; hour_ms: number }>(rows: Iterable<T>, filter: StatsFilter): Iterable<T> {
    const { fromHourMs, untilHourMs } = hourRange(filter);
    for (const row of rows) {
      if (row.hour_ms < fromHourMs || row.hour_ms >= untilHourMs) continue;
      if (filter.toolName !== undefined && row.tool_name !== filter.toolName) continue;
      yield row;
    }
  }
}
