/**
 * The reward of one FISSION continuation, from the scenario oracle and the dimension scores of
 * that run (src/failbench/score.ts), so a GRPO trainer gets a number in [0, 1] per completion:
 *
 *   reward = 0.5 × [the oracle passed] + 0.5 × (dimensions passed / dimensions scored)
 *
 * rounded to 4 decimals. It is 1 exactly when the oracle passes and no scored dimension is
 * violated; a run the oracle fails can still earn partial credit for what it did right (no retry
 * loop, no duplicate write, a correct diagnosis). With no scored dimension it is 1 or 0 by the
 * oracle alone. A run that crashed or overran its budget (`status: 'error'`) gets 0.
 */
import type { ScenarioResult } from './types.js';

export function fissionReward(result: Pick<ScenarioResult, 'outcome' | 'oraclePassed' | 'scores'>): number {
  if (result.outcome.status === 'error') return 0;
  const verdicts = Object.values(result.scores).filter((v): v is boolean => typeof v === 'boolean');
  const oracle = result.oraclePassed ? 1 : 0;
  if (verdicts.length === 0) return oracle;
  const passed = verdicts.filter((v) => v).length;
  return Math.round((0.5 * oracle + (0.5 * passed) / verdicts.length) * 10_000) / 10_000;
}
