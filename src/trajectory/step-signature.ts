/**
 * The store's failure signature (src/core/failure-signature.ts) of a trajectory step, computed as if the
 * step were a record: what rare-failure labels and corrections learned from trajectories key on.
 */
import { cachedFailureSignature, type FailureSignatureKey } from '../core/failure-signature.js';
import type { TrajectoryStep } from '../core/trajectory-types.js';

/**
 * Null for a success or a step without a result. Remembered by the raw fields (see
 * `cachedFailureSignature`): a log repeats few failure shapes over millions of steps, and each
 * new one costs the message's regexes and a SHA-256. The result is frozen and shared.
 */
export function stepSignature(step: TrajectoryStep): Readonly<FailureSignatureKey> | null {
  if (step.status === null || step.status === 'success') return null;
  return cachedFailureSignature({
    status: step.status,
    tool_name: step.tool_name,
    failure_stage: step.failure_stage,
    failure_type: step.failure_kind,
    error_code: step.response.error_code ?? null,
    error_message: step.response.message ?? null,
  });
}
