/**
 * The batching recorder (DESIGN.md "The recorder"): the processor of a processor / exporter
 * split, the Store its exporter. The hot path only enqueues onto a bounded queue (batch-queue.ts); batches go to
 * the store asynchronously, and what it cannot take yet goes to the spool (spool-failover.ts),
 * replayed once it answers (store-health.ts probes it). Replays may repeat safely because
 * `Store.insert` is idempotent by `execution_id`.
 *
 * Both bounds on what lives only in memory (`maxQueue`, `maxUnsavedMs`) are enforced on the
 * enqueue path itself, with synchronous spool writes: a caller that awaits tools answering in
 * microtasks never lets the event loop turn, so no timer or store reply would ever run.
 */
import { reportSafely } from '../core/notify.js';
import { acknowledge, BatchQueue } from './batch-queue.js';
import { ConfigError, FaultlineError } from '../core/errors.js';
import type { BatchEncoding, RecordWriter } from '../core/store-types.js';
import { spoolAtExit } from './spool-at-exit.js';
import { createSpool, defaultSpoolPath, readSpoolBatches, unlinkIfPresent, type Spool } from './spool.js';
import { SpoolFailover } from './spool-failover.js';
import { StoreHealth } from './store-health.js';
import { summarizeSuccess } from './summarize.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

export interface RecorderOptions {
  /** Any store, or anything else that takes records as a store does (only its writer side is used). */
  store: RecordWriter;
  /**
   * `batched` (default): `enqueue` returns at once and records are written in the background.
   * `durable`: the promise from `enqueue` resolves only once the record is in the store or fsync'd
   * to the spool, so nothing acknowledged lives only in memory; when neither can take it, the
   * caller waits (at most `maxBlockMs`). Records enqueued while a write is in flight share the
   * next write (group commit).
   */
  mode?: 'batched' | 'durable';
  /** Flush as soon as this many records are queued, and never send more per insert. Default 512. */
  batchSize?: number;
  /** Also flush on this interval; the timer is unref()'d. Default 250. */
  flushIntervalMs?: number;
  /**
   * Records held only in memory at most: queued, being written, or waiting for room. Beyond it,
   * the oldest queued records go to the spool at once (`overflow: 'spill'`). Also the most a
   * process killed outright (SIGKILL) can lose. Default 10 000.
   */
  maxQueue?: number;
  /**
   * The longest a record stays only in memory: older ones go to the spool synchronously, checked
   * on `enqueue` (at least every 64 records, and on every record when records come slowly) and on
   * the flush interval, so a caller that never yields to the event loop is covered too. Batches in
   * flight count: one the store has not confirmed by then is copied to the spool (the replay of a
   * copy the store did take is a no-op). Needs the spool. Default 1000.
   */
  maxUnsavedMs?: number;
  /**
   * When memory is full (`maxQueue`): `spill` (default) writes the oldest queued batch to the spool
   * synchronously, to be replayed like an outage's; `block` makes `enqueue` return a promise that
   * resolves once there is room; `drop` counts and discards. When a spill is impossible (no spool,
   * or its disk fails), `spill` drops, except in durable mode, which blocks. A record is dropped
   * only then, failures last: failures may fill up to twice `maxQueue`, and then take the place of
   * queued successes. Drops are counted in `dropped` and reported through `onError` once per
   * episode.
   */
  overflow?: 'spill' | 'block' | 'drop';
  /**
   * A caller waiting for room (`block`, or `durable` with nowhere to put records) waits at most
   * this long. Room comes back as soon as the store or the spool takes a batch, so a wait this
   * long means both are failing (the store is down and the spool is disabled or its disk is
   * full); the record is then dropped (counted in `dropped`, reported through `onError` once per
   * outage) and the call goes on, since a store failure must not hold a tool call forever.
   * Default 60 000.
   */
  maxBlockMs?: number;
  /**
   * Where records go when the store cannot take them yet. Default
   * `.faultline/spool/<pid>-<random>.jsonl`. `false` keeps them in memory only, up to `maxQueue`.
   * What is still in memory when the process calls `process.exit()` is appended to it
   * synchronously (spool-at-exit.ts) and replayed by the next recorder that claims the file.
   */
  spool?: { path: string } | false;
  /** `summary` stores first-time successes as summaries (see `summarizeSuccess`). Default `full`. */
  successRecords?: 'full' | 'summary';
  /** Backoff between probes of a failing store: doubles from `initialDelayMs` (500) up to `maxDelayMs` (30 000). */
  retry?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * Inserts kept in flight at once: full batches go to the store without waiting for the previous
   * write to finish. Default: what the store declares (`store.maxInsertsInFlight`, e.g. the SQLite
   * writer thread, which applies them in order), else 1. Records in flight are also capped at half
   * of `maxQueue`, so that a store falling behind leaves queued batches to spill rather than
   * batches it holds already.
   */
  maxInFlight?: number;
  /** A store write that takes longer than this counts as failed (it may still land; replays are idempotent). Default 10 000. */
  insertTimeoutMs?: number;
  /** Used to decide when a probe is due; timers and the `maxUnsavedMs` bound run on real time. Default `Date.now`. */
  clock?: { now(): number };
  /** Store, spool and overflow errors, at most one report per outage or episode. Never thrown at the caller; errors thrown here are swallowed. */
  onError?: (error: unknown) => void;
}

