/**
 * Versioned schema migrations for the PostgreSQL store. Applied in order, each once, recorded in
 * `<schema>.schema_migrations`. Never edit a released migration: append a new one.
 */
import type pg from 'pg';
import { ConfigError } from '../../core/errors.js';
import { postgresCorrectionsSchema } from './corrections.js';

/** One step of the schema's history. `sql` receives the already-quoted schema name. */
export interface Migration {
  version: number;
  name: string;
  sql(schema: string): string;
}

/** The ordered migration list; versions are 1, 2, 3... with no gaps. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tool_executions and hourly rollups',
    // Mirrors the SQLite schema (sqlite/migrations.ts). Free-text columns are `text` rather than
    // seed 001's VARCHAR(n): a long custom failure type must not turn into an insert error that
    // the recorder would retry forever. duration_ms is double precision because runtimes measure
    // sub-millisecond durations. Rollup keys start with hour_ms, since every read is a time window.
    // idx_trace ends in execution_id, the order trace queries return.
    sql: (s) => `
      CREATE TABLE ${s}.tool_executions (
        execution_id uuid PRIMARY KEY,
        trace_id text NOT NULL,
        step_index integer NOT NULL,
        tool_name text NOT NULL,
        status text NOT NULL,
        failure_stage text,
        failure_category text,
        failure_type text,
        error_code text,
        input_params jsonb,
        params_hash text NOT NULL,
        raw_output text,
        output_length integer,
        error_message text,
        error_stack text,
        duration_ms double precision NOT NULL,
        retry_count integer NOT NULL DEFAULT 0,
        attempts jsonb NOT NULL,
        breaker_state text NOT NULL,
        idempotent boolean NOT NULL,
        fault jsonb,
        feedback jsonb,
        recovery text NOT NULL,
        fallback jsonb,
        context_snapshot jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        schema_version integer NOT NULL,
        summary_only boolean NOT NULL
      );
      CREATE INDEX idx_tool_status ON ${s}.tool_executions (tool_name, status);
      CREATE INDEX idx_failure_type ON ${s}.tool_executions (failure_type) WHERE status <> 'success';
      CREATE INDEX idx_created_at ON ${s}.tool_executions (created_at DESC);
      CREATE INDEX idx_input_params ON ${s}.tool_executions USING gin (input_params jsonb_path_ops);
      CREATE INDEX idx_trace ON ${s}.tool_executions (trace_id, execution_id);
      CREATE TABLE ${s}.rollup_hourly (
        hour_ms bigint NOT NULL,
        tool_name text NOT NULL,
        total bigint NOT NULL DEFAULT 0,
        success bigint NOT NULL DEFAULT 0,
        failure bigint NOT NULL DEFAULT 0,
        timeout bigint NOT NULL DEFAULT 0,
        rejected bigint NOT NULL DEFAULT 0,
        retried_calls bigint NOT NULL DEFAULT 0,
        retries bigint NOT NULL DEFAULT 0,
        breaker_trips bigint NOT NULL DEFAULT 0,
        param_validation_failures bigint NOT NULL DEFAULT 0,
        duration_sum double precision NOT NULL DEFAULT 0,
        PRIMARY KEY (hour_ms, tool_name)
      );
      CREATE TABLE ${s}.rollup_duration (
        hour_ms bigint NOT NULL,
        tool_name text NOT NULL,
        bucket integer NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (hour_ms, tool_name, bucket)
      );
      CREATE TABLE ${s}.rollup_failures (
        hour_ms bigint NOT NULL,
        tool_name text NOT NULL,
        failure_stage text NOT NULL,
        failure_category text NOT NULL,
        failure_type text NOT NULL,
        count bigint NOT NULL,
        PRIMARY KEY (hour_ms, tool_name, failure_stage, failure_category, failure_type)
      );
      CREATE TABLE ${s}.failure_signatures (
        signature text PRIMARY KEY,
        tool_name text NOT NULL,
        failure_stage text NOT NULL,
        failure_type text NOT NULL,
        error_code text,
        normalized_message text NOT NULL,
        first_seen_ms bigint NOT NULL,
        last_seen_ms bigint NOT NULL,
        count bigint NOT NULL
      );
      CREATE INDEX idx_signatures_last_seen ON ${s}.failure_signatures (last_seen_ms);
    `,
  },
  {
    version: 2,
    name: 'trajectories',
    // Mirrors SQLite's version 2. The trajectory is JSONB so that exports and annotators can
    // filter inside it; the unique (source, source_id) index makes re-imports no-ops.
    sql: (s) => `
      CREATE TABLE ${s}.trajectories (
        trajectory_id text PRIMARY KEY,
        source text NOT NULL,
        source_id text,
        task_description text,
        final_outcome text NOT NULL,
        created_at timestamptz NOT NULL,
        trajectory jsonb NOT NULL,
        step_count integer NOT NULL,
        failure_count integer NOT NULL
      );
      CREATE UNIQUE INDEX idx_trajectories_source ON ${s}.trajectories (source, source_id);
    `,
  },
  {
    version: 3,
    name: 'corrections',
    // The correction memory (seed 004 section 6); mirrors SQLite's version 3.
    sql: postgresCorrectionsSchema,
  },
  {
    version: 4,
    name: 'key order of arguments and trajectories',
    // jsonb stores an object's keys sorted (shortest first), so arguments read back from here came
    // out in another order than the model wrote them, and than SQLite returns them: training data
    // exported from PostgreSQL taught a different text. `input_params` stays jsonb for its GIN
    // index and gets a json copy that keeps the text; trajectories are read and written whole,
    // never searched inside, so their column becomes json. Rows stored before keep jsonb's order.
    sql: (s) => `
      ALTER TABLE ${s}.tool_executions ADD COLUMN input_params_json json;
      ALTER TABLE ${s}.trajectories ALTER COLUMN trajectory TYPE json USING trajectory::json;
    `,
  },
];

/** The version a fully migrated schema is at. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/**
 * Brings `schema` up to {@link LATEST_VERSION}. Concurrent callers (several processes starting
 * at once) serialize on a transaction-scoped advisory lock keyed by the schema name, so each
 * migration runs exactly once; the losers find the work done when they get the lock.
 *
 * @param schemaName the raw schema name, for the lock key and catalog lookups
 * @param quotedSchema the schema as a quoted identifier (see `quoteSchemaName`)
 * @returns the version the schema was at before
 * @throws ConfigError when the schema was migrated by a newer faultline (a higher version)
 */
