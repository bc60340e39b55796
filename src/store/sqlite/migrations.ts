/**
 * Versioned SQLite schema. Migrations are an ordered list; `schema_migrations` records which ones
 * a database has. Opening a database applies the missing ones in one transaction, and refuses a
 * database written by a newer faultline instead of guessing at its schema.
 */
import type { Database } from 'better-sqlite3';
import { ConfigError } from '../../core/errors.js';
import { SQLITE_CORRECTIONS_SCHEMA } from './corrections.js';

/** One schema step. `up` runs inside the migration transaction; it must not manage transactions. */
export interface SqliteMigration {
  version: number;
  name: string;
  up: string | ((db: Database) => void);
}

const COUNTER_COLUMNS = `
  total INTEGER NOT NULL DEFAULT 0,
  success INTEGER NOT NULL DEFAULT 0,
  failure INTEGER NOT NULL DEFAULT 0,
  timeout INTEGER NOT NULL DEFAULT 0,
  rejected INTEGER NOT NULL DEFAULT 0,
  retried_calls INTEGER NOT NULL DEFAULT 0,
  retries INTEGER NOT NULL DEFAULT 0,
  breaker_trips INTEGER NOT NULL DEFAULT 0,
  param_validation_failures INTEGER NOT NULL DEFAULT 0,
  duration_sum REAL NOT NULL DEFAULT 0`;

/**
 * Version 1: seed 001's `tool_executions` table (every record field; JSON as TEXT), its three
 * indexes, and the hourly rollups. `created_ms` duplicates `created_at` as epoch ms so that time
 * ranges are integer index scans; seed 001's `created_at DESC` index lives on it.
 */
const V1_INITIAL = `
CREATE TABLE tool_executions (
  execution_id TEXT PRIMARY KEY,
  trace_id TEXT NOT NULL,
  step_index INTEGER NOT NULL,
  tool_name TEXT NOT NULL,
  status TEXT NOT NULL,
  failure_stage TEXT,
  failure_category TEXT,
  failure_type TEXT,
  error_code TEXT,
  input_params TEXT,
  params_hash TEXT NOT NULL,
  raw_output TEXT,
  output_length INTEGER,
  error_message TEXT,
  error_stack TEXT,
  duration_ms REAL NOT NULL,
  retry_count INTEGER NOT NULL DEFAULT 0,
  attempts TEXT NOT NULL,
  breaker_state TEXT NOT NULL,
  idempotent INTEGER NOT NULL,
  fault TEXT,
  feedback TEXT,
  recovery TEXT NOT NULL,
  fallback TEXT,
  context_snapshot TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  schema_version INTEGER NOT NULL,
  summary_only INTEGER NOT NULL
);
CREATE INDEX idx_tool_status ON tool_executions (tool_name, status);
CREATE INDEX idx_failure_type ON tool_executions (failure_type) WHERE status != 'success';
CREATE INDEX idx_created_at ON tool_executions (created_ms DESC);
CREATE INDEX idx_trace ON tool_executions (trace_id, step_index);

CREATE TABLE rollup_hourly (
  hour_ms INTEGER NOT NULL,
  tool_name TEXT NOT NULL,${COUNTER_COLUMNS},
  PRIMARY KEY (hour_ms, tool_name)
) WITHOUT ROWID;

CREATE TABLE rollup_duration (
  hour_ms INTEGER NOT NULL,
  tool_name TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (hour_ms, tool_name, bucket)
) WITHOUT ROWID;

CREATE TABLE rollup_failures (
  hour_ms INTEGER NOT NULL,
  tool_name TEXT NOT NULL,
  failure_stage TEXT NOT NULL,
  failure_category TEXT NOT NULL,
  failure_type TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (hour_ms, tool_name, failure_stage, failure_category, failure_type)
) WITHOUT ROWID;

CREATE TABLE failure_signatures (
  signature TEXT PRIMARY KEY,
  tool_name TEXT NOT NULL,
  failure_stage TEXT NOT NULL,
  failure_type TEXT NOT NULL,
  error_code TEXT,
  normalized_message TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  count INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_signatures_last_seen ON failure_signatures (last_seen_ms);
`;

/**
 * Version 2: trajectories (seed 000 section 3). The whole trajectory is one JSON text; the
 * columns beside it are what listing and filtering read. The unique (source, source_id) index
 * is what makes re-importing a file a no-op (SQLite treats NULL source_ids as distinct; those
 * trajectories are deduplicated by their content-derived id instead).
 */
const V2_TRAJECTORIES = `
CREATE TABLE trajectories (
  trajectory_id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  source_id TEXT,
  task_description TEXT,
  final_outcome TEXT NOT NULL,
  created_at TEXT NOT NULL,
  trajectory TEXT NOT NULL,
  step_count INTEGER NOT NULL,
  failure_count INTEGER NOT NULL
);
CREATE UNIQUE INDEX idx_trajectories_source ON trajectories (source, source_id);
`;

