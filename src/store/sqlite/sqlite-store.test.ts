import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import { contractDataset } from '../contracts/contract-data.test-helpers.js';
import { runStoreContracts } from '../contracts/run-store-contracts.test-helpers.js';
import { writeDamagedStore } from './damaged-store.test-helpers.js';
import { migrate, schemaVersion, SQLITE_MIGRATIONS, type SqliteMigration } from './migrations.js';
import { createSqliteRowStore, createSqliteStore, encodeRecordRows } from './sqlite-store.js';

const root = mkdtempSync(join(tmpdir(), 'faultline-sqlite-'));
let counter = 0;
const freshPath = () => join(root, `db-${process.pid}-${++counter}`, 'faultline.db');

afterAll(() => rmSync(root, { recursive: true, force: true }));

runStoreContracts('sqlite (temp file)', async () => createSqliteStore({ path: freshPath() }));
runStoreContracts('sqlite (:memory:)', async () => createSqliteStore({ path: ':memory:' }));

const T0 = Date.UTC(2025, 2, 10, 8, 0, 0);
const window = { since: T0 - 3_600_000, until: T0 + 10 * 3_600_000 };

describe('sqlite store', () => {
  it('keeps data and rollups across reopen, and creates parent directories', async () => {
    const path = join(root, 'nested', 'deeper', 'reopen.db');
    const data = contractDataset(60);
    const first = createSqliteStore({ path });
    await first.insert(data);
    const stats = await first.toolStats(window);
    await first.close();

    const second = createSqliteStore({ path });
    expect(await second.count()).toBe(60);
    expect(await second.get(data[7]!.execution_id)).toStrictEqual(data[7]);
    expect(await second.toolStats(window)).toEqual(stats);
    await second.insert(data);
    expect(await second.toolStats(window)).toEqual(stats);
    await second.close();
  });

  it('uses WAL and 16 KB pages, and records the schema version', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path });
    await store.close();
    const db = new Database(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('page_size', { simple: true })).toBe(16_384);
    expect(schemaVersion(db)).toBe(SQLITE_MIGRATIONS.length);
    db.close();
  });

  it('plans time-range and tool queries on indexes', async () => {
    const path = freshPath();
    const store = createSqliteStore({ path });
    await store.close();
    const db = new Database(path);
    const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('; ');
    expect(plan('SELECT * FROM tool_executions WHERE created_ms >= 1 AND created_ms < 2')).toMatch(/USING INDEX idx_created_at/);
    expect(plan(`SELECT count(*) FROM tool_executions WHERE tool_name = 'x' AND status = 'failure'`)).toMatch(/idx_tool_status/);
    expect(plan(`SELECT failure_type, count(*) FROM tool_executions WHERE status != 'success' GROUP BY failure_type`)).toMatch(/idx_failure_type/);
    expect(plan(`SELECT * FROM tool_executions WHERE trace_id = 't'`)).toMatch(/idx_trace/);
    db.close();
  });

  it('opens read-only: reads work, inserts are refused with a ConfigError', async () => {
    const path = freshPath();
    const writer = createSqliteStore({ path });
    const record = makeRecord({ created_at: new Date(T0).toISOString() });
    await writer.insert([record]);
    await writer.close();
    const reader = createSqliteStore({ path, readonly: true });
    expect(await reader.get(record.execution_id)).toStrictEqual(record);
    await expect(reader.insert([makeRecord()])).rejects.toSatisfy(ConfigError.isInstance);
    await reader.close();
  });

  it('refuses a read-only open of a missing file with a one-line ConfigError', () => {
    const attempt = () => createSqliteStore({ path: join(root, 'missing', 'nope.db'), readonly: true });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^cannot open SQLite store .*nope\.db.*$/);
  });

  it('refuses a read-only open of another program\'s database as not a faultline store, and leaves it as it was', () => {
    const path = join(root, `other-${++counter}.db`);
    const other = new Database(path);
    other.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
    other.close();
    const attempt = () => createSqliteStore({ path, readonly: true });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^SQLite file ".*other-\d+\.db" is not a faultline store \(it has none of faultline's tables\)$/);
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual(['customers']);
    after.close();
  });

  it("refuses another program's schema_migrations (golang-migrate, Rails) with a ConfigError, adding nothing", () => {
    const tables = {
      golang: ['(version bigint PRIMARY KEY, dirty boolean)', 1],
      rails: ['(version varchar PRIMARY KEY)', '1'],
      'rails-dated': ['(version varchar PRIMARY KEY)', '20240101000000'],
    } as const;
    for (const [label, [columns, version]] of Object.entries(tables)) {
      const path = join(root, `${label}-${++counter}.db`);
      const other = new Database(path);
      other.exec(`CREATE TABLE schema_migrations ${columns}`);
      other.prepare('INSERT INTO schema_migrations (version) VALUES (?)').run(version);
      other.close();
      for (const readonly of [false, true]) {
        const attempt = () => createSqliteStore({ path, readonly });
        expect(attempt).toThrow(ConfigError);
        expect(attempt).toThrow(/^SQLite file ".*" is not a faultline store: its schema_migrations table \(version.*\) belongs to another program$/);
      }
      const after = new Database(path, { readonly: true });
      expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toEqual(['schema_migrations']);
      after.close();
    }
  });

  it("refuses to add faultline's tables to another application's database; an empty file is fine", async () => {
    const path = join(root, `app-${++counter}.db`);
    const other = new Database(path);
    other.exec('CREATE TABLE users (id INTEGER PRIMARY KEY); CREATE VIEW names AS SELECT id FROM users');
    other.close();
    const attempt = () => createSqliteStore({ path });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^SQLite file ".*app-\d+\.db" is not a faultline store \(it holds other tables: names, users\); give faultline a file of its own$/);
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name").pluck().all()).toEqual(['names', 'users']);
    after.close();

    const empty = join(root, `empty-${++counter}.db`);
    writeFileSync(empty, '');
    const store = createSqliteStore({ path: empty });
    await store.insert([makeRecord({ created_at: new Date(T0).toISOString() })]);
    expect(await store.count()).toBe(1);
    await store.close();
  });

  it('reports a store damaged past its schema as a ConfigError naming it, on reads and writes', async () => {
    const path = await writeDamagedStore(join(root, `damaged-${++counter}.db`), contractDataset(200));
    for (const readonly of [true, false]) {
      const store = createSqliteStore({ path, readonly });
      for (const use of [() => store.toolStats(window), () => store.query({ limit: 5 }), () => store.queryTrajectories()]) {
        const failing = use();
        await expect(failing).rejects.toSatisfy(ConfigError.isInstance);
        await expect(failing).rejects.toThrow(/^SQLite store ".*damaged-\d+\.db" is damaged: database disk image is malformed$/);
      }
      if (!readonly) await expect(store.insert(contractDataset(3))).rejects.toThrow(/is damaged/);
      await store.close();
    }
  });

  it('rolls back the whole batch when one record is invalid', async () => {
    const store = createSqliteStore({ path: freshPath() });
    const good = makeRecord({ created_at: new Date(T0).toISOString() });
    const bad = { ...makeFailureRecord({ failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error' }), created_at: 'not a date' };
    await expect(store.insert([good, bad])).rejects.toThrow(/invalid created_at/);
    expect(await store.count()).toBe(0);
    expect(await store.toolStats(window)).toEqual([]);
    await store.close();
  });

  it('stores several row batches in one transaction, rolling back only a batch that fails', async () => {
    const store = createSqliteRowStore({ path: freshPath() });
    const twin = createSqliteStore({ path: freshPath() });
    const data = contractDataset(90);
    const broken = encodeRecordRows(data.slice(30, 60));
    broken[7]!.pop(); // a row short of a column: the insert throws
    const errors = await store.insertRowBatches([
      () => encodeRecordRows(data.slice(0, 30)),
      () => broken,
      () => {
        throw new RangeError('not a batch of rows');
      },
      () => encodeRecordRows(data.slice(60)),
    ]);
    expect(errors[0]).toBeUndefined();
    expect(String(errors[1])).toMatch(/parameter/i);
    expect(String(errors[2])).toMatch(/not a batch/);
    expect(errors[3]).toBeUndefined();
    const stored = [...data.slice(0, 30), ...data.slice(60)];
    await twin.insert(stored);
    expect(await store.count()).toBe(60);
    expect(await store.get(data[35]!.execution_id)).toBeNull();
    const all = { since: 0, until: Date.parse('2100-01-01T00:00:00Z') };
    expect(await store.toolStats(all)).toStrictEqual(await twin.toolStats(all));
    expect(await store.failureBreakdown(all)).toStrictEqual(await twin.failureBreakdown(all));
    expect(await store.signatures(all)).toStrictEqual(await twin.signatures(all));
    // Idempotent like insert: the stored batches add nothing a second time.
    expect(await store.insertRowBatches([() => encodeRecordRows(data.slice(0, 30)), () => encodeRecordRows(data.slice(60))])).toEqual([undefined, undefined]);
    expect(await store.toolStats(all)).toStrictEqual(await twin.toolStats(all));
    await store.close();
    await twin.close();
  });

  it('refuses use after close with a typed error', async () => {
    const store = createSqliteStore({ path: freshPath() });
    await store.close();
    await expect(store.count()).rejects.toThrow(/closed/);
  });

  describe('migrations', () => {
    const v2: SqliteMigration = {
      version: 2,
      name: 'add tool owners',
      up: 'CREATE TABLE tool_owners (tool_name TEXT PRIMARY KEY, owner TEXT NOT NULL)',
    };

    it('applies the missing migrations to a database created at version 1, once', async () => {
      const path = freshPath();
      const v1Store = createSqliteStore({ path, migrations: SQLITE_MIGRATIONS.slice(0, 1) });
      const record = makeRecord({ created_at: new Date(T0).toISOString() });
      await v1Store.insert([record]);
      await v1Store.close();

      const upgraded = createSqliteStore({ path, migrations: [...SQLITE_MIGRATIONS.slice(0, 1), v2] });
      expect(await upgraded.get(record.execution_id)).toStrictEqual(record);
      await upgraded.close();

      const db = new Database(path);
      expect(schemaVersion(db)).toBe(2);
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'tool_owners'`).get()).toEqual({ name: 'tool_owners' });
      expect(db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()).toEqual([
        { version: 1, name: 'initial schema' },
        { version: 2, name: 'add tool owners' },
      ]);
      expect(migrate(db, 'test', [...SQLITE_MIGRATIONS.slice(0, 1), v2])).toEqual([]);
      db.close();
    });

    it('applies pending migrations atomically: a failing step leaves the old version intact', async () => {
      const path = freshPath();
      await createSqliteStore({ path, migrations: SQLITE_MIGRATIONS.slice(0, 1) }).close();
      const broken: SqliteMigration[] = [
        ...SQLITE_MIGRATIONS.slice(0, 1),
        v2,
        { version: 3, name: 'broken', up: 'CREATE TABLE tool_owners (x INTEGER)' },
      ];
      expect(() => createSqliteStore({ path, migrations: broken })).toThrow(ConfigError);
      const db = new Database(path);
      expect(schemaVersion(db)).toBe(1);
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'tool_owners'`).get()).toBeUndefined();
      db.close();
    });

    it('runs function migrations with the database handle', () => {
      const db = new Database(':memory:');
      const seen: number[] = [];
      const applied = migrate(db, 'mem', [
        ...SQLITE_MIGRATIONS.slice(0, 1),
        { version: 2, name: 'fn', up: (d) => void seen.push(schemaVersion(d)) },
      ]);
      expect(applied).toEqual([1, 2]);
      expect(seen).toEqual([1]);
      db.close();
    });

    it('rejects a malformed migration list', () => {
      const db = new Database(':memory:');
      expect(() => migrate(db, 'mem', [{ ...v2 }])).toThrow(/expected 1/);
      db.close();
    });

    it('refuses a database from a newer version with a ConfigError', async () => {
      const path = freshPath();
      await createSqliteStore({ path, migrations: [...SQLITE_MIGRATIONS.slice(0, 1), v2] }).close();
      const attempt = () => createSqliteStore({ path, migrations: SQLITE_MIGRATIONS.slice(0, 1) });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(/schema version 2, newer than this faultline supports \(1\); upgrade faultline/);
      expect(() => createSqliteStore({ path, readonly: true, migrations: SQLITE_MIGRATIONS.slice(0, 1) })).toThrow(/newer/);
    });
  });

  describe('bad paths', () => {
    it('gives a one-line ConfigError when the directory cannot be created', () => {
      const file = join(root, 'a-file');
      writeFileSync(file, 'not a directory');
      let caught: unknown;
      try {
        createSqliteStore({ path: join(file, 'sub', 'faultline.db') });
      } catch (error) {
        caught = error;
      }
      expect(ConfigError.isInstance(caught)).toBe(true);
      const message = (caught as Error).message;
      expect(message).toMatch(/^cannot create directory ".*a-file\/sub" for the SQLite store: ENOTDIR/);
      expect(message).not.toContain('\n');
    });

    it('gives a ConfigError for a file that is not a database', () => {
      const path = join(root, 'garbage.db');
      writeFileSync(path, 'this is not sqlite, just text that is long enough to look like a header '.repeat(20));
      expect(() => createSqliteStore({ path })).toThrow(ConfigError);
      expect(() => createSqliteStore({ path })).toThrow(/cannot open SQLite store .*garbage\.db.*not a database/);
    });
  });
});
