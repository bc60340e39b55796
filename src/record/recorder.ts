/**
 * The batching recorder: the processor half of the processor / exporter split (STYLE.md habit 4),
 * with the {@link Store} as the exporter. The hot path only pushes onto a bounded array; batches
 * go to the store asynchronously, one flush at a time. When the store fails, batches go to an
 * fsync'd spool file instead, a backoff probe looks for the store, and the spool is replayed once
 * the store accepts writes again. Replays may repeat safely because `Store.insert` is idempotent by
 * `execution_id`, which is what makes "nothing lost, nothing doubled" cheap to guarantee.
 *
 * Idempotency also gives a free health check: re-inserting a record the store already holds is a
 * no-op that succeeds exactly when the store takes writes. It lets the recorder tell an outage from
 * a record the store will never accept (a poison record, e.g. a non-UUID id in PostgreSQL), which
 * would otherwise keep the store "down" forever: such records are isolated by bisecting the batch,
 * set aside in a `rejected-*.jsonl` file next to the spool, and reported.
 */
import { ConfigError, FaultlineError } from '../errors.js';
import type { BatchEncoding, Store } from '../store/types.js';
import { spoolAtExit } from './spool-at-exit.js';
import { createSpool, defaultSpoolPath, readSpoolBatches, unlinkIfPresent, type Spool } from './spool.js';
import { summarizeSuccess } from './summarize.js';
import type { ToolExecutionRecord } from './types.js';

export interface RecorderOptions {
  store: Store;
  /**
   * `batched` (default): `enqueue` returns at once and records are written in the background.
   * `durable`: the promise from `enqueue` resolves only once the record is in the store (or fsync'd
   * to the spool when the store is failing), so nothing acknowledged lives only in memory. Records
   * enqueued while a write is in flight share the next write (group commit).
   */
  mode?: 'batched' | 'durable';
  /** Flush as soon as this many records are queued, and never send more per insert. Default 512. */
  batchSize?: number;
  /** Also flush on this interval; the timer is unref()'d. Default 250. */
  flushIntervalMs?: number;
  /** Records held in memory (queued plus being written). Default 50 000. */
  maxQueue?: number;
  /** When memory is full: `drop` (default) counts and discards; `block` makes `enqueue` return a promise that resolves once there is room. */
  overflow?: 'drop' | 'block';
  /**
   * `block` overflow: the longest an `enqueue` waits for room. Room comes back as soon as the store
   * or the spool takes a batch, so a wait this long means both are failing (the store is down and
   * the spool is disabled or its disk is full); the record is then dropped (counted in `dropped`,
   * reported through `onError` once per outage) and the call goes on, since a store failure must
   * not hold a tool call forever. Default 60 000.
   */
  maxBlockMs?: number;
  /**
   * Where records go while the store is failing. Default `.faultline/spool/<pid>-<random>.jsonl`.
   * `false` keeps them in memory only, up to `maxQueue`. With a spool, what is still in memory
   * when the process calls `process.exit()` is appended to it synchronously (spool-at-exit.ts) and
   * replayed by the next recorder that claims the file.
   */
  spool?: { path: string } | false;
  /** `summary` stores first-time successes as summaries (see `summarizeSuccess`). Default `full`. */
  successRecords?: 'full' | 'summary';
  /** Backoff between probes of a failing store: doubles from `initialDelayMs` (500) up to `maxDelayMs` (30 000). */
  retry?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * Inserts kept in flight at once: full batches go to the store without waiting for the previous
   * write to finish. Default: what the store declares (`store.maxInsertsInFlight`, e.g. the SQLite
   * writer thread, which applies them in order), else 1. Memory stays bounded by `maxQueue`.
   */
  maxInFlight?: number;
  /** A store write that takes longer than this counts as failed (it may still land; replays are idempotent). Default 10 000. */
  insertTimeoutMs?: number;
  /** Used to decide when a probe is due; timers still run on real time. Default `Date.now`. */
  clock?: { now(): number };
  /** Store and spool errors, at most one report per outage. Never thrown at the caller; errors thrown here are swallowed. */
  onError?: (error: unknown) => void;
}

export interface RecorderStats {
  /** Records offered to `enqueue`, including dropped ones. */
  enqueued: number;
  /** Records written to the store straight from memory. */
  written: number;
  /** Records discarded: memory full in `drop` mode, enqueued after close, or left in memory at close with nowhere to go. */
  dropped: number;
  /** Records appended to the spool. */
  spooled: number;
  /** Records written to the store from spool files (this process's and leftovers of earlier ones). */
  replayed: number;
  /** Records in memory: queued or being written. Never more than `maxQueue`. */
  queued: number;
  /** Writes that failed because the store was failing, failed probes included. */
  failedFlushes: number;
  /** Records the store refused while it accepted others; kept in `rejected-*.jsonl` beside the spool (lost when the spool is disabled). */
  rejected: number;
  storeHealthy: boolean;
  /** `enqueue` calls waiting for room in `block` mode. */
  waiting: number;
  /** Spool lines skipped because they were not a record. */
  malformedSpoolLines: number;
  /** Spool files waiting to be replayed. */
  pendingSpoolFiles: number;
}

