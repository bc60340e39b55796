import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { contractDataset } from '../contracts/contract-data.test-helpers.js';
import { runStoreContracts } from '../contracts/run-store-contracts.test-helpers.js';
import { typeScriptWorkerUrl } from '../../ts-worker.test-helpers.js';
import { encodeRowBatch } from './row-batch.js';
import { encodeRecordRows } from './sqlite-store.js';
import { createSqliteWorkerStore } from './sqlite-worker-store.js';

const root = mkdtempSync(join(tmpdir(), 'faultline-sqlite-worker-'));
let counter = 0;
const freshPath = () => join(root, `db-${process.pid}-${++counter}`, 'faultline.db');
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Node 20 cannot run the TypeScript worker entry under vitest; see ts-worker.test-helpers.ts.
const workerUrl = typeScriptWorkerUrl(new URL('./sqlite-worker.ts', import.meta.url), root);

/** A worker that opens nothing and dies on its first request, after `delayMs`. */
const crashPath = join(root, 'crash-worker.mjs');
writeFileSync(
  crashPath,
  `import { parentPort } from 'node:worker_threads';
parentPort.postMessage({ type: 'ready' });
parentPort.on('message', () => setTimeout(() => process.exit(3), 20));
`,
);

/**
 * The real worker, except that a batch whose first record's tool is 'poison' kills the thread
 * (batches arrive as insert rows, tool_name in column 3, or as records).
 */
const poisonPath = join(root, 'poison-worker.mjs');
writeFileSync(
  poisonPath,
  `import { parentPort } from 'node:worker_threads';
parentPort.on('message', (m) => {
  const first = m.args?.[0]?.[0];
  if ((Array.isArray(first) ? first[3] : first?.tool_name) === 'poison') process.exit(4);
});
await import(${JSON.stringify(workerUrl.href)});
`,
);

runStoreContracts('sqlite, writer in a worker (temp file)', () => createSqliteWorkerStore({ path: freshPath(), workerUrl }));
runStoreContracts('sqlite, writer in a worker (:memory:)', () => createSqliteWorkerStore({ path: ':memory:', workerUrl }));
runStoreContracts('sqlite, writer in a worker (records cloned)', () =>
  createSqliteWorkerStore({ path: freshPath(), workerUrl, encoding: 'clone' }),
);

