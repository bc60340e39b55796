/**
 * The PostgreSQL Store, for teams: many agent processes write to one database. Records go to
 * `tool_executions` (seed 001's table, JSONB columns, a GIN index on `input_params`); analytics
 * read hourly rollups that are updated in the same transaction as each insert.
 */
import pg from 'pg';
import { ConfigError, FaultlineError } from '../../core/errors.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { uniqueTrajectoryRows } from '../trajectory-row.js';
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
  touchedHours,
  ROLLUP_COUNTER_FIELDS,
  signaturesFromRows,
  toolStatsFromRows,
  type BreakdownRowInput,
  type BucketRowInput,
  type CounterRowInput,
  type Numeric,
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
import { listPostgresCorrections, pushPostgresCorrections } from './corrections.js';
import { assertNotNewer, LATEST_VERSION, migrate, readVersion } from './migrations.js';
import { connectionError, parsePostgresUrl, type ConnectionTarget } from './open-error.js';
import { columnArrays, INSERT_RECORD_COLUMNS, INSERT_RECORD_ROWS, RECORD_SELECT_LIST, RESULT_TYPES, rowToRecord } from './record-row.js';
import { createRollupWriter, type RollupWriter } from './rollup-upsert.js';
import { quoteSchemaName } from './schema-name.js';

/** Options for {@link createPostgresStore}. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`. Used to create the pool unless `pool` is given. */
  url: string;
  /** The PostgreSQL schema holding the store's tables; created if missing. Default `faultline`. */
  schema?: string;
  /**
   * Open for reading, as the reporting commands do: a schema holding no faultline store is an
   * error instead of being created (a typo in `?schema=` must not read as "no calls"), and so is
   * a store at an older schema version, since migrating it would run DDL from a reader. Writes are
   * not refused by the store; the database role decides. Default false.
   */
  readonly?: boolean;
  /**
   * Only open a store that exists (migrating it if it is older), for the commands that add to
   * stored data: a schema holding no faultline store is an error instead of being created.
   * Implied by `readonly`. Default false.
   */
  mustExist?: boolean;
  /** A pool owned by the caller. The store uses it but never ends it. */
  pool?: pg.Pool;
  /** Maximum connections of the pool the store creates. Default 10. Ignored with `pool`. */
  max?: number;
  /**
   * `application_name` of the store's connections, visible in `pg_stat_activity`. Default
   * `faultline`. Ignored with `pool`.
   */
  applicationName?: string;
  /**
   * The longest a statement may take, for readers that must not hang (`faultline tail`): the
   * server cancels one that runs or waits on a lock longer, and the client gives up on one left
   * unanswered {@link QUERY_TIMEOUT_GRACE_MS} after that (a server it cannot reach). Either fails
   * the call like an outage. Default: no bound. Ignored with `pool`.
   */
  statementTimeoutMs?: number;
}

const DEFAULT_SCHEMA = 'faultline';
const DEFAULT_LIMIT = 1000;
const CONNECT_TIMEOUT_MS = 10_000;
/** How much longer than `statementTimeoutMs` the client waits for the server's own cancellation. */
const QUERY_TIMEOUT_GRACE_MS = 2000;
/**
 * How long a writer's close waits for statements still in flight before it cuts their connections:
 * the recorder's default `insertTimeoutMs`, past which it has spooled what they were writing.
 */
export const CLOSE_WAIT_MS = 10_000;
/**
 * Rows per INSERT statement. `unnest` keeps the parameter count at one per column whatever the
 * row count, so this only bounds the size of one protocol message; batches larger than this are
 * still one transaction.
 */