export interface Recorder {
  /**
   * Hot path. Returns undefined when the record was queued synchronously (the common case; no
   * promise is allocated), or a promise in `block` overflow and in `durable` mode. Never throws,
   * never rejects.
   */
  enqueue(record: ToolExecutionRecord): Promise<void> | undefined;
  /** Writes everything queued so far: to the store, or to the spool while the store is failing. With the spool disabled and the store down, records stay queued. */
  flush(): Promise<void>;
  /** Flushes, stops the timers and, if the store accepts writes, replays the spool. Idempotent: later calls return the same promise. */
  close(): Promise<void>;
  stats(): RecorderStats;
}

const TIMEOUT_MARKER = Symbol.for('faultline.error.StoreWriteTimeoutError');
/** A `store.insert` did not settle within `insertTimeoutMs`; reported through `onError`. */
export class StoreWriteTimeoutError extends FaultlineError {
  readonly [TIMEOUT_MARKER] = true;
  constructor(
    readonly timeoutMs: number,
    readonly records: number,
  ) {
    super(`store insert of ${records} records did not finish within ${timeoutMs} ms`);
  }
  static override isInstance(value: unknown): value is StoreWriteTimeoutError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TIMEOUT_MARKER] === true;
  }
}

const BLOCK_MARKER = Symbol.for('faultline.error.RecorderBlockTimeoutError');
/** `block` overflow: records waited `maxBlockMs` for room and were dropped; reported through `onError`, once per outage. */
export class RecorderBlockTimeoutError extends FaultlineError {
  readonly [BLOCK_MARKER] = true;
  constructor(
    readonly maxBlockMs: number,
    readonly records: number,
  ) {
    super(`${records} record(s) waited ${maxBlockMs} ms for room in the recorder (the store and the spool are both failing) and were dropped`);
  }
  static override isInstance(value: unknown): value is RecorderBlockTimeoutError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BLOCK_MARKER] === true;
  }
}

const REJECTED_MARKER = Symbol.for('faultline.error.RecordsRejectedError');
/** The store refused these records while accepting others; reported through `onError`, once per batch. */
export class RecordsRejectedError extends FaultlineError {
  readonly [REJECTED_MARKER] = true;
  constructor(
    readonly executionIds: readonly string[],
    /** Where the records were kept, or null when the spool is disabled. */
    readonly keptAt: string | null,
    cause: unknown,
  ) {
    super(`the store refused ${executionIds.length} record(s) while accepting others: ${executionIds.slice(0, 3).join(', ')}`, { cause });
  }
  static override isInstance(value: unknown): value is RecordsRejectedError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[REJECTED_MARKER] === true;
  }
}

/**
 * Creates a recorder in front of a store.
 *
 * @example
 * const recorder = createRecorder({ store, onError: (e) => log.warn(e) });
 * recorder.enqueue(record);      // cheap, synchronous
 * await recorder.close();        // at shutdown: everything is in the store or on disk
 */
export function createRecorder(options: RecorderOptions): Recorder {
  return new BatchingRecorder(options);
}

interface Waiter {
  record: ToolExecutionRecord;
  resolve: () => void;
  /** When it started waiting (`performance.now()`: real time, as the timer that drops it runs on), for `maxBlockMs`. */
  since: number;
}

interface Segment {
  path: string;
  /** Lines already stored: a failed replay resumes here rather than counting them again. */
  doneLines: number;
  /** Lines already parsed, so malformed lines are counted once. */
  scannedLines: number;
}

type InsertResult = { ok: true } | { ok: false; error: unknown };

/**
 * A batch on its way to the store. When the store has its own batch encoding
 * (`Store.batchEncoding`, the SQLite writer thread), only the encoded bytes are held while the
 * write is in flight, and the records are decoded back only if it fails (to spool, isolate or
 * requeue them): a pipelined store has many batches in flight, and thousands of live record
 * objects would make every garbage collection of the agent's thread dearer, while one buffer per
 * batch costs the collector nothing to trace.
 */
