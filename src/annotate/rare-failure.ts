/**
 * Rare failures: a failure whose shape the store has never seen before is flagged, so that the
 * long tail is kept and looked at rather than drowned by the common failures.
 *
 * Definition. A failed step's signature is the store's failure signature (src/core/failure-signature.ts:
 * tool, stage, type, error code and normalized message) computed from the step as if it were a
 * record. The step gets a `rare_failure` label when it is the signature's first occurrence:
 * - among all stored trajectories' failed steps, ordered by the step's `started_at` (the
 *   trajectory's `created_at` when the step has none), then trajectory id, then step index; and
 * - not preceded by a recorded call: when the store's record signatures (`Store.signatures`)
 *   hold the signature, their `first_seen` is not earlier than the step's time.
 * Only the first step with a signature gets the label, so a trajectory repeating a new failure
 * five times is flagged once.
 */
import type { FailureSignatureKey } from '../core/failure-signature.js';
import type { FailureSignature } from '../core/store-types.js';
import { stepSignature } from '../trajectory/step-signature.js';
import type { Trajectory, TrajectoryLabel, TrajectoryStep } from '../core/trajectory-types.js';

export { stepSignature };

export const RARE_FAILURE = 'rare_failure';
/** The `source` of rare-failure labels. */
export const RARE_FAILURE_SOURCE = 'rare-failure';

/** A failed step as the index sees it: its signature, its time and where it is. */
export interface FailureOccurrence {
  step_index: number;
  /** The step's `started_at` (the trajectory's `created_at` when it has none), epoch ms; +Infinity when unparseable. */
  timeMs: number;
  signature: Readonly<FailureSignatureKey>;
}

interface Occurrence {
  timeMs: number;
  trajectory_id: string;
  step_index: number;
}

function timeOf(step: TrajectoryStep, trajectory: Trajectory): number {
  const ms = Date.parse(step.started_at ?? trajectory.created_at);
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

/** The failed steps of a trajectory, each with its signature (computed once per step). */
export function failureOccurrences(trajectory: Trajectory): FailureOccurrence[] {
  const out: FailureOccurrence[] = [];
  for (const step of trajectory.steps) {
    const signature = stepSignature(step);
    if (signature !== null) out.push({ step_index: step.step_index, timeMs: timeOf(step, trajectory), signature });
  }
  return out;
}

const earlier = (a: Occurrence, b: Occurrence): boolean =>
  a.timeMs !== b.timeMs ? a.timeMs < b.timeMs : a.trajectory_id !== b.trajectory_id ? a.trajectory_id < b.trajectory_id : a.step_index < b.step_index;

/**
 * Where each failure signature was first seen. Observe every stored trajectory (and the store's
 * record signatures) first, then ask for each trajectory's labels; a trajectory asked about is
 * observed too, so a single pass over a stream labels first occurrences in stream order.
 */
export class RareFailureIndex {
  private readonly first = new Map<string, Occurrence>();
  private readonly recordFirstSeen = new Map<string, number>();

  /** Number of distinct signatures seen. */
  get size(): number {
    return this.first.size;
  }

  observe(trajectory: Trajectory): void {
    this.observeOccurrences(trajectory.trajectory_id, failureOccurrences(trajectory));
  }

  /** `observe` for failed steps whose signatures are already known (the parallel annotator's workers compute them). */
  observeOccurrences(trajectoryId: string, failures: readonly FailureOccurrence[]): void {
    for (const f of failures) {
      const occurrence: Occurrence = { timeMs: f.timeMs, trajectory_id: trajectoryId, step_index: f.step_index };
      const known = this.first.get(f.signature.signature);
      if (known === undefined || earlier(occurrence, known)) this.first.set(f.signature.signature, occurrence);
    }
  }

  /** The record store's signatures, with their first-seen times over all history. */
  observeRecordSignatures(signatures: readonly FailureSignature[]): void {
    for (const s of signatures) {
      const ms = Date.parse(s.first_seen);
      if (Number.isNaN(ms)) continue;
      this.recordFirstSeen.set(s.signature, Math.min(ms, this.recordFirstSeen.get(s.signature) ?? ms));
    }
  }

  /** `rare_failure` labels for the steps of `trajectory` that are their signature's first occurrence. */
  labelsFor(trajectory: Trajectory): TrajectoryLabel[] {
    return this.labelsForOccurrences(trajectory.trajectory_id, failureOccurrences(trajectory));
  }

  /** `labelsFor` a trajectory given as its id and its failed steps (in step order). */
  labelsForOccurrences(trajectoryId: string, failures: readonly FailureOccurrence[]): TrajectoryLabel[] {
    if (failures.length === 0) return [];
    this.observeOccurrences(trajectoryId, failures);
    const labels: TrajectoryLabel[] = [];
    for (const { signature, step_index } of failures) {
      const first = this.first.get(signature.signature)!;
      if (first.trajectory_id !== trajectoryId || first.step_index !== step_index) continue;
      const recorded = this.recordFirstSeen.get(signature.signature);
      if (recorded !== undefined && recorded < first.timeMs) continue;
      const shape = `${signature.tool_name} ${signature.failure_stage}/${signature.failure_type}${signature.error_code === null ? '' : ` ${signature.error_code}`}`;
      labels.push({
        name: RARE_FAILURE,
        step_index,
        confidence: 1,
        reason: `first occurrence in the store of failure signature ${signature.signature} (${shape}${signature.normalized_message === '' ? '' : `: "${signature.normalized_message}"`})`,
        source: RARE_FAILURE_SOURCE,
      });
    }
    return labels;
  }
}
