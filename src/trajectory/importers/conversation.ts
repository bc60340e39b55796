/**
 * Tool calls paired with their results, as chat formats log them, into trajectory steps. Chat
 * logs carry no timings, so a repeat of the same call is a `retry`, never a `wait_and_retry`.
 */
import { paramsHash } from '../../record/params-hash.js';
import { NO_FAILURE, stepFailure } from '../assemble.js';
import { deriveDecisions } from '../decide.js';
import type { TrajectoryStep } from '../types.js';
import { failureResponse, parseResultText, type ResultFailure } from './tool-result.js';

export interface ConversationCall {
  /** The call id the log pairs the result with. */
  id: string;
  tool_name: string;
  input_params: unknown;
  /** Undefined when the conversation ends before the result. */
  result?: { text: string; isError?: boolean };
}

/** A call whose result the conversation holds. */
export type AnsweredCall = ConversationCall & { result: { text: string; isError?: boolean } };

/**
 * Turns calls in order into steps; `classify` finds failures in a result, given its text and
 * `body`, the text parsed (once: it becomes the step's response body too).
 */
export function stepsFromCalls(calls: readonly ConversationCall[], classify: (call: AnsweredCall, body: unknown) => ResultFailure | null): TrajectoryStep[] {
  const bodies = calls.map((call) => (call.result === undefined ? undefined : parseResultText(call.result.text)));
  const failures = calls.map((call, i) => (call.result === undefined ? null : classify(call as AnsweredCall, bodies[i])));
  const decisions = deriveDecisions(
    calls.map((call, i) => ({ tool_name: call.tool_name, params_hash: paramsHash(call.input_params), input_params: call.input_params, failed: failures[i] !== null })),
  );
  return calls.map((call, i): TrajectoryStep => {
    const failure = failures[i] ?? null;
    const response = failureResponse(failure);
    if (call.result !== undefined) response.body = bodies[i];
    return {
      step_index: i + 1,
      tool_name: call.tool_name,
      input_params: call.input_params,
      response,
      status: call.result === undefined ? null : failure === null ? 'success' : 'failure',
      ...(failure === null ? NO_FAILURE : stepFailure(failure.category, failure.type, failure.stage)),
      agent_decision: decisions[i]!,
      decision_correctness: null,
      correctness_reason: null,
      correct_action: null,
      source_ref: call.id,
    };
  });
}

/** Tool arguments as a model wrote them: JSON text parsed, anything unparseable kept as the raw string. */
export function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** Text of a message content that is a string or a list of parts with `text`. */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts = content.flatMap((part) =>
    typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? [(part as { text: string }).text] : [],
  );
  return texts.length === 0 ? null : texts.join('\n');
}

/** Outcome from a reward in [0, 1]: 1 success, 0 failure, part credit partial. */
export function outcomeOfReward(reward: unknown): 'success' | 'failure' | 'partial' | 'unknown' {
  if (typeof reward !== 'number' || !Number.isFinite(reward)) return 'unknown';
  if (reward >= 1) return 'success';
  if (reward <= 0) return 'failure';
  return 'partial';
}
