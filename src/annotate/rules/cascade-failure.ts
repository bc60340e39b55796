import type { Label } from '../label.js';
import { argumentValues, isFailed, isSideEffectFreeName, isSucceeded } from '../step-facts.js';
import type { Trajectory, TrajectoryStep } from '../../trajectory/types.js';

export const CASCADE_FAILURE_CONFIDENCE = 0.65;

/** Argument values that stand in for something the agent did not have (the failed call's output). */
const PLACEHOLDER = /^(?:unknown|n\/?a|none|null|undefined|tbd|todo|placeholder|xxx+|\?+|<[^>]*>|\{\{[^}]*\}\}|\$\{[^}]*\})$/i;

function placeholders(params: unknown, out: string[] = []): string[] {
  if (typeof params === 'string' && PLACEHOLDER.test(params.trim())) out.push(params);
  else if (Array.isArray(params)) for (const item of params) placeholders(item, out);
  else if (typeof params === 'object' && params !== null) for (const value of Object.values(params)) placeholders(value, out);
  return out;
}

/**
 * `cascade_failure`: the run went on past a critical failure, building later calls on it. A
 * step j depends on an earlier failed step i (operationally, since outputs that never arrived
 * cannot be traced) when:
 * - j calls a different tool that is neither a read nor a pure computation (think, calculate):
 *   reads after a failure are investigation or fallback, not damage;
 * - the failed tool did not succeed anywhere between i and j, so nothing replaced the output;
 * - and j either reuses an argument value of i (the same reservation, user, order: it acts on
 *   the entity the failed call was about; strings of 3+ characters, numbers of 100 or more), or
 *   passes a placeholder (`unknown`, `N/A`, `<id>`, `{{x}}`, ...) where the missing output
 *   would have gone.
 * Each dependent step is labelled once (against the latest failure it depends on); the
 * faulted decision is the one taken after that failure.
 */
export function cascadeFailure(trajectory: Trajectory): Label[] {
  const labels: Label[] = [];
  const steps = trajectory.steps;
  steps.forEach((step, j) => {
    if (isSideEffectFreeName(step.tool_name)) return;
    const values = argumentValues(step.input_params);
    const fillers = placeholders(step.input_params);
    for (let i = j - 1; i >= 0; i--) {
      const failed = steps[i]!;
      if (!isFailed(failed) || failed.tool_name === step.tool_name) continue;
      if (steps.slice(i + 1, j).some((s) => s.tool_name === failed.tool_name && isSucceeded(s))) continue;
      const shared = [...argumentValues(failed.input_params)].find((v) => values.has(v));
      if (shared === undefined && fillers.length === 0) continue;
      labels.push(cascadeLabel(step, failed, shared === undefined ? `passes the placeholder ${JSON.stringify(fillers[0])}` : `reuses ${JSON.stringify(shared)} from it`));
      return;
    }
  });
  return labels;
}

function cascadeLabel(step: TrajectoryStep, failed: TrajectoryStep, how: string): Label {
  return {
    name: 'cascade_failure',
    step_index: step.step_index,
    confidence: CASCADE_FAILURE_CONFIDENCE,
    reason: `${step.tool_name} went ahead after ${failed.tool_name} failed at step ${failed.step_index} (${failed.failure_kind ?? failed.status ?? 'unknown'}) and ${how}`,
    decision_step: failed.step_index,
  };
}
