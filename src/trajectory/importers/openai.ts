/**
 * OpenAI chat-messages JSONL: one conversation per line, `{ id?, messages: [...], tools? }`.
 * Each assistant `tool_calls` entry is a step; the `role: "tool"` message with the same
 * `tool_call_id` is its result.
 */
import { assembleTrajectory } from '../assemble.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import {
  contentText,
  deferredArguments,
  definedExtras,
  parseArguments,
  stepsFromCalls,
  toolDefinitions,
  TurnCollector,
  type ConversationCall,
  type ConversationExtras,
} from './conversation.js';
import { outcomeParts, statedOutcome } from './stated-outcome.js';
import { nowIso, type ImportOptions, type Importer } from './import-types.js';
import { isRecord, jsonLinesImporter } from './json-lines.js';
import { readResult } from './tool-result.js';

/** What an OpenAI `messages` array holds: its calls, the first user message, the system prompt and the closing turns. */
export interface OpenAiConversation {
  calls: ConversationCall[];
  task: string | null;
  system: string | null;
  closing: ConversationExtras['closing_turns'];
}

/** Calls and the first user message of an OpenAI `messages` array; a string names what is malformed. */
export function openAiConversation(messages: unknown, deferJson = false): OpenAiConversation | string {
  if (!Array.isArray(messages)) return 'expected "messages" to be an array';
  const calls: ConversationCall[] = [];
  const byId = new Map<string, ConversationCall>();
  const turns = new TurnCollector();
  let task: string | null = null;
  let system: string | null = null;
  // Index loops, not entries(): this runs for every message of every line of a large file.
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (!isRecord(message) || typeof message['role'] !== 'string') return `messages[${i}] has no role`;
    const role = message['role'];
    if (role === 'user') {
      const text = contentText(message['content']);
      if (task === null) task = text;
      turns.say('user', text);
    } else if ((role === 'system' || role === 'developer') && system === null) {
      system = contentText(message['content']);
    }
    // A tool-calling message's text goes with its first call; a message without calls is a turn.
    const said = role === 'assistant' ? contentText(message['content']) : null;
    if (role === 'assistant' && (message['tool_calls'] == null || (Array.isArray(message['tool_calls']) && message['tool_calls'].length === 0))) turns.say('assistant', said);
    if (role === 'assistant' && message['tool_calls'] != null) {
      const toolCalls = message['tool_calls'];
      if (!Array.isArray(toolCalls)) return `messages[${i}].tool_calls is not an array`;
      for (let j = 0; j < toolCalls.length; j++) {
        const toolCall: unknown = toolCalls[j];
        const fn = isRecord(toolCall) && isRecord(toolCall['function']) ? toolCall['function'] : undefined;
        if (fn === undefined || typeof fn['name'] !== 'string' || fn['name'] === '') return `messages[${i}].tool_calls[${j}] has no function name`;
        const id = isRecord(toolCall) && typeof toolCall['id'] === 'string' ? toolCall['id'] : `call_${i}_${j}`;
        const call: ConversationCall = { id, tool_name: fn['name'], input_params: deferJson ? deferredArguments(fn['arguments']) : parseArguments(fn['arguments']) };
        turns.beforeCall(call);
        if (j === 0 && said !== null && said.trim() !== '') call.call_text = said;
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
  return { calls, task, system, closing: turns.closing() };
}

/** Reads an OpenAI-style tool result (a `role: "tool"` message's content, which has no error flag). */
export const classifyOpenAiResult = (call: { result: { text: string } }, body?: unknown, screened?: boolean) =>
  readResult(call.result.text, screened === undefined ? {} : { screened }, body);

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
    ...outcomeParts(statedOutcome(value)),
    created_at: nowIso(options),
    steps,
    metadata: options?.domain === undefined ? {} : { domain: options.domain },
    ...definedExtras({ system_prompt: conversation.system, tools: toolDefinitions(value['tools']), closing_turns: conversation.closing }),
  });
}

/** Reads OpenAI chat-messages JSONL. */
export const importOpenAi: Importer = jsonLinesImporter(openAiTrajectory);
