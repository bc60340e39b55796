import type { Label } from '../label.js';
import { isFailed, nextCallOf, paramsKey, retryAfterMsOf, stepTimeMs } from '../step-facts.js';
import type { Trajectory } from '../../core/trajectory-types.js';

export const BACKOFF_VIOLATION_CONFIDENCE = 0.9;

/**
 * `backoff_violation`: a failure carried a Retry-After (response headers, the body's
 * `retry_after` / `retry_after_ms`, or faultline's recorded feedback `retry_after_ms`; see
 * `retryAfterMsOf`), and the next call of the same tool with identical arguments came sooner.
 * "Sooner" needs evidence: both steps' start times (the gap from start to start is an upper
 * bound on the wait, so a gap below Retry-After is a sure violation), or else the wait the log
 * recorded in the decision (`wait_seconds`). Without either, nothing is labelled.
 *
 * @example
 * // 429 with retry-after: 30 at 12:00:00, the same call at 12:00:05 → label on the second call
 */
export function backoffViolation(trajectory: Trajectory): Label[] {
  const labels: Label[] = [];
  const steps = trajectory.steps;
  steps.forEach((step, i) => {
    if (!isFailed(step)) return;
    const retryAfter = retryAfterMsOf(step);
    if (retryAfter === undefined || retryAfter <= 0) return;
    const next = nextCallOf(steps, i, step.tool_name);
    if (next === undefined || paramsKey(next.step) !== paramsKey(step)) return;
    const start = stepTimeMs(step);
    const retryStart = stepTimeMs(next.step);
    let waited: number | undefined;
    if (start !== undefined && retryStart !== undefined) waited = retryStart - start;
    else if (next.at === i + 1 && step.agent_decision.wait_seconds !== undefined) waited = step.agent_decision.wait_seconds * 1000;
    if (waited === undefined || waited >= retryAfter) return;
    labels.push({
      name: 'backoff_violation',
      step_index: next.step.step_index,
      confidence: BACKOFF_VIOLATION_CONFIDENCE,
      reason: `retried ${step.tool_name} ${formatMs(waited)} after step ${step.step_index}, which asked to wait ${formatMs(retryAfter)} (Retry-After)`,
      decision_step: step.step_index,
    });
  });
  return labels;
}

const formatMs = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${(ms / 1000).toFixed(1)}s`);
