/**
 * The worker entry of {@link createSqliteWorkerStore}: owns its own better-sqlite3 connection and
 * runs the real `createSqliteStore` on it, so SQLite transactions run off the caller's event loop.
 *
 * Protocol (requests on the parent port, processed strictly in order, so `close` comes after every
 * earlier transaction; replies on `workerData.replies` when given, else the parent port): on
 * start, open the store and post `{ type: 'ready' }` or
 * `{ type: 'open-error', error }`; then for each `{ id, op, args }` (`op: 'insertRows'` with rows
 * encoded by `encodeRecordRows`, or `{ id, op: 'insertRows', batch }` with the rows in one buffer,
 * `row-batch.ts`) post
 * `{ id, ok: true, value }` or `{ id, ok: false, error }`. Insert requests that are waiting
 * together are applied in one transaction, each batch in its own savepoint, and answered
 * one by one (a batch that fails fails alone). `pushCorrectionsJson` is `pushCorrections` with the
 * corrections as one JSON text.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { ConfigError } from '../../core/errors.js';
import type { CorrectionLimits, NewCorrection } from '../../core/store-types.js';
import type { SqliteValue } from './record-row.js';
import { decodeRowBatch, rowCountOfBatch } from './row-batch.js';
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
  'prune',
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

const requestPort = parentPort;
if (requestPort === null) throw new Error('sqlite-worker.js must run in a worker thread');

const init = workerData as WorkerInit;
// Replies go on their own port when the caller sent one (it reads them synchronously when its event loop does not turn).
const port = init.replies ?? requestPort;
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

/**
 * Rows per transaction at most when insert batches queue up. One commit for several batches cost
 * about 10% less per row than a commit each (2048 rows against 512, in perf measurements); the cap
 * bounds how long the first batch of a group waits for its commit.
 */
const MAX_GROUP_ROWS = 4096;

if (store !== undefined) {
  const open = store;
  let work = Promise.resolve();
  requestPort.on('message', (first: WorkerRequest) => {
    // Everything already waiting is taken now, so that insert batches which queued up while the
    // previous transaction ran can share one; requests are still applied in the order posted.
    const requests = [first];
    for (let next = receiveMessageOnPort(requestPort); next !== undefined; next = receiveMessageOnPort(requestPort)) {
      requests.push(next.message as WorkerRequest);
    }
    work = work.then(() => run(open, requests));
  });
}

const isInsert = (request: WorkerRequest): boolean => request.op === 'insertRows';

async function run(s: SqliteRowStore, requests: readonly WorkerRequest[]): Promise<void> {
  let i = 0;
  while (i < requests.length) {
    const request = requests[i]!;
    if (isInsert(request)) {
      const group: WorkerRequest[] = [];
      let rows = 0;
      for (; i < requests.length && isInsert(requests[i]!) && (group.length === 0 || rows < MAX_GROUP_ROWS); i++) {
        group.push(requests[i]!);
        rows += rowCountOf(requests[i]!);
      }
      for (const reply of await insertGroup(s, group)) port.postMessage(reply);
      continue;
    }
    i++;
    port.postMessage(await handle(s, request));
    if (request.op === 'close') {
      if (port !== requestPort) port.close();
      requestPort!.close();
      return;
    }
  }
}

function rowCountOf(request: WorkerRequest): number {
  return request.batch !== undefined ? rowCountOfBatch(request.batch) : ((request.args?.[0] as unknown[] | undefined)?.length ?? 0);
}

/** A request's rows, decoded when the transaction gets to them (bytes that do not decode fail their own request only). */
function rowsOf(request: WorkerRequest): SqliteValue[][] {
  return (request.batch !== undefined ? decodeRowBatch(request.batch) : request.args?.[0]) as SqliteValue[][];
}

async function insertGroup(s: SqliteRowStore, group: readonly WorkerRequest[]): Promise<WorkerReply[]> {
  if (group.length === 1) return [await handle(s, group[0]!)];
  try {
    const errors = await s.insertRowBatches(group.map((request) => () => rowsOf(request)));
    return group.map((request, k) => {
      const error = errors[k];
      return error === undefined
        ? { type: 'reply', id: request.id, ok: true, value: undefined }
        : { type: 'reply', id: request.id, ok: false, error: toWorkerError(error) };
    });
  } catch (error) {
    return group.map((request) => ({ type: 'reply', id: request.id, ok: false, error: toWorkerError(error) }));
  }
}

async function handle(s: SqliteRowStore, request: WorkerRequest): Promise<WorkerReply> {
  try {
    if (request.op === 'close') {
      await s.close();
      return { type: 'reply', id: request.id, ok: true, value: undefined };
    }
    if (request.op === 'pushCorrectionsJson') {
      const [json, limits] = (request.args ?? []) as [string, Partial<CorrectionLimits> | undefined];
      await s.pushCorrections(JSON.parse(json) as NewCorrection[], limits);
      return { type: 'reply', id: request.id, ok: true, value: undefined };
    }
    if (!OPS.has(request.op)) throw new Error(`unknown SQLite worker operation ${JSON.stringify(request.op)}`);
    const args = request.batch !== undefined ? [decodeRowBatch(request.batch)] : (request.args ?? []);
    const method = (s as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[request.op]!;
    const value = await method.apply(s, args);
    return { type: 'reply', id: request.id, ok: true, value };
  } catch (error) {
    return { type: 'reply', id: request.id, ok: false, error: toWorkerError(error) };
  }
}
