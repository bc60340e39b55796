/**
 * The Store: where records live. One interface, the intersection of its capabilities (writer,
 * reader, stats, retention, trajectories, correction memory), three adapters (memory, sqlite,
 * postgres), and one contract suite per capability that every adapter passes or skips with a
 * stated reason.
 *
 * Analytics come from hourly rollups that each adapter maintains on insert (see `rollup.ts`), so
 * they stay fast at tens of millions of records. Only `query` and `get` read raw records.
 */
import type { CallStatus, FailureCategory, FailureStage } from './taxonomy.js';
import type { CorrectionAction, CorrectionRecovery, ToolExecutionRecord } from './record-types.js';
import type { Trajectory, TrajectorySource } from './trajectory-types.js';
import type { FailureSignatureKey } from './failure-signature.js';

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

/** A distinct failure shape (tool + stage + type + error code + normalized message) and how often it was seen. */
export interface FailureSignature extends FailureSignatureKey {
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

export type { CorrectionAction, CorrectionRecovery };

/** One remembered recovery: a failure signature and what made the next call succeed. */
export interface CorrectionEntry {
  /** The failure signature (see `signature.ts`). */
  signature: string;
  tool_name: string;
  failure_category: FailureCategory | null;
  failure_type: string;
  error_code: string | null;
  recovery: CorrectionRecovery;
  /** The trace in which the recovery happened, when known. */
  trace_id: string | null;
  /** UTC ISO-8601, when the recovering call ran. */
  recovered_at: string;
  /** How many times this same recovery was pushed for this signature (from distinct traces). */
  uses: number;
}

/** A correction to remember; the memory counts `uses` itself. */
export type NewCorrection = Omit<CorrectionEntry, 'uses'>;

/** The correction memory's bounds: the oldest entries are evicted beyond them. */
export interface CorrectionLimits {
  /** Entries kept in all. Default 100 (seed 004 keeps the last 100). */
  capacity: number;
  /** Entries kept per signature. Default 5. */
  perSignature: number;
}

export interface CorrectionQuery {
  signature?: string;
  /** Default 100. */
  limit?: number;
}

/**
 * The correction memory (table `corrections`, schema version 3): a LIFO buffer of
 * (failure signature, the recovery that worked). Pushing a recovery already stored for the
 * signature moves it to the top and adds one to its `uses`, unless it came from the same trace
 * (a no-op, so re-deriving corrections from the same data is idempotent).
 */
export interface CorrectionMemoryStore {
  /** Stores the correction on top, evicts beyond `limits`, and returns the entry as stored. */
  pushCorrection(correction: NewCorrection, limits?: Partial<CorrectionLimits>): Promise<CorrectionEntry>;
  /**
   * Pushes the corrections in order, in one transaction (one round trip): the result is the same
   * as pushing them one by one. Validates them all first; an invalid one stores nothing.
   */
  pushCorrections(corrections: readonly NewCorrection[], limits?: Partial<CorrectionLimits>): Promise<void>;
  /** The most recently pushed correction for the signature. */
  latestCorrection(signature: string): Promise<CorrectionEntry | null>;
  /** Newest first. */
  listCorrections(query?: CorrectionQuery): Promise<CorrectionEntry[]>;
}

/** How a store encodes insert batches (see {@link RecordWriter.batchEncoding}). */
export interface BatchEncoding {
  encode(records: readonly ToolExecutionRecord[]): Uint8Array;
  /** The records of an encoded batch (as the store would read them back). */
  decode(batch: Uint8Array): ToolExecutionRecord[];
}

/** Options of {@link RecordRetention.prune}. */
export interface PruneOptions {
  /**
   * Deletes at most this many records, the oldest first, so that a large prune can run as short
   * transactions between other writes. Default: every record before the cutoff.
   */
  limit?: number;
}

/** What every store is, whatever it can do: which adapter, and how to let it go. */
export interface StoreHandle {
  readonly kind: StoreKind;
  /** Releases connections / file handles, once the writes in flight are done. Safe to call twice. */
  close(): Promise<void>;
}

/** Takes records in: what the recorder needs of a store. */
export interface RecordWriter extends StoreHandle {
  /**
   * Inserts records and updates the rollups in one transaction. Idempotent by `execution_id`:
   * a record already stored is skipped and not counted twice in the rollups.
   */
  insert(records: readonly ToolExecutionRecord[]): Promise<void>;
  /**
   * How many `insert` calls the recorder may keep in flight at once (default 1). Set above 1 only
   * by a store that applies concurrent inserts one after another in call order (the SQLite writer
   * thread), so pipelined batches cannot deadlock on the rollup rows.
   */
  readonly maxInsertsInFlight?: number;
  /**
   * Optional: the store's own compact form of an insert batch. The recorder encodes each batch
   * once, holds only the bytes while the write is in flight (a pipelined store has many batches in
   * flight, and thousands of live record objects would make every garbage collection of the
   * agent's thread dearer; one buffer per batch costs it nothing to trace), sends them with
   * `insertEncoded`, and decodes them back only when the write fails (to spool, isolate or requeue
   * the records). `encode` throws for records the store could not take (the recorder then uses
   * `insert`, which refuses them one by one).
   */
  readonly batchEncoding?: BatchEncoding;
  /** `insert` of a batch encoded by {@link batchEncoding}; idempotent like `insert`. */
  insertEncoded?(batch: Uint8Array): Promise<void>;
  /**
   * Optional, for a store whose writes finish elsewhere (the SQLite writer thread): takes the
   * answers that have arrived, synchronously, so the promises of finished writes settle in the
   * next microtasks. The recorder calls it from its enqueue path, so that a caller that never
   * yields to the event loop (tools answering in microtasks) still sees writes complete.
   */
  poll?(): void;
}

/** Reads raw records back: by id, or a page of a filtered, id-ordered scan. */
export interface RecordReader {
  get(executionId: string): Promise<ToolExecutionRecord | null>;
  query(query: RecordQuery): Promise<ToolExecutionRecord[]>;
  count(query?: Omit<RecordQuery, 'afterId' | 'limit' | 'order'>): Promise<number>;
}

/** Aggregates over a window, read from the hourly rollups (never from raw records). */
export interface StatsReader {
  toolStats(filter: StatsFilter): Promise<ToolStats[]>;
  failureBreakdown(filter: StatsFilter): Promise<FailureBreakdownRow[]>;
  hourly(filter: StatsFilter): Promise<HourlyPoint[]>;
  /** Signatures last seen in the window, each with its first-seen time over all history. */
  signatures(filter: StatsFilter): Promise<FailureSignature[]>;
}

/** Retention: old records out, with their share of the rollups. */
export interface RecordRetention {
  /**
   * Deletes the records created before `beforeMs` (epoch ms) and takes exactly what they added
   * out of the rollups, in the same transaction, so every stats read afterwards equals one
   * computed from the records that remain. Rollup rows of hours wholly before the cutoff and
   * signatures last seen before it go too, once no such record is left (a prune with a `limit`
   * that stopped early keeps them). A signature that still has records keeps its first-seen time:
   * it is when the failure first appeared, and resetting it would announce an old failure as new.
   * Stored trajectories and the correction memory are left alone (see DESIGN.md "Retention").
   * Returns how many records were deleted.
   */
  prune(beforeMs: number, options?: PruneOptions): Promise<number>;
}

/**
 * A whole store: the intersection of its capabilities. Writing, reading and stats are required;
 * retention, trajectories and the correction memory are optional (the built-in adapters have all
 * three; wrappers and test doubles may not), so a caller that needs one checks for it
 * (`canPrune`, `hasTrajectoryStore`, `hasCorrectionMemory`). A caller that needs only one
 * capability takes its narrow type.
 */
export interface Store
  extends RecordWriter,
    RecordReader,
    StatsReader,
    Partial<RecordRetention>,
    Partial<TrajectoryStore>,
    Partial<CorrectionMemoryStore> {}
