/**
 * `--format dpo-openai`: OpenAI preference fine-tuning (DPO) JSONL, one line per failure point
 * with an incorrect decision and a better turn ({@link failurePoints}).
 *
 * ```
 * { "input": { "messages": [ user, assistant(tool_calls), tool, …up to the failed step's answer… ],
 *              "tools": [{ "type": "function", "function": { "name", "parameters" } }] },
 *   "preferred_output":     [ <assistant: correct_action, or the recovery that worked> ],
 *   "non_preferred_output": [ <assistant: what the agent actually did next> ] }
 * ```
 *
 * Messages are in the SFT exporter's shape (tool-call arguments as JSON text, ids
 * `call_<step_index>`, tool content the response as JSON text), without weights.
 */
import type { Trajectory } from '../core/trajectory-types.js';
import { toolsOf, type OpenAiMessage, type OpenAiTool } from './chat.js';
import type { TrajectoryExamples } from './exporter.js';
import { failurePoints } from './failure-points.js';

export interface DpoOpenAiExample {
  input: { messages: OpenAiMessage[]; tools: OpenAiTool[] };
  preferred_output: OpenAiMessage[];
  non_preferred_output: OpenAiMessage[];
}

export function exportDpoOpenAi(trajectory: Trajectory): TrajectoryExamples<DpoOpenAiExample> {
  const pairs = failurePoints(trajectory).filter((p) => p.correctness === 'incorrect' && p.better !== undefined);
  if (pairs.length === 0) return { examples: [], skipped: 'no preference pair' };
  const tools = toolsOf(trajectory.steps);
  return { examples: pairs.map((p) => ({ input: { messages: p.prompt, tools }, preferred_output: [p.better!], non_preferred_output: [p.actual] })) };
}