class Outgoing {
  readonly count: number;
  /** The last record, kept as the health-check record once the batch is stored. */
  readonly last: ToolExecutionRecord | undefined;
  readonly encoded: Uint8Array | null;
  readonly #encoding: BatchEncoding | undefined;
  #records: ToolExecutionRecord[] | null;

  constructor(records: ToolExecutionRecord[], encoding: BatchEncoding | undefined) {
    this.count = records.length;
    this.last = records[records.length - 1];
    let encoded: Uint8Array | null = null;
    if (encoding !== undefined) {
      try {
        encoded = encoding.encode(records);
      } catch {
        // Records the encoding refuses (a bad created_at, a BigInt): keep the objects and let the
        // store's insert judge them one by one.
      }
    }
    this.encoded = encoded;
    this.#encoding = encoding;
    this.#records = encoded === null ? records : null;
  }

  get records(): ToolExecutionRecord[] {
    return (this.#records ??= this.#encoding!.decode(this.encoded!));
  }
}

/** `stored` excludes records set aside as rejected. */
type WriteResult = { ok: true; stored: number } | { ok: false; error: unknown };

class BatchingRecorder implements Recorder {
  private readonly store: Store;
  private readonly batchSize: number;
  private readonly maxQueue: number;
  private readonly maxInFlight: number;
  /** The store's own batch encoding, used when it also takes encoded inserts (see {@link Outgoing}). */
  private readonly encoding: BatchEncoding | undefined;
  private readonly blockOnOverflow: boolean;
  private readonly maxBlockMs: number;
  private readonly summarize: boolean;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly insertTimeoutMs: number;
  private readonly clock: { now(): number };
  private readonly onError: ((error: unknown) => void) | undefined;
  private readonly spool: Spool | null;
  private readonly interval: NodeJS.Timeout;
  private readonly ready: Promise<void>;

  private queue: ToolExecutionRecord[] = [];
  /** Durable mode only: one resolver per queued record, kept parallel to `queue`. */
  private acks: Array<() => void> | null;
  private readonly waiters: Waiter[] = [];
  /** Drops waiters older than `maxBlockMs`; armed while any wait. */
  private waiterTimer: NodeJS.Timeout | null = null;
  private blockTimeoutReported = false;
  /** Batches being written, so that what they hold can still be spooled at exit. */
  private readonly outgoing = new Set<Outgoing>();
  /** Takes this recorder off the exit-time spool list. */
  private readonly unlistAtExit: () => void;
  private inFlight = 0;
  /** Records that entered the queue, and records that left memory for good; flush() waits on these. */
  private accepted = 0;
  private settled = 0;
  private flushing: Promise<boolean> | null = null;
  private flushScheduled = false;
  /** Batches being written (at most `maxInFlight`), and the drain's wake-up when one ends. */
  private running = 0;
  private wakeDrain: (() => void) | null = null;
  /** A batch found nowhere to go: the drain starts no more batches and reports it. */
  private stuck = false;
  /** Batches taken from the queue so far; orders the batches that are put back. */
  private batchSeq = 0;
  /** Records at the front of the queue put back after failed writes, and the newest such batch. */
  private putBackCount = 0;
  private putBackSeq = -1;

  private healthy = true;
  /** Lets the next batch try the store although it is unhealthy: the probe when records have nowhere else to go. */
  private probeArmed = false;
  private probeDelayMs: number;
  private nextProbeAt = 0;
  private probeTimer: NodeJS.Timeout | null = null;
  private recovering: Promise<void> | null = null;
  private recoverAgain = false;
  private spoolFailing = false;
  private spoolErrorReported = false;
  private readonly segments: Segment[] = [];
  /** The most recent record the store confirmed; re-inserting it is the health check. */
  private lastStored: ToolExecutionRecord | null = null;
  private closed = false;
  private closing: Promise<void> | null = null;

  private enqueued = 0;
  private written = 0;
  private dropped = 0;
  private spooled = 0;
  private replayed = 0;
  private failedFlushes = 0;
  private rejected = 0;
  private malformed = 0;

