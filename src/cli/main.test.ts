import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monitorDataset } from '../monitor/monitor-dataset.test-helpers.js';
import { compileCli } from './commands/compiled-cli.test-helpers.js';
import { writeStoreFile } from './run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-main-'));
let main: string;
let db: string;
beforeAll(async () => {
  db = await writeStoreFile(join(dir, 'agents.db'), monitorDataset());
  main = await compileCli(join(dir, 'compiled'));
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the faultline process', () => {
  it('stops quietly when its reader goes away (`faultline stats | head -1`): exit 0, no stack trace', async () => {
    // The reader closes before the command writes: every write meets a closed pipe (EPIPE).
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [main, 'stats', '--db', db, '--since', '2020-01-01T00:00Z'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += String(c)));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(result).toEqual({ code: 0, stderr: '' });
  }, 30_000);
});
