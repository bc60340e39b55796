/**
 * The Anthropic Messages API (with `@anthropic-ai/sdk` or plain fetch): tool definitions from a
 * runtime's tools, and the `tool_use` blocks of an assistant message run through the runtime and
 * answered as `tool_result` blocks, in order, for the next user turn.
 *
 * A failure is answered with `is_error: true` and the model-facing failure envelope as its text
 * (`{ ok: false, error, feedback }`, see model-facing-result.ts), so the model reads both that the
 * call failed and what to do about it. Types here are structural: no Anthropic package needed.
 *
 * A tool name the runtime does not have is a recorded `request_build` / `unknown_tool` rejection
 * whose hint names the closest tools. An `input` that is text rather than an object is the JSON
 * the model wrote, as a client that reads the stream has it (the `partial_json` of the block's
 * `input_json_delta` events, concatenated; `input_schema` is always an object, so text is never
 * a valid input itself): it goes through `executeJson`, and text that does not parse is a
 * recorded `malformed_arguments` rejection, as with OpenAI.
 *
 * @example
 * const s = rt.session({ agent: 'support-bot', model: 'claude-sonnet-4-5' });
 * const message = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: anthropicTools(rt) });
 * messages.push({ role: 'assistant', content: message.content }, { role: 'user', content: await runToolUseBlocks(s, message) });
 */
import type { Runtime, ToolInfo } from '../runtime/runtime.js';
import { resultText } from './model-facing-result.js';
import { runToolCalls, selectTools, type RunToolCallsOptions, type ToolCallTarget, type ToolListOptions } from './tool-calls.js';

export type { RunToolCallsOptions, ToolCallTarget, ToolListOptions } from './tool-calls.js';

/** A tool as the Messages API takes it. */
export interface AnthropicToolDefinition {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** The part of a `tool_use` content block this reads. */
export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** The decoded arguments, or the JSON text a streaming client accumulated. */
  input: unknown;
}

/** A `tool_result` content block for the next user message. */
export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

/** Messages API `tools` for the runtime's tools. */
export function anthropicTools(source: Runtime | readonly ToolInfo[], options: ToolListOptions = {}): AnthropicToolDefinition[] {
  return selectTools(source, options.only).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema as Record<string, unknown> }));
}

/**
 * Runs the `tool_use` blocks of an assistant message (other blocks are skipped) and returns the
 * `tool_result` blocks that answer them, in the same order.
 */
export async function runToolUseBlocks(
  target: ToolCallTarget,
  message: { content: readonly { type: string }[] },
  options: RunToolCallsOptions = {},
): Promise<AnthropicToolResultBlock[]> {
  const uses = message.content.filter((block): block is AnthropicToolUseBlock => block.type === 'tool_use');
  const calls = uses.map((use) => ({ id: use.id, name: use.name, input: typeof use.input === 'string' ? { json: use.input } : { value: use.input } }));
  const results = await runToolCalls(target, calls, options);
  return uses.map((use, i) => {
    const result = results[i]!;
    const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: use.id, content: resultText(result) };
    if (!result.ok) block.is_error = true;
    return block;
  });
}
