import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CorrectionEntry } from '../../core/store-types.js';
import { runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-corrections-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (trace: string, i: number, tool: string, params: unknown, response: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ trace_id: trace, step_index: i, timestamp: `2026-03-29T14:23:${String(10 + i).padStart(2, '0')}Z`, tool_name: tool, input_params: params, raw_response: response, ...extra });
const notFound = { status_code: 404, body: { error: 'city "Pariss" not found' } };
const log = [
  line('typo', 1, 'get_weather', { city: 'Pariss', date: '2026-03-29' }, notFound, { intent: 'weather in Paris', final_outcome: 'success' }),
  line('typo', 2, 'get_weather', { city: 'Paris', date: '2026-03-29' }, { status_code: 200, body: { temp: 18 } }),
  line('loop', 1, 'query_sales', { month: '2026-03' }, { status_code: 500, body: { error: 'db timeout' } }, { final_outcome: 'failure' }),
  '',
].join('\n');
writeFileSync(join(dir, 'steps.jsonl'), log);

async function run(args: readonly string[]) {
  const r = await runCapture(args, dir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

describe('faultline corrections', () => {
  it('learns recoveries that annotated trajectories mark as correct, once, and shows them', async () => {
    const db = join(dir, 'steps.db');
    await run(['import', '--format', 'step-log', 'steps.jsonl', '--db', db]);
    expect(await run(['corrections', '--db', db])).toBe('the correction memory is empty\n');
    // Before annotation no decision is marked correct: nothing to learn.
    expect(await run(['corrections', '--db', db, '--learn'])).toContain('learned 0 from 2 trajectories');
    await run(['annotate', '--db', db]);
    const text = await run(['corrections', '--db', db, '--learn']);
    expect(text).toContain('faultline corrections: learned 1 from 2 trajectories');
    expect(text).toMatch(/get_weather\s+not_found\s+HTTP_404\s+setting city to "Paris"\s+2026-03-29T14:23:12.000Z\s+1/);
    expect(await run(['corrections', '--db', db, '--learn'])).toContain('learned 0 from 2 trajectories');
    const entries = (await run(['corrections', '--db', db, '--json'])).trim().split('\n').map((l) => JSON.parse(l) as CorrectionEntry);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      tool_name: 'get_weather',
      failure_type: 'not_found',
      recovery: { action: 'retry_with_fixed_params', params_delta: { city: 'Paris' } },
      trace_id: 'typo',
      uses: 1,
    });
    expect(await run(['corrections', '--db', db, '--json', '--signature', entries[0]!.signature])).toBe(`${JSON.stringify(entries[0])}\n`);
    expect(await run(['corrections', '--db', db, '--json', '--signature', 'nope'])).toBe('');
  });

  it('rejects bad input with one line and exit code 2', async () => {
    for (const args of [
      ['corrections', '--db', join(dir, 'missing.db')],
      ['corrections', '--db', join(dir, 'missing.db'), '--learn'],
      ['corrections', '--limit', '0'],
      ['corrections', '--source', 'openai'],
    ]) {
      const r = await runCapture(args, dir);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
  });
});