export async function migrate(client: pg.ClientBase, schemaName: string, quotedSchema: string): Promise<number> {
  // Fast path without the lock or DDL: an up-to-date schema needs no CREATE privilege, which
  // application roles often lack.
  const current = await readVersion(client, quotedSchema, schemaName);
  if (current !== null) {
    assertNotNewer(current, schemaName);
    if (current === LATEST_VERSION) return current;
  }

  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('faultline.migrate'), hashtext($1))`, [schemaName]);
    const schemaExists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schemaName]);
    if (schemaExists.rowCount === 0) await client.query(`CREATE SCHEMA ${quotedSchema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${quotedSchema}.schema_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const locked = (await readVersion(client, quotedSchema, schemaName)) ?? 0;
    assertNotNewer(locked, schemaName);
    if (locked === 0) await assertNoOtherTables(client, schemaName);
    for (const migration of MIGRATIONS) {
      if (migration.version <= locked) continue;
      await client.query(migration.sql(quotedSchema));
      await client.query(`INSERT INTO ${quotedSchema}.schema_migrations (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
    }
    await client.query('COMMIT');
    return locked;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The columns of faultline's `schema_migrations`, in order. */
const MIGRATIONS_COLUMNS = ['version', 'name', 'applied_at'];

/**
 * The highest applied version, or null when the schema or its migrations table does not exist.
 * @param schemaName the raw schema name, for messages
 * @throws ConfigError when `schema_migrations` is another program's (golang-migrate's, Rails'...),
 * whose versions mean nothing to faultline
 */
export async function readVersion(client: pg.ClientBase, quotedSchema: string, schemaName: string): Promise<number | null> {
  const columns = await client.query<{ name: string; type: string }>(
    `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
      WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
    [`${quotedSchema}.schema_migrations`],
  );
  if (columns.rows.length === 0) return null;
  const names = columns.rows.map((c) => c.name);
  if (names.join() !== MIGRATIONS_COLUMNS.join() || columns.rows[0]?.type !== 'integer') {
    throw new ConfigError(
      `PostgreSQL schema "${schemaName}" is not a faultline store: its schema_migrations table (${names.join(', ')}) belongs to another program`,
      'schema',
    );
  }
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${quotedSchema}.schema_migrations`,
  );
  return result.rows[0]?.version ?? 0;
}

/**
 * Refuses to add faultline's tables to a schema that holds another application's: its tables,
 * views and sequences would be mixed with faultline's, and `?schema=public` is an easy slip.
 */
async function assertNoOtherTables(client: pg.ClientBase, schemaName: string): Promise<void> {
  const others = await client.query<{ name: string; total: string }>(
    `SELECT c.relname AS name, count(*) OVER () AS total FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname <> 'schema_migrations'
      ORDER BY c.relname LIMIT 5`,
    [schemaName],
  );
  if (others.rows.length === 0) return;
  const more = Number(others.rows[0]?.total ?? 0) - others.rows.length;
  const names = others.rows.map((r) => r.name).join(', ') + (more > 0 ? ` and ${more} more` : '');
  throw new ConfigError(
    `PostgreSQL schema "${schemaName}" is not a faultline store (it holds other tables: ${names}); give faultline a schema of its own (?schema=NAME)`,
    'schema',
  );
}

/** @throws ConfigError when the schema was migrated by a newer faultline. */
export function assertNotNewer(version: number, schemaName: string): void {
  if (version > LATEST_VERSION) {
    throw new ConfigError(
      `PostgreSQL schema "${schemaName}" is at version ${version}, newer than this faultline supports (${LATEST_VERSION}); upgrade faultline`,
      'schema',
    );
  }
}