export const INSERT_CHUNK_ROWS = 2000;
/** Trajectories per INSERT statement; each row carries a whole trajectory's JSON. */
const TRAJECTORY_CHUNK_ROWS = 500;
/** Deadlocks are retried; rows are locked in a fixed order, so they need an unusual interleaving. */
const DEADLOCK_RETRIES = 3;
const DEADLOCK_DETECTED = '40P01';
const COUNTER_SUMS = ROLLUP_COUNTER_FIELDS.map((c) => `sum(${c}) AS ${c}`).join(', ');
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Opens (and if needed creates or migrates) a PostgreSQL store.
 *
 * @throws ConfigError with a one-line message when the URL is invalid, the server cannot be
 * reached or refuses the login, or the schema was written by a newer faultline.
 * @example
 * const store = await createPostgresStore({ url: 'postgres://app@db:5432/agents' });
 * await store.insert(records);
 * const stats = await store.toolStats({ since: Date.now() - 86_400_000, until: Date.now() });
 * await store.close();
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store & TrajectoryStore & CorrectionMemoryStore> {
  const schemaName = options.schema ?? DEFAULT_SCHEMA;
  const schema = quoteSchemaName(schemaName);
  const ownsPool = options.pool === undefined;
  let pool: pg.Pool;
  let target: ConnectionTarget;
  if (options.pool !== undefined) {
    pool = options.pool;
    const { connectionString, host, port } = pool.options;
    target =
      connectionString !== undefined
        ? parsePostgresUrl(connectionString)
        : { host: host ?? 'localhost', port: port ?? 5432 };
  } else {
    target = parsePostgresUrl(options.url);
    if (options.max !== undefined && !(Number.isInteger(options.max) && options.max > 0)) {
      throw new ConfigError('PostgreSQL pool size (max) must be a positive integer', 'max');
    }
    const timeout = options.statementTimeoutMs;
    if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0)) {
      throw new ConfigError('PostgreSQL statementTimeoutMs must be a positive integer', 'statementTimeoutMs');
    }
    pool = new pg.Pool({
      connectionString: withExplicitSslMode(options.url),
      max: options.max ?? 10,
      application_name: options.applicationName ?? 'faultline',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(timeout === undefined ? {} : { statement_timeout: timeout, query_timeout: timeout + QUERY_TIMEOUT_GRACE_MS }),
    });
    // An idle connection that the server drops emits 'error' on the pool; unhandled, that would
    // crash the process. The pool discards the client, and the next query reports the outage.
    pool.on('error', () => undefined);
    // pg-pool drops its own listener when it hands a client out, and the server's FATAL message
    // (pg_terminate_backend, a restart) can arrive in the same socket read that completed the
    // checkout, before our code gets the client: every client keeps a listener of its own.
    pool.on('connect', (client) => client.on('error', () => undefined));
  }

  try {
    let connected = false;
    await withClient(pool, async (client) => {
      connected = true;
      if (options.readonly === true || options.mustExist === true) {
        const version = await readVersion(client, schema, schemaName);
        if (version === null || version === 0) {
          throw new ConfigError(
            `no faultline store in PostgreSQL schema "${schemaName}" at ${target.host}:${target.port} (check ?schema=, or point --db at one)`,
            'schema',
          );
        }
        if (options.readonly === true) {
          assertNotNewer(version, schemaName);
          if (version < LATEST_VERSION) {
            throw new ConfigError(
              `PostgreSQL schema "${schemaName}" at ${target.host}:${target.port} has schema version ${version}, older than ${LATEST_VERSION}; open it once without readonly to migrate it`,
              'schema',
            );
          }
          return;
        }
      }
      await migrate(client, schemaName, schema);
    }).catch((error: unknown) => {
      if (!connected) throw connectionError(target, error);
      if (ConfigError.isInstance(error)) throw error;
      throw new ConfigError(
        `could not prepare PostgreSQL schema "${schemaName}" at ${target.host}:${target.port}: ${oneLine(error)}`,
        'schema',
        { cause: error },
      );
    });
  } catch (error) {
    if (ownsPool) await pool.end().catch(() => undefined);
    throw error;
  }
  return new PostgresStore(pool, ownsPool, schema, options.readonly === true);
}