describe('sqlite worker store', () => {
  it('reads on the main thread see every write once its promise resolves', async () => {
    const path = freshPath();
    const store = await createSqliteWorkerStore({ path, workerUrl });
    const data = contractDataset(120);
    await Promise.all([store.insert(data.slice(0, 60)), store.insert(data.slice(60))]);
    expect(await store.count()).toBe(120);
    await store.close();
    const again = await createSqliteWorkerStore({ path, workerUrl });
    expect(await again.get(data[5]!.execution_id)).toStrictEqual(data[5]);
    await again.close();
  });

  it('rejects pending inserts when the worker dies, then starts a new one', async () => {
    const path = freshPath();
    const store = await createSqliteWorkerStore({ path, workerUrl: pathToFileURL(crashPath), reads: 'worker' });
    const data = contractDataset(10);
    await expect(store.insert(data)).rejects.toThrow(/worker exited \(code 3\)/);
    // The next write starts a fresh worker (which crashes again here).
    await expect(store.insert(data)).rejects.toThrow(/worker exited/);
    await store.close();
    await expect(store.insert(data)).rejects.toThrow(/is closed/);
  });

  it('a real worker that dies mid-stream: the pending insert rejects, later ones are stored', async () => {
    const store = await createSqliteWorkerStore({ path: freshPath(), workerUrl: pathToFileURL(poisonPath) });
    const data = contractDataset(40);
    await store.insert(data.slice(0, 10));
    const poisoned = store.insert([{ ...data[10]!, tool_name: 'poison' }]);
    const queued = store.insert(data.slice(11, 20));
    await expect(poisoned).rejects.toThrow(/worker exited \(code 4\)/);
    await expect(queued).rejects.toThrow(/worker exited/);
    await store.insert(data.slice(20));
    expect(await store.count()).toBe(30);
    await store.close();
  });

  it('fails to open with a one-line ConfigError', async () => {
    const dir = join(root, 'not-a-db');
    const path = join(dir, 'x.db');
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(join(root, 'blocker'), 'x');
    const attempt = createSqliteWorkerStore({ path: join(root, 'blocker', 'x.db'), workerUrl });
    await expect(attempt).rejects.toSatisfy(ConfigError.isInstance);
    await expect(attempt).rejects.toThrow(/^[^\n]*$/);
    const missing = createSqliteWorkerStore({ path, workerUrl: new URL('file:///nonexistent/worker.js') });
    await expect(missing).rejects.toSatisfy(ConfigError.isInstance);
  });

  it("refuses another application's database from the writer thread with the same one-line ConfigError", async () => {
    const path = join(root, 'app.db');
    const app = new Database(path);
    app.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)');
    app.close();
    const attempt = createSqliteWorkerStore({ path, workerUrl });
    await expect(attempt).rejects.toSatisfy(ConfigError.isInstance);
    await expect(attempt).rejects.toThrow(/^SQLite file ".*app\.db" is not a faultline store \(it holds other tables: users\); give faultline a file of its own$/);
  });

  it('refuses a malformed record before it leaves the thread, with a ConfigError naming it', async () => {
    const store = await createSqliteWorkerStore({ path: freshPath(), workerUrl });
    const [record] = contractDataset(1);
    expect(() => store.batchEncoding!.encode([{ ...record!, retry_count: 1.5 }])).toThrow(`record ${record!.execution_id} has an invalid retry_count`);
    await store.close();
  });

  it('takes batches in its own encoding (what the recorder sends), idempotent like insert', async () => {
    const store = await createSqliteWorkerStore({ path: freshPath(), workerUrl });
    const twin = await createSqliteWorkerStore({ path: freshPath(), workerUrl });
    const data = contractDataset(80);
    expect(store.maxInsertsInFlight).toBe(Number.POSITIVE_INFINITY);
    const encoding = store.batchEncoding!;
    const first = encoding.encode(data.slice(0, 50));
    // What the recorder spools when a write fails: the records as the store would read them back.
    expect(encoding.decode(first)).toStrictEqual(data.slice(0, 50));
    await Promise.all([store.insertEncoded!(first), store.insertEncoded!(encoding.encode(data.slice(30)))]);
    // The sender keeps its bytes (the recorder holds them until the write is confirmed).
    expect(encoding.decode(first)).toHaveLength(50);
    await twin.insert(data);
    expect(await store.count()).toBe(80);
    expect(await store.get(data[7]!.execution_id)).toStrictEqual(data[7]);
    const window = { since: 0, until: Date.parse('2100-01-01T00:00:00Z') };
    expect(await store.toolStats(window)).toStrictEqual(await twin.toolStats(window));
    expect(await store.failureBreakdown(window)).toStrictEqual(await twin.failureBreakdown(window));
    expect(await store.signatures(window)).toStrictEqual(await twin.signatures(window));
    await store.close();
    await twin.close();
  });

  it('answers each of many batches posted at once; a batch that fails fails alone', async () => {
    const store = await createSqliteWorkerStore({ path: freshPath(), workerUrl });
    const twin = await createSqliteWorkerStore({ path: freshPath(), workerUrl });
    const data = contractDataset(200);
    const encoding = store.batchEncoding!;
    // Rows short of a column: the batch decodes, and its insert throws.
    const broken = encodeRecordRows(data.slice(40, 60)).map((row) => row.slice(0, -1));
    const writes = [
      store.insertEncoded!(encoding.encode(data.slice(0, 20))),
      store.insertEncoded!(encoding.encode(data.slice(20, 40))),
      store.insertEncoded!(encodeRowBatch(broken)),
      store.insertEncoded!(new Uint8Array([1, 2, 3])),
      store.insertEncoded!(encoding.encode(data.slice(60, 130))),
      store.count(),
      store.insertEncoded!(encoding.encode(data.slice(130))),
    ];
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/parameter/i);
    const stored = [...data.slice(0, 40), ...data.slice(60)];
    await twin.insert(stored);
    expect(await store.count()).toBe(stored.length);
    const window = { since: 0, until: Date.parse('2100-01-01T00:00:00Z') };
    expect(await store.toolStats(window)).toStrictEqual(await twin.toolStats(window));
    expect(await store.signatures(window)).toStrictEqual(await twin.signatures(window));
    await store.close();
    await twin.close();
  });

  it('refuses to encode a batch with a record it could not store', async () => {
    const store = await createSqliteWorkerStore({ path: freshPath(), workerUrl });
    const [record] = contractDataset(1);
    expect(() => store.batchEncoding!.encode([{ ...record!, created_at: 'not a date' }])).toThrow(ConfigError);
    await store.close();
  });

  it('close waits for the last transaction', async () => {
    const path = freshPath();
    const store = await createSqliteWorkerStore({ path, workerUrl });
    const data = contractDataset(200);
    const inserts = [store.insert(data.slice(0, 100)), store.insert(data.slice(100))];
    await store.close();
    await Promise.all(inserts);
    const again = await createSqliteWorkerStore({ path, workerUrl });
    expect(await again.count()).toBe(200);
    await again.close();
  });
});
