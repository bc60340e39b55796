/**
 * The store the HTTP fault proxy records into when it runs as a command. A SQLite file gets its
 * writer in a worker thread (`openStore`'s `sqliteWriter: 'worker'`): a recorder batch's
 * transaction (4 ms, 30 ms at a WAL checkpoint) then runs beside the proxy instead of on its
 * event loop, where it held up every request in flight and was most of the proxy's p99 at 32
 * connections. Any other spec (PostgreSQL, memory) opens as openStore opens it: those writes are
 * already asynchronous I/O.
 */
import { openStore, sqliteWriterOf } from '../../store/open-store.js';
import type { Store } from '../../core/store-types.js';

/** Where the SQLite writer of a store opened by {@link openProxyStore} runs. */
export type SqliteWriter = 'worker' | 'thread';

/**
 * Opens the store a `--db` spec names, with a SQLite writer off the event loop when it can be
 * (compiled code; run from TypeScript sources, the writer stays in this thread).
 * @throws ConfigError (one line) when the store cannot be opened.
 * @example
 * const { store, writer } = await openProxyStore('.faultline/faultline.db', process.cwd());
 */
export async function openProxyStore(spec: string, cwd: string): Promise<{ store: Store; writer: SqliteWriter | undefined }> {
  const options = { cwd, sqliteWriter: 'worker' } as const;
  return { store: await openStore(spec, options), writer: sqliteWriterOf(spec, options) };
}
