/**
 * A process killed outright (SIGKILL: no `exit` event, nothing runs) while its agent loop never
 * yields to the event loop loses at most the recorder's window: records only in memory, which
 * are at most `maxQueue` (10,000) and at most `maxUnsavedMs` (1 s) old, checked at least every 64
 * records. Measured in a child process, killed at several points.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { typeScriptWorkerUrl } from '../ts-worker.test-helpers.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

const root = mkdtempSync(join(tmpdir(), 'faultline-kill-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
// One boot (and transpile cache) for the SQLite worker and one for the agent, shared by every run:
// a cold TypeScript boot is slow on a loaded machine.
const workerUrl = typeScriptWorkerUrl(new URL('../store/sqlite/sqlite-worker.ts', import.meta.url), join(root, 'worker-boot'));
const here = (file: string): string => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));

const MAX_QUEUE = 10_000;
const MAX_UNSAVED_MS = 1000;
const CHECK_EVERY_AT_MOST = 64;
const ACK_BYTES = 16;

/**
 * The agent (argv: its directory, and `worker` or `thread` for the SQLite writer): awaits an
 * in-memory tool in a loop (microtasks only, no macrotask ever), and after each call writes
 * (calls acknowledged, performance.now()) at its own offset in `<dir>/ack`.
 */
const agent = join(root, 'agent.ts');
writeFileSync(
  agent,
  [
    `import { openSync, writeSync } from 'node:fs';`,
    `import { join } from 'node:path';`,
    `import { createRuntime } from ${here('../runtime/runtime.ts')};`,
    `import { defineTool } from ${here('../runtime/define-tool.ts')};`,
    `import { openStoreLazily } from ${here('../store/open-store.ts')};`,
    `const [dir, writer] = process.argv.slice(2);`,
    `const echo = defineTool({ name: 'echo', description: 'echo', input: { type: 'object' }, idempotent: true, execute: (a) => a });`,
    `const db = 'sqlite:' + join(dir, 'agent.db');`,
    // 'worker': what the compiled `sqlite:` spec opens, the writer in a worker thread, opened on first use.
    `const store = writer === 'worker' ? openStoreLazily(db, { sqliteWriter: 'worker', sqliteWorkerUrl: new URL(${JSON.stringify(workerUrl.href)}) }) : db;`,
    `const rt = createRuntime({ tools: [echo], store, recording: { spool: { path: join(dir, 'spool', 'agent.jsonl') } } });`,
    `const fd = openSync(join(dir, 'ack'), 'w');`,
    `const entry = Buffer.alloc(${ACK_BYTES});`,
    `for (let i = 0; ; i++) {`,
    `  await rt.execute('echo', { i });`,
    `  entry.writeDoubleLE(i + 1, 0);`,
    `  entry.writeDoubleLE(performance.now(), 8);`,
    `  writeSync(fd, entry, 0, ${ACK_BYTES}, i * ${ACK_BYTES});`,
    `}`,
  ].join('\n'),
);
const agentBoot = fileURLToPath(typeScriptWorkerUrl(pathToFileURL(agent), join(root, 'agent-boot')));

/** Runs the agent until it has acknowledged `calls` calls, then SIGKILLs it. */
async function runAndKill(writer: 'thread' | 'worker', dir: string, calls: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const child = spawn(process.execPath, [agentBoot, dir, writer], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ack = join(dir, 'ack');
  for (;;) {
    const done = await Promise.race([exited.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 20))]);
    if (done) throw new Error(`the agent ended by itself: ${stderr}`);
    if (existsSync(ack) && statSync(ack).size >= calls * ACK_BYTES) break;
  }
  child.kill('SIGKILL');
  await exited;
}

/** Acknowledged calls, each with the time it was acknowledged (the child's performance.now()). */
function acknowledged(dir: string): number[] {
  const bytes = readFileSync(join(dir, 'ack'));
  const times: number[] = [];
  for (let at = 0; at + ACK_BYTES <= bytes.length; at += ACK_BYTES) {
    // Entries are written in order; the last may be cut by the kill.
    if (bytes.readDoubleLE(at) !== times.length + 1) break;
    times.push(bytes.readDoubleLE(at + 8));
  }
  return times;
}

/** The calls whose records survived: in the database (recovered from its WAL) or in the spool. */
function survivors(dir: string): Set<number> {
  const found = new Set<number>();
  const path = join(dir, 'agent.db');
  if (existsSync(path)) {
    const db = new Database(path);
    try {
      for (const row of db.prepare('SELECT input_params FROM tool_executions').iterate() as Iterable<{ input_params: string }>) {
        found.add((JSON.parse(row.input_params) as { i: number }).i);
      }
    } finally {
      db.close();
    }
  }
  const spool = join(dir, 'spool');
  if (existsSync(spool)) {
    for (const name of readdirSync(spool)) {
      for (const line of readFileSync(join(spool, name), 'utf8').split('\n')) {
        try {
          found.add(((JSON.parse(line) as ToolExecutionRecord).input_params as { i: number }).i);
        } catch {
          // The line a write was cut in.
        }
      }
    }
  }
  return found;
}

describe.each(['worker', 'thread'] as const)('an agent that never yields, killed with SIGKILL (SQLite writer: %s)', (writer) => {
  it('loses at most the records of the last second, and never more than maxQueue', async () => {
    const losses: string[] = [];
    for (const [run, calls] of [3_000, 12_000, 30_000].entries()) {
      const dir = join(root, `${writer}-${run}`);
      await runAndKill(writer, dir, calls);
      const times = acknowledged(dir);
      const kept = survivors(dir);
      const lost: number[] = [];
      for (let i = 0; i < times.length; i++) if (!kept.has(i)) lost.push(i);
      losses.push(`${lost.length} of ${times.length}`);
      expect(lost.length).toBeLessThanOrEqual(MAX_QUEUE);
      // The window was last checked at or after the enqueue that followed this acknowledgement.
      const lastCheck = times[Math.max(0, times.length - 1 - CHECK_EVERY_AT_MOST - 1)]!;
      for (const i of lost) expect(times[i]!, `call ${i} of ${times.length}`).toBeGreaterThan(lastCheck - MAX_UNSAVED_MS);
    }
    console.log(`SIGKILL with the ${writer} writer: lost ${losses.join(', ')} acknowledged calls`);
  }, 600_000);
});
