import type { Label } from '../label.js';
import { isFailed, paramsKey } from '../step-facts.js';
import type { Trajectory } from '../../core/trajectory-types.js';

export const LOOP_FAILURE_CONFIDENCE = 0.9;

/** How many failing repeats of one call are tolerated before the next counts as a loop (seed 000 2.2: "more than 3"). */
export const LOOP_THRESHOLD = 3;

/**
 * `loop_failure`: the same tool with the same arguments (canonical JSON of `input_params`,
 * so key order does not matter) failed more than {@link LOOP_THRESHOLD} times in the
 * trajectory. The 4th and every later failing occurrence is labelled; the repeats need not be
 * adjacent, and successes of the same call do not count. Each labelled step faults the
 * decision that led to it: the one taken after the previous occurrence.
 *
 * @example
 * // f(x) fails at steps 1, 2, 3, 4, 5 → labels on steps 4 and 5
 */
export function loopFailure(trajectory: Trajectory): Label[] {
  const seen = new Map<string, { count: number; last: number }>();
  const labels: Label[] = [];
  for (const step of trajectory.steps) {
    if (!isFailed(step)) continue;
    const key = `${step.tool_name}\u001f${paramsKey(step)}`;
    const entry = seen.get(key) ?? { count: 0, last: step.step_index };
    const previous = entry.last;
    entry.count++;
    entry.last = step.step_index;
    seen.set(key, entry);
    if (entry.count > LOOP_THRESHOLD) {
      labels.push({
        name: 'loop_failure',
        step_index: step.step_index,
        confidence: LOOP_FAILURE_CONFIDENCE,
        reason: `${step.tool_name} failed with identical arguments for the ${ordinal(entry.count)} time`,
        decision_step: previous,
      });
    }
  }
  return labels;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
