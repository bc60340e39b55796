/**
 * Failure points: the places in a trajectory where a judged decision was taken after a failure,
 * with what the agent actually did next and, when known, what it should have done. The
 * preference exporters (DPO, KTO) are views of these.
 */
import type { DecisionCorrectness, Trajectory, TrajectoryStep } from '../core/trajectory-types.js';
import { callMessage, correctActionMessage, finalMessageText, promptMessages, type OpenAiMessage } from './chat.js';

type AssistantMessage = Extract<OpenAiMessage, { role: 'assistant' }>;

export interface FailurePoint {
  /** The step whose outcome the decision reacted to. */
  step: TrajectoryStep;
  correctness: DecisionCorrectness;
  /** The task and every call and answer up to and including `step`. */
  prompt: OpenAiMessage[];
  /** What the agent did: the next step's call, or the closing text when it stopped. */
  actual: AssistantMessage;
  /**
   * For an incorrect decision, the better turn: the annotator's `correct_action`, else the
   * first later call that succeeded (the recovery that worked) in a trajectory that did not
   * fail. Absent when neither exists.
   */
  better?: AssistantMessage;
  better_from?: 'correct_action' | 'recovery';
}

/**
 * A step is a failure point when its decision was judged (`decision_correctness` set) and it
 * failed, or an annotator gave a `correct_action` for it (a semantic failure looks like a
 * success: the training taxonomy's weather example).
 */
export function isFailurePoint(step: TrajectoryStep): boolean {
  if (step.decision_correctness === null) return false;
  return (step.status !== null && step.status !== 'success') || step.correct_action !== null;
}

export function failurePoints(trajectory: Trajectory): FailurePoint[] {
  const points: FailurePoint[] = [];
  const steps = trajectory.steps;
  steps.forEach((step, i) => {
    if (!isFailurePoint(step)) return;
    const next = steps[i + 1];
    const actual: AssistantMessage = next === undefined ? { role: 'assistant', content: finalMessageText(trajectory) } : callMessage(next);
    const point: FailurePoint = { step, correctness: step.decision_correctness!, prompt: promptMessages(trajectory, step.step_index), actual };
    if (point.correctness === 'incorrect') {
      if (step.correct_action !== null) {
        point.better = correctActionMessage(trajectory, step, step.correct_action);
        point.better_from = 'correct_action';
      } else if (trajectory.final_outcome !== 'failure') {
        const recovery = steps.slice(i + 2).find((s) => s.status === 'success');
        if (recovery !== undefined && next?.status !== 'success') {
          point.better = callMessage({ step_index: step.step_index + 1, tool_name: recovery.tool_name, input_params: recovery.input_params });
          point.better_from = 'recovery';
        }
      }
    }
    points.push(point);
  });
  return points;
}
