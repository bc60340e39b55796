import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { makeRecord } from '../record/fixture.js';
import { createMemoryStore } from './memory/memory-store.js';
import { typeScriptWorkerUrl } from '../ts-worker.test-helpers.js';
import { createRecorder } from '../record/recorder.js';
import { DEFAULT_SQLITE_PATH, displayStoreSpec, openStore, openStoreLazily, sqliteWriterOf } from './open-store.js';
import type { Store } from '../core/store-types.js';

const cwd = mkdtempSync(join(tmpdir(), 'faultline-open-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

async function roundTrip(store: Store): Promise<void> {
  const record = makeRecord({ created_at: '2025-03-10T08:00:00.000Z' });
  await store.insert([record]);
  expect(await store.get(record.execution_id)).toStrictEqual(record);
  await store.close();
}

describe('openStore', () => {
  it('defaults to SQLite at .faultline/faultline.db under cwd', async () => {
    const store = await openStore(undefined, { cwd });
    expect(store.kind).toBe('sqlite');
    await roundTrip(store);
    expect(existsSync(join(cwd, DEFAULT_SQLITE_PATH))).toBe(true);
  });

  it.each([':memory:', 'memory:', ' memory: '])('opens a memory store for %j', async (spec) => {
    const store = await openStore(spec, { cwd });
    expect(store.kind).toBe('memory');
    await roundTrip(store);
  });

  it.each([
    ['sqlite:data/a.db', 'data/a.db'],
    ['sqlite:data/no-extension', 'data/no-extension'],
    ['sqlite://data/b.db', 'data/b.db'],
    ['nested/c.sqlite', 'nested/c.sqlite'],
    ['nested/d.sqlite3', 'nested/d.sqlite3'],
    ['e.DB', 'e.DB'],
  ])('opens SQLite for %j, relative to cwd', async (spec, relative) => {
    const store = await openStore(spec, { cwd });
    expect(store.kind).toBe('sqlite');
    await roundTrip(store);
    expect(existsSync(join(cwd, relative))).toBe(true);
  });

  it('accepts absolute SQLite paths and the sqlite:/// spelling', async () => {
    const abs = join(cwd, 'abs', 'f.db');
    await roundTrip(await openStore(abs, { cwd: '/nonexistent' }));
    expect(existsSync(abs)).toBe(true);
    const viaUrl = join(cwd, 'abs', 'g.db');
    await roundTrip(await openStore(`sqlite://${viaUrl}`, { cwd: '/nonexistent' }));
    expect(existsSync(viaUrl)).toBe(true);
  });

  it('opens SQLite read-only when asked', async () => {
    const path = join(cwd, 'ro.db');
    await (await openStore(path, { cwd })).close();
    const store = await openStore(path, { cwd, readonly: true });
    await expect(store.insert([makeRecord()])).rejects.toSatisfy(ConfigError.isInstance);
    await store.close();
  });

  it('puts the writer of a SQLite file in a worker thread when asked and able, else in this thread', async () => {
    const sqliteWorkerUrl = typeScriptWorkerUrl(new URL('./sqlite/sqlite-worker.ts', import.meta.url), join(cwd, 'workers'));
    const path = join(cwd, 'writer', 'w.db');
    const store = await openStore(`sqlite:${path}`, { cwd, sqliteWriter: 'worker', sqliteWorkerUrl });
    // The writer thread's store: it takes the recorder's encoded batches.
    expect(store.batchEncoding).toBeDefined();
    expect(store.maxInsertsInFlight).toBe(Number.POSITIVE_INFINITY);
    await roundTrip(store);
    expect(sqliteWriterOf(`sqlite:${path}`, { cwd, sqliteWriter: 'worker', sqliteWorkerUrl })).toBe('worker');
    // Read-only opens and in-memory databases never start a writer.
    const readonly = await openStore(path, { cwd, readonly: true, sqliteWriter: 'worker', sqliteWorkerUrl });
    expect(readonly.batchEncoding).toBeUndefined();
    await readonly.close();
    expect(sqliteWriterOf(path, { cwd, readonly: true, sqliteWriter: 'worker', sqliteWorkerUrl })).toBe('thread');
    expect(sqliteWriterOf('sqlite::memory:', { cwd, sqliteWriter: 'worker', sqliteWorkerUrl })).toBeUndefined();
    expect(sqliteWriterOf('postgres://localhost/x', { cwd, sqliteWriter: 'worker' })).toBeUndefined();
    // Run from TypeScript sources there is no compiled worker entry: the writer stays in this thread.
    const fallback = await openStore(join(cwd, 'writer', 'x.db'), { cwd, sqliteWriter: 'worker' });
    expect(fallback.batchEncoding).toBeUndefined();
    expect(sqliteWriterOf(join(cwd, 'writer', 'x.db'), { cwd, sqliteWriter: 'worker' })).toBe('thread');
    await roundTrip(fallback);
    // The default is this thread.
    const thread = await openStore(join(cwd, 'writer', 'y.db'), { cwd, sqliteWorkerUrl });
    expect(thread.batchEncoding).toBeUndefined();
    await roundTrip(thread);
  });

  it('opens lazily, declaring up front what the writer thread declares, for the recorder to read before the open', async () => {
    const sqliteWorkerUrl = typeScriptWorkerUrl(new URL('./sqlite/sqlite-worker.ts', import.meta.url), join(cwd, 'workers'));
    const path = join(cwd, 'lazy', 'l.db');
    const lazy = openStoreLazily(`sqlite:${path}`, { cwd, sqliteWriter: 'worker', sqliteWorkerUrl });
    expect(lazy.maxInsertsInFlight).toBe(Number.POSITIVE_INFINITY);
    expect(lazy.batchEncoding).toBeDefined();
    expect(existsSync(path)).toBe(false);
    const sent = Array.from({ length: 30 }, () => makeRecord({ created_at: '2025-03-10T08:00:00.000Z' }));
    const recorder = createRecorder({ store: lazy, batchSize: 10, spool: false });
    for (const record of sent) recorder.enqueue(record);
    await recorder.close();
    expect(recorder.stats()).toMatchObject({ written: 30, spooled: 0 });
    expect((await lazy.opened()).batchEncoding).toBeDefined();
    expect(await lazy.count()).toBe(30);
    expect(await lazy.get(sent[4]!.execution_id)).toStrictEqual(sent[4]);
    await lazy.close();
    // Without a writer thread (from TypeScript sources, or another kind) nothing is declared.
    const plain = openStoreLazily(join(cwd, 'lazy', 'p.db'), { cwd, sqliteWriter: 'worker' });
    expect(plain.batchEncoding).toBeUndefined();
    expect(plain.maxInsertsInFlight).toBeUndefined();
    await plain.close();
    expect(openStoreLazily('memory:').batchEncoding).toBeUndefined();
  });

  it('returns a Store object unchanged', async () => {
    const store = createMemoryStore();
    expect(await openStore(store)).toBe(store);
  });

  it.each(['mysql://u:secret@h/db', 'faultline', 'redis://x', '', 'sqlite:', 'data.json'])(
    'refuses %j with a one-line ConfigError listing the accepted forms',
    async (spec) => {
      const error = await openStore(spec, { cwd }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(ConfigError.isInstance(error)).toBe(true);
      const message = (error as Error).message;
      expect(message).not.toContain('\n');
      expect(message).toContain('postgres://');
      expect(message).toContain('.db');
      expect(message).not.toContain('secret');
    },
  );

  it('refuses a non-Store object', async () => {
    await expect(openStore({ kind: 'memory' } as unknown as Store)).rejects.toSatisfy(ConfigError.isInstance);
  });
});

describe('displayStoreSpec', () => {
  it("hides a URL's password and keeps everything else, so a printed command still works without one", () => {
    expect(displayStoreSpec('postgres://app:s3cr3t@db.internal:5432/faultline')).toBe('postgres://app:***@db.internal:5432/faultline');
    expect(displayStoreSpec('postgres://app:p@ss:w0rd@db/x?sslmode=require')).toBe('postgres://app:***@db/x?sslmode=require');
    expect(displayStoreSpec('postgres://postgres@127.0.0.1:5432/test')).toBe('postgres://postgres@127.0.0.1:5432/test');
    expect(displayStoreSpec('postgresql://:onlypw@host/db')).toBe('postgresql://:***@host/db');
    expect(displayStoreSpec('postgres://u:pw@host?application_name=a@b')).toBe('postgres://u:***@host?application_name=a@b');
    expect(displayStoreSpec('.faultline/faultline.db')).toBe('.faultline/faultline.db');
    expect(displayStoreSpec('sqlite:///tmp/a:b@c.db')).toBe('sqlite:///tmp/a:b@c.db');
  });
});
