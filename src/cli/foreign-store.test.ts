/**
 * Every command that opens a store, given one that is not faultline's (another program's
 * schema_migrations, another application's tables) or a damaged one: one line, exit 2 (for
 * `alerts`, exit 1 would mean "alerts firing"), nothing written.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { contractDataset } from '../store/contracts/contract-data.test-helpers.js';
import { writeDamagedStore } from '../store/sqlite/damaged-store.test-helpers.js';
import { describePostgres, PG_URL, useTestSchema } from '../store/postgres/test-server.test-helpers.js';
import { runCapture } from './run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-foreign-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chats = join(dir, 'chats.jsonl');
writeFileSync(chats, `${JSON.stringify({ id: 'c1', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] })}\n`);

/** The commands that open `--db`, reading and writing. */
const COMMANDS: readonly (readonly string[])[] = [
  ['stats'],
  ['alerts'],
  ['tail', '--once'],
  ['export', '--format', 'sft', '--out', join(dir, 'out.jsonl')],
  ['import', '--format', 'openai', chats],
  ['demo'],
];
const WRITERS = new Set(['import', 'demo']);

let n = 0;
function sqliteFile(label: string, setup: (db: Database.Database) => void): string {
  const path = join(dir, `${label}-${++n}.db`);
  const db = new Database(path);
  setup(db);
  db.close();
  return path;
}

async function expectRefused(argv: readonly string[], db: string, line: RegExp): Promise<void> {
  const run = await runCapture([...argv, '--db', db], dir);
  expect({ argv, code: run.code, stdout: run.stdout }).toStrictEqual({ argv, code: 2, stdout: '' });
  expect(run.stderr).toMatch(line);
  expect(run.stderr.split('\n')).toHaveLength(2);
  expect(existsSync(join(dir, 'out.jsonl'))).toBe(false);
}

describe('commands given a SQLite file that is not a faultline store', () => {
  it("refuse another program's schema_migrations, leaving the file as it was", async () => {
    const golang = sqliteFile('golang', (db) => db.exec('CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean); INSERT INTO schema_migrations VALUES (1, 0)'));
    const rails = sqliteFile('rails', (db) => db.exec("CREATE TABLE schema_migrations (version varchar PRIMARY KEY); INSERT INTO schema_migrations VALUES ('20240101000000')"));
    for (const file of [golang, rails]) {
      const before = readFileSync(file);
      for (const argv of COMMANDS) {
        await expectRefused(argv, file, /^faultline: SQLite file ".*" is not a faultline store: its schema_migrations table \(version.*\) belongs to another program\n$/);
      }
      expect(readFileSync(file).equals(before)).toBe(true);
    }
  });

  it("refuse to write faultline's tables into another application's database", async () => {
    const app = sqliteFile('app', (db) => db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)'));
    const before = readFileSync(app);
    for (const argv of COMMANDS) {
      const line = WRITERS.has(argv[0]!)
        ? /^faultline: SQLite file ".*" is not a faultline store \(it holds other tables: users\); give faultline a file of its own\n$/
        : /^faultline: SQLite file ".*" is not a faultline store \(it has none of faultline's tables\)\n$/;
      await expectRefused(argv, app, line);
    }
    expect(readFileSync(app).equals(before)).toBe(true);
  });

  it('report a store damaged past its schema as damaged', async () => {
    const damaged = await writeDamagedStore(join(dir, 'damaged.db'), contractDataset(200));
    for (const argv of COMMANDS) {
      const copy = join(dir, `damaged-copy-${++n}.db`);
      copyFileSync(damaged, copy);
      await expectRefused(argv, copy, /^faultline: SQLite store ".*" is damaged: database disk image is malformed\n$/);
    }
  });

  it('demo reports the damage when only some of its records could be stored', async () => {
    // Only the index of failed calls is damaged: the successes go in, the failures do not.
    const partly = await writeDamagedStore(join(dir, 'partly.db'), contractDataset(200), ['idx_failure_type']);
    await expectRefused(['demo'], partly, /^faultline: SQLite store ".*partly\.db" is damaged: database disk image is malformed\n$/);
  });
});

const describePg = await describePostgres('foreign PostgreSQL schema tests');

describePg('commands given a PostgreSQL schema that is not a faultline store', () => {
  const golang = useTestSchema('faultline_foreign_golang');
  const app = useTestSchema('faultline_foreign_app');

  it("refuse another program's schema_migrations and another application's tables, adding nothing", async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA ${golang.schema}; CREATE TABLE ${golang.schema}.schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL); INSERT INTO ${golang.schema}.schema_migrations VALUES (1, false)`);
      await admin.query(`CREATE SCHEMA ${app.schema}; CREATE TABLE ${app.schema}.users (id int)`);
      for (const argv of COMMANDS) {
        await expectRefused(argv, golang.url, new RegExp(`^faultline: PostgreSQL schema "${golang.schema}" is not a faultline store: its schema_migrations table \\(version, dirty\\) belongs to another program\\n$`));
        const line = WRITERS.has(argv[0]!)
          ? new RegExp(`^faultline: PostgreSQL schema "${app.schema}" is not a faultline store \\(it holds other tables: users\\); give faultline a schema of its own \\(\\?schema=NAME\\)\\n$`)
          : new RegExp(`^faultline: no faultline store in PostgreSQL schema "${app.schema}"`);
        await expectRefused(argv, app.url, line);
      }
      const tables = await admin.query('SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema IN ($1, $2) ORDER BY 1, 2', [golang.schema, app.schema]);
      expect(tables.rows).toEqual([
        { table_schema: app.schema, table_name: 'users' },
        { table_schema: golang.schema, table_name: 'schema_migrations' },
      ]);
    } finally {
      await admin.end();
    }
  });
});
