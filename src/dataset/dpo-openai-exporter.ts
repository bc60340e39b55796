/**
 * `--format dpo-openai`: OpenAI preference fine-tuning (DPO) JSONL, one line per failure point
 * with an incorrect decision and a better turn ({@link failurePoints}).
 *
 * ```
 * { "input": { "messages": [ user, assistant(tool_calls), tool, …up to the failed step's answer… ],
 *              "tools": [{ "type": "function", "function": { "name", "description"?, "parameters" } }] },
 *   "preferred_output":     [ <assistant: correct_action, or the recovery that worked> ],
 *   "non_preferred_output": [ <assistant: what the agent actually did next> ] }
 * ```
 *
 * Messages are in the SFT exporter's shape (the log's turns kept, tool-call arguments as JSON
 * text, ids `call_<step_index>`, tool content the result text the model read), without weights.
 * The preferred turn is the correction as the model would emit it (a fixed call, the read that
 * verifies a write, or an answer to the user; see `correctActionMessage`). `tools` are the log's
 * own declarations when it had them (see `toolsOf`).
 */
import type { Trajectory } from '../core/trajectory-types.js';
import { trajectoryTools, type OpenAiMessage, type OpenAiTool } from './chat.js';
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
  const tools = trajectoryTools(trajectory);
  return { examples: pairs.map((p) => ({ input: { messages: p.prompt, tools }, preferred_output: [p.better!], non_preferred_output: [p.actual] })) };
}
