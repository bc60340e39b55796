/**
 * The commands that record (demo, bench, import, proxy) given a --db where no SQLite store can be
 * created: one line naming the path and why, exit 2, nothing written. SQLite itself says only
 * "unable to open database file".
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCapture } from './run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-recording-store-'));
let target: Server;
let targetUrl = '';
beforeAll(async () => {
  mkdirSync(join(dir, 'dir.db'));
  writeFileSync(join(dir, 'a-file'), 'kept\n');
  writeFileSync(join(dir, 'steps.jsonl'), `${JSON.stringify({ trace_id: 't', step_index: 1, timestamp: '2026-03-29T14:00:00Z', tool_name: 'x', input_params: {}, raw_response: { status_code: 200, body: {} } })}\n`);
  target = createServer((_req, res) => res.end('{}'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => target.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const commands: Record<string, (db: string) => string[]> = {
  demo: (db) => ['demo', '--db', db],
  bench: (db) => ['bench', '--agent', 'robust', '--filter', 'idempotency_safety', '--out', 'report', '--db', db],
  'bench --fission': (db) => ['bench', '--fission', '2', '--filter', 'idempotency_safety', '--db', db],
  import: (db) => ['import', '--format', 'step-log', 'steps.jsonl', '--db', db],
  proxy: (db) => ['proxy', '--target', targetUrl, '--port', '0', '--db', db],
};

describe('a --db where no SQLite store can be created', () => {
  it.each(Object.keys(commands))('%s: a directory, or a path under a file, is one line naming it, exit 2', async (name) => {
    const before = readdirSync(dir).sort();
    const inDir = await runCapture(commands[name]!('dir.db'), dir);
    expect(inDir).toEqual({ code: 2, stdout: '', stderr: `faultline: ${join(dir, 'dir.db')} is a directory, not a faultline store (point --db at the .db file)\n` });
    const underFile = await runCapture(commands[name]!('a-file/x.db'), dir);
    expect(underFile).toEqual({ code: 2, stdout: '', stderr: `faultline: cannot write ${join(dir, 'a-file', 'x.db')}: ${join(dir, 'a-file')} is not a directory\n` });
    expect(readdirSync(dir).sort()).toEqual(before);
  });
});
