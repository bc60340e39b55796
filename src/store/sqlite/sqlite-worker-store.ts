/**
 * The SQLite store with its writer in a worker thread. `insert` and the trajectory writes are
 * posted (a batch per message) to a `node:worker_threads` Worker that owns its own better-sqlite3
 * connection and runs the real {@link createSqliteStore} there, so a batch's transaction (several
 * milliseconds) does not stall the caller's event loop, and the runtime and the writer use two cores.
 *
 * Reads run on a second, read-only connection in the calling thread (WAL lets readers run beside
 * the writer; a write's promise resolves after its commit, so reads see it). A `:memory:` database
 * is private to one connection, so there every operation runs in the worker.
 *
 * If the worker dies, every pending request rejects (the recorder spools and retries) and the next
 * write starts a new worker.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { ConfigError, FaultlineError } from '../../core/errors.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import type {
  BatchEncoding,
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
import { recordOfParams } from './record-row.js';
import { decodeRowBatch, encodeRowBatch } from './row-batch.js';
import { createSqliteStore, encodeRecordRows } from './sqlite-store.js';

export interface SqliteWorkerStoreOptions {
  /** Database file. Parent directories are created. `:memory:` runs reads in the worker too. */
  path: string;
  /** How long a connection waits for another's lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * How `insert` batches travel to the worker: `'rows'` (the default: encoded here as the
   * insert's parameter rows, JSON columns already serialized, so only flat arrays of strings and
   * numbers are cloned) or `'clone'` (the records, structured-cloned). The recorder's batches
   * always go as encoded rows (`batchEncoding`).
   */
  encoding?: 'rows' | 'clone';
  /** Where reads run. Default `'main'` (a read-only connection in this thread); `'worker'` for `:memory:`. */
  reads?: 'main' | 'worker';
  /** The worker entry. Default: `sqlite-worker.js` beside this module. Tests substitute a loader. */
  workerUrl?: URL;
}

/** @internal What the worker receives as `workerData`. */
export interface WorkerInit {
  path: string;
  busyTimeoutMs?: number;
  /**
   * Where the worker posts its replies: a port of its own, which the caller can read
   * synchronously ({@link WriterThread.poll}) when its event loop does not turn.
   */
  replies?: MessagePort;
}

/** @internal An error as it crosses the thread boundary. */
export interface WorkerError {
  name: string;
  message: string;
  config: boolean;
  field?: string;
}

/** @internal */
export interface WorkerRequest {
  id: number;
  op: string;
  args?: unknown[];
  /** `insertEncoded`: a batch encoded by {@link sqliteBatchEncoding} (copied: the sender keeps it). */
  batch?: Uint8Array;
}

/** @internal */
export type WorkerReply =
  | { type: 'ready' }
  | { type: 'open-error'; error: WorkerError }
  | { type: 'reply'; id: number; ok: true; value: unknown }
  | { type: 'reply'; id: number; ok: false; error: WorkerError };

const firstLine = (message: string): string => message.split('\n', 1)[0] ?? '';

/**
 * The writer's batch encoding: the insert rows of {@link encodeRecordRows} (JSON columns
 * serialized, `created_ms` computed: the work the insert needs done anyway, on the thread that
 * built the records) in one buffer (`row-batch.ts`). In perf measurements, for the runtime's
 * records (~1.2 KB of JSON each), the JSON text of the records cost the sending thread 4 us per
 * record and the worker 4 us more, which then still had to turn the records into rows (1.3 us).
 */
export const sqliteBatchEncoding: BatchEncoding = {
  encode: (records) => encodeRowBatch(encodeRecordRows(records)),
  decode: (batch) => decodeRowBatch(batch).map(recordOfParams),
};

/** What the writer thread's store declares as `maxInsertsInFlight`: it applies writes in order. */
export const SQLITE_WRITER_IN_FLIGHT = Number.POSITIVE_INFINITY;