/**
 * pg 8 treats `sslmode=prefer|require|verify-ca` as `verify-full` and says so in a multi-line
 * process warning on every run (the CLI promises one line on stderr). Spelling the mode it
 * applies anyway keeps the behaviour and drops the warning; `uselibpqcompat=true` URLs, which
 * ask for libpq's meanings, are left alone.
 */
function withExplicitSslMode(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const mode = parsed.searchParams.get('sslmode');
  if (mode === null || !['prefer', 'require', 'verify-ca'].includes(mode) || parsed.searchParams.get('uselibpqcompat') === 'true') return url;
  parsed.searchParams.set('sslmode', 'verify-full');
  return parsed.toString();
}

/**
 * Runs `work` on a client checked out of `pool`. While checked out, a client has no 'error'
 * listener of the pool's, and a connection dropped between queries would otherwise surface as an
 * uncaught exception; here it fails the next query instead. A client that failed in any way is
 * destroyed rather than returned to the pool, since its transaction state is unknown.
 */
async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const onError = () => undefined;
  client.on('error', onError);
  let failed = false;
  try {
    return await work(client);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    // A destroyed client can still deliver the server's FATAL message (e.g. from
    // pg_terminate_backend) after release; it keeps its listener so that is not an uncaught
    // 'error'. A client going back to the pool gets the pool's listener instead.
    if (!failed) client.off('error', onError);
    client.release(failed);
  }
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const newline = text.indexOf('\n');
  return newline === -1 ? text : text.slice(0, newline);
}

interface Filters {
  where: string;
  values: unknown[];
}

class PostgresStore implements Store, TrajectoryStore, CorrectionMemoryStore {
  readonly kind = 'postgres' as const;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  readonly #schema: string;
  readonly #rollups: RollupWriter;
  readonly #insertSql: string;
  /** Clients checked out of the pool the store owns, whose statements close may cut (see {@link close}). */
  readonly #busy: Set<pg.PoolClient> | undefined;
  /** How long close waits for statements in flight before it cuts them. */
  readonly #closeWaitMs: number;
  #closing: Promise<void> | undefined;

  constructor(pool: pg.Pool, ownsPool: boolean, schema: string, readonly: boolean) {
    this.#pool = pool;
    this.#ownsPool = ownsPool;
    this.#schema = schema;
    this.#closeWaitMs = readonly ? 0 : CLOSE_WAIT_MS;
    if (ownsPool) {
      const busy = (this.#busy = new Set());
      pool.on('acquire', (client) => busy.add(client));
      pool.on('release', (_error, client) => busy.delete(client));
    }
    this.#rollups = createRollupWriter(schema);
    this.#insertSql =
      `INSERT INTO ${schema}.tool_executions (${INSERT_RECORD_COLUMNS}) ${INSERT_RECORD_ROWS} ` +
      `ON CONFLICT (execution_id) DO NOTHING RETURNING execution_id`;
  }

  async insert(records: readonly ToolExecutionRecord[]): Promise<void> {
    this.#assertOpen();
    // Everything that can reject a record is checked before a connection is taken, so a bad
    // batch leaves the database untouched.
    const unique = new Map<string, { record: ToolExecutionRecord; createdMs: number }>();
    for (const record of records) {
      checkRecord(record);
      if (!CANONICAL_UUID.test(record.execution_id)) {
        // The column is a uuid: PostgreSQL would reject the whole batch on every retry.
        throw new ConfigError(
          `store.insert: record ${JSON.stringify(record.execution_id)} has an invalid execution_id: expected a UUID (PostgreSQL's column type)`,
          'execution_id',
        );
      }
      const key = record.execution_id.toLowerCase();
      if (!unique.has(key)) unique.set(key, { record, createdMs: createdAtMs(record) });
    }
    if (unique.size === 0) return;
    // Sorted so that concurrent batches sharing ids lock them in the same order.
    const batch = [...unique.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, entry]) => entry);

