import type { Label } from '../label.js';
import { isFailed, recoveryOf } from '../step-facts.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { failureNote } from '../failure-note.js';

export const IGNORED_ERROR_CONFIDENCE = 0.7;

/**
 * `ignored_error`: a failure that was never recovered (no later success of the same tool, and
 * no successful fallback call right after it; see `recoveryOf`), after which the agent went on
 * as if it had worked: either its decision after the failure is `proceed` (a log said so), or
 * the run was reported a success (`final_outcome: 'success'`) over it. The failed step is
 * labelled, since the decision taken after it is the one at fault.
 */
export function ignoredError(trajectory: Trajectory): Label[] {
  const labels: Label[] = [];
  trajectory.steps.forEach((step, i) => {
    if (!isFailed(step) || recoveryOf(trajectory, i) !== undefined) return;
    const proceeded = step.agent_decision.action === 'proceed';
    if (!proceeded && trajectory.final_outcome !== 'success') return;
    labels.push({
      name: 'ignored_error',
      step_index: step.step_index,
      confidence: IGNORED_ERROR_CONFIDENCE,
      reason: proceeded
        ? `proceeded after ${step.tool_name} failed (${failureNote(step)}) and it was never recovered`
        : `the run was reported a success although ${step.tool_name} failed (${failureNote(step)}) and was never recovered`,
    });
  });
  return labels;
}
