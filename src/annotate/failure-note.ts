/**
 * How a label's reason names a step's failure: its kind, and for a step imported from a log,
 * what the failure was read from (`rate_limited, read from field:error.code=429`), so a reviewer
 * sees at once whether it rests on a stated code or on wording (`words:`).
 */
import type { TrajectoryStep } from '../core/trajectory-types.js';

export function failureNote(step: TrajectoryStep, fallback: string | null | undefined = step.status): string {
  const kind = step.failure_kind ?? fallback ?? 'unknown';
  const first = step.status === 'success' ? undefined : step.failure_evidence?.evidence[0];
  return first === undefined ? kind : `${kind}, read from ${first}`;
}