    for (let attempt = 0; ; attempt++) {
      try {
        await this.#insertOnce(batch);
        return;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== DEADLOCK_DETECTED || attempt >= DEADLOCK_RETRIES) throw error;
      }
    }
  }

  async #insertOnce(batch: readonly { record: ToolExecutionRecord; createdMs: number }[]): Promise<void> {
    await withClient(this.#pool, async (client) => {
      await client.query('BEGIN');
      try {
        const inserted = new Set<string>();
        for (let start = 0; start < batch.length; start += INSERT_CHUNK_ROWS) {
          const chunk = batch.slice(start, start + INSERT_CHUNK_ROWS).map((entry) => entry.record);
          const result = await client.query<{ execution_id: string }>(this.#insertSql, columnArrays(chunk));
          for (const row of result.rows) inserted.add(row.execution_id);
        }
        // Only rows that were really inserted count: a retried batch must not inflate the rollups.
        const fresh = batch.filter((entry) => inserted.has(entry.record.execution_id.toLowerCase()));
        if (fresh.length > 0) {
          const delta = aggregateBatch(
            fresh.map((entry) => entry.record),
            fresh.map((entry) => entry.createdMs),
          );
          await this.#rollups.apply(client, delta);
        }
        await client.query('COMMIT');
      } catch (error) {
        // The original error is the one worth reporting; withClient destroys the client anyway.
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async prune(beforeMs: number, options: PruneOptions = {}): Promise<number> {
    const limit = checkPrune(beforeMs, options.limit);
    this.#assertOpen();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#pruneOnce(beforeMs, limit);
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (code !== DEADLOCK_DETECTED || attempt >= DEADLOCK_RETRIES) throw error;
      }
    }
  }

  /**
   * One transaction: the oldest rows before the cutoff are deleted (RETURNING what the rollups
   * read), and their delta is subtracted with the insert's own upserts (same lock order). Two
   * prunes at once cannot subtract a row twice: the second's DELETE returns only rows it deleted.
   */
  async #pruneOnce(beforeMs: number, limit: number): Promise<number> {
    const s = this.#schema;
    const cutoff = isoParam(beforeMs);
    return withClient(this.#pool, async (client) => {
      await client.query('BEGIN');
      try {
        const deleted = await this.#rows<RollupRecord>(
          `DELETE FROM ${s}.tool_executions t USING (
             SELECT execution_id FROM ${s}.tool_executions WHERE created_at < $1::timestamptz ORDER BY created_at LIMIT $2
           ) doomed WHERE t.execution_id = doomed.execution_id
           RETURNING t.execution_id, t.tool_name, t.status, t.failure_stage, t.failure_category, t.failure_type, t.error_code,
                     t.error_message, t.duration_ms, t.retry_count, t.breaker_state, t.created_at`,
          // LIMIT NULL is no limit.
          [cutoff, Number.isFinite(limit) ? limit : null],
          client,
        );
        if (deleted.length > 0) {
          const delta = aggregateBatch(deleted);
          await this.#rollups.apply(client, negatedDelta(delta));
          const { fromHourMs, toHourMs } = touchedHours(delta)!;
          for (const [table, column] of [['rollup_hourly', 'total'], ['rollup_duration', 'count'], ['rollup_failures', 'count']] as const) {
            await client.query(`DELETE FROM ${s}.${table} WHERE hour_ms >= $1 AND hour_ms <= $2 AND ${column} <= 0`, [fromHourMs, toHourMs]);
          }
          await client.query(`DELETE FROM ${s}.failure_signatures WHERE last_seen_ms < $1 AND count <= 0`, [msParam(beforeMs)]);
        }
        const [left] = await this.#rows<{ left: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM ${s}.tool_executions WHERE created_at < $1::timestamptz) AS left`,
          [cutoff],
          client,
        );
        if (left?.left === false) {
          const sweepMs = msParam(pruneSweepHourMs(beforeMs));
          for (const table of ['rollup_hourly', 'rollup_duration', 'rollup_failures']) {
            await client.query(`DELETE FROM ${s}.${table} WHERE hour_ms < $1`, [sweepMs]);
          }
          await client.query(`DELETE FROM ${s}.failure_signatures WHERE last_seen_ms < $1`, [msParam(beforeMs)]);
        }
        await client.query('COMMIT');
        return deleted.length;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async get(executionId: string): Promise<ToolExecutionRecord | null> {
    this.#assertOpen();
    // Not a UUID means it cannot be stored here; asking PostgreSQL would raise a cast error instead.
    if (!CANONICAL_UUID.test(executionId)) return null;
    const [row] = await this.#rows<Record<string, unknown>>(
      `SELECT ${RECORD_SELECT_LIST} FROM ${this.#schema}.tool_executions WHERE execution_id = $1::uuid`,
      [executionId],
    );
    return row === undefined ? null : rowToRecord(row);
  }

  async query(query: RecordQuery): Promise<ToolExecutionRecord[]> {
    checkRecordQuery(query, 'query');
    this.#assertOpen();
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (limit <= 0) return [];
    const desc = query.order === 'desc';
    const filters = recordFilters(query);
    const conditions = filters.where === '' ? [] : [filters.where];
    const values = filters.values;
    if (query.afterId !== undefined) {
      const op = desc ? '<' : '>';
      if (CANONICAL_UUID.test(query.afterId)) {
        values.push(query.afterId.toLowerCase());
        conditions.push(`execution_id ${op} $${values.length}::uuid`);
      } else {
        // A cursor that is not a UUID still orders against the ids as text, as in the other
        // stores, rather than failing the cast; it just cannot use the primary key index.
        values.push(query.afterId);
        conditions.push(`execution_id::text ${op} $${values.length} COLLATE "C"`);
      }
    }
    // LIMIT NULL is no limit, which is what an infinite limit asks for.
    values.push(Number.isFinite(limit) ? Math.floor(limit) : null);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const rows = await this.#rows<Record<string, unknown>>(
      `SELECT ${RECORD_SELECT_LIST} FROM ${this.#schema}.tool_executions ${where} ` +
        `ORDER BY execution_id ${desc ? 'DESC' : 'ASC'} LIMIT $${values.length}`,
      values,
    );
    return rows.map(rowToRecord);
  }

  async count(query: Omit<RecordQuery, 'afterId' | 'limit' | 'order'> = {}): Promise<number> {
    checkRecordQuery(query, 'count');
    this.#assertOpen();
    const filters = recordFilters(query);
    const where = filters.where === '' ? '' : `WHERE ${filters.where}`;
    const [row] = await this.#rows<{ n: number }>(
      `SELECT count(*) AS n FROM ${this.#schema}.tool_executions ${where}`,
      filters.values,
    );
    return row?.n ?? 0;
  }

  async toolStats(filter: StatsFilter): Promise<ToolStats[]> {
    checkStatsFilter(filter, 'toolStats');
    this.#assertOpen();
    const { where, values } = rollupFilters(filter);
    return this.#snapshot(async (client) => {
      const counters = await this.#rows<CounterRowInput>(
        `SELECT tool_name, ${COUNTER_SUMS} FROM ${this.#schema}.rollup_hourly WHERE ${where} GROUP BY tool_name`,
        values,
        client,
      );
      const buckets = await this.#rows<BucketRowInput>(
        `SELECT tool_name, bucket, sum(count) AS count FROM ${this.#schema}.rollup_duration
          WHERE ${where} GROUP BY tool_name, bucket`,
        values,
        client,
      );
      return toolStatsFromRows(counters, buckets);
    });
  }

  async failureBreakdown(filter: StatsFilter): Promise<FailureBreakdownRow[]> {
    checkStatsFilter(filter, 'failureBreakdown');
    this.#assertOpen();
    const { where, values } = rollupFilters(filter);
    const rows = await this.#rows<BreakdownRowInput>(
      `SELECT tool_name, failure_stage, failure_category, failure_type, sum(count) AS count
         FROM ${this.#schema}.rollup_failures WHERE ${where}
        GROUP BY tool_name, failure_stage, failure_category, failure_type`,
      values,
    );
    return failureBreakdownFromRows(rows);
  }

  async hourly(filter: StatsFilter): Promise<HourlyPoint[]> {
    checkStatsFilter(filter, 'hourly');
    this.#assertOpen();
    const { where, values } = rollupFilters(filter);
    return this.#snapshot(async (client) => {
      const counters = await this.#rows<CounterRowInput & { hour_ms: Numeric }>(
        `SELECT hour_ms, tool_name, ${ROLLUP_COUNTER_FIELDS.join(', ')} FROM ${this.#schema}.rollup_hourly WHERE ${where}`,
        values,
        client,
      );
      const buckets = await this.#rows<BucketRowInput & { hour_ms: Numeric }>(
        `SELECT hour_ms, tool_name, bucket, count FROM ${this.#schema}.rollup_duration WHERE ${where}`,
        values,
        client,
      );
      return hourlyFromRows(counters, buckets);
    });
  }

  async signatures(filter: StatsFilter): Promise<FailureSignature[]> {
    checkStatsFilter(filter, 'signatures');
    this.#assertOpen();
    const values: unknown[] = [msParam(filter.since), msParam(filter.until)];
    let where = 'last_seen_ms >= $1 AND last_seen_ms < $2';
    if (filter.toolName !== undefined) {
      values.push(filter.toolName);
      where += ' AND tool_name = $3';
    }
    const rows = await this.#rows<SignatureRowInput>(
      `SELECT signature, tool_name, failure_stage, failure_type, error_code, normalized_message,
              first_seen_ms, last_seen_ms, count
         FROM ${this.#schema}.failure_signatures WHERE ${where}`,
      values,
    );
    return signaturesFromRows(rows);
  }

  async insertTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    this.#assertOpen();
    const rows = uniqueTrajectoryRows(trajectories);
    if (rows.length === 0) return 0;
    // Without a conflict target, DO NOTHING covers the primary key and the (source, source_id) index.
    const sql =
      `INSERT INTO ${this.#schema}.trajectories
         (trajectory_id, source, source_id, task_description, final_outcome, created_at, trajectory, step_count, failure_count)
       SELECT t.id, t.source, t.source_id, t.task, t.outcome, t.created::timestamptz, t.body::json, t.steps, t.failures
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[])
           AS t(id, source, source_id, task, outcome, created, body, steps, failures)
       ON CONFLICT DO NOTHING RETURNING trajectory_id`;
    return withClient(this.#pool, async (client) => {
      await client.query('BEGIN');
      try {
        let inserted = 0;
        for (let start = 0; start < rows.length; start += TRAJECTORY_CHUNK_ROWS) {
          const chunk = rows.slice(start, start + TRAJECTORY_CHUNK_ROWS);
          const result = await client.query(sql, [
            chunk.map((r) => r.trajectory_id),
            chunk.map((r) => r.source),
            chunk.map((r) => r.source_id),
            chunk.map((r) => r.task_description),
            chunk.map((r) => r.final_outcome),
            chunk.map((r) => r.created_at),
            chunk.map((r) => r.json),
            chunk.map((r) => r.step_count),
            chunk.map((r) => r.failure_count),
          ]);
          inserted += result.rowCount ?? 0;
        }
        await client.query('COMMIT');
        return inserted;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async updateTrajectories(trajectories: readonly Trajectory[]): Promise<number> {
    this.#assertOpen();
    const rows = uniqueTrajectoryRows(trajectories);
    if (rows.length === 0) return 0;
    const sql = `UPDATE ${this.#schema}.trajectories AS d
         SET task_description = t.task, final_outcome = t.outcome, trajectory = t.body::json, step_count = t.steps, failure_count = t.failures
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[]) AS t(id, task, outcome, body, steps, failures)
       WHERE d.trajectory_id = t.id`;
    let updated = 0;
    for (let start = 0; start < rows.length; start += TRAJECTORY_CHUNK_ROWS) {
      const chunk = rows.slice(start, start + TRAJECTORY_CHUNK_ROWS);
      const result = await withClient(this.#pool, (client) =>
        client.query(sql, [
          chunk.map((r) => r.trajectory_id),
          chunk.map((r) => r.task_description),
          chunk.map((r) => r.final_outcome),
          chunk.map((r) => r.json),
          chunk.map((r) => r.step_count),
          chunk.map((r) => r.failure_count),
        ]),
      );
      updated += result.rowCount ?? 0;
    }
    return updated;
  }

  async getTrajectory(trajectoryId: string): Promise<Trajectory | null> {
    this.#assertOpen();
    const [row] = await this.#rows<{ trajectory: Trajectory }>(
      `SELECT trajectory FROM ${this.#schema}.trajectories WHERE trajectory_id = $1`,
      [trajectoryId],
    );
    return row?.trajectory ?? null;
  }

  async queryTrajectories(query: TrajectoryQuery = {}): Promise<Trajectory[]> {
    this.#assertOpen();
    const limit = query.limit ?? DEFAULT_LIMIT;
    if (limit <= 0) return [];
    const conditions: string[] = [];
    const values: unknown[] = [];
    if (query.source !== undefined) {
      values.push(query.source);
      conditions.push(`source = $${values.length}`);
    }
    if (query.afterId !== undefined) {
      values.push(query.afterId);
      // Byte order, as the other adapters compare ids, whatever the database's collation.
      conditions.push(`trajectory_id > $${values.length} COLLATE "C"`);
    }
    values.push(Number.isFinite(limit) ? Math.floor(limit) : null);
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const rows = await this.#rows<{ trajectory: Trajectory }>(
      `SELECT trajectory FROM ${this.#schema}.trajectories ${where} ORDER BY trajectory_id COLLATE "C" LIMIT $${values.length}`,
      values,
    );
    return rows.map((row) => row.trajectory);
  }

  async countTrajectories(query: Pick<TrajectoryQuery, 'source'> = {}): Promise<number> {
    this.#assertOpen();
    const [row] =
      query.source === undefined
        ? await this.#rows<{ n: number }>(`SELECT count(*) AS n FROM ${this.#schema}.trajectories`, [])
        : await this.#rows<{ n: number }>(`SELECT count(*) AS n FROM ${this.#schema}.trajectories WHERE source = $1`, [query.source]);
    return row?.n ?? 0;
  }

  // The correction memory's SQL lives in corrections.ts.
  async pushCorrection(correction: NewCorrection, limits?: Partial<CorrectionLimits>): Promise<CorrectionEntry> {
    this.#assertOpen();
    const [entry] = await withClient(this.#pool, (client) => pushPostgresCorrections(client, this.#schema, [correction], limits));
    return entry!;
  }

  async pushCorrections(corrections: readonly NewCorrection[], limits?: Partial<CorrectionLimits>): Promise<void> {
    this.#assertOpen();
    await withClient(this.#pool, (client) => pushPostgresCorrections(client, this.#schema, corrections, limits));
  }

  async latestCorrection(signature: string): Promise<CorrectionEntry | null> {
    this.#assertOpen();
    return (await listPostgresCorrections(this.#pool, this.#schema, { signature, limit: 1 }))[0] ?? null;
  }

  async listCorrections(query: CorrectionQuery = {}): Promise<CorrectionEntry[]> {
    this.#assertOpen();
    return listPostgresCorrections(this.#pool, this.#schema, query);
  }

  /**
   * Ends the pool once its clients are back. A read-only store does not wait for reads still in
   * flight: whoever closes it no longer wants their answers (tail stopped by Ctrl-C while the
   * server is stuck behind a lock, or unreachable). Their connections are cut, which fails those
   * reads at once. A writer's close waits for its inserts, up to {@link CLOSE_WAIT_MS}: one still
   * running then waits on something that may never come (a table another session keeps locked, a
   * server that stopped answering), and a recorder has spooled its records by then. Its connection
   * is cut: the insert fails as in an outage, and the server, finding no COMMIT, rolls it back.
   */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      const ended = this.#ownsPool ? this.#pool.end() : Promise.resolve();
      this.#closing = ended;
      const busy = this.#busy;
      if (busy === undefined || busy.size === 0) return ended;
      // pg.Pool hands out pg.Client instances; PoolClient's type omits the connection.
      const cut = () => {
        for (const client of busy) (client as unknown as pg.Client).connection.stream.destroy();
      };
      if (this.#closeWaitMs === 0) cut();
      else {
        const timer = setTimeout(cut, this.#closeWaitMs);
        timer.unref();
        const stop = () => clearTimeout(timer);
        ended.then(stop, stop);
      }
    }
    return this.#closing;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) throw new FaultlineError('the PostgreSQL store is closed');
  }

  /** Runs a statement with the store's result parsers; `Row` describes the selected columns. */
  async #rows<Row>(text: string, values: unknown[], client: pg.Pool | pg.PoolClient = this.#pool): Promise<Row[]> {
    const result = await client.query({ text, values, types: RESULT_TYPES });
    return result.rows as Row[];
  }

  /**
   * Runs dependent reads (counters, then the duration buckets that go with them) in one snapshot,
   * so that an insert committing between them cannot make them disagree.
   */
  #snapshot<T>(reads: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return withClient(this.#pool, async (client) => {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await reads(client);
      await client.query('COMMIT');
      return result;
    });
  }
}