  constructor(options: RecorderOptions) {
    if (typeof options?.store?.insert !== 'function') throw new ConfigError('recorder needs a store', 'store');
    const mode = oneOf(options.mode, 'mode', ['batched', 'durable'] as const, 'batched');
    this.store = options.store;
    this.maxQueue = positiveInteger(options.maxQueue, 'maxQueue', 50_000);
    // A batch larger than the queue could never fill, so the queue size wins (as in OpenTelemetry).
    this.batchSize = Math.min(positiveInteger(options.batchSize, 'batchSize', 512), this.maxQueue);
    this.encoding = typeof options.store.insertEncoded === 'function' ? options.store.batchEncoding : undefined;
    const storeDepth = options.store.maxInsertsInFlight;
    this.maxInFlight =
      options.maxInFlight !== undefined
        ? positiveInteger(options.maxInFlight, 'maxInFlight', 1)
        : typeof storeDepth === 'number' && storeDepth >= 1
          ? Math.floor(storeDepth)
          : 1;
    const flushIntervalMs = positiveNumber(options.flushIntervalMs, 'flushIntervalMs', 250);
    this.blockOnOverflow = oneOf(options.overflow, 'overflow', ['drop', 'block'] as const, 'drop') === 'block';
    this.maxBlockMs = positiveNumber(options.maxBlockMs, 'maxBlockMs', 60_000);
    this.summarize = oneOf(options.successRecords, 'successRecords', ['full', 'summary'] as const, 'full') === 'summary';
    this.initialDelayMs = positiveNumber(options.retry?.initialDelayMs, 'retry.initialDelayMs', 500);
    this.maxDelayMs = positiveNumber(options.retry?.maxDelayMs, 'retry.maxDelayMs', Math.max(30_000, this.initialDelayMs));
    if (this.maxDelayMs < this.initialDelayMs) {
      throw new ConfigError('retry.maxDelayMs must not be below retry.initialDelayMs', 'retry.maxDelayMs');
    }
    this.insertTimeoutMs = positiveNumber(options.insertTimeoutMs, 'insertTimeoutMs', 10_000);
    this.clock = options.clock ?? { now: Date.now };
    this.onError = options.onError;
    this.acks = mode === 'durable' ? [] : null;
    this.probeDelayMs = this.initialDelayMs;

    const spoolOption = options.spool;
    if (spoolOption === false) {
      this.spool = null;
    } else {
      if (spoolOption !== undefined && (typeof spoolOption !== 'object' || spoolOption === null)) {
        throw new ConfigError('spool must be { path } or false', 'spool');
      }
      const path: unknown = spoolOption?.path;
      if (path !== undefined && (typeof path !== 'string' || path === '')) {
        throw new ConfigError('spool.path must be a non-empty string', 'spool.path');
      }
      this.spool = createSpool({ path: path ?? defaultSpoolPath() });
    }
    const spool = this.spool;
    this.unlistAtExit = spool === null ? () => undefined : spoolAtExit(() => this.spoolAtExit(spool));

    this.interval = setInterval(() => this.tick(), flushIntervalMs);
    this.interval.unref();

    this.ready =
      this.spool === null
        ? Promise.resolve()
        : this.spool.claimLeftovers().then(
            (paths) => {
              for (const path of paths) this.segments.push({ path, doneLines: 0, scannedLines: 0 });
              if (paths.length > 0) void this.recover();
            },
            (error: unknown) => this.reportSpoolError(error),
          );
  }

  enqueue(record: ToolExecutionRecord): Promise<void> | undefined {
    this.enqueued++;
    if (this.closed) {
      this.dropped++;
      return undefined;
    }
    const stored = this.summarize ? summarizeSuccess(record) : record;
    if (this.waiters.length > 0 || this.queue.length + this.inFlight >= this.maxQueue) {
      if (!this.blockOnOverflow) {
        this.dropped++;
        return undefined;
      }
      return new Promise<void>((resolve) => {
        this.waiters.push({ record: stored, resolve, since: performance.now() });
        this.armWaiterTimer();
      });
    }
    this.accepted++;
    this.queue.push(stored);
    const acks = this.acks;
    if (acks !== null) {
      const done = new Promise<void>((resolve) => {
        acks.push(resolve);
      });
      this.scheduleFlush();
      return done;
    }
    if (this.queue.length >= this.batchSize) this.scheduleFlush();
    return undefined;
  }

