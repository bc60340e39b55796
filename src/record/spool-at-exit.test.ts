import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { runTypeScriptProcess } from '../ts-worker.test-helpers.js';
import { createRecorder } from './recorder.js';
import { readSpoolBatches } from './spool.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'faultline-exit-spool-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A child process transpiles the TypeScript it imports first: tens of seconds on a loaded machine. */
const CHILD_TIMEOUT_MS = 180_000;

const here = (file: string): string => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));

async function runScript(lines: string[]): Promise<string> {
  const script = join(dir, 'exits.ts');
  writeFileSync(script, lines.join('\n'));
  return runTypeScriptProcess(script, join(dir, 'ts'));
}

async function spooledParams(spoolDir: string): Promise<number[]> {
  const seen: number[] = [];
  for (const name of readdirSync(spoolDir)) {
    for await (const batch of readSpoolBatches(join(spoolDir, name), { batchSize: 10_000 })) {
      for (const record of batch.records) seen.push((record.input_params as { i: number }).i);
    }
  }
  return seen.sort((a, b) => a - b);
}

describe('records in memory when the process calls process.exit()', () => {
  it('are appended to the spool: the queued ones and the batch whose write never came back', async () => {
    const spool = join(dir, 'spool', 'agent.jsonl');
    const out = await runScript([
      `import { createRecorder } from ${here('./recorder.ts')};`,
      `import { makeRecord } from ${here('./fixture.ts')};`,
      // A store whose writes never finish: the first batch is in flight, the rest queued.
      `const store = { kind: 'memory', insert: () => new Promise(() => undefined), close: async () => undefined };`,
      `const rec = createRecorder({ store, batchSize: 512, flushIntervalMs: 60_000, spool: { path: ${JSON.stringify(spool)} } });`,
      `for (let i = 0; i < 1200; i++) rec.enqueue(makeRecord({ input_params: { i } }));`,
      `await new Promise((resolve) => setTimeout(resolve, 20));`,
      `console.log(JSON.stringify(rec.stats()));`,
      `process.exit(0);`,
    ]);
    const stats = JSON.parse(out) as { queued: number; spooled: number };
    expect(stats).toMatchObject({ queued: 1200, spooled: 0 });
    expect(await spooledParams(join(dir, 'spool'))).toEqual([...Array(1200).keys()]);
  }, CHILD_TIMEOUT_MS);

  it('reach the store through the next recorder on the same spool, each once', async () => {
    const db = join(dir, 'records.db');
    const spool = join(dir, 'spool', 'agent.jsonl');
    const out = await runScript([
      `import { createRuntime } from ${here('../runtime/runtime.ts')};`,
      `import { defineTool } from ${here('../runtime/define-tool.ts')};`,
      `import { createSqliteStore } from ${here('../store/sqlite/sqlite-store.ts')};`,
      `const echo = defineTool({ name: 'echo', description: 'echo', input: { type: 'object' }, execute: (a) => a });`,
      `const rt = createRuntime({ tools: [echo], store: createSqliteStore({ path: ${JSON.stringify(db)} }), recording: { flushIntervalMs: 60_000, spool: { path: ${JSON.stringify(spool)} } } });`,
      `for (let i = 0; i < 25; i++) await rt.execute('echo', { i });`,
      `console.log('calls done');`,
      // No rt.close(): process.exit() skips beforeExit, where a forgotten runtime is closed.
      `process.exit(0);`,
    ]);
    expect(out.trim()).toBe('calls done');
    expect(await spooledParams(join(dir, 'spool'))).toEqual([...Array(25).keys()]);

    const store = createSqliteStore({ path: db });
    const rec = createRecorder({ store, spool: { path: spool } });
    await rec.close();
    await store.close();
    expect(rec.stats().replayed).toBe(25);
    const read = new Database(db, { readonly: true });
    try {
      const rows = read.prepare('SELECT input_params FROM tool_executions').all() as { input_params: string }[];
      expect(rows.map((r) => (JSON.parse(r.input_params) as { i: number }).i).sort((a, b) => a - b)).toEqual([...Array(25).keys()]);
    } finally {
      read.close();
    }
    expect(readdirSync(join(dir, 'spool'))).toEqual([]);
  }, CHILD_TIMEOUT_MS);

  it('listens once for all recorders with a spool, and stops once they are closed', async () => {
    const before = process.listenerCount('exit');
    const store = createMemoryStore();
    const a = createRecorder({ store, spool: { path: join(dir, 'a.jsonl') } });
    const b = createRecorder({ store, spool: { path: join(dir, 'b.jsonl') } });
    const none = createRecorder({ store, spool: false });
    expect(process.listenerCount('exit')).toBe(before + 1);
    await a.close();
    expect(process.listenerCount('exit')).toBe(before + 1);
    await b.close();
    await b.close();
    expect(process.listenerCount('exit')).toBe(before);
    await none.close();
    expect(process.listenerCount('exit')).toBe(before);
    // A healthy store took everything: nothing was spooled.
    expect(existsSync(join(dir, 'a.jsonl'))).toBe(false);
  });
});
