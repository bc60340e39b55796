import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HEURISTIC_JUDGE_QUALITY } from './heuristic-judge-quality.js';
import { measureHeuristicJudge } from './judge-quality.test-helpers.js';

const qualityFile = fileURLToPath(new URL('./heuristic-judge-quality.ts', import.meta.url));

describe("the heuristic judge's measured quality", () => {
  it('matches a fresh measurement on the labelled calls and conversations', async () => {
    const fresh = await measureHeuristicJudge();
    if (process.env['FAULTLINE_WRITE_JUDGE_QUALITY'] === '1') {
      const text = readFileSync(qualityFile, 'utf8').replace(/export const HEURISTIC_JUDGE_QUALITY: HeuristicJudgeQuality = .*;\n$/s, `export const HEURISTIC_JUDGE_QUALITY: HeuristicJudgeQuality = ${JSON.stringify(fresh, null, 2)};\n`);
      writeFileSync(qualityFile, text);
      return;
    }
    expect(HEURISTIC_JUDGE_QUALITY, 'stale: rerun with FAULTLINE_WRITE_JUDGE_QUALITY=1').toEqual(fresh);
  }, 120_000);

  it('is precise on the realistic cases and infers outcomes at 0.9 or better', () => {
    const cases = HEURISTIC_JUDGE_QUALITY.semantic_error.by_set['corpora/judge']!;
    expect(cases.calls).toBeGreaterThanOrEqual(30);
    expect(cases.precision).toBeGreaterThanOrEqual(0.9);
    const sets = Object.values(HEURISTIC_JUDGE_QUALITY.outcome_inference);
    expect(sets).toHaveLength(4);
    for (const set of sets) expect(set.accuracy).toBeGreaterThanOrEqual(0.9);
  });
});