  async flush(): Promise<void> {
    if (this.closing !== null) return this.closing;
    await this.ready;
    if (!this.healthy && this.probeDue()) await this.recover();
    const target = this.accepted;
    while (this.settled < target) {
      if (!(await (this.flushing ?? this.startDrain()))) return;
    }
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  stats(): RecorderStats {
    return {
      enqueued: this.enqueued,
      written: this.written,
      dropped: this.dropped,
      spooled: this.spooled,
      replayed: this.replayed,
      queued: this.queue.length + this.inFlight,
      failedFlushes: this.failedFlushes,
      rejected: this.rejected,
      storeHealthy: this.healthy,
      waiting: this.waiters.length,
      malformedSpoolLines: this.malformed,
      pendingSpoolFiles: this.segments.length + (this.spool?.hasUnsealedData === true ? 1 : 0),
    };
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    clearInterval(this.interval);
    try {
      await this.ready;
      await this.drainEverything();
      if (this.recovering !== null) await this.recovering;
      // One last probe even if the backoff says wait: the store may be back, and the spool then
      // need not outlive this process.
      if (!this.healthy || this.segments.length > 0 || this.spool?.hasUnsealedData === true) {
        await this.recover();
        await this.drainEverything();
      }
    } catch (error) {
      this.report(error);
    } finally {
      this.clearProbeTimer();
      this.dropRemaining();
      await this.spool?.close();
      this.unlistAtExit();
    }
  }

  /**
   * The process is exiting (`process.exit()`): appends every record still in memory to the spool,
   * synchronously. Batches in flight are included, since their write will never be confirmed;
   * if one did land, the replay skips it by `execution_id`.
   */
  private spoolAtExit(spool: Spool): void {
    const records: ToolExecutionRecord[] = [];
    for (const batch of this.outgoing) for (const record of batch.records) records.push(record);
    for (const record of this.queue) records.push(record);
    for (const waiter of this.waiters) records.push(waiter.record);
    if (records.length === 0) return;
    spool.appendSync(records);
    this.spooled += records.length;
  }

  /** Arms the sweep of waiters that have waited `maxBlockMs`, for the oldest one. */
  private armWaiterTimer(): void {
    const oldest = this.waiters[0];
    if (this.waiterTimer !== null || oldest === undefined) return;
    const delay = Math.max(0, oldest.since + this.maxBlockMs - performance.now());
    this.waiterTimer = setTimeout(() => {
      this.waiterTimer = null;
      this.dropExpiredWaiters();
    }, delay);
    this.waiterTimer.unref();
  }

  private dropExpiredWaiters(): void {
    const deadline = performance.now() - this.maxBlockMs;
    let expired = 0;
    while (this.waiters.length > 0 && this.waiters[0]!.since <= deadline) {
      this.waiters.shift()!.resolve();
      expired++;
    }
    if (expired > 0) {
      this.dropped += expired;
      if (!this.blockTimeoutReported) {
        this.blockTimeoutReported = true;
        this.report(new RecorderBlockTimeoutError(this.maxBlockMs, expired));
      }
    }
    this.armWaiterTimer();
  }

  /** Drains until memory and the waiters are empty, or nothing can move. */
  private async drainEverything(): Promise<void> {
    for (;;) {
      this.admitWaiters();
      const drained = await (this.flushing ?? this.startDrain());
      if (!drained) return;
      if (this.queue.length === 0 && this.waiters.length === 0 && this.inFlight === 0) return;
    }
  }

  private tick(): void {
    if (!this.healthy && this.probeDue()) void this.recover();
    if (this.queue.length > 0 && this.flushing === null && this.canPersist()) void this.startDrain();
  }

  private canPersist(): boolean {
    return this.healthy || this.probeArmed || (this.spool !== null && !this.spoolFailing);
  }

  private probeDue(): boolean {
    return this.clock.now() >= this.nextProbeAt;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || (this.flushing !== null && this.running >= this.maxInFlight) || !this.canPersist()) return;
    this.flushScheduled = true;
    // Deferred so a burst of synchronous enqueues becomes one batch, and the caller never waits on I/O.
    queueMicrotask(() => {
      this.flushScheduled = false;
      // A drain in progress may take another full batch when the store pipelines its writes.
      if (this.flushing === null) void this.startDrain(false);
      else this.startBatches(false);
    });
  }

  /**
   * `all`: write everything queued (interval tick, flush, close, durable mode). Otherwise only
   * full batches: a drain started because the queue reached `batchSize` must not go on to write
   * the few records that trickle in meanwhile one transaction each, which would turn a batching
   * recorder into a per-record one under concurrent load. The remainder waits for the next full
   * batch or the interval.
   */
  private startDrain(all = true): Promise<boolean> {
    const run = this.drain(all).then((drained) => {
      this.flushing = null;
      if (drained && this.queue.length > 0 && (this.acks !== null || this.queue.length >= this.batchSize)) {
        this.scheduleFlush();
      }
      return drained;
    });
    this.flushing = run;
    return run;
  }

  /** Resolves true when the queue was emptied, false when records are stuck in memory. */
  private async drain(all: boolean): Promise<boolean> {
    this.stuck = false;
    for (;;) {
      this.startBatches(all);
      if (this.running === 0) return !this.stuck;
      await new Promise<void>((resolve) => {
        this.wakeDrain = resolve;
      });
    }
  }