/** WHERE conditions (without the keyword) and parameters for the raw-record filters. */
function recordFilters(query: Omit<RecordQuery, 'afterId' | 'limit' | 'order'>): Filters {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const add = (sql: (placeholder: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(sql(`$${values.length}`));
  };
  if (query.traceId !== undefined) add((p) => `trace_id = ${p}`, query.traceId);
  if (query.toolName !== undefined) add((p) => `tool_name = ${p}`, query.toolName);
  if (query.statuses !== undefined) add((p) => `status = ANY(${p}::text[])`, [...query.statuses]);
  if (query.since !== undefined) add((p) => `created_at >= ${p}::timestamptz`, isoParam(query.since));
  if (query.until !== undefined) add((p) => `created_at < ${p}::timestamptz`, isoParam(query.until));
  return { where: conditions.join(' AND '), values };
}

/**
 * A window bound as a timestamptz parameter. Stored times are whole milliseconds, so rounding a
 * fractional bound up keeps both `>=` and `<` exact; bounds beyond the Date range mean
 * "everything" or "nothing" rather than an error.
 */
function isoParam(ms: number): string {
  const whole = Math.ceil(ms);
  if (whole > MAX_DATE_MS) return 'infinity';
  if (whole < -MAX_DATE_MS) return '-infinity';
  return new Date(whole).toISOString();
}

const MAX_DATE_MS = 8.64e15;

/** A window bound over bigint epoch-ms columns: whole, and inside the bigint range. */
function msParam(ms: number): number {
  const whole = Math.ceil(ms);
  return Math.min(Math.max(whole, Number.MIN_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
}

/** The hour range (and tool) of a stats window, over the per-hour rollup tables. */
function rollupFilters(filter: StatsFilter): Filters {
  const { fromHourMs, untilHourMs } = hourRange(filter);
  const values: unknown[] = [msParam(fromHourMs), msParam(untilHourMs)];
  let where = 'hour_ms >= $1 AND hour_ms < $2';
  if (filter.toolName !== undefined) {
    values.push(filter.toolName);
    where += ' AND tool_name = $3';
  }
  return { where, values };
}
