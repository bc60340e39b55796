/**
 * Corrections from stored trajectories: every failed step whose decision is marked `correct`
 * (by the outcome backtrace of `faultline annotate`, by a log's own grading, or by a reviewer)
 * and that names a recovery (changed arguments, a wait, a repeat, another tool) becomes a
 * correction, so benchmark runs and imported logs fill the correction memory too.
 */
import { isNonIdempotentName } from './step-facts.js';
import type { CorrectionRecovery, NewCorrection } from '../core/store-types.js';
import { repeatsTheCall } from '../runtime/correction-memory.js';
import { paramsDelta } from '../core/params-delta.js';
import { stepSignature } from '../trajectory/step-signature.js';
import type { Trajectory, TrajectoryStep } from '../core/trajectory-types.js';

function recoveryOfStep(steps: readonly TrajectoryStep[], at: number): CorrectionRecovery | undefined {
  const step = steps[at]!;
  const decision = step.agent_decision;
  switch (decision.action) {
    case 'retry_with_params': {
      const next = steps.slice(at + 1).find((s) => s.tool_name === step.tool_name);
      const delta = decision.params_delta ?? (next === undefined ? undefined : paramsDelta(step.input_params, next.input_params));
      return { action: 'retry_with_fixed_params', ...(delta === undefined ? {} : { params_delta: delta }) };
    }
    case 'wait_and_retry':
      return { action: 'wait_and_retry', ...(decision.wait_seconds === undefined ? {} : { wait_ms: Math.round(decision.wait_seconds * 1000) }) };
    case 'retry':
      return { action: 'retry' };
    case 'switch_tool': {
      const tool = decision.next_tool ?? steps[at + 1]?.tool_name;
      return { action: 'switch_tool', ...(tool === undefined ? {} : { tool }) };
    }
    default:
      // proceed, abort, escalate, other: nothing the next call could repeat.
      return undefined;
  }
}

/** Error codes after which a request may have been acted on although it failed (as the runtime classifies them). */
const AMBIGUOUS_CODES = new Set(['HTTP_500', 'HTTP_502', 'HTTP_504', 'MCP_-32603']);

/**
 * A failed step of a write that may have taken effect: a timeout, a reset or a 500/502/504 of a
 * tool whose name says it adds to state (trajectories carry no idempotency declaration, so the name
 * is all there is, as for the annotators). Calling it again is never learned as its fix (see
 * `repeatsTheCall`), even when a log graded the repeat correct.
 */
function isAmbiguousWrite(step: TrajectoryStep): boolean {
  if (!isNonIdempotentName(step.tool_name)) return false;
  const kind = step.failure_kind;
  if (kind === 'timeout' || kind === 'connection_reset' || step.status === 'timeout') return true;
  const code = step.response.error_code;
  return code !== undefined && code !== null && AMBIGUOUS_CODES.has(code);
}

/** The corrections a trajectory teaches, oldest first. */
export function correctionsFromTrajectory(trajectory: Trajectory): NewCorrection[] {
  const steps = trajectory.steps;
  const out: NewCorrection[] = [];
  steps.forEach((step, at) => {
    if (step.decision_correctness !== 'correct' || step.status === null || step.status === 'success') return;
    const recovery = recoveryOfStep(steps, at);
    if (recovery === undefined || (repeatsTheCall(recovery) && isAmbiguousWrite(step))) return;
    const signature = stepSignature(step)!;
    out.push({
      signature: signature.signature,
      tool_name: step.tool_name,
      failure_category: step.failure_category,
      failure_type: signature.failure_type,
      error_code: signature.error_code,
      recovery,
      trace_id: trajectory.source_id ?? trajectory.trajectory_id,
      recovered_at: steps[at + 1]?.started_at ?? step.started_at ?? trajectory.created_at,
    });
  });
  return out;
}
