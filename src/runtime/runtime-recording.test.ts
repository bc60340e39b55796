import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RecordsDroppedError } from '../record/recorder.js';
import { openStoreLazily } from '../store/open-store.js';
import { typeScriptWorkerUrl } from '../ts-worker.test-helpers.js';
import { defineTool } from './define-tool.js';
import { createRuntime, type Runtime } from './runtime.js';
import { HttpError } from './tool-errors.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-rt-recording-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// Node 20 cannot run the TypeScript worker entry under vitest; see ts-worker.test-helpers.ts.
const workers = mkdtempSync(join(tmpdir(), 'faultline-rt-recording-workers-'));
const workerUrl = typeScriptWorkerUrl(new URL('../store/sqlite/sqlite-worker.ts', import.meta.url), workers);
afterAll(() => rmSync(workers, { recursive: true, force: true }));

/** In-memory tools answering at once: a call costs microseconds, and no call lets the event loop turn. */
const tools = [
  defineTool({ name: 'echo', description: 'echo', input: { type: 'object' }, idempotent: true, execute: (args: unknown) => args }),
  defineTool({
    name: 'reserve',
    description: 'fails for odd units',
    input: { type: 'object', properties: { i: { type: 'integer' } } },
    idempotent: true,
    retry: { maxRetries: 0 },
    execute: (args: { i: number }) => {
      if (args.i % 7 === 0) throw new HttpError(409, 'conflict');
      return { ok: args.i };
    },
  }),
];

function storedIds(path: string): Set<number> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT input_params FROM tool_executions').all() as Array<{ input_params: string }>;
    return new Set(rows.map((row) => (JSON.parse(row.input_params) as { i: number }).i));
  } finally {
    db.close();
  }
}

function expectAccounted(rt: Runtime, offered: number): void {
  const s = rt.stats()!;
  expect(s.offered).toBe(offered);
  expect(s.stored + s.spooled + s.inMemory + s.dropped + s.rejected).toBe(offered);
}

/** The two SQLite paths a `sqlite:` spec takes: the writer in this thread (TypeScript sources), or in a worker thread (compiled code). */
const writers = [
  { name: "store: 'sqlite:PATH'", store: (path: string) => `sqlite:${path}` },
  { name: 'the writer thread the compiled sqlite: spec opens', store: (path: string) => openStoreLazily(`sqlite:${path}`, { sqliteWriter: 'worker', sqliteWorkerUrl: workerUrl }) },
] as const;

describe.each(writers)('a burst with the default recording settings ($name)', ({ store }) => {
  it('stores all of 100,000 calls started in one loop, reporting nothing lost on the way', async () => {
    const dir = tempDir();
    const path = join(dir, 'burst.db');
    const errors: unknown[] = [];
    const rt = createRuntime({ tools, store: store(path), recording: { spool: { path: join(dir, 'spool', 'burst.jsonl') }, onError: (e) => errors.push(e) } });
    const total = 100_000;
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < total; i++) calls.push(rt.execute(i % 5 === 0 ? 'reserve' : 'echo', { i }));
    // Offered at once: far more than memory holds (maxQueue 10,000), so most went to disk.
    expect(rt.stats()!.inMemory).toBeLessThanOrEqual(2 * 10_000);
    await Promise.all(calls);
    expectAccounted(rt, total);
    await rt.close();
    const after = rt.stats()!;
    expect(after).toMatchObject({ offered: total, stored: total, spooled: 0, inMemory: 0, dropped: 0, rejected: 0 });
    expect(storedIds(path).size).toBe(total);
    expect(errors.filter((e) => RecordsDroppedError.isInstance(e))).toEqual([]);
    expect(readdirSync(join(dir, 'spool'))).toEqual([]);
    await rt.store?.close();
  }, 300_000);

  it('in durable mode stores every one of 60,000 concurrent calls, each acknowledged only once stored or spooled', async () => {
    const dir = tempDir();
    const path = join(dir, 'durable.db');
    const rt = createRuntime({ tools, store: store(path), recording: { mode: 'durable', spool: { path: join(dir, 'spool', 'durable.jsonl') } } });
    const total = 60_000;
    const calls: Array<Promise<unknown>> = [];
    for (let i = 0; i < total; i++) calls.push(rt.execute('echo', { i }));
    await Promise.all(calls);
    // Every call has resolved: none of its record may be left only in memory.
    const acknowledged = rt.stats()!;
    expect(acknowledged.inMemory).toBe(0);
    expect(acknowledged.stored + acknowledged.spooled).toBe(total);
    await rt.close();
    expect(rt.stats()).toMatchObject({ offered: total, stored: total, spooled: 0, dropped: 0 });
    expect(storedIds(path).size).toBe(total);
    await rt.store?.close();
  }, 300_000);
});

describe('rt.stats()', () => {
  it('accounts for every record, and is undefined without a store of the runtime', async () => {
    const dir = tempDir();
    const rt = createRuntime({ tools, store: `sqlite:${join(dir, 's.db')}`, recording: { spool: { path: join(dir, 'spool', 's.jsonl') } } });
    expect(rt.stats()).toMatchObject({ offered: 0, stored: 0, spooled: 0, inMemory: 0, dropped: 0, rejected: 0, recovered: 0, storeHealthy: true });
    for (let i = 0; i < 30; i++) await rt.execute('reserve', { i });
    expectAccounted(rt, 30);
    await rt.flush();
    expect(rt.stats()).toMatchObject({ offered: 30, stored: 30, inMemory: 0 });
    await rt.close();
    expect(createRuntime({ tools, onRecord: () => undefined }).stats()).toBeUndefined();
    expect(createRuntime({ tools, recorder: { enqueue: () => undefined } }).stats()).toBeUndefined();
  });
});
