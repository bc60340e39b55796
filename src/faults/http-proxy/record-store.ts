/**
 * The store the HTTP fault proxy records into when it runs as a command. A SQLite file gets its
 * writer in a worker thread (createSqliteWorkerStore): a recorder batch's transaction (4 ms, 30 ms
 * at a WAL checkpoint) then runs beside the proxy instead of on its event loop, where it held up
 * every request in flight and was most of the proxy's p99 at 32 connections. Any other spec
 * (PostgreSQL, memory) opens as openStore opens it: those writes are already asynchronous I/O.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openStore, sqlitePathOf } from '../../store/open-store.js';
import { createSqliteWorkerStore } from '../../store/sqlite/sqlite-worker-store.js';
import type { Store } from '../../store/types.js';

/** The worker's compiled entry, which createSqliteWorkerStore starts by default. */
const WORKER_ENTRY = new URL('../../store/sqlite/sqlite-worker.js', import.meta.url);

/** Where the SQLite writer of a store opened by {@link openProxyStore} runs. */
export type SqliteWriter = 'worker' | 'thread';

/**
 * Whether the SQLite writer can run in a worker: only compiled code has the worker's `.js` entry
 * beside it. Run from TypeScript sources (the unit tests), the writer stays in this thread.
 */
export function sqliteWriterAvailable(): SqliteWriter {
  return existsSync(fileURLToPath(WORKER_ENTRY)) ? 'worker' : 'thread';
}

/**
 * Opens the store a `--db` spec names, with a SQLite writer off the event loop when it can be.
 * @throws ConfigError (one line) when the store cannot be opened.
 * @example
 * const { store, writer } = await openProxyStore('.faultline/faultline.db', process.cwd());
 */
export async function openProxyStore(spec: string, cwd: string): Promise<{ store: Store; writer: SqliteWriter | undefined }> {
  const path = sqlitePathOf(spec, cwd);
  if (path === undefined || sqliteWriterAvailable() === 'thread') {
    return { store: await openStore(spec, { cwd }), writer: path === undefined ? undefined : 'thread' };
  }
  return { store: await createSqliteWorkerStore({ path }), writer: 'worker' };
}
