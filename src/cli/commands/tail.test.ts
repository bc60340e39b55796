import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monitorDataset } from '../../monitor/monitor-dataset.test-helpers.js';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createPostgresStore } from '../../store/postgres/postgres-store.js';
import { describePostgres, PG_URL, useTestSchema } from '../../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCli } from '../run-cli.js';
import { captureIo, runCapture, waitFor, writeStoreFile } from '../run-cli.test-helpers.js';
import { compileCli } from './compiled-cli.test-helpers.js';
import { formatTailLine, parseInterval, readBound } from './tail.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-tail-'));
const records = monitorDataset();
const failures = records.filter((r) => r.status !== 'success');
let db: string;
beforeAll(async () => {
  db = await writeStoreFile(join(dir, 'agents.db'), records);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (text: string) => text.split('\n').filter((l) => l !== '');

/**
 * A failure made at `ms` by another process: its UUIDv7 is of `ms` itself (this process's
 * `uuidv7` never goes back in time, so it could not make an id older than one it made).
 */
const failure = (ms: number, tool: string, n: number): ToolExecutionRecord => {
  const hex = ms.toString(16).padStart(12, '0');
  const record = makeFailureRecord({ tool_name: tool, failure_stage: 'execution', failure_category: 'network', failure_type: 'connection_reset', error_code: 'ECONNRESET', created_at: new Date(ms).toISOString() });
  return { ...record, execution_id: `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${String(n).padStart(12, '0')}` };
};

describe('faultline tail', () => {
  it('prints the latest failures, oldest first, one line each', async () => {
    const run = await runCapture(['tail', '--db', db, '--once'], dir);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(lines(run.stdout)).toStrictEqual(failures.slice(-10).map(formatTailLine));
    expect(lines(run.stdout).at(-1)).toBe(
      '2026-03-29T14:27:00.000Z  search_flights  rejected  execution/system/circuit_open  CIRCUIT_OPEN  0ms  breaker=open  circuit open for search_flights',
    );
    expect(lines(run.stdout)[0]).toBe(
      '2026-03-29T13:18:00.000Z  search_flights  failure  execution/rate_limit/rate_limited  HTTP_429  900ms  retries=1  429 Too Many Requests',
    );
  });

  it('filters by tool, includes successes with --all, and prints JSON lines', async () => {
    const email = await runCapture(['tail', '--db', db, '--once', '--tool', 'send_email'], dir);
    expect(lines(email.stdout)).toStrictEqual(failures.filter((r) => r.tool_name === 'send_email').map(formatTailLine));
    expect(lines(email.stdout)).toHaveLength(2);

    const all = await runCapture(['tail', '--db', db, '--once', '--all', '-n', '3'], dir);
    expect(lines(all.stdout)).toStrictEqual(records.slice(-3).map(formatTailLine));
    expect(lines(all.stdout)[0]).toBe('2026-03-29T14:18:30.000Z  get_weather  success  55ms');

    const json = await runCapture(['tail', '--db', db, '--once', '--json', '-n', '2'], dir);
    expect(lines(json.stdout).map((l) => JSON.parse(l) as ToolExecutionRecord)).toStrictEqual(failures.slice(-2));
  });

  it('follows new failures as they are stored, until --limit', async () => {
    const path = await writeStoreFile(join(dir, 'follow.db'), records);
    const captured = captureIo(dir);
    const running = runCli(['tail', '--db', path, '-n', '1', '--limit', '4', '--interval', '20ms'], captured.io);
    // The existing newest failure is printed first; only then is the follow cursor fixed.
    await waitFor(() => (lines(captured.stdout()).length === 1 ? true : undefined), 'the backlog line');

    const t = Date.UTC(2026, 2, 29, 14, 40);
    const fresh = [
      makeRecord({ tool_name: 'get_weather', created_at: new Date(t).toISOString() }),
      makeFailureRecord({ tool_name: 'get_weather', failure_stage: 'execution', failure_category: 'network', failure_type: 'connection_refused', error_code: 'ECONNREFUSED', error_message: 'connect ECONNREFUSED 10.0.0.7:443', created_at: new Date(t + 1000).toISOString() }),
      makeRecord({ tool_name: 'search_flights', created_at: new Date(t + 2000).toISOString() }),
      makeFailureRecord({ tool_name: 'search_flights', status: 'timeout', failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', error_code: 'TIMEOUT', created_at: new Date(t + 3000).toISOString() }),
      makeFailureRecord({ tool_name: 'create_order', status: 'rejected', failure_stage: 'param_validation', failure_category: 'parameter', failure_type: 'type_mismatch', error_code: null, created_at: new Date(t + 4000).toISOString() }),
      makeFailureRecord({ tool_name: 'create_order', failure_stage: 'execution', failure_category: 'business', failure_type: 'conflict', created_at: new Date(t + 5000).toISOString() }),
    ];
    const writer = createSqliteStore({ path });
    // Two batches, so that the follower sees the store grow between polls.
    await writer.insert(fresh.slice(0, 2));
    await waitFor(() => (lines(captured.stdout()).length === 2 ? true : undefined), 'the first new failure');
    await writer.insert(fresh.slice(2));
    await writer.close();

    expect(await running).toBe(0);
    expect(lines(captured.stdout())).toStrictEqual([failures.at(-1)!, fresh[1]!, fresh[3]!, fresh[4]!].map(formatTailLine));
    expect(captured.stderr()).toBe('');
  });

  it('prints a failure stored late by another process, with an id older than one already printed', async () => {
    const path = await writeStoreFile(join(dir, 'late.db'), records);
    const captured = captureIo(dir);
    const running = runCli(['tail', '--db', path, '-n', '0', '--limit', '2', '--interval', '20ms'], captured.io);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const t = Date.UTC(2026, 2, 29, 15, 0);
    // Two agent processes: one flushes its batch at once, the other 2 s later (its recorder's
    // interval, a store that was briefly down). Ids are UUIDv7 of when each call was made.
    const early = failure(t + 2000, 'fast_agent_tool', 1);
    const late = failure(t, 'slow_agent_tool', 2);
    const writer = createSqliteStore({ path });
    await writer.insert([early]);
    await waitFor(() => (lines(captured.stdout()).length === 1 ? true : undefined), 'the first failure');
    await writer.insert([late]);
    await writer.close();
    expect(await running).toBe(0);
    expect(lines(captured.stdout())).toStrictEqual([early, late].map(formatTailLine));
  });

  it('keeps following after a record dated in the future (a host whose clock runs ahead)', async () => {
    const path = await writeStoreFile(join(dir, 'skew.db'), records);
    const captured = captureIo(dir);
    const running = runCli(['tail', '--db', path, '-n', '0', '--limit', '3', '--interval', '20ms'], captured.io);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const writer = createSqliteStore({ path });
    const ahead = failure(Date.now() + 60_000, 'skewed_host_tool', 1);
    await writer.insert([ahead]);
    await waitFor(() => (lines(captured.stdout()).length === 1 ? true : undefined), 'the future-dated failure');
    const current = failure(Date.now(), 'on_time_tool', 2);
    const slightlyLate = failure(Date.now() - 5000, 'late_tool', 3);
    // One batch, so one poll sees both, in id order.
    await writer.insert([current, slightlyLate]);
    await writer.close();
    expect(await running).toBe(0);
    expect(lines(captured.stdout())).toStrictEqual([ahead, slightlyLate, current].map(formatTailLine));
  });

  it('follows a SQLite file by name: deleted, it is unreachable; replaced, the new file is followed', async () => {
    const path = await writeStoreFile(join(dir, 'replaced.db'), records);
    const captured = captureIo(dir);
    const running = runCli(['tail', '--db', path, '-n', '0', '--limit', '1', '--interval', '20ms'], captured.io);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // tail's open connection would go on reading the deleted file, which nothing writes to any more.
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
    await waitFor(() => (captured.stderr().includes('\n') ? true : undefined), 'the warning');
    expect(captured.stderr()).toBe(`faultline: store unreachable, retrying (backing off up to 30s): ${path} was removed\n`);
    // A recorder creates the store again and stores a failure in it.
    const fresh = failure(Date.now(), 'after_replace', 1);
    await writeStoreFile(path, [fresh]);
    expect(await running).toBe(0);
    expect(lines(captured.stdout())).toStrictEqual([formatTailLine(fresh)]);
    expect(lines(captured.stderr())).toStrictEqual([
      `faultline: store unreachable, retrying (backing off up to 30s): ${path} was removed`,
      'faultline: store reachable again, following',
    ]);
  });

  it('stops on Ctrl-C', async () => {
    let interrupt!: () => void;
    const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
    const captured = captureIo(dir, interrupted);
    const running = runCli(['tail', '--db', db, '-n', '0', '--interval', '10s'], captured.io);
    setTimeout(interrupt, 50);
    const started = Date.now();
    expect(await running).toBe(0);
    // It did not sit out the 10 s poll interval.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(captured.stdout()).toBe('');
  });

  it.each([
    [['--interval', 'fast'], 'faultline: invalid --interval "fast": expected a duration from 10ms to 1h, like 500ms, 30s or 5m'],
    [['--interval', '1ms'], 'faultline: invalid --interval "1ms": expected a duration from 10ms to 1h, like 500ms, 30s or 5m'],
    [['--limit', '0'], 'faultline: invalid --limit "0": expected an integer >= 1'],
    [['--lines', '-1'], 'faultline: invalid --lines "-1": expected an integer >= 0'],
  ])('refuses %j with one line and exit 2', async (args, message) => {
    expect(await runCapture(['tail', '--db', db, '--once', ...args], dir)).toStrictEqual({ code: 2, stdout: '', stderr: `${message}\n` });
  });

  it('refuses a missing or unreachable store with one line and exit 2', async () => {
    const missing = await runCapture(['tail', '--once'], dir);
    expect(missing).toStrictEqual({
      code: 2,
      stdout: '',
      stderr: `faultline: no faultline store at ${join(dir, '.faultline', 'faultline.db')} (run \`npx faultline demo\` or point --db at one)\n`,
    });
    const down = await runCapture(['tail', '--once', '--db', 'postgres://postgres@127.0.0.1:1/x'], dir);
    expect(down).toStrictEqual({ code: 2, stdout: '', stderr: 'faultline: could not connect to PostgreSQL at 127.0.0.1:1: ECONNREFUSED\n' });
  });
});

const describePg = await describePostgres('the PostgreSQL tail test');

describePg('faultline tail as a process, against PostgreSQL', () => {
  const { schema, url } = useTestSchema('tail_outage');
  let main: string;
  const admin = new pg.Client({ connectionString: PG_URL });
  // Its own connection: pg_stat_activity reads are a snapshot for the whole of a transaction.
  const locker = new pg.Client({ connectionString: PG_URL });
  beforeAll(async () => {
    main = await compileCli(join(dir, 'compiled'));
    await admin.connect();
    await locker.connect();
    // The store must exist: tail opens it read-only.
    await (await createPostgresStore({ url: PG_URL, schema, applicationName: 'tail_test_writer' })).close();
  }, 180_000);
  afterAll(async () => {
    await admin.end();
    await locker.end();
  });

  /** tail's connections: the store's default application_name, reading this test's schema. */
  const TAIL_BACKENDS = `application_name = 'faultline' AND query LIKE '%${schema}%'`;
  async function tailBackends(where = ''): Promise<number> {
    return (await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${TAIL_BACKENDS} ${where}`)).rows[0]!.n;
  }
  /**
   * Waits until tail has run more statements than its start makes (the open's version check, the
   * newest record, the first window): a store failing before it follows ends the command.
   */
  async function untilFollowing(): Promise<void> {
    const statements = new Set<string>();
    await until(async () => {
      const rows = await admin.query<{ s: string }>(`SELECT pid || ' ' || query_start AS s FROM pg_stat_activity WHERE ${TAIL_BACKENDS}`);
      for (const row of rows.rows) statements.add(row.s);
      return statements.size >= 5;
    }, 'tail to follow');
  }
  async function until(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Holds an ACCESS EXCLUSIVE lock on the schema's table from the test's own connection until ROLLBACK. */
  async function lockTable(): Promise<void> {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${pg.escapeIdentifier(schema)}.tool_executions IN ACCESS EXCLUSIVE MODE`);
  }

  /** The compiled CLI following the schema with -n 0 every 50ms; output and exit code as they come. */
  function spawnTail() {
    const child = spawn(process.execPath, [main, 'tail', '--db', url, '-n', '0', '--interval', '50ms'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise<number | null>((resolve) => child.on('close', (c) => resolve((tail.code = c))));
    const tail = { child, closed, stdout: '', stderr: '', code: undefined as number | null | undefined };
    child.stdout.on('data', (c: Buffer) => (tail.stdout += String(c)));
    child.stderr.on('data', (c: Buffer) => (tail.stderr += String(c)));
    return tail;
  }

  it('keeps following when its connections are terminated mid-query, and prints what was stored meanwhile', async () => {
    const writer = await createPostgresStore({ url: PG_URL, schema, applicationName: 'tail_test_writer' });
    // Already there when tail starts: where its window starts, not printed (-n 0).
    await writer.insert([failure(Date.now() - 1000, 'before_tail', 1)]);
    const tail = spawnTail();
    const { child, closed } = tail;
    try {
      await untilFollowing();
      // The table locked, tail's next poll waits inside a query; terminating its connection
      // then fails that query, as a restarting server does.
      await lockTable();
      await until(async () => (await tailBackends("AND wait_event_type = 'Lock'")) > 0, 'tail to wait on the lock');
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${TAIL_BACKENDS}`);
      await waitFor(() => (tail.stderr.includes('\n') ? true : undefined), 'the warning', 15_000);
      expect(tail.stderr).toBe('faultline: store unreachable, retrying (backing off up to 30s): terminating connection due to administrator command\n');
      // A failure made and stored while tail could not read.
      const meanwhile = failure(Date.now(), 'during_outage', 2);
      const stored = writer.insert([meanwhile]);
      // Terminated again while it retries: still only the one warning.
      await until(async () => (await tailBackends("AND wait_event_type = 'Lock'")) > 0, 'tail to retry');
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${TAIL_BACKENDS}`);
      await locker.query('ROLLBACK');
      await stored;
      await waitFor(() => (tail.stdout.includes('during_outage') ? true : undefined), 'the failure stored meanwhile', 15_000);
      expect(tail.code).toBeUndefined();
      expect(lines(tail.stdout)).toStrictEqual([formatTailLine(meanwhile)]);
      await waitFor(() => (lines(tail.stderr).length === 2 ? true : undefined), 'the line saying the store is back', 15_000);
      expect(lines(tail.stderr)[1]).toBe('faultline: store reachable again, following');

      child.kill('SIGINT');
      expect(await closed).toBe(0);
      expect(lines(tail.stderr)).toHaveLength(2);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      child.kill('SIGKILL');
      await writer.close();
    }
  }, 60_000);

  it('counts a read that hangs behind a lock as the store unreachable, and stops on Ctrl-C without waiting for it', async () => {
    const tail = spawnTail();
    const { child, closed } = tail;
    try {
      await untilFollowing();
      // Held and never released while tail runs: every read of the table waits, with no error.
      await lockTable();
      const locked = Date.now();
      await waitFor(() => (tail.stderr.includes('\n') ? true : undefined), 'the warning', 20_000);
      // The bound for a 50ms interval is 10 s; the server cancels the read then.
      expect(Date.now() - locked).toBeLessThan(readBound(50) + 3000);
      expect(tail.stderr).toBe('faultline: store unreachable, retrying (backing off up to 30s): canceling statement due to statement timeout\n');
      expect(tail.code).toBeUndefined();

      // The retry waits on the lock in turn; Ctrl-C then ends tail at once.
      await until(async () => (await tailBackends("AND wait_event_type = 'Lock'")) > 0, 'tail to retry');
      const interrupted = Date.now();
      child.kill('SIGINT');
      expect(await closed).toBe(0);
      expect(Date.now() - interrupted).toBeLessThan(2000);
      expect(lines(tail.stderr)).toHaveLength(1);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('gives one line and exit 2 when the store does not answer its first reads (a lock held from the start)', async () => {
    await lockTable();
    try {
      const run = await runCapture(['tail', '--db', url, '--interval', '50ms'], dir);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe('faultline: cannot read the store: canceling statement due to statement timeout\n');
      expect(run.stdout).toBe('');
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
    }
  }, 60_000);
});

describe('formatTailLine', () => {
  it('does not pass terminal control sequences from recorded text to the terminal', async () => {
    // An upstream's error text is recorded as it came; printed raw, it could clear the screen or retitle the window.
    const hostile = makeFailureRecord({
      tool_name: 'proxied_tool',
      failure_stage: 'execution',
      failure_category: 'system',
      failure_type: 'server_error',
      error_code: 'HTTP_500',
      error_message: 'upstream said \u001b[2J\u001b]0;owned\u0007 and \u009b31m red',
      created_at: '2026-03-29T15:00:00.000Z',
    });
    const path = await writeStoreFile(join(dir, 'hostile.db'), [hostile]);
    const run = await runCapture(['tail', '--db', path, '--once'], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(run.stdout).toContain('upstream said \\x1b[2J\\x1b]0;owned\\x07 and \\x9b31m red');
  });
});

describe('parseInterval', () => {
  it('reads ms, s, m and h, and nothing without its unit (one syntax for every duration flag)', () => {
    expect([parseInterval('250ms'), parseInterval('1s'), parseInterval('1500ms'), parseInterval('2m'), parseInterval('1h')]).toStrictEqual([250, 1000, 1500, 120_000, 3_600_000]);
    expect(() => parseInterval('3')).toThrow('invalid --interval "3": expected a duration from 10ms to 1h, like 500ms, 30s or 5m');
  });
});
