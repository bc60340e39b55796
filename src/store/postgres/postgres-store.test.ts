import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, FaultlineError } from '../../core/errors.js';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import { createRecorder, type Recorder } from '../../record/recorder.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { CONTRACT_T0, contractDataset, contractTrajectory } from '../contracts/contract-data.test-helpers.js';
import { runStoreContracts } from '../contracts/run-store-contracts.test-helpers.js';
import type { Store } from '../../core/store-types.js';
import { LATEST_VERSION, MIGRATIONS } from './migrations.js';
import { createPostgresStore, INSERT_CHUNK_ROWS } from './postgres-store.js';
import { describePostgres, lockStoreTables, PG_URL, startPostgresProxy } from './test-server.test-helpers.js';

const RUN_ID = randomBytes(4).toString('hex');
const HOUR = 3_600_000;

const describePg = await describePostgres('PostgreSQL store tests');

let schemaCounter = 0;
const createdSchemas = new Set<string>();
/** A schema name private to this test file run, so parallel files and reruns never collide. */
function freshSchema(label: string): string {
  const name = `faultline_test_${RUN_ID}_${label}_${schemaCounter++}`;
  createdSchemas.add(name);
  return name;
}

let adminPool: pg.Pool | undefined;
function admin(): pg.Pool {
  adminPool ??= new pg.Pool({ connectionString: PG_URL, max: 2 });
  return adminPool;
}

async function dropSchemas(): Promise<void> {
  if (createdSchemas.size === 0 && adminPool === undefined) return;
  for (const name of createdSchemas) await admin().query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
  createdSchemas.clear();
  await adminPool?.end();
  adminPool = undefined;
}

const { host: PG_HOST, port: PG_PORT } = (() => {
  const url = new URL(PG_URL);
  return { host: url.hostname, port: url.port === '' ? 5432 : Number(url.port) };
})();

function urlWith(changes: { host?: string; port?: number; username?: string }): string {
  const url = new URL(PG_URL);
  if (changes.host !== undefined) url.hostname = changes.host;
  if (changes.port !== undefined) url.port = String(changes.port);
  if (changes.username !== undefined) url.username = changes.username;
  return url.toString();
}

function bulk(n: number, tool = 'bulk_tool'): ToolExecutionRecord[] {
  return Array.from({ length: n }, (_, i) =>
    i % 4 === 0
      ? makeFailureRecord({
          tool_name: tool,
          created_at: new Date(CONTRACT_T0 + i * 1000).toISOString(),
          failure_stage: 'execution',
          failure_category: 'network',
          failure_type: 'timeout',
          error_message: `timed out after ${i}ms`,
          duration_ms: i % 700,
        })
      : makeRecord({
          tool_name: tool,
          created_at: new Date(CONTRACT_T0 + i * 1000).toISOString(),
          input_params: { city: `city-${i % 10}`, n: i },
          duration_ms: i % 700,
        }),
  );
}

const everything = { since: CONTRACT_T0 - 24 * HOUR, until: CONTRACT_T0 + 48 * HOUR };

const TIMED_OUT = /^canceling statement due to statement timeout$/;

/** Sessions waiting on a lock in a statement that names `schema`. */
async function lockWaiters(schema: string): Promise<number> {
  const { rows } = await admin().query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0",
    [schema],
  );
  return rows[0]!.n;
}

describePg('postgres', () => {
  // Each test's store is a schema of its own, on the real server.
  runStoreContracts('postgres', () => createPostgresStore({ url: PG_URL, schema: freshSchema('contract'), max: 4 }), { cleanup: dropSchemas });
});

