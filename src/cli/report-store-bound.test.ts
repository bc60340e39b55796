/**
 * The reporting commands, and those that add to stored data, over a PostgreSQL store that does not
 * answer (a table another session keeps locked, a server that stops answering) or fails (its
 * backend terminated, the server gone, a role that may not read), and over a SQLite file another
 * connection locks. Each one-shot command ends with one line naming the store, "cannot read" or
 * "cannot write to", and exit 2 (for `alerts`, not the 1 that means "firing"); the servers answer
 * the request's error and keep serving. Reads are bounded at {@link BOUND_MS} through the
 * environment variable.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { blindRetry, failedTask, recovered } from '../dataset/dataset.test-helpers.js';
import { monitorDataset } from '../monitor/monitor-dataset.test-helpers.js';
import { displayStoreSpec } from '../store/open-store.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { describePostgres, lockStoreTables, PG_URL, startPostgresProxy, useTestSchema, useTestSchemas } from '../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Trajectory } from '../core/trajectory-types.js';
import { READ_TIMEOUT_ENV } from './report-options.js';
import { runCli } from './run-cli.js';
import { captureIo, waitFor, writeStoreFile, type CliRun } from './run-cli.test-helpers.js';

// Long enough that a statement on these small tables never needs it on a loaded machine (CI runs
// two test files at once), so only the locks and the silent server below meet it.
const BOUND_MS = 1000;
const dir = mkdtempSync(join(tmpdir(), 'faultline-report-bound-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `faultline <argv>` in-process, with `env` as its environment (reads bounded at BOUND_MS unless it says otherwise). */
function startBounded(argv: readonly string[], env: Record<string, string> = { [READ_TIMEOUT_ENV]: String(BOUND_MS) }) {
  let stop!: () => void;
  const captured = captureIo(dir, new Promise<void>((resolve) => (stop = resolve)));
  Object.assign(captured.io.env, env);
  return { captured, exit: runCli(argv, captured.io), stop };
}

