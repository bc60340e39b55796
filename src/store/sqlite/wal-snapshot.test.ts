/**
 * A WAL-mode store in a read-only directory, on a real read-only bind mount (tests run as root,
 * so file modes would not stop SQLite from creating its -shm file). Where mounting is not
 * permitted, the suite is skipped with the reason printed.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { runCapture, startCli, waitFor } from '../../cli/run-cli.test-helpers.js';
import { CONTRACT_T0, contractDataset } from '../contracts/contract-data.test-helpers.js';
import { createMemoryStore } from '../memory/memory-store.js';
import { createSqliteStore } from './sqlite-store.js';

const root = mkdtempSync(join(tmpdir(), 'faultline-wal-ro-'));
const source = join(root, 'source');
const mounted = join(root, 'read-only');
mkdirSync(join(source, 'closed'), { recursive: true });
mkdirSync(join(source, 'pending'), { recursive: true });
mkdirSync(join(source, 'leftover'), { recursive: true });
mkdirSync(join(source, 'follow'), { recursive: true });
mkdirSync(join(source, 'grow'), { recursive: true });
mkdirSync(mounted);

const data = contractDataset(120);
const closed = createSqliteStore({ path: join(source, 'closed', 'agents.db') });
await closed.insert(data);
await closed.close();
// Stores another process writes to later, through a path it can write (the read-only mount's source).
for (const dir of ['follow', 'grow']) {
  const store = createSqliteStore({ path: join(source, dir, 'agents.db') });
  await store.insert(data.slice(0, 5));
  await store.close();
}
// A copy taken while a writer had the store open: its last transactions are only in the -wal.
const writer = createSqliteStore({ path: join(source, 'live.db') });
await writer.insert(data.slice(0, 10));
copyFileSync(join(source, 'live.db'), join(source, 'pending', 'agents.db'));
copyFileSync(join(source, 'live.db-wal'), join(source, 'pending', 'agents.db-wal'));
// A copy of the whole directory of a store in use (or one a writer crashed on): -wal and -shm too.
for (const suffix of ['', '-wal', '-shm']) copyFileSync(join(source, `live.db${suffix}`), join(source, 'leftover', `agents.db${suffix}`));
await writer.close();
const chats = join(source, 'chats.jsonl');
writeFileSync(chats, `${JSON.stringify({ id: 'c1', messages: [{ role: 'user', content: 'weather?' }] })}\n`);

function mountReadOnly(): string | null {
  try {
    execFileSync('mount', ['--bind', source, mounted], { stdio: 'pipe' });
  } catch (error) {
    return String((error as { stderr?: unknown }).stderr ?? error).trim() || 'mount failed';
  }
  try {
    execFileSync('mount', ['-o', 'remount,ro,bind', mounted], { stdio: 'pipe' });
    return null;
  } catch (error) {
    execFileSync('umount', [mounted]);
    return String((error as { stderr?: unknown }).stderr ?? error).trim() || 'remount read-only failed';
  }
}

const notMounted = mountReadOnly();
afterAll(() => {
  // Lazily: a handle a failed test left open must not keep the mount (and the test) alive.
  if (notMounted === null) execFileSync('umount', ['-l', mounted]);
  rmSync(root, { recursive: true, force: true });
});
if (notMounted !== null) console.warn(`skipping read-only WAL store tests: cannot bind-mount read-only: ${notMounted}`);
const describeMounted = notMounted === null ? describe : describe.skip;

/** A store file in a writable directory holding `data[from..to)`, for {@link otherWriter} to copy. */
async function batchFile(from: number, to: number): Promise<string> {
  const path = join(root, 'batches', `${from}-${to}.db`);
  const store = createSqliteStore({ path });
  await store.insert(data.slice(from, to));
  await store.close();
  return path;
}