function fromWorkerError(error: WorkerError): Error {
  if (error.config) return new ConfigError(error.message, error.field);
  const e = new FaultlineError(error.message);
  e.name = error.name;
  return e;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * One started worker, its pending requests, and how it ended. Replies come on a port of their own,
 * read by its 'message' listener when the event loop turns and by {@link WriterThread.poll} when
 * the caller asks: both take them from the same queue, in order.
 */
class WriterThread {
  readonly #worker: Worker;
  readonly #replies: MessagePort;
  #repliesOpen = true;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #exited: Error | undefined;
  readonly ready: Promise<void>;
  #onReply: (reply: WorkerReply) => void = () => undefined;

  constructor(url: URL, init: WorkerInit, onExit: (thread: WriterThread) => void) {
    const channel = new MessageChannel();
    const worker = new Worker(url, { workerData: { ...init, replies: channel.port2 }, transferList: [channel.port2] });
    this.#worker = worker;
    this.#replies = channel.port1;
    this.ready = new Promise<void>((resolve, reject) => {
      let started = false;
      this.#onReply = (reply: WorkerReply) => {
        if (reply.type === 'ready') {
          started = true;
          this.#idle();
          resolve();
        } else if (reply.type === 'open-error') {
          reject(new ConfigError(firstLine(reply.error.message), reply.error.field ?? 'store'));
          void worker.terminate();
        } else {
          const pending = this.#pending.get(reply.id);
          if (pending === undefined) return;
          this.#pending.delete(reply.id);
          this.#idle();
          if (reply.ok) pending.resolve(reply.value);
          else pending.reject(fromWorkerError(reply.error));
        }
      };
      this.#replies.on('message', (reply: WorkerReply) => this.#onReply(reply));
      // A worker that answers on its parent port instead (the protocol allows it) is heard too.
      worker.on('message', (reply: WorkerReply) => this.#onReply(reply));
      worker.on('error', (error: Error) => {
        // Replies the worker posted before it failed are answers all the same (they travel apart from this event).
        this.poll();
        this.#exited ??= new FaultlineError(`SQLite writer worker failed: ${firstLine(error.message)}`, { cause: error });
        if (!started) {
          reject(new ConfigError(`cannot start the SQLite writer worker: ${firstLine(error.message)}`, 'store', { cause: error }));
        }
      });
      worker.on('exit', (code) => {
        this.poll();
        this.#repliesOpen = false;
        this.#replies.close();
        this.#exited ??= new FaultlineError(`SQLite writer worker exited (code ${code})`);
        if (!started) reject(new ConfigError(`cannot start the SQLite writer worker: it exited (code ${code})`, 'store'));
        const pending = [...this.#pending.values()];
        this.#pending.clear();
        for (const p of pending) p.reject(this.#exited);
        onExit(this);
      });
    });
  }

  get alive(): boolean {
    return this.#exited === undefined;
  }

  /** Takes the replies that have arrived, now: their requests settle in the next microtasks. */
  poll(): void {
    if (!this.#repliesOpen) return;
    for (let next = receiveMessageOnPort(this.#replies); next !== undefined; next = receiveMessageOnPort(this.#replies)) {
      this.#onReply(next.message as WorkerReply);
    }
  }

  request(op: string, args: unknown[] | undefined, batch?: Uint8Array): Promise<unknown> {
    if (this.#exited !== undefined) return Promise.reject(this.#exited);
    const id = this.#nextId++;
    const message: WorkerRequest = batch !== undefined ? { id, op, batch } : { id, op, ...(args !== undefined ? { args } : {}) };
    return new Promise<unknown>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Keep the process alive only while work is in flight.
      if (this.#pending.size === 1) {
        this.#worker.ref();
        this.#replies.ref();
      }
      try {
        this.#worker.postMessage(message);
      } catch (error) {
        this.#pending.delete(id);
        this.#idle();
        reject(error as Error);
      }
    });
  }

  /** Closes the worker's store after every earlier request, then ends the thread. */
  async close(): Promise<void> {
    if (this.#exited === undefined) {
      try {
        await this.request('close', undefined);
      } catch {
        // The thread is gone or failing: terminating it below is all that is left to do.
      }
    }
    await this.#worker.terminate();
  }

  #idle(): void {
    if (this.#pending.size > 0) return;
    this.#worker.unref();
    this.#replies.unref();
  }
}

/** The worker's compiled entry, which {@link createSqliteWorkerStore} starts by default. */
const WORKER_ENTRY = new URL('./sqlite-worker.js', import.meta.url);

/**
 * Whether {@link createSqliteWorkerStore} can start its default worker: only compiled code has the
 * worker's `.js` entry beside it. Run from TypeScript sources (the unit tests), it cannot.
 */
export function sqliteWorkerAvailable(): boolean {
  return existsSync(fileURLToPath(WORKER_ENTRY));
}

/**
 * Opens (creating and migrating if needed) a SQLite store whose writes run in a worker thread.
 * @throws ConfigError when the worker cannot start or the file cannot be created or opened.
 * @example
 * const store = await createSqliteWorkerStore({ path: '.faultline/faultline.db' });
 */
export function createSqliteWorkerStore(options: SqliteWorkerStoreOptions): Promise<Store & TrajectoryStore & CorrectionMemoryStore> {
  return startSqliteWorkerStore(options).opened;
}

/**
 * {@link createSqliteWorkerStore}, also giving the store's `poll` at once, before it is open: the
 * open completes on a message from the worker, which a caller whose event loop does not turn (the
 * runtime's recorder under an agent that never yields) takes by polling.
 */
export function startSqliteWorkerStore(options: SqliteWorkerStoreOptions): {
  poll(): void;
  opened: Promise<Store & TrajectoryStore & CorrectionMemoryStore>;
} {
  const memory = options.path === ':memory:' || options.path === '';
  const readsInWorker = memory || options.reads === 'worker';
  const init: WorkerInit = {
    path: options.path,
    ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
  };
  const url = options.workerUrl ?? WORKER_ENTRY;
  const store = new SqliteWorkerStore(url, init, options.encoding ?? 'rows');
  const opened = (async () => {
    // The worker creates and migrates the file; only then can a read-only connection open it.
    await store.start();
    if (!readsInWorker) {
      try {
        store.reader = createSqliteStore({
          path: options.path,
          readonly: true,
          ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
        });
      } catch (error) {
        await store.close();
        throw error;
      }
    }
    return store;
  })();
  return { poll: () => store.poll(), opened };
}

class SqliteWorkerStore implements Store, TrajectoryStore, CorrectionMemoryStore {
  readonly kind = 'sqlite' as const;
  readonly #url: URL;
  readonly #init: WorkerInit;
  readonly #encoding: 'rows' | 'clone';
  /**
   * The worker applies requests one at a time in the order they were posted, so the recorder may
   * post every full batch at once: building records here and writing them there overlap. The
   * recorder's `maxQueue` bounds the records in flight.
   */
  readonly maxInsertsInFlight = SQLITE_WRITER_IN_FLIGHT;
  #thread: WriterThread | undefined;
  #starting: Promise<WriterThread> | undefined;
  /** The thread `#starting` waits for, so that `poll` can take its ready message. */
  #startingThread: WriterThread | undefined;
  #closing: Promise<void> | undefined;
  /** Read-only connection in this thread; undefined means reads go to the worker. */
  reader: (Store & TrajectoryStore) | undefined;

  readonly batchEncoding = sqliteBatchEncoding;

  constructor(url: URL, init: WorkerInit, encoding: 'rows' | 'clone') {
    this.#url = url;
    this.#init = init;
    this.#encoding = encoding;
  }

  async start(): Promise<void> {
    await this.#writer();
  }

  /** The live worker, starting a new one after a crash. */
  #writer(): Promise<WriterThread> {
    if (this.#closing !== undefined) return Promise.reject(this.#closedError());
    if (this.#thread?.alive === true) return Promise.resolve(this.#thread);
    this.#starting ??= (async () => {
      const thread = new WriterThread(this.#url, this.#init, (t) => {
        if (this.#thread === t) this.#thread = undefined;
        if (this.#startingThread === t) this.#startingThread = undefined;
      });
      this.#startingThread = thread;
      try {
        await thread.ready;
      } finally {
        this.#starting = undefined;
        this.#startingThread = undefined;
      }
      this.#thread = thread;
      return thread;
    })();
    return this.#starting;
  }

  /** Takes the worker's replies that have arrived (see {@link Store.poll}); a thread still starting included. */
  poll(): void {
    this.#thread?.poll();
    this.#startingThread?.poll();
  }

  async #call<T>(op: string, args: unknown[]): Promise<T> {
    const thread = this.#thread?.alive === true && this.#closing === undefined ? this.#thread : await this.#writer();
    return (await thread.request(op, args)) as T;
  }

  #closedError(): FaultlineError {
    return new FaultlineError(`SQLite store ${JSON.stringify(this.#init.path)} is closed`);
  }

  async insert(records: readonly ToolExecutionRecord[]): Promise<void> {
    if (this.#closing !== undefined) throw this.#closedError();
    if (records.length === 0) return;
    if (this.#encoding === 'rows') {
      // Encoded now: a caller may mutate the records once insert has returned.
      const rows = encodeRecordRows(records);
      const thread = this.#thread?.alive === true ? this.#thread : await this.#writer();
      await thread.request('insertRows', [rows]);
      return;
    }
    if (this.#thread?.alive === true) {
      // postMessage clones synchronously, before insert returns.
      await this.#thread.request('insert', [records]);
      return;
    }
    const copy = structuredClone(records);
    await (await this.#writer()).request('insert', [copy]);
  }

  /** A batch encoded by {@link sqliteBatchEncoding}, decoded and inserted in the worker. */
  async insertEncoded(batch: Uint8Array): Promise<void> {
    if (this.#closing !== undefined) throw this.#closedError();
    const thread = this.#thread?.alive === true ? this.#thread : await this.#writer();
    await thread.request('insertRows', undefined, batch);
  }

  insertTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    return this.#call('insertTrajectories', [trajectories]);
  }

  /** Runs in the worker, between insert batches: a prune with a `limit` holds the writer only that long. */
  prune(beforeMs: number, options?: PruneOptions): Promise<number> {
    return this.#call('prune', options === undefined ? [beforeMs] : [beforeMs, options]);
  }

  updateTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    return this.#call('updateTrajectories', [trajectories]);
  }

  pushCorrection(correction: NewCorrection, limits?: Partial<CorrectionLimits>): Promise<CorrectionEntry> {
    return this.#call('pushCorrection', limits === undefined ? [correction] : [correction, limits]);
  }

  /**
   * One round trip to the worker, one transaction there. The corrections travel as JSON text (what
   * the store keeps of them anyway): a runtime under a failing tool sends thousands at once, and
   * `JSON.stringify` costs a quarter of what structured-cloning them cost this thread.
   */
  pushCorrections(corrections: readonly NewCorrection[], limits?: Partial<CorrectionLimits>): Promise<void> {
    const json = JSON.stringify(corrections);
    return this.#call('pushCorrectionsJson', limits === undefined ? [json] : [json, limits]);
  }

  latestCorrection(signature: string): Promise<CorrectionEntry | null> {
    return this.#read('latestCorrection', [signature]);
  }

  listCorrections(query: CorrectionQuery = {}): Promise<CorrectionEntry[]> {
    return this.#read('listCorrections', [query]);
  }

  #read<T>(op: keyof Store | keyof TrajectoryStore, args: unknown[]): Promise<T> {
    if (this.#closing !== undefined) return Promise.reject(this.#closedError());
    const reader = this.reader;
    if (reader !== undefined) {
      return (reader as unknown as Record<string, (...a: unknown[]) => Promise<T>>)[op]!.apply(reader, args);
    }
    return this.#call<T>(op, args);
  }

  get(executionId: string): Promise<ToolExecutionRecord | null> {
    return this.#read('get', [executionId]);
  }

  query(query: RecordQuery): Promise<ToolExecutionRecord[]> {
    return this.#read('query', [query]);
  }

  count(query: Omit<RecordQuery, 'afterId' | 'limit' | 'order'> = {}): Promise<number> {
    return this.#read('count', [query]);
  }

  toolStats(filter: StatsFilter): Promise<ToolStats[]> {
    return this.#read('toolStats', [filter]);
  }

  failureBreakdown(filter: StatsFilter): Promise<FailureBreakdownRow[]> {
    return this.#read('failureBreakdown', [filter]);
  }

  hourly(filter: StatsFilter): Promise<HourlyPoint[]> {
    return this.#read('hourly', [filter]);
  }

  signatures(filter: StatsFilter): Promise<FailureSignature[]> {
    return this.#read('signatures', [filter]);
  }

  getTrajectory(trajectoryId: string): Promise<Trajectory | null> {
    return this.#read('getTrajectory', [trajectoryId]);
  }

  queryTrajectories(query: TrajectoryQuery = {}): Promise<Trajectory[]> {
    return this.#read('queryTrajectories', [query]);
  }

  countTrajectories(query: Pick<TrajectoryQuery, 'source'> = {}): Promise<number> {
    return this.#read('countTrajectories', [query]);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      const starting = this.#starting;
      if (starting !== undefined) await starting.catch(() => undefined);
      const thread = this.#thread;
      this.#thread = undefined;
      try {
        if (thread !== undefined) await thread.close();
      } finally {
        await this.reader?.close();
      }
    })();
    return this.#closing;
  }
}