export interface RecorderStats {
  /** Records offered to `enqueue`, including dropped ones. */
  enqueued: number;
  /** Records written to the store straight from memory. */
  written: number;
  /** Records discarded: memory and the spool both unavailable, enqueued after close, or left in memory at close with nowhere to go. */
  dropped: number;
  /** Records appended to the spool (batches the store failed, spilled or copied from memory, left at exit). */
  spooled: number;
  /** Records written to the store from spool files (this recorder's and leftovers of earlier processes). */
  replayed: number;
  /** Records only in memory: queued, or in a write the store has not confirmed. Never more than `maxQueue` (failures: twice that). */
  queued: number;
  /** Writes that failed because the store was failing, failed probes included. */
  failedFlushes: number;
  /** Records the store refused while it accepted others; kept in `rejected-*.jsonl` beside the spool (lost when the spool is disabled). */
  rejected: number;
  storeHealthy: boolean;
  /** `enqueue` calls waiting for room (`block` overflow, or durable mode with nowhere to put records). */
  waiting: number;
  /** Spool lines skipped because they were not a record. */
  malformedSpoolLines: number;
  /** Spool files waiting to be replayed. */
  pendingSpoolFiles: number;
}

/**
 * Where the records given to a recorder are: every one offered is in exactly one of `stored`,
 * `spooled`, `inMemory`, `dropped` and `rejected`. What `rt.stats()` and the proxies report.
 */
export interface RecordingStats {
  /** Records given to the recorder. */
  offered: number;
  /** In the store (written from memory, or replayed from the spool). */
  stored: number;
  /** In the spool, waiting to be replayed into the store. */
  spooled: number;
  /** Only in memory: queued, in a write not confirmed yet, or waiting for room. */
  inMemory: number;
  /** Lost: memory and disk both failed (or offered after close). */
  dropped: number;
  /** Refused by the store while it took others; kept in `rejected-*.jsonl` beside the spool. */
  rejected: number;
  /** Not among `offered`: records other processes left in the spool directory, stored from there. */
  recovered: number;
  storeHealthy: boolean;
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
  /** Where the records offered so far are (see {@link RecordingStats}). */
  recording(): RecordingStats;
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
/** Records waited `maxBlockMs` for room and were dropped; reported through `onError`, once per outage. */
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

const DROPPED_MARKER = Symbol.for('faultline.error.RecordsDroppedError');
/** Memory was full and the spool could not take records: some were dropped. Reported through `onError`, once per episode. */
export class RecordsDroppedError extends FaultlineError {
  readonly [DROPPED_MARKER] = true;
  constructor(
    readonly maxQueue: number,
    /** Why the spool could not take them: disabled, or the error its disk gave. */
    readonly reason: string,
  ) {
    super(`the recorder dropped records: ${maxQueue} were in memory and the spool ${reason}; stats().dropped counts them`);
  }
  static override isInstance(value: unknown): value is RecordsDroppedError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DROPPED_MARKER] === true;
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
  /** Written by this recorder (its records count in `spooled` until replayed), or claimed leftovers. */
  own: boolean;
  /** Lines already stored: a failed replay resumes here rather than counting them again. */
  doneLines: number;
  /** Lines already parsed, so malformed lines are counted once. */
  scannedLines: number;
}