describePg('postgres store', () => {
  afterAll(dropSchemas);

  describe('migrations', () => {
    it('are numbered 1..n in order, so LATEST_VERSION is the last one', () => {
      expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
      expect(LATEST_VERSION).toBe(MIGRATIONS.length);
    });

    it('apply once when several stores open the same new schema at the same time', async () => {
      const schema = freshSchema('race');
      const stores = await Promise.all(
        Array.from({ length: 5 }, () => createPostgresStore({ url: PG_URL, schema, max: 2 })),
      );
      try {
        const { rows } = await admin().query<{ version: number }>(
          `SELECT version FROM "${schema}".schema_migrations ORDER BY version`,
        );
        expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
        // Every store works against the one schema they raced to create.
        await Promise.all(stores.map((store, i) => store.insert(bulk(10, `tool_${i}`))));
        expect(await stores[0]!.count()).toBe(50);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('are a no-op when the schema is already current', async () => {
      const schema = freshSchema('reopen');
      const first = await createPostgresStore({ url: PG_URL, schema });
      await first.insert(bulk(3));
      await first.close();
      const second = await createPostgresStore({ url: PG_URL, schema });
      expect(await second.count()).toBe(3);
      await second.close();
      const { rows } = await admin().query(`SELECT version FROM "${schema}".schema_migrations`);
      expect(rows).toHaveLength(MIGRATIONS.length);
    });

    it('refuse a schema written by a newer version with a ConfigError', async () => {
      const schema = freshSchema('newer');
      await (await createPostgresStore({ url: PG_URL, schema })).close();
      await admin().query(`INSERT INTO "${schema}".schema_migrations (version, name) VALUES ($1, 'from the future')`, [
        LATEST_VERSION + 1,
      ]);
      const opening = createPostgresStore({ url: PG_URL, schema });
      await expect(opening).rejects.toSatisfy(ConfigError.isInstance);
      await expect(opening).rejects.toThrow(`is at version ${LATEST_VERSION + 1}, newer than this faultline supports`);
    });

    it("refuse another program's schema_migrations (golang-migrate, Rails) with a ConfigError, adding nothing", async () => {
      const tables = {
        golang: '(version bigint PRIMARY KEY, dirty boolean NOT NULL DEFAULT false)',
        rails: '(version varchar PRIMARY KEY)',
      };
      for (const [label, columns] of Object.entries(tables)) {
        const schema = freshSchema(label);
        await admin().query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".schema_migrations ${columns}`);
        // Version 1 reads as an older faultline store, which a writer would have migrated.
        await admin().query(`INSERT INTO "${schema}".schema_migrations (version) VALUES ('1')`);
        for (const options of [{}, { readonly: true }, { mustExist: true }]) {
          const opening = createPostgresStore({ url: PG_URL, schema, ...options });
          await expect(opening).rejects.toSatisfy(ConfigError.isInstance);
          await expect(opening).rejects.toThrow(`PostgreSQL schema "${schema}" is not a faultline store: its schema_migrations table`);
        }
        const { rows } = await admin().query(`SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE nspname = $1 AND relkind = 'r'`, [schema]);
        expect(rows.map((r: { relname: string }) => r.relname)).toEqual(['schema_migrations']);
      }
    });

    it("refuse to add faultline's tables to a schema holding another application's; an empty schema is fine", async () => {
      const schema = freshSchema('app');
      await admin().query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".users (id int); CREATE VIEW "${schema}".v AS SELECT 1 AS x`);
      const opening = createPostgresStore({ url: PG_URL, schema });
      await expect(opening).rejects.toSatisfy(ConfigError.isInstance);
      await expect(opening).rejects.toThrow(`PostgreSQL schema "${schema}" is not a faultline store (it holds other tables: users, v)`);
      const { rows } = await admin().query(`SELECT to_regclass($1) AS t`, [`"${schema}".schema_migrations`]);
      expect(rows[0].t).toBeNull();

      const empty = freshSchema('empty');
      await admin().query(`CREATE SCHEMA "${empty}"`);
      const store = await createPostgresStore({ url: PG_URL, schema: empty });
      await store.insert(bulk(2));
      expect(await store.count()).toBe(2);
      await store.close();
    });

    it('refuse a read-only open of an older schema without running DDL; a writer migrates it', async () => {
      const schema = freshSchema('older');
      await (await createPostgresStore({ url: PG_URL, schema })).close();
      const older = LATEST_VERSION - 1;
      const last = MIGRATIONS[MIGRATIONS.length - 1]!;
      // Undo the last migration (version 4) by hand, so the schema is what version 3 left.
      await admin().query(
        `ALTER TABLE "${schema}".tool_executions DROP COLUMN input_params_json;
         ALTER TABLE "${schema}".trajectories ALTER COLUMN trajectory TYPE jsonb USING trajectory::jsonb;
         DELETE FROM "${schema}".schema_migrations WHERE version > ${older}`,
      );
      expect(last.name).toBe('key order of arguments and trajectories');
      const hasJsonCopy = async () =>
        (
          await admin().query(`SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'input_params_json'`, [
            schema,
          ])
        ).rows.length === 1;

      const reading = createPostgresStore({ url: PG_URL, schema, readonly: true });
      await expect(reading).rejects.toSatisfy(ConfigError.isInstance);
      await expect(reading).rejects.toThrow(
        `PostgreSQL schema "${schema}" at ${PG_HOST}:${PG_PORT} has schema version ${older}, older than ${LATEST_VERSION}; open it once without readonly to migrate it`,
      );
      const version = async () => (await admin().query(`SELECT max(version) AS v FROM "${schema}".schema_migrations`)).rows[0].v as number;
      expect(await version()).toBe(older);
      expect(await hasJsonCopy()).toBe(false);

      const writer = await createPostgresStore({ url: PG_URL, schema, mustExist: true });
      await writer.close();
      expect(await version()).toBe(LATEST_VERSION);
      expect(await hasJsonCopy()).toBe(true);
      await (await createPostgresStore({ url: PG_URL, schema, readonly: true })).close();
    });

    it('keep what a version 3 store holds when version 4 adds the json copies; new arguments keep their key order', async () => {
      const schema = freshSchema('v3rows');
      const store = await createPostgresStore({ url: PG_URL, schema });
      const before = makeRecord({ input_params: { zone: 'UTC+8', date: '2026-03-29' } });
      const trajectory = contractTrajectory(1);
      await store.insert([before]);
      await store.insertTrajectories([trajectory]);
      await store.close();
      // What version 3 stored: no json copy, the trajectory as jsonb.
      await admin().query(
        `ALTER TABLE "${schema}".tool_executions DROP COLUMN input_params_json;
         ALTER TABLE "${schema}".trajectories ALTER COLUMN trajectory TYPE jsonb USING trajectory::jsonb;
         DELETE FROM "${schema}".schema_migrations WHERE version = 4`,
      );

      const upgraded = await createPostgresStore({ url: PG_URL, schema });
      try {
        // Rows from before come back whole, in jsonb's key order (shortest key first).
        const old = await upgraded.get(before.execution_id);
        expect(old).toStrictEqual(before);
        expect(Object.keys(old?.input_params ?? {})).toEqual(['date', 'zone']);
        expect(await upgraded.getTrajectory(trajectory.trajectory_id)).toStrictEqual(trajectory);

        const after = makeRecord({ input_params: { zone: 'UTC+8', date: '2026-03-29' } });
        await upgraded.insert([after]);
        expect(Object.keys((await upgraded.get(after.execution_id))?.input_params ?? {})).toEqual(['zone', 'date']);
        // The GIN-indexed jsonb column is still filled for the new row.
        const { rows } = await admin().query(
          `SELECT count(*)::int AS n FROM "${schema}".tool_executions WHERE input_params @> '{"zone": "UTC+8"}'`,
        );
        expect(rows[0].n).toBe(2);
      } finally {
        await upgraded.close();
      }
    });

    it('open with mustExist only a schema that holds a store', async () => {
      const schema = freshSchema('absent');
      const opening = createPostgresStore({ url: PG_URL, schema, mustExist: true });
      await expect(opening).rejects.toThrow(`no faultline store in PostgreSQL schema "${schema}"`);
      const { rows } = await admin().query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      expect(rows).toHaveLength(0);
    });

    it('quote the schema name, so any name is safe', async () => {
      const schema = freshSchema('Odd "name"; DROP');
      const store = await createPostgresStore({ url: PG_URL, schema });
      await store.insert(bulk(2));
      expect(await store.count()).toBe(2);
      await store.close();
      const { rows } = await admin().query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      expect(rows).toHaveLength(1);
    });
  });

  describe('indexes', () => {
    it('has seed 001 indexes and a GIN index that serves JSONB containment on input_params', async () => {
      const schema = freshSchema('gin');
      const store = await createPostgresStore({ url: PG_URL, schema });
      try {
        const records = bulk(400);
        await store.insert(records);
        const { rows: indexes } = await admin().query<{ indexdef: string }>(
          'SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
          [schema, 'tool_executions'],
        );
        const defs = indexes.map((r) => r.indexdef).join('\n');
        expect(defs).toContain('(tool_name, status)');
        expect(defs).toMatch(/\(failure_type\) WHERE \(status <> 'success'::text\)/);
        expect(defs).toContain('(created_at DESC)');
        expect(defs).toContain('USING gin (input_params jsonb_path_ops)');

        const client = await admin().connect();
        try {
          await client.query('BEGIN');
          await client.query('SET LOCAL enable_seqscan = off');
          const containment = `SELECT execution_id FROM "${schema}".tool_executions WHERE input_params @> $1::jsonb`;
          const plan = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${containment}`, ['{"city":"city-3"}']);
          const planText = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
          expect(planText).toContain('Bitmap Index Scan on idx_input_params');
          const found = await client.query<{ execution_id: string }>(containment, ['{"city":"city-3"}']);
          const expected = records.filter((r) => (r.input_params as { city?: string }).city === 'city-3');
          expect(expected.length).toBeGreaterThan(0);
          expect(found.rows.map((r) => r.execution_id).sort()).toEqual(expected.map((r) => r.execution_id).sort());
          await client.query('ROLLBACK');
        } finally {
          client.release();
        }
      } finally {
        await store.close();
      }
    });
  });

  describe('opening', () => {
    it('reports a closed port as one clean line', async () => {
      const opening = createPostgresStore({ url: 'postgres://postgres@127.0.0.1:1/test', schema: freshSchema('x') });
      await expect(opening).rejects.toSatisfy(ConfigError.isInstance);
      await expect(opening).rejects.toThrow(/^could not connect to PostgreSQL at 127\.0\.0\.1:1: ECONNREFUSED$/);
    });

    it('reports an unknown host by its errno code', async () => {
      const opening = createPostgresStore({ url: 'postgres://postgres@no-such-host.invalid:5432/test' });
      await expect(opening).rejects.toThrow(
        /^could not connect to PostgreSQL at no-such-host\.invalid:5432: (ENOTFOUND|EAI_AGAIN)$/,
      );
    });

    it('reports a refused login with the server reason, on one line', async () => {
      const opening = createPostgresStore({ url: urlWith({ username: 'faultline_no_such_role' }) });
      await expect(opening).rejects.toSatisfy(ConfigError.isInstance);
      const error = (await opening.catch((e: unknown) => e)) as Error;
      expect(error.message.startsWith(`could not connect to PostgreSQL at ${PG_HOST}:${PG_PORT}: `)).toBe(true);
      expect(error.message).toContain('faultline_no_such_role');
      expect(error.message).not.toContain('\n');
    });

    it('rejects a malformed URL or a foreign scheme before connecting, without echoing it', async () => {
      await expect(createPostgresStore({ url: 'not a url' })).rejects.toSatisfy(ConfigError.isInstance);
      const mysql = createPostgresStore({ url: 'mysql://u:s3cret@h/db' });
      await expect(mysql).rejects.toThrow('scheme must be postgres:// or postgresql://');
      await expect(mysql).rejects.not.toThrow('s3cret');
    });

    it('rejects an unusable schema name or pool size', async () => {
      await expect(createPostgresStore({ url: PG_URL, schema: '' })).rejects.toSatisfy(ConfigError.isInstance);
      await expect(createPostgresStore({ url: PG_URL, schema: 'x'.repeat(64) })).rejects.toSatisfy(ConfigError.isInstance);
      await expect(createPostgresStore({ url: PG_URL, max: 0 })).rejects.toSatisfy(ConfigError.isInstance);
    });
  });

  describe('insert', () => {
    it('stores 5,000 records in one call, across several statements, counted once in the rollups', async () => {
      expect(INSERT_CHUNK_ROWS).toBeLessThan(5000);
      const schema = freshSchema('bulk');
      const store = await createPostgresStore({ url: PG_URL, schema });
      try {
        const records = bulk(5000);
        await store.insert(records);
        expect(await store.count()).toBe(5000);
        const [stats] = await store.toolStats(everything);
        expect(stats).toMatchObject({ tool_name: 'bulk_tool', total: 5000, timeout: 0, failure: 1250 });
        const last = records[records.length - 1]!;
        expect(await store.get(last.execution_id)).toStrictEqual(last);

        // Re-inserting the whole batch, and a batch that overlaps it, changes nothing.
        await store.insert(records);
        await store.insert([...records.slice(4990), ...bulk(5, 'late_tool')]);
        expect(await store.count()).toBe(5005);
        const { rows } = await admin().query<{ total: string }>(
          `SELECT sum(total) AS total FROM "${schema}".rollup_hourly WHERE tool_name = 'bulk_tool'`,
        );
        expect(Number(rows[0]!.total)).toBe(5000);
        expect((await store.toolStats({ ...everything, toolName: 'bulk_tool' }))[0]).toEqual(stats);
      } finally {
        await store.close();
      }
    });

    it('counts a batch once when two stores insert it concurrently', async () => {
      const schema = freshSchema('concurrent');
      const [a, b] = await Promise.all([
        createPostgresStore({ url: PG_URL, schema }),
        createPostgresStore({ url: PG_URL, schema }),
      ]);
      try {
        const data = contractDataset(300);
        await Promise.all([a!.insert(data), b!.insert([...data].reverse()), a!.insert(data.slice(100, 200))]);
        expect(await b!.count()).toBe(300);
        const stats = await a!.toolStats(everything);
        expect(stats.reduce((sum, s) => sum + s.total, 0)).toBe(300);
        const sigs = await b!.signatures(everything);
        expect(sigs.reduce((sum, s) => sum + s.count, 0)).toBe(data.filter((r) => r.status !== 'success').length);
      } finally {
        await Promise.all([a!.close(), b!.close()]);
      }
    });

    it('leaves the database untouched when a record in the batch is invalid', async () => {
      const store = await createPostgresStore({ url: PG_URL, schema: freshSchema('invalid') });
      try {
        const good = makeRecord({ created_at: '2025-03-10T08:00:00.000Z' });
        const bad = { ...makeRecord(), created_at: 'yesterday' };
        await expect(store.insert([good, bad])).rejects.toThrow(/invalid created_at/);
        await expect(store.insert([good, { ...makeRecord(), execution_id: 'exec-1' }])).rejects.toThrow(
          /invalid execution_id/,
        );
        expect(await store.count()).toBe(0);
        expect(await store.toolStats(everything)).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('stores text PostgreSQL cannot hold (NUL, lone surrogates) with U+FFFD in their place', async () => {
      const store = await createPostgresStore({ url: PG_URL, schema: freshSchema('nul') });
      try {
        const record = makeFailureRecord({
          failure_stage: 'execution',
          failure_category: 'system',
          failure_type: 'runtime_error',
          error_message: 'bad\u0000byte',
          raw_output: 'a\u0000b',
          input_params: { 'k\u0000': 'v\u0000', lone: 'x\ud800y', pair: '😀', literal: '\\u0000 stays' },
        });
        await store.insert([record]);
        expect(await store.get(record.execution_id)).toStrictEqual({
          ...record,
          error_message: 'bad\ufffdbyte',
          raw_output: 'a\ufffdb',
          input_params: { 'k\ufffd': 'v\ufffd', lone: 'x\ufffdy', pair: '😀', literal: '\\u0000 stays' },
        });
      } finally {
        await store.close();
      }
    });

    it('rejects while the server is unreachable and succeeds on retry without double counting', async () => {
      const proxy = await startPostgresProxy(PG_HOST, PG_PORT);
      const store = await createPostgresStore({ url: urlWith({ host: '127.0.0.1', port: proxy.port }), schema: freshSchema('outage'), max: 2 });
      try {
        const first = bulk(20, 'flaky_tool');
        await store.insert(first.slice(0, 10));
        await proxy.stop();
        await expect(store.insert(first)).rejects.toThrow();
        await proxy.restart();
        await store.insert(first);
        expect(await store.count()).toBe(20);
        const [stats] = await store.toolStats(everything);
        expect(stats).toMatchObject({ tool_name: 'flaky_tool', total: 20 });
      } finally {
        await store.close();
        await proxy.stop();
      }
    });
  });

  describe('queries', () => {
    it('treat non-UUID ids as unknown rather than failing', async () => {
      const store = await createPostgresStore({ url: PG_URL, schema: freshSchema('ids') });
      try {
        const records = bulk(5);
        await store.insert(records);
        expect(await store.get('not-a-uuid')).toBeNull();
        expect(await store.get(records[2]!.execution_id.toUpperCase())).toStrictEqual(records[2]);
        const sorted = records.map((r) => r.execution_id).sort();
        expect((await store.query({ afterId: sorted[2]!.toUpperCase() })).map((r) => r.execution_id)).toEqual(sorted.slice(3));
        expect(await store.query({ afterId: '~' })).toEqual([]);
        expect(await store.query({ afterId: '' })).toHaveLength(5);
        expect(await store.query({ limit: Infinity })).toHaveLength(5);
        expect(await store.query({ limit: 2.7 })).toHaveLength(2);
      } finally {
        await store.close();
      }
    });

    it('accept unbounded and fractional windows', async () => {
      const store = await createPostgresStore({ url: PG_URL, schema: freshSchema('windows') });
      try {
        const record = makeRecord({ created_at: new Date(CONTRACT_T0 + 2).toISOString(), tool_name: 'w' });
        await store.insert([record]);
        const all = { since: -Infinity, until: Infinity };
        expect(await store.count({ since: -Infinity, until: Infinity })).toBe(1);
        expect(await store.count({ since: CONTRACT_T0 + 1.5 })).toBe(1);
        expect(await store.count({ since: CONTRACT_T0 + 2.5 })).toBe(0);
        expect(await store.count({ until: CONTRACT_T0 + 2.5 })).toBe(1);
        expect((await store.toolStats(all)).map((s) => s.total)).toEqual([1]);
        expect(await store.hourly(all)).toHaveLength(1);
        expect(await store.signatures(all)).toEqual([]);
      } finally {
        await store.close();
      }
    });
  });

  describe('statementTimeoutMs', () => {
    const BOUND_MS = 300;

    it('fails every read that waits on a lock held by another session with the statement timeout; the store reads again once it is gone', async () => {
      const schema = freshSchema('timeout_reads');
      const records = bulk(12, 'locked_tool');
      const writer = await createPostgresStore({ url: PG_URL, schema });
      await writer.insert(records);
      await writer.close();
      const store = await createPostgresStore({ url: PG_URL, schema, readonly: true, statementTimeoutMs: BOUND_MS, max: 2 });
      const lock = await lockStoreTables(schema);
      try {
        const reads: [string, () => Promise<unknown>][] = [
          ['count', () => store.count()],
          ['query', () => store.query({ order: 'desc', limit: 5 })],
          ['get', () => store.get(records[0]!.execution_id)],
          ['toolStats', () => store.toolStats(everything)],
          ['failureBreakdown', () => store.failureBreakdown(everything)],
          ['hourly', () => store.hourly(everything)],
          ['signatures', () => store.signatures(everything)],
          ['queryTrajectories', () => store.queryTrajectories()],
          ['listCorrections', () => store.listCorrections()],
        ];
        for (const [name, read] of reads) {
          const error = await read().then(
            (): Error & { code?: string } => new Error(`${name} answered although the tables are locked`),
            (e: unknown) => e as Error & { code?: string },
          );
          expect({ name, message: error.message, code: error.code }).toStrictEqual({ name, message: expect.stringMatching(TIMED_OUT), code: '57014' });
        }
        await lock.release();
        expect(await store.count()).toBe(records.length);
        expect((await store.toolStats(everything))[0]).toMatchObject({ tool_name: 'locked_tool', total: records.length });
      } finally {
        await lock.release();
        await store.close();
      }
    });

    it('fails an insert that waits on a lock with the statement timeout, writing none of it; the same store stores it once the lock is gone', async () => {
      const schema = freshSchema('timeout_insert');
      const store = await createPostgresStore({ url: PG_URL, schema, statementTimeoutMs: BOUND_MS, max: 2 });
      const records = bulk(8, 'locked_insert');
      const lock = await lockStoreTables(schema);
      try {
        await expect(store.insert(records)).rejects.toMatchObject({ message: expect.stringMatching(TIMED_OUT), code: '57014' });
        await expect(store.insertTrajectories([contractTrajectory(1)])).rejects.toMatchObject({ code: '57014' });
        await lock.release();
        expect(await store.count()).toBe(0);
        await store.insert(records);
        expect(await store.count()).toBe(records.length);
        expect((await store.toolStats(everything))[0]).toMatchObject({ tool_name: 'locked_insert', total: records.length });
      } finally {
        await lock.release();
        await store.close();
      }
    });

    it('gives up on a server that stops answering (query_timeout), for reads and inserts, and close does not wait for them', async () => {
      const proxy = await startPostgresProxy(PG_HOST, PG_PORT);
      const schema = freshSchema('timeout_silent');
      const store = await createPostgresStore({ url: urlWith({ host: '127.0.0.1', port: proxy.port }), schema, statementTimeoutMs: BOUND_MS, max: 2 });
      try {
        // Two connections open, so that the read and the insert each wait on one of them.
        await Promise.all([store.insert(bulk(3, 'silent_tool')), store.count()]);
        proxy.freeze();
        const [read, insert] = await Promise.allSettled([store.count(), store.insert(bulk(2, 'silent_tool'))]);
        expect(read).toMatchObject({ status: 'rejected', reason: { message: 'Query read timeout' } });
        expect(insert).toMatchObject({ status: 'rejected', reason: { message: 'Query read timeout' } });
        await store.close();
      } finally {
        await store.close();
        await proxy.stop();
      }
    });
  });

  describe('a recorder over a table another session keeps locked', () => {
    /** A recorder spooling to a fresh directory, with short intervals, reporting into `errors`. */
    function recorderOver(store: Store, spool: string, errors: unknown[], insertTimeoutMs: number): Recorder {
      return createRecorder({
        store,
        spool: { path: spool },
        batchSize: 10,
        flushIntervalMs: 20,
        retry: { initialDelayMs: 50, maxDelayMs: 200 },
        insertTimeoutMs,
        // What ends the inserts here is the bound under test, not the recorder's copy of writes
        // older than maxUnsavedMs (which would spool them first).
        maxUnsavedMs: 600_000,
        onError: (error) => errors.push(error),
      });
    }

    /** Five records stored, then the table locked from another session and twenty more enqueued; resolves once they are spooled. */
    async function writeIntoLock(rec: Recorder, schema: string, sent: readonly ToolExecutionRecord[]): Promise<{ release: () => Promise<void> }> {
      for (const record of sent.slice(0, 5)) rec.enqueue(record);
      await vi.waitFor(() => expect(rec.stats().written).toBe(5), { timeout: 10_000, interval: 20 });
      const lock = await lockStoreTables(schema);
      for (const record of sent.slice(5)) rec.enqueue(record);
      await vi.waitFor(() => expect(rec.stats().spooled).toBe(sent.length - 5), { timeout: 20_000, interval: 20 });
      return lock;
    }

    async function expectStoredOnce(store: Store, sent: readonly ToolExecutionRecord[]): Promise<void> {
      const stored = await store.query({ limit: Infinity });
      expect(stored.map((r) => r.execution_id).sort()).toStrictEqual(sent.map((r) => r.execution_id.toLowerCase()).sort());
      expect((await store.toolStats(everything))[0]).toMatchObject({ total: sent.length });
    }

    it('spools what it writes while the lock is held, the inserts failing at statementTimeoutMs, and stores each record once after', async () => {
      const schema = freshSchema('rec_bound');
      const store = await createPostgresStore({ url: PG_URL, schema, statementTimeoutMs: 1000, max: 4 });
      const dir = mkdtempSync(join(tmpdir(), 'faultline-pg-spool-'));
      const errors: unknown[] = [];
      // The store's bound, not the recorder's, is what ends the inserts.
      const rec = recorderOver(store, join(dir, 'rec.jsonl'), errors, 600_000);
      const sent = bulk(25, 'locked_rec');
      const lock = await writeIntoLock(rec, schema, sent);
      try {
        expect(errors).toMatchObject([{ code: '57014', message: expect.stringMatching(TIMED_OUT) }]);
      } finally {
        await lock.release();
      }
      await vi.waitFor(() => expect(rec.stats()).toMatchObject({ replayed: 20, storeHealthy: true }), { timeout: 20_000, interval: 20 });
      await rec.close();
      expect(rec.stats()).toMatchObject({ written: 5, spooled: 20, replayed: 20, dropped: 0, rejected: 0 });
      await expectStoredOnce(store, sent);
      expect(readdirSync(dir)).toEqual([]);
      await store.close();
    }, 60_000);

    it('without statementTimeoutMs, spools at the recorder\'s insertTimeoutMs, and the store\'s close cuts the inserts still waiting after CLOSE_WAIT_MS; the next recorder stores each record once', async () => {
      const schema = freshSchema('rec_unbound');
      const store = await createPostgresStore({ url: PG_URL, schema, max: 4 });
      const dir = mkdtempSync(join(tmpdir(), 'faultline-pg-spool-'));
      const spool = join(dir, 'rec.jsonl');
      const errors: unknown[] = [];
      const rec = recorderOver(store, spool, errors, 500);
      const sent = bulk(25, 'locked_rec');
      const lock = await writeIntoLock(rec, schema, sent);
      try {
        expect(errors).toMatchObject([{ name: 'StoreWriteTimeoutError' }]);
        await rec.close();
        // The lock is still held: the inserts the recorder gave up on are still waiting for it.
        expect(await lockWaiters(schema)).toBeGreaterThan(0);
        await store.close();
      } finally {
        await lock.release();
      }
      // Cut mid-transaction: once the lock is gone, the server finds no COMMIT and rolls them back.
      await vi.waitFor(async () => expect(await lockWaiters(schema)).toBe(0), { timeout: 10_000, interval: 20 });
      const reopened = await createPostgresStore({ url: PG_URL, schema });
      expect(await reopened.count()).toBe(5);
      const next = recorderOver(reopened, spool, errors, 10_000);
      await next.close();
      expect(next.stats()).toMatchObject({ replayed: 20, dropped: 0 });
      await expectStoredOnce(reopened, sent);
      await reopened.close();
    }, 60_000);
  });

  describe('lifecycle', () => {
    it('uses a caller-owned pool without ending it, and refuses use after close', async () => {
      const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
      try {
        const store = await createPostgresStore({ url: 'unused', pool, schema: freshSchema('pool') });
        await store.insert(bulk(3));
        await store.close();
        await store.close();
        await expect(store.insert(bulk(1))).rejects.toSatisfy(FaultlineError.isInstance);
        await expect(store.count()).rejects.toThrow('the PostgreSQL store is closed');
        const { rows } = await pool.query('SELECT 1 AS ok');
        expect(rows).toEqual([{ ok: 1 }]);
      } finally {
        await pool.end();
      }
    });

    it('ends the pool it created, so no connection stays open', async () => {
      const applicationName = `faultline_test_${RUN_ID}_lifecycle`;
      const store = await createPostgresStore({ url: PG_URL, schema: freshSchema('ends'), applicationName });
      await store.insert(bulk(2));
      const open = async () =>
        (await admin().query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [applicationName]))
          .rows[0].n as number;
      expect(await open()).toBeGreaterThan(0);
      await store.close();
      // The server drops a backend a moment after the client's Terminate message; an idle pool
      // that was not ended would keep its connections for 10 s, far past this wait.
      await vi.waitFor(async () => expect(await open()).toBe(0), { timeout: 2000, interval: 25 });
    });
  });
});
