/**
 * `--format dpo-trl`: TRL's conversational preference format, one line per failure point with
 * an incorrect decision and a better turn ({@link failurePoints}).
 *
 * ```
 * { "prompt":   [ { "role": "user", "content": <task> },
 *                 { "role": "assistant", "content": "", "tool_calls": [{ "type": "function", "function": { "name", "arguments": {…} } }] },
 *                 { "role": "tool", "name": <tool_name>, "content": <response as JSON text> }, … ],
 *   "chosen":   [ <assistant: correct_action, or the recovery that worked> ],
 *   "rejected": [ <assistant: what the agent actually did next> ] }
 * ```
 *
 * Messages follow Hugging Face chat templates: tool-call arguments are objects (text only when
 * the model's arguments were not JSON), tool turns carry the tool's name, and content is never null.
 */
import type { Trajectory } from '../core/trajectory-types.js';
import { toHfMessages, type HfMessage } from './chat.js';
import type { TrajectoryExamples } from './exporter.js';
import { failurePoints } from './failure-points.js';

export interface DpoTrlExample {
  prompt: HfMessage[];
  chosen: HfMessage[];
  rejected: HfMessage[];
}

export function exportDpoTrl(trajectory: Trajectory): TrajectoryExamples<DpoTrlExample> {
  const pairs = failurePoints(trajectory).filter((p) => p.correctness === 'incorrect' && p.better !== undefined);
  if (pairs.length === 0) return { examples: [], skipped: 'no preference pair' };
  return {
    examples: pairs.map((p) => {
      // Converted together so the tool-call names carry over into the tool turns.
      const [chosen, rejected] = [p.better!, p.actual].map((m) => toHfMessages([...p.prompt, m]).slice(p.prompt.length));
      return { prompt: toHfMessages(p.prompt), chosen: chosen!, rejected: rejected! };
    }),
  };
}
