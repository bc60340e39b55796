/**
 * `--format sft`: OpenAI chat fine-tuning JSONL, one trajectory per line.
 *
 * ```
 * { "messages": [
 *     { "role": "system", "content": "…" },                    // the `system` option, else the log's system prompt
 *     { "role": "user", "content": <the first user message, or task_description> },
 *     { "role": "assistant", "content": <text the agent wrote beside the call, or null>, "weight": 0|1,
 *       "tool_calls": [{ "id": "call_<step_index>", "type": "function",
 *                        "function": { "name": <tool_name>, "arguments": <input_params as JSON text> } }] },
 *     { "role": "tool", "tool_call_id": "call_<step_index>", "content": <the result text the model read> },
 *     …the log's text turns between calls, one assistant + tool pair per step…,
 *     { "role": "assistant", "content": <final answer>, "weight": 0|1 } ],
 *   "tools": [{ "type": "function", "function": { "name", "description"?, "parameters": <JSON Schema> } }] }
 * ```
 *
 * - Only trajectories whose `final_outcome` is `success` (others: skipped, counted on the card),
 *   and only those with a task description (the user turn).
 * - Weights: an assistant turn is the decision taken after the previous step, so it gets weight
 *   0 when that step's `decision_correctness` is `incorrect`, and 1 otherwise: the recovery after
 *   a failure, the ordinary calls, and the final answer (0 too if the last decision is incorrect).
 * - `tools`: the tools the log declared, with their descriptions and schemas; a tool called but
 *   not declared gets `parameters` inferred from its arguments ({@link toolsOf}).
 * - Tool turns hold the result as the model read it (the logged text), not a rewrapped object.
 * - The final text is the agent's own closing answer when the log kept it, else the last
 *   decision's logged reasoning, else a fixed sentence ({@link finalMessageText}).
 */
import type { Trajectory } from '../core/trajectory-types.js';
import { conversationMessages, finalMessageText, trajectoryTools, type OpenAiMessage, type OpenAiTool } from './chat.js';
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
  const weightAfter = (stepIndex: number): 0 | 1 => (stepIndex > 0 && trajectory.steps[stepIndex - 1]?.decision_correctness === 'incorrect' ? 0 : 1);
  conversationMessages(trajectory, {
    system: options.system,
    upToStep: Infinity,
    onTurn: (m, afterStep) => messages.push(m.role === 'assistant' ? { ...m, weight: weightAfter(afterStep) } : m),
  });
  messages.push({ role: 'assistant', content: finalMessageText(trajectory), weight: weightAfter(trajectory.steps.length) });
  return { examples: [{ messages, tools: trajectoryTools(trajectory) }] };
}
