/**
 * `--format sft`: OpenAI chat fine-tuning JSONL, one trajectory per line.
 *
 * ```
 * { "messages": [
 *     { "role": "system", "content": "…" },                    // only with the `system` option
 *     { "role": "user", "content": <task_description> },
 *     { "role": "assistant", "content": null, "weight": 0|1,
 *       "tool_calls": [{ "id": "call_<step_index>", "type": "function",
 *                        "function": { "name": <tool_name>, "arguments": <input_params as JSON text> } }] },
 *     { "role": "tool", "tool_call_id": "call_<step_index>", "content": <response as JSON text> },
 *     …one assistant + tool pair per step…,
 *     { "role": "assistant", "content": <final text>, "weight": 0|1 } ],
 *   "tools": [{ "type": "function", "function": { "name": <tool_name>, "parameters": <JSON Schema> } }] }
 * ```
 *
 * - Only trajectories whose `final_outcome` is `success` (others: skipped, counted on the card),
 *   and only those with a task description (the user turn).
 * - Weights: an assistant turn is the decision taken after the previous step, so it gets weight
 *   0 when that step's `decision_correctness` is `incorrect`, and 1 otherwise: the recovery after
 *   a failure, the ordinary calls, and the final answer (0 too if the last decision is incorrect).
 * - `tools`: the tools the trajectory called, in order of first use; trajectories keep no tool
 *   definitions, so `parameters` is inferred from the arguments seen ({@link inferParametersSchema}).
 * - The final text is the last decision's logged reasoning, else a fixed sentence
 *   ({@link finalMessageText}): trajectories record calls, not the agent's closing prose.
 */
import type { Trajectory } from '../core/trajectory-types.js';
import { callMessage, finalMessageText, toolMessage, toolsOf, type OpenAiMessage, type OpenAiTool } from './chat.js';
import type { TrajectoryExamples } from './exporter.js';

export interface SftExample {
  messages: OpenAiMessage[];
  tools: OpenAiTool[];
}

export interface SftOptions {
  /** A system turn to put first. */
  system?: string;
}

export function exportSft(trajectory: Trajectory, options: SftOptions = {}): TrajectoryExamples<SftExample> {
  if (trajectory.final_outcome !== 'success') return { examples: [], skipped: `outcome is ${trajectory.final_outcome}` };
  if (trajectory.task_description === null || trajectory.task_description === '') return { examples: [], skipped: 'no task description' };
  const messages: OpenAiMessage[] = [];
  if (options.system !== undefined) messages.push({ role: 'system', content: options.system });
  messages.push({ role: 'user', content: trajectory.task_description });
  const weightAfter = (index: number): 0 | 1 => (trajectory.steps[index - 1]?.decision_correctness === 'incorrect' ? 0 : 1);
  trajectory.steps.forEach((s, i) => {
    messages.push({ ...callMessage(s), weight: weightAfter(i) }, toolMessage(s));
  });
  messages.push({ role: 'assistant', content: finalMessageText(trajectory), weight: weightAfter(trajectory.steps.length) });
  return { examples: [{ messages, tools: toolsOf(trajectory.steps) }] };
}
