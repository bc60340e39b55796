/**
 * `--format kto`: TRL's conversational unpaired preference (KTO) format, one line per judged
 * turn at a failure point ({@link failurePoints}).
 *
 * ```
 * { "prompt": [ …the conversation up to the failed step's answer, as in dpo-trl… ],
 *   "completion": [ <assistant turn> ],
 *   "label": true | false }
 * ```
 *
 * - A decision judged `correct`: what the agent did, `label: true`.
 * - A decision judged `incorrect`: what the agent did, `label: false`; and the better turn
 *   (`correct_action`, or the recovery that worked), `label: true`, when there is one.
 * - `uncertain` decisions give nothing.
 */
import type { Trajectory } from '../core/trajectory-types.js';
import { toHfMessages, type HfMessage } from './chat.js';
import type { TrajectoryExamples } from './exporter.js';
import { failurePoints } from './failure-points.js';

export interface KtoExample {
  prompt: HfMessage[];
  completion: HfMessage[];
  label: boolean;
}

export function exportKto(trajectory: Trajectory): TrajectoryExamples<KtoExample> {
  const examples: KtoExample[] = [];
  for (const p of failurePoints(trajectory)) {
    if (p.correctness === 'uncertain') continue;
    const prompt = toHfMessages(p.prompt);
    const completion = (m: typeof p.actual) => toHfMessages([...p.prompt, m]).slice(p.prompt.length);
    examples.push({ prompt, completion: completion(p.actual), label: p.correctness === 'correct' });
    if (p.better !== undefined) examples.push({ prompt, completion: completion(p.better), label: true });
  }
  return examples.length === 0 ? { examples, skipped: 'no judged failure point' } : { examples };
}