  /**
   * Starts writing batches, up to `maxInFlight` at once. Only full batches join writes already in
   * flight: a partial one waits for them, so records that arrive meanwhile share its write (group
   * commit in durable mode). While the store is failing, batches go one at a time (probe, spool).
   */
  private startBatches(all: boolean): void {
    while (!this.stuck && this.running < this.maxInFlight && this.queue.length > 0) {
      const full = this.queue.length >= this.batchSize;
      if (!full && !all && this.acks === null) return;
      if (this.running > 0 && (!full || !this.healthy)) return;
      this.running++;
      void this.persistNextBatch().then((persisted) => {
        this.running--;
        if (!persisted) this.stuck = true;
        const wake = this.wakeDrain;
        this.wakeDrain = null;
        wake?.();
      });
    }
  }

  private async persistNextBatch(): Promise<boolean> {
    const count = Math.min(this.batchSize, this.queue.length);
    const seq = this.batchSeq++;
    const batch = new Outgoing(this.queue.splice(0, count), this.encoding);
    this.outgoing.add(batch);
    const acks = this.acks === null ? null : this.acks.splice(0, count);
    this.putBackCount = Math.max(0, this.putBackCount - count);
    this.inFlight += count;
    let persisted = false;
    try {
      if (this.healthy || this.probeArmed) {
        const wasHealthy = this.healthy;
        this.probeArmed = false;
        const result = await this.write(batch);
        if (result.ok) {
          this.written += result.stored;
          persisted = true;
          if (!this.healthy) this.becomeHealthy();
        } else {
          this.storeFailed(result.error, !wasHealthy);
        }
      }
      if (!persisted && this.spool !== null && !this.spoolFailing) {
        try {
          await this.spool.append(batch.records);
          this.spooled += count;
          this.spoolErrorReported = false;
          persisted = true;
          // The store came back while this batch was on its way to disk: replay it now rather than
          // leaving it for the next outage or for close().
          if (this.healthy) void this.recover();
        } catch (error) {
          this.spoolFailing = true;
          this.reportSpoolError(error);
        }
      }
    } catch (error) {
      this.report(error);
    } finally {
      this.outgoing.delete(batch);
      this.inFlight -= count;
      if (persisted) {
        this.settle(count, acks);
      } else {
        this.putBack(seq, batch.records, acks);
      }
    }
    return persisted;
  }

  /**
   * Nowhere to put the batch: keep it, in order, ahead of newer records, until a probe finds the
   * store. Batches written concurrently fail in the order they were sent (the stores that pipeline
   * apply writes in order), so each goes after the ones put back before it.
   */
  private putBack(seq: number, batch: ToolExecutionRecord[], acks: Array<() => void> | null): void {
    const at = seq > this.putBackSeq ? this.putBackCount : 0;
    this.queue = this.queue.slice(0, at).concat(batch, this.queue.slice(at));
    if (this.acks !== null && acks !== null) this.acks = this.acks.slice(0, at).concat(acks, this.acks.slice(at));
    this.putBackCount += batch.length;
    this.putBackSeq = Math.max(this.putBackSeq, seq);
  }

  private settle(count: number, acks: Array<() => void> | null): void {
    this.settled += count;
    if (acks !== null) for (const ack of acks) ack();
    this.admitWaiters();
  }

  private admitWaiters(): void {
    let admitted = false;
    while (this.queue.length + this.inFlight < this.maxQueue) {
      const waiter = this.waiters.shift();
      if (waiter === undefined) break;
      admitted = true;
      this.accepted++;
      this.queue.push(waiter.record);
      if (this.acks !== null) this.acks.push(waiter.resolve);
      else waiter.resolve();
    }
    if (admitted && (this.acks !== null || this.queue.length >= this.batchSize)) this.scheduleFlush();
  }

  private dropRemaining(): void {
    const queued = this.queue;
    const acks = this.acks;
    this.queue = [];
    this.putBackCount = 0;
    if (acks !== null) this.acks = [];
    this.settled += queued.length;
    this.dropped += queued.length + this.waiters.length;
    if (acks !== null) for (const ack of acks) ack();
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
    if (this.waiterTimer !== null) clearTimeout(this.waiterTimer);
    this.waiterTimer = null;
  }

  /**
   * Inserts a batch. When the store refuses it but still takes other writes, the batch is split
   * until the refused records stand alone; those are set aside and the rest is stored.
   */
  private async write(out: Outgoing): Promise<WriteResult> {
    const encoded = out.encoded;
    const result =
      encoded === null ? await this.insert(out.records) : await this.send(out.count, () => this.store.insertEncoded!(encoded));
    if (result.ok) {
      if (out.last !== undefined) this.lastStored = out.last;
      return { ok: true, stored: out.count };
    }
    // A write that timed out says nothing about its records, and probing a store that hangs would
    // only hold the queue up for another timeout or two.
    if (StoreWriteTimeoutError.isInstance(result.error)) return { ok: false, error: result.error };
    const batch = out.records;
    if (!(await this.storeTakesWrites(batch))) return { ok: false, error: result.error };
    const refused: Array<{ record: ToolExecutionRecord; error: unknown }> = [];
    const outage = await this.bisect(batch, refused);
    if (outage !== null) return { ok: false, error: outage.error };
    if (refused.length > 0) await this.setAside(refused);
    return { ok: true, stored: batch.length - refused.length };
  }

