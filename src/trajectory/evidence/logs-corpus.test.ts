/**
 * The realistic-log corpus (corpora/logs/results): tool results in the shapes real frameworks and
 * APIs give them, imported through the CLI as a user would (`faultline import`, then `faultline
 * export --format trajectories`), each step held to its expected verdict and category. The
 * figures are recorded in corpora/logs/README.md.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCapture } from '../../cli/run-cli.test-helpers.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { repositoryRoot } from '../importers/tau-bench-data.test-helpers.js';

interface Expected {
  results: Record<string, { conversation: string; failed: boolean; category: string | null }>;
  conversations: Record<string, { outcome: string; split: 'tuned' | 'held-out' }>;
}

const corpus = join(repositoryRoot(), 'corpora', 'logs', 'results');
const expected = JSON.parse(readFileSync(join(corpus, 'expected.json'), 'utf8')) as Expected;
const dir = mkdtempSync(join(tmpdir(), 'faultline-logs-corpus-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Figures {
  precision: number;
  recall: number;
  categoryAccuracy: number;
  results: number;
  misses: string[];
}

async function figures(split: 'tuned' | 'held-out'): Promise<Figures> {
  const db = join(dir, `${split}.db`);
  expect((await runCapture(['import', '--format', 'openai', join(corpus, `${split}.jsonl`), '--db', db], dir)).code).toBe(0);
  const out = `${split}.trajectories.jsonl`;
  expect((await runCapture(['export', '--format', 'trajectories', '--db', db, '--out', out, '--val-fraction', '0'], dir)).code).toBe(0);
  const trajectories = readFileSync(join(dir, out), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Trajectory);
  let tp = 0, fp = 0, fn = 0, categoryRight = 0, results = 0;
  const misses: string[] = [];
  for (const t of trajectories) {
    for (const step of t.steps) {
      const want = expected.results[step.source_ref!];
      if (want === undefined) continue;
      results += 1;
      const failed = step.status !== 'success';
      // The result text the model saw is kept as it was.
      expect(step.response.text ?? step.response.body).toBeDefined();
      if (failed && want.failed) {
        tp += 1;
        if (step.failure_category === want.category) categoryRight += 1;
        else misses.push(`${step.source_ref}: ${want.category} read as ${step.failure_category}`);
        expect(step.failure_evidence?.evidence.length, step.source_ref).toBeGreaterThan(0);
      } else if (failed) {
        fp += 1;
        misses.push(`${step.source_ref}: a success read as ${step.failure_category}`);
      } else if (want.failed) {
        fn += 1;
        misses.push(`${step.source_ref}: a ${want.category} failure missed`);
      }
    }
  }
  return { precision: tp / (tp + fp), recall: tp / (tp + fn), categoryAccuracy: categoryRight / tp, results, misses };
}

describe('the realistic-log corpus, imported through the CLI', () => {
  it('holds its conversations and expectations together: at least 200 results, half failures, English and Chinese', () => {
    const results = Object.values(expected.results);
    expect(results.length).toBeGreaterThanOrEqual(200);
    expect(results.filter((r) => r.failed).length * 2).toBeGreaterThanOrEqual(results.length);
    for (const r of results) expect(expected.conversations[r.conversation], r.conversation).toBeDefined();
    for (const c of Object.values(expected.conversations)) expect(['success', 'failure', 'partial']).toContain(c.outcome);
  });

  it('finds the failed steps and their categories in the tuned part', async () => {
    const f = await figures('tuned');
    expect(f.results).toBe(Object.values(expected.results).filter((r) => expected.conversations[r.conversation]!.split === 'tuned').length);
    expect(f.precision, f.misses.join('\n')).toBeGreaterThanOrEqual(0.95);
    expect(f.recall, f.misses.join('\n')).toBeGreaterThanOrEqual(0.95);
    expect(f.categoryAccuracy, f.misses.join('\n')).toBeGreaterThanOrEqual(0.9);
  }, 60_000);

  it('finds them in the held-out part too', async () => {
    const f = await figures('held-out');
    expect(f.precision, f.misses.join('\n')).toBeGreaterThanOrEqual(0.95);
    expect(f.recall, f.misses.join('\n')).toBeGreaterThanOrEqual(0.95);
    expect(f.categoryAccuracy, f.misses.join('\n')).toBeGreaterThanOrEqual(0.9);
  }, 60_000);
});
