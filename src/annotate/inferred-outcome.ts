/**
 * Outcomes a judge infers for logs that state none (DESIGN.md "Importers and annotation"). A stated outcome is
 * never replaced; an inferred one is inferred again on re-annotation, since the judge may have
 * changed, and the trajectory says it was inferred, by whom and how sure (`outcome_basis`).
 */
import { summarizeFailures } from '../trajectory/assemble.js';
import type { Trajectory } from '../core/trajectory-types.js';
import type { InferredOutcome } from './judge/final-answer.js';

/** Whether a judge may (re)infer the trajectory's outcome: the log stated none. */
export function outcomeIsOpen(trajectory: Trajectory): boolean {
  const basis = trajectory.outcome_basis;
  if (basis === undefined) return trajectory.final_outcome === 'unknown';
  return basis.source !== 'stated';
}

/** A judge's reading of the outcome: what it inferred (null: nothing either way) and who it is. */
export interface OutcomeJudgement {
  inferred: InferredOutcome | null;
  by: string;
}

/** The trajectory with the judge's outcome in place, when its outcome is open; otherwise as it is. */
export function withInferredOutcome(trajectory: Trajectory, judgement: OutcomeJudgement | undefined): Trajectory {
  if (judgement === undefined || !outcomeIsOpen(trajectory)) return trajectory;
  const { inferred, by } = judgement;
  if (inferred === null) {
    if (trajectory.outcome_basis?.source === 'unstated') return trajectory;
    return { ...trajectory, final_outcome: 'unknown', outcome_basis: { source: 'unstated', confidence: 0, evidence: null }, failure_summary: summarizeFailures(trajectory.steps, 'unknown') };
  }
  return {
    ...trajectory,
    final_outcome: inferred.outcome,
    outcome_basis: { source: 'inferred', confidence: inferred.confidence, evidence: inferred.evidence, by },
    // Whether the recovery succeeded turns on the outcome.
    failure_summary: summarizeFailures(trajectory.steps, inferred.outcome),
  };
}
