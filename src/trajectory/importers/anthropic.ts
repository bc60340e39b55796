/**
 * Anthropic Messages JSONL: one conversation per line, `{ id?, system?, messages: [...] }`.
 * `tool_use` blocks in assistant messages are steps; the `tool_result` block with the same
 * `tool_use_id` (in a later user message) is the result, and `is_error: true` marks a failure.
 */
import { assembleTrajectory } from '../assemble.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { contentText, definedExtras, stepsFromCalls, toolDefinitions, TurnCollector, type ConversationCall, type ConversationExtras } from './conversation.js';
import { outcomeParts, statedOutcome } from './stated-outcome.js';
import { nowIso, type Importer, type ImportOptions } from './import-types.js';
import { isRecord, jsonLinesImporter } from './json-lines.js';
import { readResult } from './tool-result.js';

function conversation(messages: unknown): { calls: ConversationCall[]; task: string | null; closing: ConversationExtras['closing_turns'] } | string {
  if (!Array.isArray(messages)) return 'expected "messages" to be an array';
  const calls: ConversationCall[] = [];
  const byId = new Map<string, ConversationCall>();
  const turns = new TurnCollector();
  let task: string | null = null;
  for (const [i, message] of messages.entries()) {
    if (!isRecord(message) || typeof message['role'] !== 'string') return `messages[${i}] has no role`;
    const role = message['role'] === 'assistant' ? 'assistant' : message['role'] === 'user' ? 'user' : undefined;
    const content = message['content'];
    if (typeof content === 'string') {
      if (role === 'user' && task === null) task = content;
      if (role !== undefined) turns.say(role, content);
      continue;
    }
    if (!Array.isArray(content)) return `messages[${i}].content is neither a string nor a list of blocks`;
    // Text blocks before a tool_use in an assistant message are what the agent said with the call.
    let said: string[] = [];
    const flush = (): void => {
      if (role !== undefined && said.length > 0) turns.say(role, said.join('\n'));
      said = [];
    };
    for (const [j, block] of content.entries()) {
      if (!isRecord(block) || typeof block['type'] !== 'string') return `messages[${i}].content[${j}] has no type`;
      if (block['type'] === 'text' && typeof block['text'] === 'string') {
        if (role === 'user' && task === null) task = block['text'];
        said.push(block['text']);
      }
      if (block['type'] === 'tool_use') {
        if (typeof block['name'] !== 'string' || typeof block['id'] !== 'string') return `messages[${i}].content[${j}] (tool_use) needs an id and a name`;
        const call: ConversationCall = { id: block['id'], tool_name: block['name'], input_params: block['input'] ?? {} };
        turns.beforeCall(call);
        const text = said.join('\n');
        if (text.trim() !== '') call.call_text = text;
        said = [];
        calls.push(call);
        byId.set(block['id'], call);
      }
      if (block['type'] === 'tool_result') {
        const id = block['tool_use_id'];
        const call = typeof id === 'string' ? byId.get(id) : undefined;
        if (call === undefined) return `messages[${i}].content[${j}] answers tool_use_id ${JSON.stringify(id)}, which no earlier tool_use made`;
        call.result = { text: contentText(block['content']) ?? '', isError: block['is_error'] === true };
      }
    }
    flush();
  }
  return { calls, task, closing: turns.closing() };
}

export function anthropicTrajectory(value: unknown, options?: ImportOptions): Trajectory | string {
  if (!isRecord(value)) return 'expected a JSON object with a "messages" array';
  const parsed = conversation(value['messages']);
  if (typeof parsed === 'string') return parsed;
  const steps = stepsFromCalls(parsed.calls, (call, body, screened) => readResult(call.result.text, { ...(call.result.isError === true ? { isError: true } : {}), ...(screened === undefined ? {} : { screened }) }, body), options?.deferJson === true);
  const id = value['id'];
  return assembleTrajectory({
    source: 'anthropic',
    source_id: typeof id === 'string' || typeof id === 'number' ? String(id) : null,
    task_description: parsed.task,
    ...outcomeParts(statedOutcome(value)),
    created_at: nowIso(options),
    steps,
    metadata: options?.domain === undefined ? {} : { domain: options.domain },
    ...definedExtras({ system_prompt: systemText(value['system']), tools: toolDefinitions(value['tools']), closing_turns: parsed.closing }),
  });
}

/** Anthropic's top-level `system`: a string or a list of text blocks. */
const systemText = (system: unknown): string | null => (typeof system === 'string' ? system : contentText(system));

/** Reads Anthropic Messages JSONL. */
export const importAnthropic: Importer = jsonLinesImporter(anthropicTrajectory);
