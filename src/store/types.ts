/**
 * The Store: where records live. One interface, three adapters (memory, sqlite, postgres), one
 * contract suite (`contract.test-helpers.ts`) that every adapter passes.
 *
 * Analytics come from hourly rollups that each adapter maintains on insert (see `rollup.ts`), so
 * they stay fast at tens of millions of records. Only `query` and `get` read raw records.
 */
import type { CallStatus, FailureCategory, FailureStage } from '../taxonomy.js';
import type { ToolExecutionRecord } from '../record/types.js';
import type { Trajectory, TrajectorySource } from '../trajectory/types.js';

export type StoreKind = 'memory' | 'sqlite' | 'postgres';

/** A half-open time range in epoch milliseconds: `since <= t < until`. */
export interface TimeWindow {
  since: number;
  until: number;
}

export interface RecordQuery {
  traceId?: string;
  toolName?: string;
  /** Any of these statuses. An empty list matches nothing. */
  statuses?: readonly CallStatus[];
  /** Epoch ms, inclusive. Compared against `created_at`. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  /**
   * Only records whose execution_id sorts after this one (a cursor; UUIDv7 ids are time-ordered).
   * "After" follows `order`: with 'desc', the page continues with older ids.
   */
  afterId?: string;
  /** Default 1000. */
  limit?: number;
  /** By execution_id, i.e. by time. Default 'asc'. */
  order?: 'asc' | 'desc';
}

/** Per-tool totals over a window, read from the hourly rollups. */
export interface ToolStats {
  tool_name: string;
  total: number;
  success: number;
  failure: number;
  timeout: number;
  rejected: number;
  /** (total - success) / total */
  failure_rate: number;
  /** Calls with retry_count > 0. */
  retried_calls: number;
  retry_rate: number;
  /** Sum of retry_count. */
  retries: number;
  /** Calls whose failure opened the breaker. */
  breaker_trips: number;
  param_validation_failures: number;
  param_validation_failure_rate: number;
  /** Duration percentiles from the rollup's duration sketch (a few % relative error). */
  p50_ms: number | null;
  p95_ms: number | null;
  avg_ms: number | null;
}

/** One cell of the failure breakdown: how many failures of this shape per tool. */
export interface FailureBreakdownRow {
  tool_name: string;
  failure_stage: FailureStage;
  failure_category: FailureCategory;
  failure_type: string;
  count: number;
}

export interface HourlyPoint {
  /** Start of the hour, UTC ISO-8601. */
  hour: string;
  tool_name: string;
  total: number;
  failures: number;
  retried_calls: number;
  breaker_trips: number;
  p95_ms: number | null;
}

/** A distinct failure shape: tool + stage + type + error code + normalized message. */
export interface FailureSignature {
  signature: string;
  tool_name: string;
  failure_stage: FailureStage;
  failure_type: string;
  error_code: string | null;
  normalized_message: string;
  /** UTC ISO-8601 */
  first_seen: string;
  last_seen: string;
  count: number;
}

/**
 * Rollup-backed reads are hour-granular: they cover every UTC hour the window overlaps.
 * `signatures` compares the exact last-seen time instead.
 */
export interface StatsFilter extends TimeWindow {
  toolName?: string;
}

/** A page of stored trajectories, ordered by trajectory_id. */
export interface TrajectoryQuery {
  source?: TrajectorySource;
  /** Default 1000. */
  limit?: number;
  /** Only trajectories whose id sorts after this one (a cursor). */
  afterId?: string;
}

/**
 * Where trajectories live (table `trajectories`, schema version 2). Idempotent: a trajectory
 * whose id, or whose (source, source_id), is already stored is skipped, so importing the same
 * file twice stores it once.
 */
export interface TrajectoryStore {
  /** Stores the trajectories in one transaction; returns how many were new. */
  insertTrajectories(trajectories: readonly Trajectory[]): Promise<number>;
  /**
   * Replaces trajectories already stored (matched by trajectory_id) with these versions, e.g.
   * after annotation. Unknown ids are ignored. Returns how many were replaced.
   */
  updateTrajectories(trajectories: readonly Trajectory[]): Promise<number>;
  getTrajectory(trajectoryId: string): Promise<Trajectory | null>;
  queryTrajectories(query?: TrajectoryQuery): Promise<Trajectory[]>;
  countTrajectories(query?: Pick<TrajectoryQuery, 'source'>): Promise<number>;
}

export interface Store extends Partial<TrajectoryStore> {
  readonly kind: StoreKind;
  /**
   * Inserts records and updates the rollups in one transaction. Idempotent by `execution_id`:
   * a record already stored is skipped and not counted twice in the rollups.
   */
  insert(records: readonly ToolExecutionRecord[]): Promise<void>;
  get(executionId: string): Promise<ToolExecutionRecord | null>;
  query(query: RecordQuery): Promise<ToolExecutionRecord[]>;
  count(query?: Omit<RecordQuery, 'afterId' | 'limit' | 'order'>): Promise<number>;
  toolStats(filter: StatsFilter): Promise<ToolStats[]>;
  failureBreakdown(filter: StatsFilter): Promise<FailureBreakdownRow[]>;
  hourly(filter: StatsFilter): Promise<HourlyPoint[]>;
  /** Signatures last seen in the window, each with its first-seen time over all history. */
  signatures(filter: StatsFilter): Promise<FailureSignature[]>;
  /** Releases connections / file handles. Safe to call twice. */
  close(): Promise<void>;
}
