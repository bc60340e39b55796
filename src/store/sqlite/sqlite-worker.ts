/**
 * The worker entry of {@link createSqliteWorkerStore}: owns its own better-sqlite3 connection and
 * runs the real `createSqliteStore` on it, so SQLite transactions run off the caller's event loop.
 *
 * Protocol (one parent port, processed strictly in order, so `close` comes after every earlier
 * transaction): on start, open the store and post `{ type: 'ready' }` or
 * `{ type: 'open-error', error }`; then for each `{ id, op, args }` (`op: 'insertRows'` with rows
 * encoded by `encodeRecordRows`, or `{ id, op: 'insertRows', batch }` with the rows in V8's
 * structured-clone format, `sqliteBatchEncoding`) post
 * `{ id, ok: true, value }` or `{ id, ok: false, error }`.
 */
import { deserialize } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { ConfigError } from '../../errors.js';
import { createSqliteRowStore, type SqliteRowStore } from './sqlite-store.js';
import type { WorkerError, WorkerInit, WorkerReply, WorkerRequest } from './sqlite-worker-store.js';

function toWorkerError(error: unknown): WorkerError {
  const e = error instanceof Error ? error : new Error(String(error));
  return {
    name: e.name,
    message: e.message,
    config: ConfigError.isInstance(e),
    ...(ConfigError.isInstance(e) && e.field !== undefined ? { field: e.field } : {}),
  };
}

const OPS = new Set<string>([
  'insert',
  'insertRows',
  'insertTrajectories',
  'updateTrajectories',
  'get',
  'query',
  'count',
  'toolStats',
  'failureBreakdown',
  'hourly',
  'signatures',
  'getTrajectory',
  'queryTrajectories',
  'countTrajectories',
  'pushCorrection',
  'pushCorrections',
  'latestCorrection',
  'listCorrections',
]);

const port = parentPort;
if (port === null) throw new Error('sqlite-worker.js must run in a worker thread');

const init = workerData as WorkerInit;
let store: SqliteRowStore | undefined;
try {
  store = createSqliteRowStore({
    path: init.path,
    ...(init.busyTimeoutMs !== undefined ? { busyTimeoutMs: init.busyTimeoutMs } : {}),
  });
  port.postMessage({ type: 'ready' } satisfies WorkerReply);
} catch (error) {
  port.postMessage({ type: 'open-error', error: toWorkerError(error) } satisfies WorkerReply);
}

if (store !== undefined) {
  const open = store;
  port.on('message', (request: WorkerRequest) => {
    void handle(open, request).then((reply) => {
      port.postMessage(reply);
      if (request.op === 'close') port.close();
    });
  });
}

async function handle(s: SqliteRowStore, request: WorkerRequest): Promise<WorkerReply> {
  try {
    if (request.op === 'close') {
      await s.close();
      return { type: 'reply', id: request.id, ok: true, value: undefined };
    }
    if (!OPS.has(request.op)) throw new Error(`unknown SQLite worker operation ${JSON.stringify(request.op)}`);
    const args = request.batch !== undefined ? [deserialize(request.batch)] : (request.args ?? []);
    const method = (s as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[request.op]!;
    const value = await method.apply(s, args);
    return { type: 'reply', id: request.id, ok: true, value };
  } catch (error) {
    return { type: 'reply', id: request.id, ok: false, error: toWorkerError(error) };
  }
}
