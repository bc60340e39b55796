import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { runTypeScriptProcess } from '../ts-worker.test-helpers.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';

/** A child process transpiles the TypeScript it imports first: tens of seconds on a loaded machine. */
const CHILD_TIMEOUT_MS = 180_000;

const echo = defineTool({ name: 'echo', description: 'echo', input: { type: 'object' }, execute: (args: unknown) => args });

describe('runtimes left open at exit', () => {
  it('a script that forgets rt.close() still stores its last batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-exit-'));
    try {
      const db = join(dir, 'records.db');
      const here = (file: string) => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));
      const script = join(dir, 'forgetful.ts');
      writeFileSync(
        script,
        [
          `import { createRuntime } from ${here('./runtime.ts')};`,
          `import { defineTool } from ${here('./define-tool.ts')};`,
          `import { createSqliteStore } from ${here('../store/sqlite/sqlite-store.ts')};`,
          `const echo = defineTool({ name: 'echo', description: 'echo', input: { type: 'object' }, execute: (a) => a });`,
          // The default batching: 25 records wait for a batch of 512 or the flush interval.
          `const rt = createRuntime({ tools: [echo], store: createSqliteStore({ path: ${JSON.stringify(db)} }) });`,
          `for (let i = 0; i < 25; i++) await rt.execute('echo', { i });`,
          `console.log('calls done');`,
        ].join('\n'),
      );
      const out = await runTypeScriptProcess(script, join(dir, 'ts'));
      expect(out.trim()).toBe('calls done');
      const read = new Database(db, { readonly: true });
      try {
        const rows = read.prepare('SELECT input_params FROM tool_executions ORDER BY execution_id').all() as { input_params: string }[];
        expect(rows.map((r) => JSON.parse(r.input_params).i)).toEqual([...Array(25).keys()]);
      } finally {
        read.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, CHILD_TIMEOUT_MS);

  it('a hung tool keeps the process alive until its deadline, and its timeout record is stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-exit-'));
    try {
      const db = join(dir, 'records.db');
      const here = (file: string) => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));
      const script = join(dir, 'hung.ts');
      writeFileSync(
        script,
        [
          `import { createRuntime } from ${here('./runtime.ts')};`,
          `import { defineTool } from ${here('./define-tool.ts')};`,
          // A promise that never settles, and no other handle in the process: only the call's deadline is left.
          `const hang = defineTool({ name: 'hang', description: 'never answers', input: { type: 'object' }, timeoutMs: 300, retry: { maxRetries: 0 }, execute: () => new Promise(() => undefined) });`,
          `const rt = createRuntime({ tools: [hang], store: ${JSON.stringify(`sqlite:${db}`)} });`,
          `const r = await rt.execute('hang', { order: 7 });`,
          `console.log(r.record.status);`,
        ].join('\n'),
      );
      // Exit code 0 (runTypeScriptProcess rejects otherwise): the top-level await settled.
      const out = await runTypeScriptProcess(script, join(dir, 'ts'));
      expect(out.trim()).toBe('timeout');
      const read = new Database(db, { readonly: true });
      try {
        expect(read.prepare('SELECT tool_name, status, failure_type FROM tool_executions').all()).toEqual([
          { tool_name: 'hang', status: 'timeout', failure_type: 'timeout' },
        ]);
      } finally {
        read.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, CHILD_TIMEOUT_MS);

  it('a finished call does not keep the process alive for the rest of its timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-exit-'));
    try {
      const here = (file: string) => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));
      const script = join(dir, 'quick.ts');
      writeFileSync(
        script,
        [
          `import { createRuntime } from ${here('./runtime.ts')};`,
          `import { defineTool } from ${here('./define-tool.ts')};`,
          // Ten minutes of deadline: a process that waited for it would outlast the test's timeout.
          `const quick = defineTool({ name: 'quick', description: 'answers at once', input: { type: 'object' }, timeoutMs: 600_000, execute: async () => ({ ok: 1 }) });`,
          `const rt = createRuntime({ tools: [quick], onRecord: () => undefined });`,
          `const r = await rt.execute('quick', {});`,
          `console.log(r.record.status);`,
        ].join('\n'),
      );
      expect((await runTypeScriptProcess(script, join(dir, 'ts'))).trim()).toBe('success');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, CHILD_TIMEOUT_MS);

  it('listens once for all open runtimes, and not at all once they are closed or have no store', async () => {
    const before = process.listenerCount('beforeExit');
    const a = createRuntime({ tools: [echo], store: createMemoryStore() });
    const b = createRuntime({ tools: [echo], store: 'memory:' });
    expect(process.listenerCount('beforeExit')).toBe(before + 1);
    // Records only to onRecord, or to a sink of the caller's own: nothing of ours to close.
    const c = createRuntime({ tools: [echo], onRecord: () => undefined });
    const d = createRuntime({ tools: [echo], recorder: { enqueue: () => undefined } });
    await a.close();
    expect(process.listenerCount('beforeExit')).toBe(before + 1);
    await b.close();
    await b.close();
    expect(process.listenerCount('beforeExit')).toBe(before);
    await c.close();
    await d.close();
    expect(process.listenerCount('beforeExit')).toBe(before);
  });
});