  /** `batch` failed as a whole while the store took another write. Returns the error if the store went down meanwhile. */
  private async bisect(
    batch: readonly ToolExecutionRecord[],
    refused: Array<{ record: ToolExecutionRecord; error: unknown }>,
  ): Promise<{ error: unknown } | null> {
    const [only] = batch;
    if (batch.length === 1 && only !== undefined) {
      // Once more on its own, so a failure that merely coincided with a dropped connection is not
      // mistaken for a record the store will never take.
      const retry = await this.insert(batch);
      if (retry.ok) {
        this.remember(batch);
        return null;
      }
      if (!(await this.storeTakesWrites([]))) return { error: retry.error };
      refused.push({ record: only, error: retry.error });
      return null;
    }
    const middle = Math.ceil(batch.length / 2);
    for (const half of [batch.slice(0, middle), batch.slice(middle)]) {
      const result = await this.insert(half);
      if (result.ok) {
        this.remember(half);
        continue;
      }
      if (!(await this.storeTakesWrites(half))) return { error: result.error };
      const outage = await this.bisect(half, refused);
      if (outage !== null) return outage;
    }
    return null;
  }

  /**
   * Whether the store takes writes at all: re-inserting a record it already holds is a no-op that
   * succeeds exactly then. Before any record is known to be stored, either end of the batch
   * succeeding on its own is proof too; otherwise an outage cannot be ruled out.
   */
  private async storeTakesWrites(batch: readonly ToolExecutionRecord[]): Promise<boolean> {
    if (this.lastStored !== null) return (await this.insert([this.lastStored])).ok;
    const candidates = batch.length > 1 ? [batch[0], batch[batch.length - 1]] : [];
    for (const candidate of candidates) {
      if (candidate !== undefined && (await this.insert([candidate])).ok) {
        this.lastStored = candidate;
        return true;
      }
    }
    return false;
  }

  private remember(batch: readonly ToolExecutionRecord[]): void {
    const last = batch[batch.length - 1];
    if (last !== undefined) this.lastStored = last;
  }

  private async setAside(refused: ReadonlyArray<{ record: ToolExecutionRecord; error: unknown }>): Promise<void> {
    this.rejected += refused.length;
    let keptAt: string | null = null;
    if (this.spool !== null) {
      try {
        keptAt = await this.spool.reject(refused.map((entry) => entry.record));
      } catch (error) {
        this.reportSpoolError(error);
      }
    }
    this.report(
      new RecordsRejectedError(
        refused.map((entry) => entry.record.execution_id),
        keptAt,
        refused[0]?.error,
      ),
    );
  }

  private insert(batch: readonly ToolExecutionRecord[]): Promise<InsertResult> {
    return this.send(batch.length, () => this.store.insert(batch));
  }

  /** Runs one store write of `count` records, bounded by `insertTimeoutMs`; never rejects. */
  private send(count: number, write: () => Promise<void>): Promise<InsertResult> {
    return new Promise<InsertResult>((resolve) => {
      let settled = false;
      const finish = (result: InsertResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const timer = setTimeout(
        () => finish({ ok: false, error: new StoreWriteTimeoutError(this.insertTimeoutMs, count) }),
        this.insertTimeoutMs,
      );
      timer.unref();
      try {
        Promise.resolve(write()).then(
          () => finish({ ok: true }),
          (error: unknown) => finish({ ok: false, error }),
        );
      } catch (error) {
        finish({ ok: false, error });
      }
    });
  }

  private storeFailed(error: unknown, duringProbe: boolean): void {
    this.failedFlushes++;
    if (this.healthy) {
      this.healthy = false;
      this.probeDelayMs = this.initialDelayMs;
      this.report(error);
    } else if (!duringProbe) {
      // A write started before the outage was noticed; the outage is already reported and probed.
      if (this.probeTimer !== null) return;
    } else {
      this.probeDelayMs = Math.min(this.probeDelayMs * 2, this.maxDelayMs);
    }
    this.scheduleProbe();
  }

  private becomeHealthy(): void {
    this.healthy = true;
    this.blockTimeoutReported = false;
    this.spoolFailing = false;
    this.probeDelayMs = this.initialDelayMs;
    this.clearProbeTimer();
    if (this.queue.length > 0) this.scheduleFlush();
  }

  private scheduleProbe(): void {
    this.clearProbeTimer();
    if (this.closed) return;
    this.nextProbeAt = this.clock.now() + this.probeDelayMs;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      void this.recover();
    }, this.probeDelayMs);
    this.probeTimer.unref();
  }

