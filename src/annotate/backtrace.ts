/**
 * The outcome backtrace (seed 000 section 2.2, "回溯标注"): the task's final result anchors the
 * decision labels. A success makes each failure the agent recovered from a positive example; a
 * failure makes the last wrong decision before the end the negative one.
 */
import type { Label, LabelName } from './label.js';
import { isFailed, recoveryOf, retryAfterMsOf } from './step-facts.js';
import type { CorrectAction, DecisionCorrectness, Trajectory, TrajectoryStep } from '../core/trajectory-types.js';
import { failureNote } from './failure-note.js';

/** The `metadata.annotator` written when the backtrace filled any decision. */
export const BACKTRACE_ANNOTATOR = 'faultline-backtrace';

/** One decision the backtrace judged. */
export interface DecisionMark {
  step_index: number;
  decision_correctness: DecisionCorrectness;
  correctness_reason: string;
  correct_action: CorrectAction | null;
}

export interface BacktraceResult {
  /** A copy of the trajectory with the marks filled in; decisions already judged (by a log or a human) are kept. */
  trajectory: Trajectory;
  marks: DecisionMark[];
}

/** The step whose decision a label faults. */
export const decisionStepOf = (label: Label): number => label.decision_step ?? label.step_index;

function correctActionFor(name: LabelName, faulted: TrajectoryStep | undefined): CorrectAction {
  switch (name) {
    case 'loop_failure':
      return { action: 'escalate_to_user', reasoning: 'the same call kept failing; change the arguments, switch tools or report instead of repeating it' };
    case 'blind_retry':
      return faulted?.failure_category === 'auth'
        ? { action: 'refresh_credential', reasoning: 'an auth error does not go away by repeating the call; refresh the credential or escalate' }
        : { action: 'retry_with_fixed_params', reasoning: 'the arguments were rejected; fix them before calling again' };
    case 'backoff_violation': {
      const wait = faulted === undefined ? undefined : retryAfterMsOf(faulted);
      return { action: 'wait_and_retry', ...(wait === undefined ? {} : { wait_seconds: wait / 1000 }), reasoning: 'wait at least the Retry-After before repeating the call' };
    }
    case 'idempotency_risk':
      return { action: 'verify_state', reasoning: 'check whether the failed write took effect before repeating it' };
    case 'cascade_failure':
      return { action: 'abort', reasoning: 'a call the rest depends on failed; stop and report instead of building on it' };
    case 'ignored_error':
      return { action: 'escalate_to_user', reasoning: 'report the unrecovered failure instead of carrying on as if it worked' };
    case 'semantic_error':
      return { action: 'self_verify_and_retry', reasoning: 'the result does not match the intent; check the arguments against it and call again' };
  }
}

/** The step with a given `step_index` (the last, should two share one). */
function stepLookup(steps: readonly TrajectoryStep[]): { get(index: number): TrajectoryStep | undefined } {
  // Steps are numbered 1..n by every source: then the index is the position, and no map is needed.
  let numbered = true;
  for (let i = 0; i < steps.length && numbered; i++) numbered = steps[i]!.step_index === i + 1;
  if (numbered) return { get: (index) => (Number.isInteger(index) ? steps[index - 1] : undefined) };
  return new Map(steps.map((step) => [step.step_index, step]));
}

/**
 * Fills `decision_correctness`, `correctness_reason` and `correct_action` from the outcome:
 * - `success`: every failed step that was recovered (see `recoveryOf`) and whose decision no
 *   label faults is `correct`;
 * - `failure`: the latest step whose decision a label faults is `incorrect` (all labels on it
 *   go into the reason; the correct action comes from the most confident one). With no label,
 *   the last unrecovered failure is marked `uncertain`: a candidate negative that a judge or a
 *   reviewer has to confirm;
 * - `partial` / `unknown`: nothing, since the anchor is missing.
 */
export function backtrace(trajectory: Trajectory, labels: readonly Label[]): BacktraceResult {
  const marks: DecisionMark[] = [];
  const faulted = new Map<number, Label[]>();
  for (const label of labels) {
    const at = decisionStepOf(label);
    const against = faulted.get(at);
    if (against === undefined) faulted.set(at, [label]);
    else against.push(label);
  }
  const steps = trajectory.steps;
  const byIndex = stepLookup(steps);
  if (trajectory.final_outcome === 'success') {
    steps.forEach((step, i) => {
      if (!isFailed(step) || faulted.has(step.step_index)) return;
      const recovered = recoveryOf(trajectory, i);
      if (recovered === undefined) return;
      marks.push({
        step_index: step.step_index,
        decision_correctness: 'correct',
        correctness_reason: `${step.tool_name} failed (${failureNote(step)}); the agent chose ${step.agent_decision.action}, recovered at step ${steps[recovered]!.step_index}, and the task succeeded`,
        correct_action: null,
      });
    });
  } else if (trajectory.final_outcome === 'failure') {
    let decisive = -Infinity;
    for (const at of faulted.keys()) if (at > decisive) decisive = at;
    const against = faulted.get(decisive);
    if (against !== undefined) {
      const strongest = [...against].sort((a, b) => b.confidence - a.confidence)[0]!;
      marks.push({
        step_index: decisive,
        decision_correctness: 'incorrect',
        correctness_reason: `last wrong decision before the task failed: ${against.map((l) => `${l.name} (${l.reason})`).join('; ')}`,
        correct_action: correctActionFor(strongest.name, byIndex.get(decisive)),
      });
    } else {
      let last: number | undefined;
      for (let i = steps.length - 1; i >= 0 && last === undefined; i--) if (isFailed(steps[i]!) && recoveryOf(trajectory, i) === undefined) last = i;
      if (last !== undefined) {
        const step = steps[last]!;
        marks.push({
          step_index: step.step_index,
          decision_correctness: 'uncertain',
          correctness_reason: `last unrecovered failure (${step.tool_name}: ${failureNote(step)}) before the task failed; the agent chose ${step.agent_decision.action}`,
          correct_action: null,
        });
      }
    }
  }
  const applied = marks.filter((m) => byIndex.get(m.step_index)?.decision_correctness === null);
  const byStep = new Map(applied.map((m) => [m.step_index, m]));
  const annotated: Trajectory = {
    ...trajectory,
    // Unchanged when nothing was marked: the copy would only cost.
    steps: byStep.size === 0 ? steps : steps.map((step) => {
      const mark = byStep.get(step.step_index);
      return mark === undefined
        ? step
        : { ...step, decision_correctness: mark.decision_correctness, correctness_reason: mark.correctness_reason, correct_action: mark.correct_action };
    }),
    metadata: { ...trajectory.metadata, annotator: trajectory.metadata.annotator ?? (applied.length > 0 ? BACKTRACE_ANNOTATOR : null) },
  };
  return { trajectory: annotated, marks: applied };
}
