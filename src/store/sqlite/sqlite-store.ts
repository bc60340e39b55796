/**
 * The embedded Store: one SQLite file (better-sqlite3, WAL). Each insert batch is one transaction
 * that writes the new rows (several per statement: `row-writer.ts`) and then applies the batch's
 * rollup delta with a few upserts, so analytics never scan `tool_executions`.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { ConfigError, FaultlineError } from '../../core/errors.js';
import { makeDirectorySync } from '../../io/make-directory.js';
import { nonFileProblem } from '../../io/read-input-file.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { uniqueTrajectoryRows, type TrajectoryRow } from '../trajectory-row.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { checkRecordQuery, checkStatsFilter } from '../check-query.js';
import { checkRecord } from '../check-record.js';
import {
  aggregateBatch,
  createdAtMs,
  failureBreakdownFromRows,
  hourlyFromRows,
  hourRange,
  negatedDelta,
  pruneSweepHourMs,
  checkPrune,
  ROLLUP_COUNTER_FIELDS,
  signaturesFromRows,
  touchedHours,
  toolStatsFromRows,
  type BreakdownRowInput,
  type BucketRowInput,
  type CounterRowInput,
  type RollupDelta,
  type RollupRecord,
  type SignatureRowInput,
} from '../rollup.js';
import type {
  FailureBreakdownRow,
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
import type { CorrectionEntry, CorrectionLimits, CorrectionMemoryStore, CorrectionQuery, NewCorrection } from '../../core/store-types.js';
import { sqliteCorrections, type SqliteCorrections } from './corrections.js';
import { assertCurrent, migrate, SQLITE_MIGRATIONS, type SqliteMigration } from './migrations.js';
import { createRowWriter } from './row-writer.js';
import { failedForWantOfShm, readWalSnapshot, walSnapshotSource } from './wal-snapshot.js';
import {
  CREATED_MS_PARAM,
  recordParams,
  rollupRecordOfParams,
  rowToRecord,
  type RecordRow,
  type SqliteValue,
} from './record-row.js';

export interface SqliteStoreOptions {
  /** Database file. Parent directories are created. `:memory:` gives a private in-memory database. */
  path: string;
  /** Open an existing database without writing to it (no migrations, inserts refused). */
  readonly?: boolean;
  /** How long a writer waits for another process's lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** The schema steps to apply; tests substitute their own. Default: {@link SQLITE_MIGRATIONS}. */
  migrations?: readonly SqliteMigration[];
}

const DEFAULT_LIMIT = 1000;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const PAGE_SIZE = 16_384;
const DURATION_CHUNK = 64;
/** Distinct query shapes are few (filters x order x status count); the cap only guards misuse. */
const STATEMENT_CACHE_LIMIT = 256;

function isMemoryPath(path: string): boolean {
  return path === ':memory:' || path === '';
}

/** An open database; `snapshotOf` when it is a copy in memory, what it was copied from ({@link walSnapshotSource}). */
// The native driver loads on the first open, not with the module: `faultline/store` (and the
// runtime, which opens a store by spec) must not cost better-sqlite3 to those who never open one.
const require = createRequire(import.meta.url);
let driver: typeof Database | undefined;
const sqliteDriver = (): typeof Database => (driver ??= require('better-sqlite3') as typeof Database);

interface OpenedDatabase {
  db: Database.Database;
  snapshotOf?: string | undefined;
}

