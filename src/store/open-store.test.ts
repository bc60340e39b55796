import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors.js';
import { makeRecord } from '../record/fixture.js';
import { createMemoryStore } from './memory/memory-store.js';
import { DEFAULT_SQLITE_PATH, openStore } from './open-store.js';
import type { Store } from './types.js';

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