/**
 * Another process writing to the store at `path` (SQLite shares its locks and -shm mapping among
 * the connections of one process, so a writer in this one would hide what a reader elsewhere
 * meets): it copies the records of each store file it is given, and holds the store open until
 * closed.
 */
function otherWriter(path: string): { add: (file: string) => Promise<void>; close: () => Promise<void> } {
  const script = `
    const Database = require(process.argv[1]);
    const db = new Database(process.argv[2]);
    db.pragma('busy_timeout = 5000');
    require('node:readline').createInterface({ input: process.stdin }).on('line', (file) => {
      db.prepare('ATTACH ? AS batch').run(file);
      db.exec('INSERT INTO main.tool_executions SELECT * FROM batch.tool_executions; DETACH batch');
      process.stdout.write('added\\n');
    }).on('close', () => db.close());`;
  const child = spawn(process.execPath, ['-e', script, createRequire(import.meta.url).resolve('better-sqlite3'), path], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  let acks = 0;
  let awaited = 0;
  child.stdout.on('data', (chunk: Buffer) => (acks += String(chunk).split('added').length - 1));
  return {
    add: async (file) => {
      child.stdin.write(`${file}\n`);
      awaited += 1;
      const want = awaited;
      await waitFor(() => (acks >= want ? true : undefined), 'the other process to write');
    },
    close: async () => {
      child.stdin.end();
      expect(await exited).toBe(0);
    },
  };
}

const window = { since: CONTRACT_T0 - 86_400_000, until: CONTRACT_T0 + 2 * 86_400_000 };

describeMounted('a WAL store in a read-only directory', () => {
  it('is read from a copy in memory by a read-only open, as it was when closed', async () => {
    const path = join(mounted, 'closed', 'agents.db');
    const original = createMemoryStore();
    await original.insert(data);
    const store = createSqliteStore({ path, readonly: true });
    expect(await store.count()).toBe(data.length);
    expect(await store.get(data[5]!.execution_id)).toStrictEqual(data[5]);
    expect(await store.toolStats(window)).toStrictEqual(await original.toolStats(window));
    await expect(store.insert(contractDataset(1))).rejects.toSatisfy(ConfigError.isInstance);
    await store.close();
    await original.close();
    expect(readdirSync(join(mounted, 'closed'))).toEqual(['agents.db']);
  });

  it('can be reported on by the CLI', async () => {
    const run = await runCapture(['stats', '--json', '--db', join(mounted, 'closed', 'agents.db'), '--since', '2020-01-01T00:00Z'], root);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
  });

  it('is refused in one line when its -wal holds transactions a copy of the file would miss', async () => {
    const path = join(mounted, 'pending', 'agents.db');
    expect(existsSync(`${path}-wal`)).toBe(true);
    const attempt = () => createSqliteStore({ path, readonly: true });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^cannot read SQLite store ".*agents\.db": its directory is read-only and its write-ahead log \(-wal\) cannot be read without a -shm file there; copy/);
    const run = await runCapture(['alerts', '--db', path], root);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')).toHaveLength(2);
  });

  it('with the -wal and -shm of a writer left beside it, is read where it lies, -wal included', async () => {
    const path = join(mounted, 'leftover', 'agents.db');
    const store = createSqliteStore({ path, readonly: true });
    expect(await store.count()).toBe(10);
    expect(await store.get(data[9]!.execution_id)).toStrictEqual(data[9]);
    await store.close();
    for (const argv of [
      ['stats', '--json', '--db', path, '--since', '2020-01-01T00:00Z'],
      ['alerts', '--db', path],
    ]) {
      const run = await runCapture(argv, root);
      expect({ argv, stderr: run.stderr, code: run.code }).toStrictEqual({ argv, stderr: '', code: 0 });
    }
    // The store holds records and no trajectories, so export reads it and says it had nothing to
    // write (exit 3), which is not a store error (exit 2).
    const exported = await runCapture(['export', '--format', 'trajectories', '--db', path, '--out', join(root, 'leftover.jsonl')], root);
    expect(exported.code).toBe(3);
    expect(exported.stderr).toMatch(/^faultline export: no trajectories examples written:\n\s*no trajectories in the store/);
    const tail = await runCapture(['tail', '--once', '--all', '--json', '--db', path], root);
    expect(tail.stderr).toBe('');
    expect(tail.stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { execution_id: string }).execution_id)).toEqual(
      data.slice(0, 10).map((r) => r.execution_id),
    );
    expect(readdirSync(join(mounted, 'leftover')).sort()).toEqual(['agents.db', 'agents.db-shm', 'agents.db-wal']);
  });

  it.each([
    ['with the -wal and -shm of a writer left beside it', 'leftover'],
    ['closed', 'closed'],
  ])('%s, is refused to a writer at the open with one ConfigError saying it is read-only', async (_, dir) => {
    const path = join(mounted, dir, 'agents.db');
    const attempt = () => createSqliteStore({ path });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(new RegExp(`^cannot write to SQLite store ".*agents\\.db": .*read-only`));
    const before = readdirSync(join(mounted, dir)).sort();
    const run = await runCapture(['import', '--format', 'openai', chats, '--db', path], root);
    expect(run.stderr).toMatch(/^faultline: cannot write to SQLite store .*read-only/);
    expect(run.stderr.split('\n')).toHaveLength(2);
    expect(run.code).toBe(2);
    expect(readdirSync(join(mounted, dir)).sort()).toEqual(before);
  });

  it('is read anew when another process added to the file, while it writes and after', async () => {
    const path = join(mounted, 'grow', 'agents.db');
    const store = createSqliteStore({ path, readonly: true });
    expect(await store.count()).toBe(5);
    // Closed again before the next read: the file changed, and no -shm is there.
    const first = otherWriter(join(source, 'grow', 'agents.db'));
    await first.add(await batchFile(5, 7));
    await first.close();
    expect(await store.count()).toBe(7);
    // Open while the store reads: its -shm is there.
    const second = otherWriter(join(source, 'grow', 'agents.db'));
    await second.add(await batchFile(7, 9));
    expect(await store.count()).toBe(9);
    await second.add(await batchFile(9, 11));
    expect(await store.count()).toBe(11);
    await second.close();
    expect(await store.count()).toBe(11);
    const third = otherWriter(join(source, 'grow', 'agents.db'));
    await third.add(await batchFile(11, 13));
    expect(await store.count()).toBe(13);
    await third.close();
    expect(await store.get(data[12]!.execution_id)).toStrictEqual(data[12]);
    expect(await store.count()).toBe(13);
    await store.close();
  });

  it('is followed by tail as another process adds to it, while it writes and after', async () => {
    const path = join(mounted, 'follow', 'agents.db');
    const tail = startCli(['tail', '--all', '--json', '-n', '1', '--interval', '20ms', '--db', path], root);
    const printed = () => tail.captured.stdout().split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { execution_id: string }).execution_id);
    const shown = (n: number) => waitFor(() => (printed().length >= n ? true : undefined), `${n} records from tail`);
    try {
      await shown(1);
      const first = otherWriter(join(source, 'follow', 'agents.db'));
      await first.add(await batchFile(5, 7));
      await first.close();
      await shown(3);
      const second = otherWriter(join(source, 'follow', 'agents.db'));
      await second.add(await batchFile(7, 9));
      await shown(5);
      await second.add(await batchFile(9, 11));
      await shown(7);
      await second.close();
      const third = otherWriter(join(source, 'follow', 'agents.db'));
      await third.add(await batchFile(11, 13));
      await shown(9);
      await third.close();
    } finally {
      tail.stop();
    }
    expect(await tail.exit).toBe(0);
    expect(printed()).toStrictEqual(data.slice(4, 13).map((r) => r.execution_id));
    expect(tail.captured.stderr()).toBe('');
  });
});