function openDatabase(options: SqliteStoreOptions): OpenedDatabase {
  const { path } = options;
  const readonly = options.readonly === true;
  if (!readonly && !isMemoryPath(path)) {
    const dir = dirname(path);
    try {
      makeDirectorySync(dir);
    } catch (error) {
      throw new ConfigError(
        `cannot create directory ${JSON.stringify(dir)} for the SQLite store: ${(error as Error).message}`,
        'store',
        { cause: error },
      );
    }
  }
  // SQLite opens a FIFO and then waits on it for ever; a directory is "disk I/O error".
  const notAFile = isMemoryPath(path) ? undefined : nonFileProblem(path);
  if (notAFile !== undefined) throw new ConfigError(`cannot open SQLite store ${JSON.stringify(path)}: ${notAFile}`, 'store');
  try {
    return { db: prepareDatabase(new (sqliteDriver())(path, { readonly, fileMustExist: readonly }), options) };
  } catch (error) {
    // A writer on a WAL store in a read-only directory: SQLite fell back to reading, and cannot
    // create its -shm file for that either.
    if (!readonly && failedForWantOfShm(path, error)) throw readOnlyStoreError(path, error);
    // A report on a WAL store in a read-only directory: read it from a copy in memory.
    if (!readonly || !failedForWantOfShm(path, error)) throw openError(path, error);
  }
  try {
    // Taken before the copy: a change while it is read makes the next read copy it again.
    const snapshotOf = walSnapshotSource(path);
    return { db: prepareDatabase(new (sqliteDriver())(readWalSnapshot(path), { readonly: true }), options), snapshotOf };
  } catch (error) {
    throw openError(path, error);
  }
}

function openError(path: string, error: unknown): unknown {
  if (ConfigError.isInstance(error)) return error;
  return new ConfigError(`cannot open SQLite store ${JSON.stringify(path)}: ${(error as Error).message}`, 'store', { cause: error });
}

function readOnlyStoreError(path: string, cause: unknown): ConfigError {
  return new ConfigError(
    `cannot write to SQLite store ${JSON.stringify(path)}: it is read-only here (a read-only file, directory or mount); record to a store where faultline can write, or only read this one (stats, alerts, tail, export)`,
    'store',
    { cause },
  );
}

/**
 * A file SQLite cannot open for writing (a read-only file or mount) is opened read-only instead,
 * silently, and in WAL mode even a write transaction begins: only the first write would fail, with
 * the driver's "attempt to write a readonly database". A table created in a transaction rolled back
 * asks SQLite for the write lock and leaves the file as it was.
 * @throws ConfigError ({@link readOnlyStoreError}) when SQLite refuses the write.
 */
function assertWritable(db: Database.Database, path: string): void {
  db.exec('BEGIN');
  try {
    db.exec('CREATE TABLE faultline_write_check (x)');
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && code.startsWith('SQLITE_READONLY')) throw readOnlyStoreError(path, error);
    throw error;
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
  }
}