type InsertResult = { ok: true } | { ok: false; error: unknown };

/**
 * A batch on its way to the store. When the store has its own batch encoding
 * (`RecordWriter.batchEncoding`, the SQLite writer thread), only the encoded bytes are held while the
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
  /**
   * Set once a copy is in the spool (the write took longer than `maxUnsavedMs`): its records then
   * count as spooled, its acknowledgements are given, and the write's outcome only tells the
   * store's health; the replay of the copy stores, counts and isolates them.
   */
  insured = false;
  readonly #encoding: BatchEncoding | undefined;
  #records: ToolExecutionRecord[] | null;

  constructor(
    records: ToolExecutionRecord[],
    encoding: BatchEncoding | undefined,
    /** Where the records come from: memory (their acknowledgements, if durable), or a spool file. */
    readonly origin: { acks: Array<() => void> | null; since: number; seq: number; successes: number } | 'own-spool' | 'leftover',
  ) {
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

/** Enqueues between two readings of the clock for the `maxUnsavedMs` bound, at most (the clock costs 50-250 ns a reading). */
const MAX_CHECK_EVERY = 64;

class BatchingRecorder implements Recorder {
  private readonly store: RecordWriter;
  private readonly batchSize: number;
  private readonly maxQueue: number;
  private readonly maxUnsavedMs: number;
  private readonly flushIntervalMs: number;
  private readonly maxInFlight: number;
  /** Records in writes at once, at most (see `maxInFlight`). */
  private readonly maxRecordsInFlight: number;
  /** The store's own batch encoding, used when it also takes encoded inserts (see {@link Outgoing}). */
  private readonly encoding: BatchEncoding | undefined;
  private readonly overflowMode: 'spill' | 'block' | 'drop';
  private readonly durable: boolean;
  private readonly maxBlockMs: number;
  private readonly summarize: boolean;
  private readonly insertTimeoutMs: number;
  private readonly clock: { now(): number };
  private readonly onError: ((error: unknown) => void) | undefined;
  private readonly spool: Spool | null;
  /** Appends to the spool, its fsyncs and its disk's failures; null when the spool is disabled. */
  private readonly failover: SpoolFailover | null;
  private readonly interval: NodeJS.Timeout;
  private readonly ready: Promise<void>;

  /** The records in memory, not yet in a write. */
  private readonly queue: BatchQueue;
  private readonly waiters: Waiter[] = [];
  /** Drops waiters older than `maxBlockMs`; armed while any wait. */
  private waiterTimer: NodeJS.Timeout | null = null;
  private blockTimeoutReported = false;
  private dropReported = false;
  /** Batches being written, in the order they were sent. */
  private readonly outgoing = new Set<Outgoing>();
  /** Takes this recorder off the exit-time spool list. */
  private readonly unlistAtExit: () => void;
  /** Records in writes in flight, and those of them with no copy in the spool. */
  private inFlight = 0;
  private unsavedInFlight = 0;
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
  /** When the `maxUnsavedMs` bound was last checked, and how many enqueues until the next check. */
  private lastCheckAt: number;
  private checkEvery = 1;
  private untilCheck = 1;
  /** When the spill segment was last fsync'd, and whether it holds writes since. */
  private replayScheduled = false;

  private readonly health: StoreHealth;
  /** Lets the next batch try the store although it is unhealthy: the probe when records have nowhere else to go. */
  private probeArmed = false;
  private recovering: Promise<void> | null = null;
  private recoverAgain = false;
  private readonly segments: Segment[] = [];
  private closed = false;
  private closing: Promise<void> | null = null;

  private enqueued = 0;
  private written = 0;
  private dropped = 0;
  private spooled = 0;
  /** This recorder's records in its spool files, not yet stored. */
  private spoolPending = 0;
  private replayed = 0;
  private replayedOwn = 0;
  private failedFlushes = 0;
  private rejected = 0;
  private rejectedOwn = 0;
  private malformed = 0;

  constructor(options: RecorderOptions) {
    if (typeof options?.store?.insert !== 'function') throw new ConfigError('recorder needs a store', 'store');
    this.durable = oneOf(options.mode, 'mode', ['batched', 'durable'] as const, 'batched') === 'durable';
    this.store = options.store;
    this.maxQueue = positiveInteger(options.maxQueue, 'maxQueue', 10_000);
    // A batch larger than the queue could never fill, so the queue size wins (as in OpenTelemetry).
    this.batchSize = Math.min(positiveInteger(options.batchSize, 'batchSize', 512), this.maxQueue);
    this.queue = new BatchQueue(this.batchSize, this.durable);
    this.maxRecordsInFlight = Math.max(this.batchSize, Math.floor(this.maxQueue / 2));
    this.maxUnsavedMs = positiveNumber(options.maxUnsavedMs, 'maxUnsavedMs', 1000);
    this.encoding = typeof options.store.insertEncoded === 'function' ? options.store.batchEncoding : undefined;
    const storeDepth = options.store.maxInsertsInFlight;
    this.maxInFlight =
      options.maxInFlight !== undefined
        ? positiveInteger(options.maxInFlight, 'maxInFlight', 1)
        : typeof storeDepth === 'number' && storeDepth >= 1
          ? Math.floor(storeDepth)
          : 1;
    this.flushIntervalMs = positiveNumber(options.flushIntervalMs, 'flushIntervalMs', 250);
    this.overflowMode = oneOf(options.overflow, 'overflow', ['spill', 'block', 'drop'] as const, 'spill');
    this.maxBlockMs = positiveNumber(options.maxBlockMs, 'maxBlockMs', 60_000);
    this.summarize = oneOf(options.successRecords, 'successRecords', ['full', 'summary'] as const, 'full') === 'summary';
    const initialDelayMs = positiveNumber(options.retry?.initialDelayMs, 'retry.initialDelayMs', 500);
    const maxDelayMs = positiveNumber(options.retry?.maxDelayMs, 'retry.maxDelayMs', Math.max(30_000, initialDelayMs));
    if (maxDelayMs < initialDelayMs) {
      throw new ConfigError('retry.maxDelayMs must not be below retry.initialDelayMs', 'retry.maxDelayMs');
    }
    this.insertTimeoutMs = positiveNumber(options.insertTimeoutMs, 'insertTimeoutMs', 10_000);
    this.clock = options.clock ?? { now: Date.now };
    this.health = new StoreHealth({ initialDelayMs, maxDelayMs, clock: this.clock, probe: () => void this.recover() });
    this.onError = options.onError;
    this.lastCheckAt = performance.now();

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
    this.failover = spool === null ? null : new SpoolFailover(spool, { durable: this.durable, syncEveryMs: this.flushIntervalMs, report: (error) => this.report(error) });
    this.unlistAtExit = spool === null ? () => undefined : spoolAtExit(() => this.spoolAtExit(spool));

    this.interval = setInterval(() => this.tick(), this.flushIntervalMs);
    this.interval.unref();

    this.ready = Promise.resolve();
    if (spool !== null) {
      // Synchronously: a spill may come before the event loop ever turns, and takes the next
      // segment number, which the claim settles.
      let leftovers: string[] = [];
      try {
        leftovers = spool.claimLeftoversSync();
      } catch (error) {
        this.reportSpoolError(error);
      }
      for (const path of leftovers) this.segments.push({ path, own: false, doneLines: 0, scannedLines: 0 });
      if (leftovers.length > 0) void this.recover();
    }
  }

  enqueue(record: ToolExecutionRecord): Promise<void> | undefined {
    this.enqueued++;
    if (this.closed) {
      this.dropped++;
      return undefined;
    }
    const stored = this.summarize ? summarizeSuccess(record) : record;
    if (--this.untilCheck <= 0) this.checkOnEnqueue();
    if (this.waiters.length > 0 || this.queue.count + this.unsavedInFlight >= this.maxQueue) {
      const made = this.overflow(stored);
      if (made !== 'room') return made;
    }
    return this.push(stored, undefined);
  }

  async flush(): Promise<void> {
    if (this.closing !== null) return this.closing;
    await this.ready;
    if (!this.health.healthy && this.health.probeDue()) await this.recover();
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
      queued: this.queue.count + this.unsavedInFlight,
      failedFlushes: this.failedFlushes,
      rejected: this.rejected,
      storeHealthy: this.health.healthy,
      waiting: this.waiters.length,
      malformedSpoolLines: this.malformed,
      pendingSpoolFiles: this.segments.length + (this.spool?.hasSpilled === true ? 1 : 0),
    };
  }

  recording(): RecordingStats {
    return {
      offered: this.enqueued,
      stored: this.written + this.replayedOwn,
      spooled: this.spoolPending,
      inMemory: this.queue.count + this.unsavedInFlight + this.waiters.length,
      dropped: this.dropped,
      rejected: this.rejectedOwn,
      recovered: this.replayed - this.replayedOwn,
      storeHealthy: this.health.healthy,
    };
  }

  /** Queues a record; `ack` is a durable waiter's resolver (else a promise is made for the caller). */
  private push(record: ToolExecutionRecord, ack: (() => void) | undefined): Promise<void> | undefined {
    const acknowledged = this.queue.push(record, ack);
    this.accepted++;
    if (this.durable) {
      this.scheduleFlush();
    } else if (this.queue.tailFull()) {
      // A batch is due: take the answers to earlier writes first, so that a store whose replies
      // can only be polled (a caller that never yields) has room for it.
      this.store.poll?.();
      this.scheduleFlush();
    }
    return acknowledged;
  }

  /**
   * Memory is full: makes room (a spill), or says what became of the record: a promise for a
   * caller that waits for room, undefined for one dropped.
   */
  private overflow(record: ToolExecutionRecord): 'room' | Promise<void> | undefined {
    if (this.waiters.length === 0) {
      if (this.overflowMode === 'spill' && this.spillOldest()) return 'room';
    }
    if (this.overflowMode === 'block' || this.durable) {
      return new Promise<void>((resolve) => {
        this.waiters.push({ record, resolve, since: performance.now() });
        this.armWaiterTimer();
      });
    }
    if (record.status !== 'success') {
      // Failures are the data this product exists for: they may fill memory up to twice maxQueue,
      // and then a queued success makes way for each.
      if (this.queue.count + this.unsavedInFlight < 2 * this.maxQueue) return 'room';
      if (this.queue.successes > 0) {
        this.evictSuccess();
        return 'room';
      }
    }
    this.noteDropped(1);
    return undefined;
  }

  /** Drops the newest queued success (never one a durable caller waits on: durable mode never drops to make room). */
  private evictSuccess(): void {
    if (!this.queue.evictNewestSuccess()) return;
    this.settled++;
    this.noteDropped(1);
  }

  private noteDropped(count: number): void {
    this.dropped += count;
    if (this.dropReported) return;
    this.dropReported = true;
    const reason =
      this.spool === null ? 'is disabled' : this.failover!.lastError === null ? 'could not take them' : `failed: ${errorMessage(this.failover!.lastError)}`;
    this.report(new RecordsDroppedError(this.maxQueue, reason));
  }

  /**
   * Writes the oldest queued chunk to the spool to make room. With nothing queued (every record in
   * memory is in a write), copies the oldest write instead. False when the spool cannot take it.
   */
  private spillOldest(): boolean {
    if (this.queue.head !== undefined) return this.spillHead();
    for (const out of this.outgoing) if (!out.insured) return this.insure(out);
    return false;
  }

  private spillHead(): boolean {
    const chunk = this.queue.head!;
    if (!this.spill(chunk.records)) return false;
    this.queue.shift();
    this.settle(chunk.records.length, chunk.acks);
    return true;
  }

  /** Puts a copy of a write in flight in the spool; its records leave memory as far as the bounds and stats go. */
  private insure(out: Outgoing): boolean {
    if (!this.spill(out.records)) return false;
    out.insured = true;
    this.outgoing.delete(out);
    this.unsavedInFlight -= out.count;
    const origin = out.origin;
    this.settle(out.count, typeof origin === 'object' ? origin.acks : null);
    return true;
  }

  /**
   * Appends records to the spool synchronously. In durable mode every spill is fsync'd; otherwise
   * the file is fsync'd at most once per flush interval (here or on the interval timer), which
   * bounds what a crash of the machine, not just of the process, can take. False when the spool
   * is disabled or its disk fails (reported once until it works again).
   */
  private spill(records: readonly ToolExecutionRecord[]): boolean {
    const failover = this.failover;
    if (failover === null || records.length === 0) return failover !== null;
    if (!failover.append(records)) return false;
    this.spooled += records.length;
    this.spoolPending += records.length;
    this.scheduleReplay();
    return true;
  }

  /** While the store takes writes, what was spilled is replayed once the event loop turns. */
  private scheduleReplay(): void {
    if (this.replayScheduled || this.closed || !this.health.healthy) return;
    this.replayScheduled = true;
    setImmediate(() => {
      this.replayScheduled = false;
      if (this.health.healthy) void this.recover();
    }).unref();
  }

  /** Reads the clock every few enqueues: often when records come slowly, every 64 when they come fast. */
  private checkOnEnqueue(): void {
    const now = performance.now();
    const gap = now - this.lastCheckAt;
    if (gap < 1) this.checkEvery = Math.min(this.checkEvery * 2, MAX_CHECK_EVERY);
    else if (gap > 4) this.checkEvery = Math.max(1, this.checkEvery >> 1);
    this.untilCheck = this.checkEvery;
    this.checkWindow(now);
  }

  /**
   * What the interval timer does, callable from the enqueue path for a caller that never yields:
   * collects the writes the store finished meanwhile, sends a partial batch older than the flush
   * interval, and spills (or copies) what has been only in memory longer than `maxUnsavedMs`.
   */
  private checkWindow(now: number): void {
    this.lastCheckAt = now;
    this.store.poll?.();
    const bound = now - this.maxUnsavedMs;
    if (this.spool !== null) {
      for (const out of this.outgoing) {
        const origin = out.origin;
        if (typeof origin === 'object' && origin.since <= bound && !this.insure(out)) break;
      }
      while (this.queue.head !== undefined && this.queue.head.since <= bound) if (!this.spillHead()) break;
    }
    const head = this.queue.head;
    if (head !== undefined && now - head.since >= this.flushIntervalMs && this.flushing === null && this.canPersist()) void this.startDrain();
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
      if (!this.health.healthy || this.segments.length > 0 || this.spool?.hasSpilled === true) {
        await this.recover();
        await this.drainEverything();
      }
    } catch (error) {
      this.report(error);
    } finally {
      this.health.clearProbe();
      this.dropRemaining();
      this.failover?.syncIfUnsynced();
      await this.spool?.close();
      this.unlistAtExit();
    }
  }

  /**
   * The process is exiting (`process.exit()`): appends every record still only in memory to the
   * spool, synchronously. Batches in flight are included, since their write will never be
   * confirmed; if one did land, the replay skips it by `execution_id`.
   */
  private spoolAtExit(spool: Spool): void {
    const records: ToolExecutionRecord[] = [];
    for (const batch of this.outgoing) if (!batch.insured) for (const record of batch.records) records.push(record);
    for (const chunk of this.queue.chunks) for (const record of chunk.records) records.push(record);
    for (const waiter of this.waiters) records.push(waiter.record);
    if (records.length === 0) {
      if (this.failover?.unsynced === true) spool.syncSpilled();
      return;
    }
    spool.spillSync(records, true);
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
      if (this.queue.head === undefined && this.waiters.length === 0 && this.inFlight === 0) return;
    }
  }

  private tick(): void {
    this.checkWindow(performance.now());
    this.failover?.syncIfUnsynced();
    if (!this.health.healthy && this.health.probeDue()) void this.recover();
    if (this.queue.head !== undefined && this.flushing === null && this.canPersist()) void this.startDrain();
  }

  private canPersist(): boolean {
    return this.health.healthy || this.probeArmed || (this.failover !== null && this.failover.canTake());
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
      if (drained && this.queue.head !== undefined && (this.durable || this.queue.hasFullBatch())) this.scheduleFlush();
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
   * Starts writing batches, up to `maxInFlight` at once and half of `maxQueue` in records. Only
   * full batches join writes already in flight: a partial one waits for them, so records that
   * arrive meanwhile share its write (group commit in durable mode). While the store is failing,
   * batches go one at a time (probe, spool).
   */
  private startBatches(all: boolean): void {
    while (!this.stuck && this.running < this.maxInFlight && this.queue.head !== undefined) {
      const full = this.queue.hasFullBatch();
      if (!full && !all && !this.durable) return;
      if (this.running > 0 && (!full || !this.health.healthy || this.inFlight + this.queue.head.records.length > this.maxRecordsInFlight)) return;
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
    const chunk = this.queue.shift()!;
    const count = chunk.records.length;
    const seq = chunk.seq >= 0 ? chunk.seq : this.batchSeq++;
    const batch = new Outgoing(chunk.records, this.encoding, { acks: chunk.acks, since: chunk.since, seq, successes: chunk.successes });
    this.outgoing.add(batch);
    this.inFlight += count;
    this.unsavedInFlight += count;
    let persisted = false;
    try {
      if (this.health.healthy || this.probeArmed) {
        const wasHealthy = this.health.healthy;
        this.probeArmed = false;
        const result = await this.write(batch);
        if (result.ok) {
          persisted = true;
          if (!batch.insured) this.written += result.stored;
          if (!this.health.healthy) this.becomeHealthy();
        } else {
          this.storeFailed(result.error, !wasHealthy);
        }
      }
      if (!persisted && !batch.insured && this.spill(batch.records)) {
        persisted = true;
        // The store came back while this batch was on its way to disk: replay it now rather than
        // leaving it for the next outage or for close().
        if (this.health.healthy) void this.recover();
      }
    } catch (error) {
      this.report(error);
    } finally {
      this.outgoing.delete(batch);
      this.inFlight -= count;
      if (batch.insured) {
        // Settled when the copy was made.
        persisted = true;
      } else {
        this.unsavedInFlight -= count;
        if (persisted) this.settle(count, chunk.acks);
        else this.queue.putBack(seq, batch.records, chunk);
      }
    }
    return persisted;
  }

  private settle(count: number, acks: Array<() => void> | null): void {
    this.settled += count;
    acknowledge(acks);
    if (this.dropReported && this.queue.count + this.unsavedInFlight <= this.maxQueue / 2) this.dropReported = false;
    this.admitWaiters();
  }

  private admitWaiters(): void {
    let admitted = false;
    while (this.queue.count + this.unsavedInFlight < this.maxQueue) {
      const waiter = this.waiters.shift();
      if (waiter === undefined) break;
      admitted = true;
      if (this.durable) {
        this.push(waiter.record, waiter.resolve);
      } else {
        this.push(waiter.record, undefined);
        waiter.resolve();
      }
    }
    if (admitted && (this.durable || this.queue.hasFullBatch())) this.scheduleFlush();
  }

  private dropRemaining(): void {
    const count = this.queue.clear();
    this.settled += count;
    const waiting = this.waiters.length;
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
    if (count + waiting > 0) this.noteDropped(count + waiting);
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
      if (out.last !== undefined) this.health.lastStored = out.last;
      return { ok: true, stored: out.count };
    }
    // A write that timed out says nothing about its records, and probing a store that hangs would
    // only hold the queue up for another timeout or two.
    if (StoreWriteTimeoutError.isInstance(result.error)) return { ok: false, error: result.error };
    if (out.insured) {
      // The copy's replay stores and isolates these records: only the store's health is in question.
      return (await this.storeTakesWrites([])) ? { ok: true, stored: 0 } : { ok: false, error: result.error };
    }
    const batch = out.records;
    if (!(await this.storeTakesWrites(batch))) return { ok: false, error: result.error };
    const refused: Array<{ record: ToolExecutionRecord; error: unknown }> = [];
    const outage = await this.bisect(batch, refused);
    if (outage !== null) return { ok: false, error: outage.error };
    if (refused.length > 0) await this.setAside(refused, out);
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
        this.health.remember(batch);
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
        this.health.remember(half);
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
    if (this.health.lastStored !== null) return (await this.insert([this.health.lastStored])).ok;
    const candidates = batch.length > 1 ? [batch[0], batch[batch.length - 1]] : [];
    for (const candidate of candidates) {
      if (candidate !== undefined && (await this.insert([candidate])).ok) {
        this.health.lastStored = candidate;
        return true;
      }
    }
    return false;
  }

  private async setAside(refused: ReadonlyArray<{ record: ToolExecutionRecord; error: unknown }>, out: Outgoing): Promise<void> {
    // Copied to the spool while the isolation ran: the copy's replay sets them aside.
    if (out.insured) return;
    this.rejected += refused.length;
    if (out.origin !== 'leftover') this.rejectedOwn += refused.length;
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
    if (this.health.failed(duringProbe, this.closed)) this.report(error);
  }

  private becomeHealthy(): void {
    this.health.recovered();
    this.blockTimeoutReported = false;
    this.dropReported = false;
    this.failover?.retryNow();
    if (this.queue.head !== undefined) this.scheduleFlush();
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
      } while (this.recoverAgain && this.health.healthy);
      this.recovering = null;
    })();
    this.recovering = run;
    return run;
  }

  private async runRecovery(): Promise<void> {
    this.health.clearProbe();
    try {
      await this.ready;
      this.failover?.retryNow();
      if (!this.health.healthy && this.health.lastStored !== null) {
        const probe = await this.insert([this.health.lastStored]);
        if (!probe.ok) {
          this.storeFailed(probe.error, true);
          return;
        }
        this.becomeHealthy();
      }
      let probed = false;
      do {
        const spilled = this.spool?.takeSpilled() ?? null;
        if (spilled !== null) {
          // Its records must be on disk before the replay deletes the file they would otherwise be reread from.
          if (this.failover !== null) this.failover.unsynced = false;
          this.segments.push({ path: spilled, own: true, doneLines: 0, scannedLines: 0 });
        }
        for (const segment of [...this.segments]) {
          const outcome = await this.replay(segment);
          if (outcome === 'store-failed') return;
          if (outcome === 'replayed') probed = true;
        }
        // Loop while the store is healthy and records were spilled meanwhile.
      } while (this.health.healthy && this.spool?.hasSpilled === true);

      if (!this.health.healthy && !probed) {
        if (this.queue.head !== undefined) {
          this.probeArmed = true;
          await (this.flushing ?? this.startDrain());
          this.probeArmed = false;
          // The drain may have finished without reaching the store (its records went to the spool).
          if (!this.health.healthy && !this.health.probeScheduled) this.health.scheduleProbe(this.closed);
        } else {
          // Nothing to probe with yet; look again later.
          this.health.scheduleProbe(this.closed);
        }
      }
    } catch (error) {
      this.report(error);
      if (!this.health.healthy) this.health.scheduleProbe(this.closed);
    }
  }

  private async replay(segment: Segment): Promise<'replayed' | 'empty' | 'store-failed' | 'read-failed'> {
    let inserted = false;
    try {
      for await (const batch of readSpoolBatches(segment.path, { batchSize: this.batchSize, fromLine: segment.doneLines })) {
        for (const line of batch.malformedLines) if (line >= segment.scannedLines) this.malformed++;
        segment.scannedLines = Math.max(segment.scannedLines, batch.nextLine);
        if (batch.records.length > 0) {
          const wasHealthy = this.health.healthy;
          const result = await this.write(new Outgoing(batch.records, this.encoding, segment.own ? 'own-spool' : 'leftover'));
          if (!result.ok) {
            this.storeFailed(result.error, !wasHealthy);
            return 'store-failed';
          }
          inserted = true;
          this.replayed += result.stored;
          if (segment.own) {
            this.replayedOwn += result.stored;
            this.spoolPending -= batch.records.length;
          }
          if (!this.health.healthy) this.becomeHealthy();
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
    this.failover?.reportError(error);
  }

  private report(error: unknown): void {
    if (this.onError !== undefined) reportSafely(this.onError, error);
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
