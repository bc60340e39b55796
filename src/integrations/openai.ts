/**
 * The OpenAI SDK (and any OpenAI-compatible endpoint): tool definitions from a runtime's tools,
 * and the model's tool calls run through the runtime, answered in the shape the next request needs.
 *
 * Chat Completions: `chatTools(rt)` for `tools`, then `runChatToolCalls(rt, message)` turns the
 * assistant message's `tool_calls` into `role: "tool"` messages, one per call, in order.
 * Responses: `responsesTools(rt)` and `runResponsesFunctionCalls(rt, response.output)` give the
 * `function_call_output` items.
 *
 * Arguments arrive as JSON text and go through `executeJson`: text that does not parse is a
 * recorded `malformed_arguments` rejection whose feedback asks the model for valid JSON, never a
 * guess. Every answer is the model-facing result (see model-facing-result.ts): the output, or
 * `{ ok: false, error, feedback }`. Calls of one message run concurrently by default; pass a
 * `Session` instead of the runtime to keep a conversation in one trace with consecutive steps.
 *
 * @example
 * const s = rt.session({ agent: 'support-bot', model: 'gpt-4.1' });
 * const completion = await openai.chat.completions.create({ model: 'gpt-4.1', messages, tools: chatTools(rt) });
 * const message = completion.choices[0]!.message;
 * messages.push(message, ...(await runChatToolCalls(s, message, { intent: lastUserText })));
 */
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions/completions';
import type { FunctionTool, ResponseCustomToolCallOutput, ResponseInputItem } from 'openai/resources/responses/responses';
import type { Runtime, ToolInfo } from '../runtime/runtime.js';
import { resultText } from './model-facing-result.js';
import { runToolCalls, selectTools, type PendingToolCall, type RunToolCallsOptions, type ToolCallTarget, type ToolListOptions } from './tool-calls.js';

export type { RunToolCallsOptions, ToolCallTarget, ToolListOptions } from './tool-calls.js';

/** Chat Completions `tools` for the runtime's tools (function tools, non-strict: faultline validates). */
export function chatTools(source: Runtime | readonly ToolInfo[], options: ToolListOptions = {}): ChatCompletionFunctionTool[] {
  return selectTools(source, options.only).map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.inputSchema as Record<string, unknown> },
  }));
}

/** Responses API `tools` for the runtime's tools. */
export function responsesTools(source: Runtime | readonly ToolInfo[], options: ToolListOptions = {}): FunctionTool[] {
  return selectTools(source, options.only).map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    parameters: t.inputSchema as Record<string, unknown>,
    strict: false,
  }));
}

/**
 * Runs an assistant message's `tool_calls` and returns the `role: "tool"` messages that answer
 * them, in the same order. A message without tool calls gives `[]`.
 */
export async function runChatToolCalls(
  target: ToolCallTarget,
  message: { tool_calls?: readonly ChatCompletionMessageToolCall[] | null | undefined },
  options: RunToolCallsOptions = {},
): Promise<ChatCompletionToolMessageParam[]> {
  const calls = (message.tool_calls ?? []).map(
    (c): PendingToolCall =>
      c.type === 'function'
        ? { id: c.id, name: c.function.name, input: { json: c.function.arguments } }
        : // A custom tool's input is free text; the runtime validates it like any arguments.
          { id: c.id, name: c.custom.name, input: { value: c.custom.input } },
  );
  const results = await runToolCalls(target, calls, options);
  return calls.map((call, i) => ({ role: 'tool', tool_call_id: call.id, content: resultText(results[i]!) }));
}

type ResponsesCallItem =
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'custom_tool_call'; call_id: string; name: string; input: string };

/**
 * Runs the `function_call` (and `custom_tool_call`) items of a Responses API output and returns
 * the `function_call_output` (`custom_tool_call_output`) items for the next request's `input`, in
 * the same order. Other items (messages, reasoning) are skipped.
 */
export async function runResponsesFunctionCalls(
  target: ToolCallTarget,
  output: readonly { type: string }[],
  options: RunToolCallsOptions = {},
): Promise<(ResponseInputItem.FunctionCallOutput | ResponseCustomToolCallOutput)[]> {
  const calls: PendingToolCall[] = [];
  for (const item of output as readonly ResponsesCallItem[]) {
    if (item.type === 'function_call') calls.push({ id: item.call_id, name: item.name, input: { json: item.arguments } });
    else if (item.type === 'custom_tool_call') calls.push({ id: item.call_id, name: item.name, input: { value: item.input } });
  }
  const results = await runToolCalls(target, calls, options);
  return calls.map((call, i) =>
    'json' in call.input
      ? { type: 'function_call_output', call_id: call.id, output: resultText(results[i]!) }
      : { type: 'custom_tool_call_output', call_id: call.id, output: resultText(results[i]!) },
  );
}