/** Settings, then the schema check (read-only) or migration; closes `db` if any of it fails. */
function prepareDatabase(db: Database.Database, options: SqliteStoreOptions): Database.Database {
  const { path } = options;
  const readonly = options.readonly === true;
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))}`);
    // Takes effect only while the file is still empty. Rows are 0.5-2 KB of JSON and text with
    // five indexes on top; 16 KB pages cut page splits and made batch inserts ~15% faster than
    // the 4 KB default in perf measurements.
    if (!readonly) db.pragma(`page_size = ${PAGE_SIZE}`);
    // With WAL, NORMAL only risks the last transactions on power loss, never corruption.
    db.pragma('synchronous = NORMAL');
    const location = JSON.stringify(path);
    const migrations = options.migrations ?? SQLITE_MIGRATIONS;
    if (readonly) assertCurrent(db, location, migrations);
    else {
      if (!isMemoryPath(path)) assertWritable(db, path);
      migrate(db, location, migrations);
    }
    // After the migration, which refuses another program's database: WAL mode is written into
    // the file's header, and such a file must be left as it was.
    if (!readonly && !isMemoryPath(path)) db.pragma('journal_mode = WAL');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Opens (creating and migrating if needed) a SQLite store.
 * @throws ConfigError when the file cannot be created or opened, is not a database, or was written
 * by a newer faultline.
 * @example
 * const store = createSqliteStore({ path: '.faultline/faultline.db' });
 * await store.insert(records);
 * const stats = await store.toolStats({ since: Date.now() - 86_400_000, until: Date.now() });
 */
export function createSqliteStore(options: SqliteStoreOptions): Store & TrajectoryStore & CorrectionMemoryStore {
  return new SqliteStore(openDatabase(options), options);
}

/** @internal A batch of insert rows, made when it is needed (decoded from the bytes that carried it). */
export type RowSource = () => readonly SqliteValue[][];

/** @internal The store as the writer thread uses it: also takes rows encoded by {@link encodeRecordRows}. */
export type SqliteRowStore = ReturnType<typeof createSqliteStore> & {
  insertRows(rows: readonly SqliteValue[][]): Promise<void>;
  insertRowBatches(batches: readonly RowSource[]): Promise<unknown[]>;
};

/** @internal {@link createSqliteStore} for the writer thread. */
export function createSqliteRowStore(options: SqliteStoreOptions): SqliteRowStore {
  return new SqliteStore(openDatabase(options), options);
}

/**
 * @internal Encodes records as insert rows (what {@link SqliteRowStore.insertRows} takes): the
 * JSON columns serialized and `created_at` parsed here, so the writer thread receives flat arrays
 * of strings and numbers, which cross the thread boundary far cheaper than nested objects.
 * @throws ConfigError for a malformed record (`check-record.ts`), RangeError when a record's
 * `created_at` is not a date (as `insert` would).
 */
export function encodeRecordRows(records: readonly ToolExecutionRecord[]): SqliteValue[][] {
  const rows: SqliteValue[][] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    checkRecord(record);
    // A fresh array filled in column order stays packed, which the structured clone copies fastest.
    rows.push(recordParams(record, createdAtMs(record)));
  }
  return rows;
}

type WhereQuery = Omit<RecordQuery, 'limit' | 'order'>;

/**
 * A damaged file (a bad page, or not a database after all) can open fine and fail only where a
 * read or a write first touches the damage; SQLite's error is then a ConfigError naming the
 * store, like one found at open, and not an internal error.
 */
function damagedStoreError(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^SQLITE_(?:CORRUPT|NOTADB)/.test(code)) return error;
  return new ConfigError(`SQLite store ${JSON.stringify(path)} is damaged: ${(error as Error).message}`, 'store', { cause: error });
}

type GuardedMethod = (this: SqliteStore, ...args: never[]) => Promise<unknown>;
const GUARDED_METHODS = [
  'insert', 'insertRowBatches', 'insertRows', 'prune', 'get', 'query', 'count', 'toolStats', 'failureBreakdown', 'hourly', 'signatures',
  'insertTrajectories', 'updateTrajectories', 'getTrajectory', 'queryTrajectories', 'countTrajectories',
  'pushCorrection', 'pushCorrections', 'latestCorrection', 'listCorrections',
] as const satisfies readonly (keyof SqliteStore)[];

class SqliteStore implements Store, TrajectoryStore, CorrectionMemoryStore {
  readonly kind = 'sqlite' as const;
  #db: Database.Database;
  readonly #options: SqliteStoreOptions;
  readonly #path: string;
  /** For a copy in memory of a WAL store in a read-only directory: what it was copied from. */
  #snapshotOf: string | undefined;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #insertBatch: ((records: readonly ToolExecutionRecord[]) => void) | undefined;
  readonly #insertRows: ((rows: readonly SqliteValue[][]) => void) | undefined;
  readonly #insertRowBatches: ((batches: readonly RowSource[]) => unknown[]) | undefined;
  readonly #prune: ((beforeMs: number, limit: number) => number) | undefined;
  #closed = false;
  #corrections: SqliteCorrections | undefined;

  constructor(opened: OpenedDatabase, options: SqliteStoreOptions) {
    this.#db = opened.db;
    this.#snapshotOf = opened.snapshotOf;
    this.#options = options;
    this.#path = options.path;
    const writer = options.readonly === true ? undefined : this.#prepareInsert();
    this.#insertBatch = writer?.records;
    this.#insertRows = writer?.rows;
    this.#insertRowBatches = writer === undefined ? undefined : (batches) => writer.batches.immediate(batches);
    this.#prune = writer === undefined ? undefined : (beforeMs, limit) => writer.prune.immediate(beforeMs, limit);
  }

  #prepareInsert(): {
    records: (records: readonly ToolExecutionRecord[]) => void;
    rows: (rows: readonly SqliteValue[][]) => void;
    batches: Database.Transaction<(batches: readonly RowSource[]) => unknown[]>;
    prune: Database.Transaction<(beforeMs: number, limit: number) => number>;
  } {
    const db = this.#db;
    const rowWriter = createRowWriter(db);
    const counters = ROLLUP_COUNTER_FIELDS;
    const upsertHourly = db.prepare(
      `INSERT INTO rollup_hourly (hour_ms, tool_name, ${counters.join(', ')}) VALUES (?, ?, ${counters.map(() => '?').join(', ')})
       ON CONFLICT (hour_ms, tool_name) DO UPDATE SET ${counters.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`,
    );
    // A batch touches hundreds of (tool, hour, bucket) cells, far more than the other rollups,
    // so they go in multi-row statements: one call per DURATION_CHUNK cells instead of one each.
    const durationStatements = new Map<number, Database.Statement>();
    const upsertDurations = (rows: number): Database.Statement => {
      let stmt = durationStatements.get(rows);
      if (stmt === undefined) {
        stmt = db.prepare(
          `INSERT INTO rollup_duration (hour_ms, tool_name, bucket, count) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?)').join(', ')}
           ON CONFLICT (hour_ms, tool_name, bucket) DO UPDATE SET count = count + excluded.count`,
        );
        durationStatements.set(rows, stmt);
      }
      return stmt;
    };
    const upsertFailure = db.prepare(
      `INSERT INTO rollup_failures (hour_ms, tool_name, failure_stage, failure_category, failure_type, count) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (hour_ms, tool_name, failure_stage, failure_category, failure_type) DO UPDATE SET count = count + excluded.count`,
    );
    const upsertSignature = db.prepare(
      `INSERT INTO failure_signatures
         (signature, tool_name, failure_stage, failure_type, error_code, normalized_message, first_seen_ms, last_seen_ms, count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (signature) DO UPDATE SET
         count = count + excluded.count,
         first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
         last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)`,
    );
    const applyDelta = (delta: RollupDelta): void => {
      for (const h of delta.hourly) {
        upsertHourly.run(h.hour_ms, h.tool_name, ...counters.map((c) => h[c]));
      }
      const durations = delta.durations;
      for (let start = 0; start < durations.length; start += DURATION_CHUNK) {
        const end = Math.min(start + DURATION_CHUNK, durations.length);
        const values: SqliteValue[] = [];
        for (let i = start; i < end; i++) {
          const d = durations[i]!;
          values.push(d.hour_ms, d.tool_name, d.bucket, d.count);
        }
        upsertDurations(end - start).run(values);
      }
      for (const f of delta.failures) {
        upsertFailure.run(f.hour_ms, f.tool_name, f.failure_stage, f.failure_category, f.failure_type, f.count);
      }
      for (const s of delta.signatures) {
        upsertSignature.run(
          s.signature,
          s.tool_name,
          s.failure_stage,
          s.failure_type,
          s.error_code,
          s.normalized_message,
          s.first_seen_ms,
          s.last_seen_ms,
          s.count,
        );
      }
    };
    const records = db.transaction((batch: readonly ToolExecutionRecord[]) => {
      const rows = encodeRecordRows(batch);
      const inserted: ToolExecutionRecord[] = [];
      const insertedMs: number[] = [];
      // Only rows really written (not an id already stored, or repeated earlier in this batch)
      // may reach the rollups.
      rowWriter.write(rows, (i) => {
        inserted.push(batch[i]!);
        insertedMs.push(rows[i]![CREATED_MS_PARAM] as number);
      });
      if (inserted.length > 0) applyDelta(aggregateBatch(inserted, insertedMs));
    });
    // Rows already encoded by recordParams (in the thread that built the records): the rollups
    // read their scalar columns.
    const rows = db.transaction((batch: readonly SqliteValue[][]) => {
      const inserted: RollupRecord[] = [];
      const insertedMs: number[] = [];
      rowWriter.write(batch, (i) => {
        const row = batch[i]!;
        inserted.push(rollupRecordOfParams(row));
        insertedMs.push(row[CREATED_MS_PARAM] as number);
      });
      if (inserted.length > 0) applyDelta(aggregateBatch(inserted, insertedMs));
    });
    // Several batches, one commit: each batch in its own savepoint (better-sqlite3 nests `rows`
    // as one), so a batch that fails is rolled back alone and the others are stored. A commit
    // rewrites every page the transaction touched (the indexes' and rollups' pages included), so
    // batches that queued up in the writer thread cost less per row together than one by one.
    const batches = db.transaction((list: readonly RowSource[]) => {
      const errors: unknown[] = [];
      for (const batch of list) {
        try {
          rows(batch());
          errors.push(undefined);
        } catch (error) {
          // Some errors (a full disk, an I/O error) make SQLite roll back the whole transaction:
          // then nothing of the group is stored, and every batch fails with it.
          if (!db.inTransaction) throw error;
          errors.push(error);
        }
      }
      return errors;
    });
    // Retention: the oldest rows before the cutoff are deleted (RETURNING what the rollups read)
    // and their delta is subtracted with the upserts above, in one transaction.
    const deleteOld = db.prepare(
      `DELETE FROM tool_executions WHERE rowid IN (SELECT rowid FROM tool_executions WHERE created_ms < ? ORDER BY created_ms LIMIT ?)
       RETURNING execution_id, tool_name, status, failure_stage, failure_category, failure_type, error_code, error_message,
                 duration_ms, retry_count, breaker_state, created_at, created_ms`,
    );
    const countOld = db.prepare('SELECT EXISTS (SELECT 1 FROM tool_executions WHERE created_ms < ?) AS left');
    const dropEmpty = [
      db.prepare('DELETE FROM rollup_hourly WHERE hour_ms >= ? AND hour_ms <= ? AND total <= 0'),
      db.prepare('DELETE FROM rollup_duration WHERE hour_ms >= ? AND hour_ms <= ? AND count <= 0'),
      db.prepare('DELETE FROM rollup_failures WHERE hour_ms >= ? AND hour_ms <= ? AND count <= 0'),
    ];
    const dropEmptySignatures = db.prepare('DELETE FROM failure_signatures WHERE last_seen_ms < ? AND count <= 0');
    const sweep = [
      db.prepare('DELETE FROM rollup_hourly WHERE hour_ms < ?'),
      db.prepare('DELETE FROM rollup_duration WHERE hour_ms < ?'),
      db.prepare('DELETE FROM rollup_failures WHERE hour_ms < ?'),
    ];
    const sweepSignatures = db.prepare('DELETE FROM failure_signatures WHERE last_seen_ms < ?');
    const prune = db.transaction((beforeMs: number, limit: number): number => {
      // SQLite reads a negative LIMIT as "no limit".
      const deleted = deleteOld.all(beforeMs, Number.isFinite(limit) ? limit : -1) as (RollupRecord & { created_ms: number })[];
      if (deleted.length > 0) {
        const delta = aggregateBatch(deleted, deleted.map((row) => row.created_ms));
        applyDelta(negatedDelta(delta));
        const { fromHourMs, toHourMs } = touchedHours(delta)!;
        for (const stmt of dropEmpty) stmt.run(fromHourMs, toHourMs);
        dropEmptySignatures.run(beforeMs);
      }
      if ((countOld.get(beforeMs) as { left: number }).left === 0) {
        const sweepMs = pruneSweepHourMs(beforeMs);
        for (const stmt of sweep) stmt.run(sweepMs);
        sweepSignatures.run(beforeMs);
      }
      return deleted.length;
    });
    return { records, rows, batches, prune };
  }

  async insert(records: readonly ToolExecutionRecord[]): Promise<void> {
    this.#assertOpen();
    if (this.#insertBatch === undefined) {
      throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    }
    if (records.length === 0) return;
    this.#insertBatch(records);
  }

  /**
   * @internal Inserts several batches of rows (see {@link insertRows}) in one transaction, taking
   * the write lock at its start; returns each batch's error (one its source throws included),
   * undefined for the batches stored. Each batch's rows are asked for only when it is its turn, so
   * that one batch's rows are alive at a time.
   * @throws when the transaction as a whole fails (nothing stored).
   */
  async insertRowBatches(batches: readonly RowSource[]): Promise<unknown[]> {
    this.#assertOpen();
    if (this.#insertRowBatches === undefined) {
      throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    }
    return this.#insertRowBatches(batches);
  }

  /** @internal Inserts rows encoded by {@link encodeRecordRows} (the writer thread's path). */
  async insertRows(rows: readonly SqliteValue[][]): Promise<void> {
    this.#assertOpen();
    if (this.#insertRows === undefined) {
      throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    }
    if (rows.length === 0) return;
    this.#insertRows(rows);
  }

  async prune(beforeMs: number, options: PruneOptions = {}): Promise<number> {
    const limit = checkPrune(beforeMs, options.limit);
    this.#assertOpen();
    if (this.#prune === undefined) {
      throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    }
    return this.#prune(beforeMs, limit);
  }

  async get(executionId: string): Promise<ToolExecutionRecord | null> {
    this.#assertOpen();
    const row = this.#statement('SELECT * FROM tool_executions WHERE execution_id = ?').get(executionId) as
      | RecordRow
      | undefined;
    return row === undefined ? null : rowToRecord(row);
  }

  async query(query: RecordQuery): Promise<ToolExecutionRecord[]> {
    checkRecordQuery(query, 'query');
    this.#assertOpen();
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (limit <= 0 || query.statuses?.length === 0) return [];
    const desc = query.order === 'desc';
    const { clause, params } = this.#where(query, desc);
    const sql = `SELECT * FROM tool_executions${clause} ORDER BY execution_id ${desc ? 'DESC' : 'ASC'} LIMIT ?`;
    const rows = this.#statement(sql).all(...params, limit) as RecordRow[];
    return rows.map(rowToRecord);
  }

  async count(query: Omit<RecordQuery, 'afterId' | 'limit' | 'order'> = {}): Promise<number> {
    checkRecordQuery(query, 'count');
    this.#assertOpen();
    if (query.statuses?.length === 0) return 0;
    const { clause, params } = this.#where(query, false);
    const row = this.#statement(`SELECT count(*) AS n FROM tool_executions${clause}`).get(...params) as { n: number };
    return row.n;
  }

  async toolStats(filter: StatsFilter): Promise<ToolStats[]> {
    checkStatsFilter(filter, 'toolStats');
    this.#assertOpen();
    const { clause, params } = this.#rollupWhere(filter);
    const sums = ROLLUP_COUNTER_FIELDS.map((c) => `sum(${c}) AS ${c}`).join(', ');
    const counters = this.#statement(`SELECT tool_name, ${sums} FROM rollup_hourly${clause} GROUP BY tool_name`).all(
      ...params,
    ) as CounterRowInput[];
    const buckets = this.#statement(
      `SELECT tool_name, bucket, sum(count) AS count FROM rollup_duration${clause} GROUP BY tool_name, bucket`,
    ).all(...params) as BucketRowInput[];
    return toolStatsFromRows(counters, buckets);
  }

  async failureBreakdown(filter: StatsFilter): Promise<FailureBreakdownRow[]> {
    checkStatsFilter(filter, 'failureBreakdown');
    this.#assertOpen();
    const { clause, params } = this.#rollupWhere(filter);
    const rows = this.#statement(
      `SELECT tool_name, failure_stage, failure_category, failure_type, sum(count) AS count FROM rollup_failures${clause}
       GROUP BY tool_name, failure_stage, failure_category, failure_type`,
    ).all(...params) as BreakdownRowInput[];
    return failureBreakdownFromRows(rows);
  }

  async hourly(filter: StatsFilter): Promise<HourlyPoint[]> {
    checkStatsFilter(filter, 'hourly');
    this.#assertOpen();
    const { clause, params } = this.#rollupWhere(filter);
    const counters = this.#statement(
      `SELECT hour_ms, tool_name, ${ROLLUP_COUNTER_FIELDS.join(', ')} FROM rollup_hourly${clause}`,
    ).all(...params) as (CounterRowInput & { hour_ms: number })[];
    const buckets = this.#statement(`SELECT hour_ms, tool_name, bucket, count FROM rollup_duration${clause}`).all(
      ...params,
    ) as (BucketRowInput & { hour_ms: number })[];
    return hourlyFromRows(counters, buckets);
  }

  async signatures(filter: StatsFilter): Promise<FailureSignature[]> {
    checkStatsFilter(filter, 'signatures');
    this.#assertOpen();
    const params: SqliteValue[] = [filter.since, filter.until];
    let sql = 'SELECT * FROM failure_signatures WHERE last_seen_ms >= ? AND last_seen_ms < ?';
    if (filter.toolName !== undefined) {
      sql += ' AND tool_name = ?';
      params.push(filter.toolName);
    }
    return signaturesFromRows(this.#statement(sql).all(...params) as SignatureRowInput[]);
  }

  async insertTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    this.#assertOpen();
    if (this.#insertBatch === undefined) {
      throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    }
    const rows = uniqueTrajectoryRows(trajectories);
    if (rows.length === 0) return 0;
    // OR IGNORE covers both the primary key and the unique (source, source_id) index.
    const insert = this.#statement(
      `INSERT OR IGNORE INTO trajectories
         (trajectory_id, source, source_id, task_description, final_outcome, created_at, trajectory, step_count, failure_count)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const run = this.#db.transaction((batch: readonly TrajectoryRow[]) => {
      let inserted = 0;
      for (const r of batch) {
        inserted += insert.run(r.trajectory_id, r.source, r.source_id, r.task_description, r.final_outcome, r.created_at, r.json, r.step_count, r.failure_count).changes;
      }
      return inserted;
    });
    return run(rows);
  }

  async updateTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    this.#assertOpen();
    if (this.#insertBatch === undefined) {
      throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    }
    const rows = uniqueTrajectoryRows(trajectories);
    if (rows.length === 0) return 0;
    const update = this.#statement(
      `UPDATE trajectories SET task_description = ?, final_outcome = ?, trajectory = ?, step_count = ?, failure_count = ?
        WHERE trajectory_id = ?`,
    );
    const run = this.#db.transaction((batch: readonly TrajectoryRow[]) => {
      let updated = 0;
      for (const r of batch) updated += update.run(r.task_description, r.final_outcome, r.json, r.step_count, r.failure_count, r.trajectory_id).changes;
      return updated;
    });
    return run(rows);
  }

  async getTrajectory(trajectoryId: string): Promise<Trajectory | null> {
    this.#assertOpen();
    const row = this.#statement('SELECT trajectory FROM trajectories WHERE trajectory_id = ?').get(trajectoryId) as { trajectory: string } | undefined;
    return row === undefined ? null : (JSON.parse(row.trajectory) as Trajectory);
  }

  async queryTrajectories(query: TrajectoryQuery = {}): Promise<Trajectory[]> {
    this.#assertOpen();
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (limit <= 0) return [];
    const conditions: string[] = [];
    const params: SqliteValue[] = [];
    if (query.source !== undefined) {
      conditions.push('source = ?');
      params.push(query.source);
    }
    if (query.afterId !== undefined) {
      conditions.push('trajectory_id > ?');
      params.push(query.afterId);
    }
    const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
    // SQLite reads a negative LIMIT as "no limit", which is what an infinite limit asks for.
    const rows = this.#statement(`SELECT trajectory FROM trajectories${where} ORDER BY trajectory_id LIMIT ?`).all(
      ...params,
      Number.isFinite(limit) ? Math.floor(limit) : -1,
    ) as { trajectory: string }[];
    return rows.map((row) => JSON.parse(row.trajectory) as Trajectory);
  }

  async countTrajectories(query: Pick<TrajectoryQuery, 'source'> = {}): Promise<number> {
    this.#assertOpen();
    const row = (
      query.source === undefined
        ? this.#statement('SELECT count(*) AS n FROM trajectories').get()
        : this.#statement('SELECT count(*) AS n FROM trajectories WHERE source = ?').get(query.source)
    ) as { n: number };
    return row.n;
  }

  // The correction memory's SQL lives in corrections.ts.
  async pushCorrection(correction: NewCorrection, limits?: Partial<CorrectionLimits>): Promise<CorrectionEntry> {
    this.#assertOpen();
    if (this.#insertBatch === undefined) throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    return this.#correctionMemory().push(correction, limits);
  }

  async pushCorrections(corrections: readonly NewCorrection[], limits?: Partial<CorrectionLimits>): Promise<void> {
    this.#assertOpen();
    if (this.#insertBatch === undefined) throw new ConfigError(`SQLite store ${JSON.stringify(this.#path)} was opened read-only`, 'store');
    this.#correctionMemory().pushMany(corrections, limits);
  }

  async latestCorrection(signature: string): Promise<CorrectionEntry | null> {
    this.#assertOpen();
    return this.#correctionMemory().latest(signature);
  }

  async listCorrections(query: CorrectionQuery = {}): Promise<CorrectionEntry[]> {
    this.#assertOpen();
    return this.#correctionMemory().list(query);
  }

  #correctionMemory(): SqliteCorrections {
    return (this.#corrections ??= sqliteCorrections(this.#db));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
  }

  /**
   * A copy in memory is copied again once its file changed (a writer elsewhere added to it), or
   * opened where it lies once that writer's -shm is there. While no file is at the path (being
   * replaced), the copy is what there is.
   * @throws ConfigError when the file there now cannot be read (`openDatabase`); the copy stays.
   */
  #refreshSnapshot(): void {
    if (this.#closed) return;
    const source = walSnapshotSource(this.#path);
    if (source === undefined || source === this.#snapshotOf) return;
    const opened = openDatabase(this.#options);
    this.#statements.clear();
    this.#corrections = undefined;
    this.#db.close();
    this.#db = opened.db;
    this.#snapshotOf = opened.snapshotOf;
  }

  #assertOpen(): void {
    if (this.#closed) throw new FaultlineError(`SQLite store ${JSON.stringify(this.#path)} is closed`);
  }

  #statement(sql: string): Database.Statement {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      if (this.#statements.size >= STATEMENT_CACHE_LIMIT) this.#statements.clear();
      stmt = this.#db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  #where(query: WhereQuery, desc: boolean): { clause: string; params: SqliteValue[] } {
    const conditions: string[] = [];
    const params: SqliteValue[] = [];
    if (query.traceId !== undefined) {
      conditions.push('trace_id = ?');
      params.push(query.traceId);
    }
    if (query.toolName !== undefined) {
      conditions.push('tool_name = ?');
      params.push(query.toolName);
    }
    if (query.statuses !== undefined) {
      conditions.push(`status IN (${query.statuses.map(() => '?').join(', ')})`);
      params.push(...query.statuses);
    }
    if (query.since !== undefined) {
      conditions.push('created_ms >= ?');
      params.push(query.since);
    }
    if (query.until !== undefined) {
      conditions.push('created_ms < ?');
      params.push(query.until);
    }
    if (query.afterId !== undefined) {
      // The cursor means "after it in the requested order", so descending pages move back in time.
      conditions.push(desc ? 'execution_id < ?' : 'execution_id > ?');
      params.push(query.afterId);
    }
    return { clause: conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`, params };
  }

  #rollupWhere(filter: StatsFilter): { clause: string; params: SqliteValue[] } {
    const { fromHourMs, untilHourMs } = hourRange(filter);
    if (filter.toolName === undefined) return { clause: ' WHERE hour_ms >= ? AND hour_ms < ?', params: [fromHourMs, untilHourMs] };
    return {
      clause: ' WHERE hour_ms >= ? AND hour_ms < ? AND tool_name = ?',
      params: [fromHourMs, untilHourMs, filter.toolName],
    };
  }

  // Every public method, so that SQLite's error for a damaged file becomes a ConfigError
  // (damagedStoreError) wherever the damage is first met.
  static {
    for (const name of GUARDED_METHODS) {
      const method = SqliteStore.prototype[name] as GuardedMethod;
      const guarded: GuardedMethod = async function (this: SqliteStore, ...args) {
        try {
          if (this.#snapshotOf !== undefined) this.#refreshSnapshot();
          return await method.apply(this, args);
        } catch (error) {
          throw damagedStoreError(this.#path, error);
        }
      };
      Object.defineProperty(SqliteStore.prototype, name, { value: guarded, writable: true, configurable: true });
    }
  }
}