async function runBounded(argv: readonly string[], env?: Record<string, string>): Promise<CliRun> {
  const { captured, exit } = startBounded(argv, env);
  const code = await exit;
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

describe(READ_TIMEOUT_ENV, () => {
  it('is read as milliseconds: anything else is one line and exit 2', async () => {
    const db = await writeStoreFile(join(dir, 'agents.db'), monitorDataset());
    for (const text of ['abc', '-1', '1.5']) {
      expect(await runBounded(['stats', '--db', db], { [READ_TIMEOUT_ENV]: text })).toStrictEqual({
        code: 2,
        stdout: '',
        stderr: `faultline: invalid ${READ_TIMEOUT_ENV} ${JSON.stringify(text)}: expected an integer from 0 to 86400000\n`,
      });
    }
    expect((await runBounded(['stats', '--db', db], { [READ_TIMEOUT_ENV]: '0' })).code).toBe(0);
  });
});

/** A proxy to the test server that goes silent at the first statement reading the rollups, and the store's URL through it. */
async function silencedAtRollups(schema: string) {
  const target = new URL(PG_URL);
  const proxy = await startPostgresProxy(target.hostname, target.port === '' ? 5432 : Number(target.port), { silenceOn: 'rollup_' });
  target.hostname = '127.0.0.1';
  target.port = String(proxy.port);
  target.searchParams.set('schema', schema);
  return { proxy, url: target.toString() };
}

const describePg = await describePostgres('the bounded reads of the reporting commands');

describePg('reporting commands over a PostgreSQL store that does not answer', () => {
  const { schema, url: plainUrl } = useTestSchema('report_bound');
  // With a password (the test server does not ask for one), which messages must not show.
  const url = (() => {
    const withPassword = new URL(plainUrl);
    if (withPassword.password === '') withPassword.password = 'pg-secret';
    return withPassword.toString();
  })();
  const password = new URL(url).password;
  beforeAll(async () => {
    const store = await createPostgresStore({ url: PG_URL, schema });
    await store.insert(monitorDataset());
    await store.insertTrajectories?.([blindRetry(), recovered(), failedTask()]);
    await store.close();
  });
  const noAnswer = (spec: string, why: string) => `${displayStoreSpec(spec)}: no answer within ${BOUND_MS / 1000} s (${why})`;
  const locked = noAnswer(url, 'a lock held by another session?');
  it('shows the store with its password masked', () => {
    expect(locked).toContain(':***@');
    expect(locked).not.toContain(password);
  });

  const out = join(dir, 'train.jsonl');
  // The day monitorDataset's calls are dated, up to 14:30, where its alerts fire.
  const DATA_DAY = ['--since', '2026-03-29T00:00Z', '--until', '2026-03-29T14:30Z'];
  it.each([
    ['stats', ['stats', '--db', url, ...DATA_DAY]],
    ['alerts', ['alerts', '--db', url, ...DATA_DAY]],
    ['export', ['export', '--db', url, '--format', 'sft', '--out', out]],
    ['annotate', ['annotate', '--db', url]],
    ['corrections', ['corrections', '--db', url]],
    ['corrections --learn', ['corrections', '--db', url, '--learn']],
  ])('%s, behind tables another session keeps locked, ends with one line and exit 2; without the lock it reads', async (_name, argv) => {
    const before = readdirSync(dir);
    const lock = await lockStoreTables(schema);
    try {
      expect(await runBounded(argv)).toStrictEqual({ code: 2, stdout: '', stderr: `faultline: cannot read the store: ${locked}\n` });
      // Nothing partial: export's files (and their temporary files) are not there.
      expect(readdirSync(dir)).toStrictEqual(before);
    } finally {
      await lock.release();
    }
    const run = await runBounded(argv);
    expect(run.stderr).toBe('');
    // alerts exits 1: the data set's alerts fire.
    expect(run.code).toBe(argv[0] === 'alerts' ? 1 : 0);
    expect(run.stdout).not.toBe('');
  });

  it('annotate migrates an older store without the bound: a migration may take longer than a read', async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    const migrator = new pg.Client({ connectionString: PG_URL });
    await Promise.all([admin.connect(), migrator.connect()]);
    const migrations = `${pg.escapeIdentifier(schema)}.schema_migrations`;
    const latest = (await admin.query<{ v: number }>(`SELECT max(version) AS v FROM ${migrations}`)).rows[0]!.v;
    try {
      // The store is older, and another process is migrating it (it holds the migration lock): annotate waits for it.
      await admin.query(`DELETE FROM ${migrations} WHERE version = $1`, [latest]);
      await migrator.query('BEGIN');
      await migrator.query(`SELECT pg_advisory_xact_lock(hashtext('faultline.migrate'), hashtext($1))`, [schema]);
      const annotate = runBounded(['annotate', '--db', url]);
      await vi.waitFor(
        async () => expect((await admin.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%pg_advisory_xact_lock%' AND pid <> pg_backend_pid()")).rowCount).toBe(1),
        { timeout: 10_000, interval: 20 },
      );
      // Longer than the bound, which would have cancelled the wait; then the other process is done.
      await new Promise((resolve) => setTimeout(resolve, 3 * BOUND_MS));
      await migrator.query(`INSERT INTO ${migrations} (version, name) VALUES ($1, 'restored')`, [latest]);
      await migrator.query('COMMIT');
      const run = await annotate;
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
    } finally {
      await migrator.query('ROLLBACK').catch(() => undefined);
      await admin.query(`INSERT INTO ${migrations} (version, name) VALUES ($1, 'restored') ON CONFLICT DO NOTHING`, [latest]);
      await Promise.all([admin.end(), migrator.end()]);
    }
  });

  it('alerts, when the server stops answering once the store is open, ends with one line and exit 2', async () => {
    // The server answers the open, then nothing from the first statement reading the rollups.
    const { proxy, url: silent } = await silencedAtRollups(schema);
    try {
      expect(await runBounded(['alerts', '--db', silent])).toStrictEqual({
        code: 2,
        stdout: '',
        stderr: `faultline: cannot read the store: ${noAnswer(silent, 'the server is not answering')}\n`,
      });
    } finally {
      await proxy.stop();
    }
  });

  /** Starts `faultline <command> --port 0 --json` over the store; its URL, and how to stop it. */
  async function serve(command: 'dashboard' | 'metrics') {
    const server = startBounded([command, '--db', url, '--port', '0', '--json', ...(command === 'dashboard' ? ['--since', '2026-03-29T00:00Z'] : [])]);
    const line = await waitFor(() => server.captured.stdout().split('\n')[0] || undefined, `${command} to listen`);
    return { ...server, url: (JSON.parse(line) as { url: string }).url };
  }

  it('dashboard: an API read behind a lock answers 503 with the error as JSON, and the next read works', async () => {
    const dashboard = await serve('dashboard');
    try {
      const lock = await lockStoreTables(schema);
      try {
        const response = await fetch(new URL('/api/stats', dashboard.url));
        expect(response.status).toBe(503);
        expect(await response.json()).toStrictEqual({ error: `the store could not be read: ${locked}` });
      } finally {
        await lock.release();
      }
      const response = await fetch(new URL('/api/stats', dashboard.url));
      expect(response.status).toBe(200);
      expect(((await response.json()) as { tools: unknown[] }).tools).not.toHaveLength(0);
    } finally {
      dashboard.stop();
    }
    expect(await dashboard.exit).toBe(0);
    expect(dashboard.captured.stderr()).toBe(`faultline dashboard: /api/stats: ${locked}\n`);
  });

  it('metrics: a scrape behind a lock answers 500 with one line, and the next scrape works', async () => {
    const metrics = await serve('metrics');
    try {
      const lock = await lockStoreTables(schema);
      try {
        const response = await fetch(metrics.url);
        expect(response.status).toBe(500);
        expect(await response.text()).toBe(`faultline metrics unavailable: ${locked}\n`);
      } finally {
        await lock.release();
      }
      const response = await fetch(metrics.url);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('tool=');
    } finally {
      metrics.stop();
    }
    expect(await metrics.exit).toBe(0);
    expect(metrics.captured.stderr()).toBe('');
  });
});

/** A trajectory whose first step a judge labelled, for review. */
function judged(): Trajectory {
  return { ...recovered(), labels: [{ name: 'semantic_error', step_index: 1, confidence: 0.7, reason: 'judged', source: 'judge:heuristic' }] };
}

/** The backends of faultline's own connections (the store's application_name) whose statement names `schema` and waits on a lock. */
async function waitingBackends(admin: pg.Client, schema: string): Promise<number[]> {
  const result = await admin.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE application_name = 'faultline' AND wait_event_type = 'Lock' AND position($1 IN query) > 0",
    [schema],
  );
  return result.rows.map((row) => row.pid);
}

describePg('reporting commands over a PostgreSQL store that fails', () => {
  const nextSchema = useTestSchemas('report_fails');
  /** A store of its own, holding monitorDataset's calls and `trajectories`, with a password in its URL that the messages must mask. */
  async function storeWith(trajectories: readonly Trajectory[] = [blindRetry(), recovered(), failedTask()]) {
    const { schema, url: plain } = nextSchema();
    const store = await createPostgresStore({ url: PG_URL, schema });
    await store.insert(monitorDataset());
    await store.insertTrajectories(trajectories);
    await store.close();
    const url = new URL(plain);
    if (url.password === '') url.password = 'pg-secret';
    return { schema, url: url.toString() };
  }
  const fails = (url: string, what: 'read' | 'write to', why: string) => ({ code: 2, stdout: '', stderr: `faultline: cannot ${what} the store: ${displayStoreSpec(url)}: ${why}\n` });

  it('alerts, its backend terminated while a lock holds its read, ends with one line and exit 2, not the 1 of "firing"', async () => {
    const { schema, url } = await storeWith();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const lock = await lockStoreTables(schema);
    try {
      // The default bound (30 s): the backend is terminated long before.
      const alerts = runBounded(['alerts', '--db', url, '--since', '2026-03-29T00:00Z', '--until', '2026-03-29T14:30Z'], {});
      const pids = await vi.waitFor(
        async () => {
          const waiting = await waitingBackends(admin, schema);
          expect(waiting).not.toHaveLength(0);
          return waiting;
        },
        { timeout: 10_000, interval: 20 },
      );
      for (const pid of pids) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await alerts).toStrictEqual(fails(url, 'read', 'terminating connection due to administrator command'));
    } finally {
      await lock.release();
      await admin.end();
    }
  });

  it('stats, when the server goes away in the middle of a read, ends with one line and exit 2', async () => {
    const { schema } = await storeWith();
    const { proxy, url: gone } = await silencedAtRollups(schema);
    try {
      // No bound: only the lost connection ends the read.
      const stats = runBounded(['stats', '--db', gone, '--since', '2026-03-29T00:00Z'], { [READ_TIMEOUT_ENV]: '0' });
      await waitFor(() => (proxy.silenced > 0 ? true : undefined), 'the read of the rollups');
      await proxy.stop();
      expect(await stats).toStrictEqual(fails(gone, 'read', 'Connection terminated unexpectedly'));
    } finally {
      await proxy.stop();
    }
  });

  it.each([
    ['stats', ['stats', '--since', '2026-03-29T00:00Z'], 'rollup_hourly'],
    ['alerts', ['alerts', '--since', '2026-03-29T00:00Z', '--until', '2026-03-29T14:30Z'], 'rollup_hourly'],
    ['export', ['export', '--format', 'sft', '--out', join(dir, 'denied.jsonl')], 'trajectories'],
  ])('%s, as a role that may not read the tables, ends with one line and exit 2, writing nothing', async (_name, [command, ...args], table) => {
    const { schema, url } = await storeWith();
    const role = `${schema}_reader`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      // It may open the store (the schema and its version), and read nothing else.
      await admin.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN`);
      await admin.query(`GRANT USAGE ON SCHEMA ${pg.escapeIdentifier(schema)} TO ${pg.escapeIdentifier(role)}`);
      await admin.query(`GRANT SELECT ON ${pg.escapeIdentifier(schema)}.schema_migrations TO ${pg.escapeIdentifier(role)}`);
      const asRole = new URL(url);
      asRole.username = role;
      const before = readdirSync(dir);
      expect(await runBounded([command!, '--db', asRole.toString(), ...args])).toStrictEqual(fails(asRole.toString(), 'read', `permission denied for table ${table}`));
      expect(readdirSync(dir)).toStrictEqual(before);
    } finally {
      await admin.query(`DROP OWNED BY ${pg.escapeIdentifier(role)}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${pg.escapeIdentifier(role)}`);
      await admin.end();
    }
  });

  it.each([
    ['annotate', ['annotate']],
    ['corrections --learn', ['corrections', '--learn']],
    ['augment', ['augment']],
    ['prune', ['prune', '--older-than', '30d']],
  ])('%s, whose writes wait on a lock another session holds, says it cannot write to the store', async (_name, args) => {
    const { schema, url } = await storeWith();
    // Reads go on; inserts and updates wait.
    const lock = await lockStoreTables(schema, 'EXCLUSIVE');
    try {
      expect(await runBounded([...args, '--db', url])).toStrictEqual(fails(url, 'write to', `no answer within ${BOUND_MS / 1000} s (a lock held by another session?)`));
    } finally {
      await lock.release();
    }
    const run = await runBounded([...args, '--db', url]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });

  /** `faultline review --share 1` answering `answers`, reads bounded at BOUND_MS. */
  async function review(url: string, answers: string): Promise<CliRun> {
    const { captured, exit } = startBounded(['review', '--db', url, '--share', '1']);
    captured.io.stdin = Readable.from([answers]);
    const code = await exit;
    return { code, stdout: captured.stdout(), stderr: captured.stderr() };
  }

  it('augment and review, behind tables another session keeps locked, end with one line and exit 2', async () => {
    const { schema, url } = await storeWith([blindRetry(), judged()]);
    const lock = await lockStoreTables(schema);
    try {
      const locked = fails(url, 'read', `no answer within ${BOUND_MS / 1000} s (a lock held by another session?)`);
      expect(await runBounded(['augment', '--db', url])).toStrictEqual(locked);
      expect(await review(url, 'a\n')).toStrictEqual(locked);
    } finally {
      await lock.release();
    }
    const run = await review(url, 'a\n');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('reviewed 1: 1 accepted');
  });

  it('review, when the decision cannot be saved for a lock, says it cannot write to the store', async () => {
    const { schema, url } = await storeWith([judged()]);
    const lock = await lockStoreTables(schema, 'EXCLUSIVE');
    try {
      const run = await review(url, 'a\n');
      expect(run.stderr).toBe(`faultline: cannot write to the store: ${displayStoreSpec(url)}: no answer within ${BOUND_MS / 1000} s (a lock held by another session?)\n`);
      expect(run.code).toBe(2);
    } finally {
      await lock.release();
    }
  });
});

describe('reporting commands over a SQLite store that fails', () => {
  it('review, whose store another connection locks for writing once it is open, says it cannot write to the store', async () => {
    const db = join(dir, 'write-locked.db');
    const store = createSqliteStore({ path: db });
    await store.insertTrajectories([judged()]);
    await store.close();
    const other = new Database(db);
    try {
      const { captured, exit } = startBounded(['review', '--db', db, '--share', '1'], {});
      const answers = new PassThrough();
      captured.io.stdin = answers;
      // The store is open, and the decision is yet to be saved: then another connection takes the write lock.
      await waitFor(() => (captured.stdout().includes('accept [a]') ? true : undefined), 'review to ask');
      other.exec('BEGIN IMMEDIATE');
      answers.end('a\n');
      expect(await exit).toBe(2);
      expect(captured.stderr()).toBe(`faultline: cannot write to the store: ${db}: database is locked\n`);
    } finally {
      other.close();
    }
  });
});
