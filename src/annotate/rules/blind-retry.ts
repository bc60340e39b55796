import type { Label } from '../label.js';
import { isFailed, nextCallOf, paramsKey } from '../step-facts.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { failureNote } from '../failure-note.js';

export const BLIND_RETRY_CONFIDENCE = 0.85;

/**
 * `blind_retry`: after a `parameter` or `auth` failure (errors that waiting cannot fix), the
 * next call of the same tool has identical arguments (canonical JSON). For an auth failure the
 * repeat must also come straight after it: a call of another tool in between may have
 * refreshed the credential, which would make the repeat legitimate. The repeat is labelled;
 * the faulted decision is the one after the failure.
 *
 * @example
 * // step 1 create_user({age:-1}) → 400 missing_required; step 2 create_user({age:-1}) → label on step 2
 */
export function blindRetry(trajectory: Trajectory): Label[] {
  const labels: Label[] = [];
  const steps = trajectory.steps;
  steps.forEach((step, i) => {
    if (!isFailed(step) || (step.failure_category !== 'parameter' && step.failure_category !== 'auth')) return;
    const next = nextCallOf(steps, i, step.tool_name);
    if (next === undefined || paramsKey(next.step) !== paramsKey(step)) return;
    if (step.failure_category === 'auth' && next.at !== i + 1) return;
    labels.push({
      name: 'blind_retry',
      step_index: next.step.step_index,
      confidence: BLIND_RETRY_CONFIDENCE,
      reason: `repeated ${step.tool_name} with the arguments that failed at step ${step.step_index} with a ${step.failure_category} error (${failureNote(step, step.response.error_code)})`,
      decision_step: step.step_index,
    });
  });
  return labels;
}