  private clearProbeTimer(): void {
    if (this.probeTimer !== null) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  /** Probes the store and replays the spool; one run at a time, never rejects. */
  private recover(): Promise<void> {
    if (this.recovering !== null) {
      this.recoverAgain = true;
      return this.recovering;
    }
    const run = (async () => {
      do {
        this.recoverAgain = false;
        await this.runRecovery();
      } while (this.recoverAgain && this.healthy);
      this.recovering = null;
    })();
    this.recovering = run;
    return run;
  }

  private async runRecovery(): Promise<void> {
    this.clearProbeTimer();
    try {
      await this.ready;
      this.spoolFailing = false;
      if (!this.healthy && this.lastStored !== null) {
        const probe = await this.insert([this.lastStored]);
        if (!probe.ok) {
          this.storeFailed(probe.error, true);
          return;
        }
        this.becomeHealthy();
      }
      let probed = false;
      do {
        if (this.spool?.hasUnsealedData === true) {
          const sealed = await this.spool.seal();
          if (sealed !== null) this.segments.push({ path: sealed, doneLines: 0, scannedLines: 0 });
        }
        for (const segment of [...this.segments]) {
          const outcome = await this.replay(segment);
          if (outcome === 'store-failed') return;
          if (outcome === 'replayed') probed = true;
        }
        // Loop while the store is healthy and batches that were already on their way to the spool landed meanwhile.
      } while (this.healthy && this.spool?.hasUnsealedData === true);

      if (!this.healthy && !probed) {
        if (this.queue.length > 0) {
          this.probeArmed = true;
          await (this.flushing ?? this.startDrain());
          this.probeArmed = false;
          // The drain may have finished without reaching the store (its records went to the spool).
          if (!this.healthy && this.probeTimer === null) this.scheduleProbe();
        } else {
          // Nothing to probe with yet; look again later.
          this.scheduleProbe();
        }
      }
    } catch (error) {
      this.report(error);
      if (!this.healthy) this.scheduleProbe();
    }
  }

  private async replay(segment: Segment): Promise<'replayed' | 'empty' | 'store-failed' | 'read-failed'> {
    let inserted = false;
    try {
      for await (const batch of readSpoolBatches(segment.path, { batchSize: this.batchSize, fromLine: segment.doneLines })) {
        for (const line of batch.malformedLines) if (line >= segment.scannedLines) this.malformed++;
        segment.scannedLines = Math.max(segment.scannedLines, batch.nextLine);
        if (batch.records.length > 0) {
          const wasHealthy = this.healthy;
          const result = await this.write(new Outgoing(batch.records, undefined));
          if (!result.ok) {
            this.storeFailed(result.error, !wasHealthy);
            return 'store-failed';
          }
          inserted = true;
          this.replayed += result.stored;
          if (!this.healthy) this.becomeHealthy();
        }
        segment.doneLines = batch.nextLine;
      }
      // Deleted only once every line is in the store: a crash before this point replays the file again.
      await unlinkIfPresent(segment.path);
    } catch (error) {
      // An unreadable file stays on disk for a later process; it must not stall the others.
      this.reportSpoolError(error);
      this.removeSegment(segment);
      return 'read-failed';
    }
    this.removeSegment(segment);
    return inserted ? 'replayed' : 'empty';
  }

  private removeSegment(segment: Segment): void {
    const index = this.segments.indexOf(segment);
    if (index >= 0) this.segments.splice(index, 1);
  }

  private reportSpoolError(error: unknown): void {
    if (this.spoolErrorReported) return;
    this.spoolErrorReported = true;
    this.report(error);
  }

  private report(error: unknown): void {
    if (this.onError === undefined) return;
    try {
      this.onError(error);
    } catch {
      // A failing error handler must not turn telemetry trouble into a crash of the caller.
    }
  }
}

function positiveInteger(value: number | undefined, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ConfigError(`recorder option ${field} must be a positive integer, got ${String(value)}`, field);
  return value;
}

function positiveNumber(value: number | undefined, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new ConfigError(`recorder option ${field} must be a positive number, got ${String(value)}`, field);
  }
  return value;
}

function oneOf<T extends string>(value: T | undefined, field: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!allowed.includes(value)) throw new ConfigError(`recorder option ${field} must be one of ${allowed.join(', ')}, got ${String(value)}`, field);
  return value;
}
