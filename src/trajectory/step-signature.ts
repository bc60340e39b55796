/**
 * The store's failure signature (src/store/signature.ts) of a trajectory step, computed as if the
 * step were a record: what rare-failure labels and corrections learned from trajectories key on.
 */
import { failureSignature, type FailureSignatureKey } from '../store/signature.js';
import type { TrajectoryStep } from './types.js';

/** Null for a success or a step without a result. */
export function stepSignature(step: TrajectoryStep): FailureSignatureKey | null {
  if (step.status === null || step.status === 'success') return null;
  return failureSignature({
    status: step.status,
    tool_name: step.tool_name,
    failure_stage: step.failure_stage,
    failure_type: step.failure_kind,
    error_code: step.response.error_code ?? null,
    error_message: step.response.message ?? null,
  });
}
