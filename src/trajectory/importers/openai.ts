/**
 * OpenAI chat-messages JSONL: one conversation per line, `{ id?, messages: [...], tools? }`.
 * Each assistant `tool_calls` entry is a step; the `role: "tool"` message with the same
 * `tool_call_id` is its result.
 */
import { assembleTrajectory } from '../assemble.js';
import type { Trajectory } from '../types.js';
import { contentText, deferredArguments, outcomeOfReward, parseArguments, stepsFromCalls, type ConversationCall } from './conversation.js';
import { nowIso, type ImportOptions, type Importer } from './import-types.js';
import { isRecord, jsonLinesImporter } from './json-lines.js';
import { failureOfResult } from './tool-result.js';

/** Calls and the first user message of an OpenAI `messages` array; a string names what is malformed. */
export function openAiConversation(messages: unknown, deferJson = false): { calls: ConversationCall[]; task: string | null } | string {
  if (!Array.isArray(messages)) return 'expected "messages" to be an array';
  const calls: ConversationCall[] = [];
  const byId = new Map<string, ConversationCall>();
  let task: string | null = null;
  // Index loops, not entries(): this runs for every message of every line of a large file.
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (!isRecord(message) || typeof message['role'] !== 'string') return `messages[${i}] has no role`;
    const role = message['role'];
    if (role === 'user' && task === null) task = contentText(message['content']);
    if (role === 'assistant' && message['tool_calls'] != null) {
      const toolCalls = message['tool_calls'];
      if (!Array.isArray(toolCalls)) return `messages[${i}].tool_calls is not an array`;
      for (let j = 0; j < toolCalls.length; j++) {
        const toolCall: unknown = toolCalls[j];
        const fn = isRecord(toolCall) && isRecord(toolCall['function']) ? toolCall['function'] : undefined;
        if (fn === undefined || typeof fn['name'] !== 'string' || fn['name'] === '') return `messages[${i}].tool_calls[${j}] has no function name`;
        const id = isRecord(toolCall) && typeof toolCall['id'] === 'string' ? toolCall['id'] : `call_${i}_${j}`;
        const call: ConversationCall = { id, tool_name: fn['name'], input_params: deferJson ? deferredArguments(fn['arguments']) : parseArguments(fn['arguments']) };
        calls.push(call);
        byId.set(id, call);
      }
    }
    if (role === 'tool') {
      const id = message['tool_call_id'];
      if (typeof id !== 'string') return `messages[${i}] (role tool) has no tool_call_id`;
      const call = byId.get(id);
      if (call === undefined) return `messages[${i}] answers tool_call_id ${JSON.stringify(id)}, which no earlier assistant message made`;
      call.result = { text: contentText(message['content']) ?? '' };
    }
  }
  return { calls, task };
}

/** The failures an OpenAI-style tool result shows (shared with tau-bench, whose results are the same shape). */
export const classifyOpenAiResult = (call: { result: { text: string } }, body?: unknown) => failureOfResult(call.result.text, {}, body);

function sourceIdOf(value: unknown): string | null {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? String(value) : null;
}

/** One JSONL line's conversation as a trajectory, or the reason it cannot be one. */
export function openAiTrajectory(value: unknown, options?: ImportOptions): Trajectory | string {
  if (!isRecord(value)) return 'expected a JSON object with a "messages" array';
  const defer = options?.deferJson === true;
  const conversation = openAiConversation(value['messages'], defer);
  if (typeof conversation === 'string') return conversation;
  const steps = stepsFromCalls(conversation.calls, classifyOpenAiResult, defer);
  return assembleTrajectory({
    source: 'openai',
    source_id: sourceIdOf(value['id']),
    task_description: conversation.task,
    final_outcome: outcomeOfReward(value['reward']),
    created_at: nowIso(options),
    steps,
    metadata: options?.domain === undefined ? {} : { domain: options.domain },
  });
}

/** Reads OpenAI chat-messages JSONL. */
export const importOpenAi: Importer = jsonLinesImporter(openAiTrajectory);