/** Every migration faultline knows, oldest first. Append only; never edit a released one. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  { version: 1, name: 'initial schema', up: V1_INITIAL },
  { version: 2, name: 'trajectories', up: V2_TRAJECTORIES },
  // The correction memory (seed 004 section 6); the schema lives beside its SQL in corrections.ts.
  { version: 3, name: 'corrections', up: SQLITE_CORRECTIONS_SCHEMA },
];

const MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
)`;

function assertWellFormed(migrations: readonly SqliteMigration[]): void {
  migrations.forEach((m, i) => {
    // A gap or reordering is a programming error in this package, not a user's configuration.
    if (m.version !== i + 1) throw new Error(`SQLite migration #${i} has version ${m.version}, expected ${i + 1}`);
  });
}

/** The columns of faultline's `schema_migrations`, in order. */
const MIGRATIONS_COLUMNS = ['version', 'name', 'applied_at'];

/**
 * The schema version recorded in `db` (0 for a database faultline has never touched).
 * @throws ConfigError when `schema_migrations` is another program's (golang-migrate's, Rails'...),
 * whose versions mean nothing to faultline.
 */
export function schemaVersion(db: Database, location = 'database'): number {
  const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get();
  if (table === undefined) return 0;
  const columns = (db.prepare(`SELECT name FROM pragma_table_info('schema_migrations') ORDER BY cid`).all() as { name: string }[]).map((c) => c.name);
  const row = db.prepare('SELECT max(version) AS v FROM schema_migrations').get() as { v: unknown };
  const version = row.v ?? 0;
  if (columns.join() !== MIGRATIONS_COLUMNS.join() || !Number.isSafeInteger(version)) {
    throw new ConfigError(
      `SQLite file ${location} is not a faultline store: its schema_migrations table (${columns.join(', ')}) belongs to another program`,
      'store',
    );
  }
  return version as number;
}

/** Tables and views of `db` that are not faultline's schema_migrations (SQLite's own excluded). */
function otherTables(db: Database): string[] {
  const rows = db
    .prepare(`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name != 'schema_migrations' ORDER BY name`)
    .all() as { name: string }[];
  return rows.map((r) => r.name);
}

/** Lists at most a few names, so that a large schema still makes a one-line message. */
function someNames(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

function newerVersionError(location: string, found: number, latest: number): ConfigError {
  return new ConfigError(
    `SQLite store ${location} has schema version ${found}, newer than this faultline supports (${latest}); upgrade faultline to open it`,
    'store',
  );
}

/**
 * Brings `db` up to the latest version in `migrations`, applying the missing ones in a single
 * IMMEDIATE transaction (so two processes opening a new database do not both migrate it).
 * Returns the versions applied. `location` names the database in error messages.
 * @throws ConfigError when the database is newer than `migrations`, or is not faultline's (another
 * program's `schema_migrations`, or tables of another application in a database faultline never
 * migrated).
 */
export function migrate(db: Database, location: string, migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS): number[] {
  assertWellFormed(migrations);
  const latest = migrations.length;
  const applied: number[] = [];
  const run = db.transaction(() => {
    const current = schemaVersion(db, location);
    if (current > latest) throw newerVersionError(location, current, latest);
    if (current === 0) {
      // Another application's database: faultline's tables would be mixed into it.
      const others = otherTables(db);
      if (others.length > 0) {
        throw new ConfigError(
          `SQLite file ${location} is not a faultline store (it holds other tables: ${someNames(others)}); give faultline a file of its own`,
          'store',
        );
      }
    }
    db.exec(MIGRATIONS_TABLE);
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of migrations.slice(current)) {
      if (typeof m.up === 'string') db.exec(m.up);
      else m.up(db);
      record.run(m.version, m.name, new Date().toISOString());
      applied.push(m.version);
    }
  });
  run.immediate();
  return applied;
}

/**
 * For read-only opens, which cannot migrate: checks that `db` is exactly at the latest version.
 * @throws ConfigError when it is not a faultline store, older (naming the fix) or newer.
 */
export function assertCurrent(db: Database, location: string, migrations: readonly SqliteMigration[] = SQLITE_MIGRATIONS): void {
  assertWellFormed(migrations);
  const latest = migrations.length;
  const current = schemaVersion(db, location);
  if (current > latest) throw newerVersionError(location, current, latest);
  // Version 0 is a database faultline never wrote (another program's, or an empty file): telling
  // the user to migrate it would add faultline's tables to it.
  if (current === 0) throw new ConfigError(`SQLite file ${location} is not a faultline store (it has none of faultline's tables)`, 'store');
  if (current < latest) {
    throw new ConfigError(
      `SQLite store ${location} has schema version ${current}, older than ${latest}; open it once without readonly to migrate it`,
      'store',
    );
  }
}
