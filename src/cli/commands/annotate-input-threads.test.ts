// `faultline annotate --input` on worker threads writes what the one-thread path writes, byte for
// byte, as a process (the workers need compiled .js), on a varied file: the real tau-bench
// transcripts as OpenAI lines, the perf workload's conversations, and blank, malformed and CRLF
// lines, a BOM and no final line end.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tauBenchAirlineFile } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { compileCli } from './compiled-cli.test-helpers.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'faultline-annotate-threads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const WORKLOAD = fileURLToPath(new URL('../../../perf/annotate-workload.js', import.meta.url));

let cli = '';
const file = join(dir, 'varied.jsonl');

beforeAll(async () => {
  cli = await compileCli(join(dir, 'build'), ['annotate/parallel-annotate-worker.js']);
  const workload = join(dir, 'workload.jsonl');
  await run(process.execPath, ['--input-type=module', '-e', `import { writeOpenAiWorkload } from ${JSON.stringify(WORKLOAD)}; writeOpenAiWorkload(${JSON.stringify(workload)}, 30000);`]);
  const lines = readFileSync(workload, 'utf8').trimEnd().split('\n');
  const runs = JSON.parse(readFileSync(tauBenchAirlineFile(), 'utf8')) as { task_id: number; trial: number; reward: number; traj: unknown[] }[];
  // tau-bench's transcripts are OpenAI chat messages: spread them through the file.
  runs.forEach((r, i) => lines.splice(i * 40, 0, JSON.stringify({ id: `${r.task_id}:${r.trial}`, messages: r.traj, reward: r.reward })));
  for (let i = 7; i < lines.length; i += 151) lines.splice(i, 0, i % 2 === 0 ? 'not json {' : '{"messages":3}');
  for (let i = 11; i < lines.length; i += 997) lines.splice(i, 0, '', '  ');
  const half = lines.length >> 1;
  writeFileSync(file, `\uFEFF${lines.slice(0, half).join('\n')}\n${lines.slice(half).join('\r\n')}`);
}, 180_000);

async function annotate(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [cli, 'annotate', '--input', file, '--format', 'openai', ...args], { cwd: dir, maxBuffer: 256 << 20 });
}

describe('faultline annotate --input --threads', () => {
  it.each([
    ['--json', '--judge', 'none'],
    ['--json'],
    ['--judge', 'none'],
  ])('writes the same bytes on 2 worker threads as on one: %s %s %s', async (...args) => {
    const one = await annotate([...args, '--threads', '1']);
    const two = await annotate([...args, '--threads', '2']);
    expect(two.stdout).toBe(one.stdout);
    expect(two.stderr).toBe(one.stderr);
    // The file holds what the comparison is about: many blocks, skipped lines, rare failures, rule labels.
    expect(readFileSync(file).length).toBeGreaterThan(8 << 20);
    expect(one.stderr.split('\n').filter((l) => l.includes('varied.jsonl:')).length).toBeGreaterThan(20);
    if (args[0] === '--json') {
      for (const name of ['rare_failure', 'loop_failure', 'ignored_error', 'blind_retry', 'cascade_failure', 'idempotency_risk']) expect(one.stdout).toContain(`"name":"${name}"`);
      if (args.length === 1) expect(one.stdout).toContain('"name":"semantic_error"');
    }
  }, 120_000);

  it('a file in another format is one line on worker threads too, however long', async () => {
    const steps = join(dir, 'long-steps.jsonl');
    writeFileSync(steps, Array.from({ length: 1500 }, (_, i) => JSON.stringify({ step: i, tool: 'get_weather' })).join('\n') + '\n');
    const failed = await run(process.execPath, [cli, 'annotate', '--input', steps, '--format', 'openai', '--threads', '2'], { cwd: dir }).then(
      () => undefined,
      (e: { code?: number; stdout?: string; stderr?: string }) => e,
    );
    expect(failed).toMatchObject({ code: 2, stdout: '', stderr: `faultline: no trajectories in ${steps}: all 1500 non-blank lines were skipped (is it in the openai format?)\n` });
  }, 60_000);

  it('exits 2 with one line for a bad --threads', async () => {
    const bad = await annotate(['--threads', '0']).then(
      () => undefined,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(bad?.code).toBe(2);
    expect(bad?.stderr?.trim()).toMatch(/^faultline: invalid --threads "0": expected an integer from 1 to 64$/);
  }, 60_000);
});
