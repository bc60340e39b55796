import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { tauBenchAirlineFile } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';
import type { AnnotateJsonLine } from './annotate.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-annotate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (trace: string, i: number, tool: string, params: unknown, response: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ trace_id: trace, step_index: i, timestamp: `2026-03-29T14:23:${String(10 + i).padStart(2, '0')}Z`, tool_name: tool, input_params: params, raw_response: response, ...extra });
const failed = { status_code: 500, body: { error: 'db timeout' } };
const log = [
  ...[1, 2, 3, 4, 5].map((i) => line('loop', i, 'query_sales', { month: '2026-03' }, failed, i === 1 ? { intent: '查询本月销售数据', final_outcome: 'failure' } : {})),
  line('weather', 1, 'get_weather', { city: 'Shanghai', date: '2026-03-29' }, { status_code: 200, body: { temp: 18 } }, { intent: '上海明天的天气', final_outcome: 'success' }),
  '',
].join('\n');
writeFileSync(join(dir, 'steps.jsonl'), log);

async function run(args: readonly string[]) {
  const r = await runCapture(args, dir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}
const parse = (stdout: string): AnnotateJsonLine[] => stdout.trim().split('\n').map((l) => JSON.parse(l) as AnnotateJsonLine);

describe('faultline annotate', () => {
  it('labels imported step logs: --json lines, text counts, --source and --out', async () => {
    const db = join(dir, 'steps.db');
    await run(['import', '--format', 'step-log', 'steps.jsonl', '--db', db]);
    const lines = parse((await run(['annotate', '--db', db, '--json'])).stdout);
    const bySource = Object.fromEntries(lines.map((l) => [l.source_id, l.labels]));
    expect(bySource['loop']).toEqual([
      { name: 'loop_failure', step_index: 4, confidence: 0.9 },
      { name: 'loop_failure', step_index: 5, confidence: 0.9 },
    ]);
    expect(bySource['weather']).toEqual([{ name: 'semantic_error', step_index: 1, confidence: 0.75 }]);
    // The labels and the backtrace's decisions are stored with the trajectories.
    const store = createSqliteStore({ path: db, readonly: true });
    const stored = (await store.queryTrajectories({})).find((t) => t.source_id === 'loop')!;
    await store.close();
    expect(stored.labels?.map((l) => `${l.name}@${l.step_index}`)).toEqual(['loop_failure@4', 'loop_failure@5']);
    expect(stored.labels?.[0]?.reason).toMatch(/\w/);
    expect(stored.steps.map((step) => step.decision_correctness)).toEqual([null, null, null, 'incorrect', null]);
    const text = (await run(['annotate', '--db', db, '--out', 'out.jsonl'])).stdout;
    expect(text).toContain('faultline annotate: 2 trajectories, 2 with labels, 3 labels');
    expect(text).toMatch(/loop_failure\s+2\n/);
    expect(text).toMatch(/semantic_error\s+1\n/);
    const written = readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { source_id: string; steps: { decision_correctness: string | null }[] });
    const loop = written.find((t) => t.source_id === 'loop')!;
    expect(loop.steps.map((s) => s.decision_correctness)).toEqual([null, null, null, 'incorrect', null]);
    expect((await run(['annotate', '--db', db, '--json', '--source', 'tau-bench'])).stdout).toBe('');
    const bad = await runCapture(['annotate', '--db', db, '--source', 'nope'], dir);
    expect(bad.code).toBe(2);
  });

  const tau = tauBenchAirlineFile();
  it.skipIf(tau === undefined)('labels the real tau-bench airline file', async () => {
    const db = join(dir, 'tau.db');
    await run(['import', '--format', 'tau-bench', tau!, '--db', db]);
    const lines = parse((await run(['annotate', '--db', db, '--json'])).stdout);
    expect(lines).toHaveLength(200);
    const labelsOf = (sourceId: string) => lines.find((l) => l.source_id === sourceId)!.labels.map((l) => `${l.name}@${l.step_index}`);
    // Task 9, trial 2: book_reservation fails with the same arguments again and again.
    expect(labelsOf('9:2')).toContain('loop_failure@23');
    // Task 15: update_reservation_flights fails on GV1N64, then the agent cancels GV1N64.
    expect(labelsOf('15:0')).toContain('cascade_failure@3');
    // Task 32: book_reservation fails (conflict) and is called again right away.
    expect(labelsOf('32:0')).toContain('idempotency_risk@7');
    // Task 13, trial 2: graded a success although update_reservation_flights failed and never succeeded.
    expect(labelsOf('13:2')).toContain('ignored_error@7');
  }, 60_000);
});
