/**
 * The Vercel AI SDK (`ai` 6): faultline tools as an AI SDK `ToolSet`, and AI SDK tools run
 * through a faultline runtime.
 *
 * - `aiSdkTools(rt)`: every tool of a runtime as an AI SDK tool whose `execute` is `rt.execute`.
 *   The model sees the tool's JSON Schema; validation is left to faultline (the AI SDK does not
 *   check these tools' input), so arguments are normalized before they are rejected and a
 *   rejection is recorded and explained like any other failure.
 * - `wrapAiSdkTools(tools, runtimeOptions)`: the tools you already wrote for the AI SDK (zod or
 *   JSON Schema), each given timeouts, classified retries, a breaker, feedback and a record.
 *   Tools without `execute` (client-side, provider-defined) pass through untouched.
 *
 * A failure is, by default, the tool's result: `{ ok: false, error, feedback }` (see
 * model-facing-result.ts), sent to the model as an `error-json` tool output so that it reads
 * both that the call failed and what to do. With `failures: 'throw'`, `execute` throws a
 * `ToolCallFailedError` instead, which the AI SDK turns into a `tool-error` part.
 *
 * @example
 * const rt = createRuntime({ tools: [getWeather], store: 'sqlite:.faultline/faultline.db' });
 * const { text } = await generateText({ model, tools: aiSdkTools(rt, { session: rt.session({ agent: 'trip-planner' }) }), stopWhen: stepCountIs(5), prompt });
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { asSchema, jsonSchema, tool, type JSONSchema7, type ModelMessage, type Tool as AiTool, type ToolExecutionOptions, type ToolSet } from 'ai';
import { FaultlineError } from '../errors.js';
import { defineTool, type JsonSchema, type Tool, type ToolSpec } from '../runtime/define-tool.js';
import { createRuntime, type ExecuteOptions, type ExecuteResult, type Runtime, type RuntimeOptions, type Session } from '../runtime/runtime.js';
import { failureForModel, type ModelFacingFailure } from './model-facing-result.js';
import { selectTools } from './tool-calls.js';

const FAILED_MARKER = Symbol.for('faultline.ToolCallFailedError');

/** Thrown by a tool's `execute` under `failures: 'throw'`; the AI SDK reports it as a `tool-error` part. */
export class ToolCallFailedError extends FaultlineError {
  readonly [FAILED_MARKER] = true;
  readonly toolName: string;
  /** What the model would have read under `failures: 'result'`. */
  readonly failure: ModelFacingFailure;
  readonly result: Extract<ExecuteResult, { ok: false }>;
  constructor(toolName: string, result: Extract<ExecuteResult, { ok: false }>) {
    super(`${toolName} failed (${result.error.type}): ${result.error.message}. ${result.feedback.hint}`);
    this.toolName = toolName;
    this.result = result;
    this.failure = failureForModel(result);
  }
  static override isInstance(value: unknown): value is ToolCallFailedError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[FAILED_MARKER] === true;
  }
}

export interface AiSdkToolsOptions {
  /** One conversation, one trace: calls go through this session (consecutive step indexes). */
  session?: Session;
  /** Only these tools. */
  only?: readonly string[];
  /** `'result'` (default): a failure is the tool's result, sent as `error-json`. `'throw'`: a ToolCallFailedError. */
  failures?: 'result' | 'throw';
  /**
   * The intent recorded with each call, the anchor for semantic checks later. Default: the text
   * of the last user message the model saw. `false`: none.
   */
  intent?: ((messages: readonly ModelMessage[]) => string | undefined) | false;
  /** Added to every call (agent, model, context). */
  callOptions?: Omit<ExecuteOptions, 'signal' | 'traceId' | 'stepIndex' | 'intent'>;
}

/** The text of the last user message (string content, or its text parts joined). */
export function lastUserText(messages: readonly ModelMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    const text = m.content
      .filter((part): part is Extract<typeof part, { type: 'text' }> => part.type === 'text')
      .map((part) => part.text)
      .join('\n');
    return text === '' ? undefined : text;
  }
  return undefined;
}

/** Recognizes the failure envelope (also after a serialization round trip through UI messages). */
function isFailureEnvelope(value: unknown): value is ModelFacingFailure {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const error = v['error'] as Record<string, unknown> | undefined;
  const feedback = v['feedback'] as Record<string, unknown> | undefined;
  return v['ok'] === false && typeof error?.['type'] === 'string' && typeof feedback?.['action'] === 'string';
}

function executeFor(
  rt: Runtime,
  name: string,
  options: AiSdkToolsOptions,
  scope: ((ai: ToolExecutionOptions, run: () => Promise<ExecuteResult>) => Promise<ExecuteResult>) | undefined,
) {
  const intentOf = options.intent === false ? undefined : (options.intent ?? lastUserText);
  const target = options.session ?? rt;
  return async (input: unknown, ai: ToolExecutionOptions): Promise<unknown> => {
    const opts: ExecuteOptions = { ...options.callOptions, context: { ...options.callOptions?.context, tool_call_id: ai.toolCallId } };
    if (ai.abortSignal !== undefined) opts.signal = ai.abortSignal;
    const intent = intentOf?.(ai.messages);
    if (intent !== undefined) opts.intent = intent;
    const run = () => target.execute(name, input, opts);
    const result = scope === undefined ? await run() : await scope(ai, run);
    if (result.ok) return result.output;
    if (options.failures === 'throw') throw new ToolCallFailedError(name, result);
    return failureForModel(result);
  };
}

function toModelOutput({ output }: { output: unknown }) {
  if (isFailureEnvelope(output)) return { type: 'error-json' as const, value: output as never };
  if (typeof output === 'string') return { type: 'text' as const, value: output };
  return { type: 'json' as const, value: (output ?? null) as never };
}

function buildToolSet(rt: Runtime, options: AiSdkToolsOptions, scope?: Parameters<typeof executeFor>[3]): ToolSet {
  const set: ToolSet = {};
  for (const info of selectTools(rt, options.only)) {
    set[info.name] = tool({
      description: info.description,
      // A JSON Schema without a validator: the AI SDK hands the model's input over as it is, and
      // faultline validates it (normalizing first). A wrapped zod schema is not consulted either.
      inputSchema: jsonSchema(info.inputSchema as JSONSchema7),
      execute: executeFor(rt, info.name, options, scope),
      toModelOutput,
    });
  }
  return set;
}

/** The runtime's tools as an AI SDK `ToolSet`. */
export function aiSdkTools(rt: Runtime, options: AiSdkToolsOptions = {}): ToolSet {
  return buildToolSet(rt, options);
}

/** faultline settings for one wrapped tool (the AI SDK tool has no idempotency, timeout or retry of its own). */
export type WrappedToolSettings = Partial<Pick<ToolSpec<unknown, unknown>, 'idempotent' | 'idempotencyKey' | 'timeoutMs' | 'retry' | 'breaker' | 'fallback' | 'feedback' | 'output'>>;

export interface WrapAiSdkToolsOptions extends Omit<RuntimeOptions, 'tools'> {
  /** Per tool name. Undeclared tools count as non-idempotent, as everywhere in faultline. */
  settings?: Record<string, WrappedToolSettings>;
  /** How the wrapped tools behave toward the model (failures, intent, call options). */
  toolSet?: Omit<AiSdkToolsOptions, 'session' | 'only'>;
}

export interface WrappedAiSdkTools {
  /** The runtime the tools run in; close it when done (it flushes the records). */
  runtime: Runtime;
  /** The wrapped tools, plus the tools that had no `execute`, unchanged. */
  tools: ToolSet;
  /** The same tools with their calls in one session (one trace per conversation). */
  forSession(session: Session): ToolSet;
}

/** The final value of an AI SDK execute, which may stream preliminary results. */
async function settle(value: unknown): Promise<unknown> {
  const resolved = await value;
  if (resolved !== null && typeof resolved === 'object' && Symbol.asyncIterator in resolved) {
    let last: unknown;
    for await (const chunk of resolved as AsyncIterable<unknown>) last = chunk;
    return last;
  }
  return resolved;
}

/**
 * Runs AI SDK tools through a new faultline runtime.
 *
 * @example
 * const { runtime, tools } = await wrapAiSdkTools({ getWeather, bookFlight }, {
 *   store: 'sqlite:.faultline/faultline.db',
 *   settings: { getWeather: { idempotent: true, timeoutMs: 5000 }, bookFlight: { idempotencyKey: true } },
 * });
 * await generateText({ model, tools, prompt });
 * await runtime.close();
 */
export async function wrapAiSdkTools(tools: ToolSet, options: WrapAiSdkToolsOptions = {}): Promise<WrappedAiSdkTools> {
  const { settings = {}, toolSet: toolSetOptions = {}, ...runtimeOptions } = options;
  // The AI SDK call's own options (toolCallId, messages, its abort signal) reach the wrapped
  // execute through the runtime, which knows nothing of them: an async-local scope carries them.
  const callScope = new AsyncLocalStorage<ToolExecutionOptions>();
  const defined: Tool[] = [];
  const untouched: ToolSet = {};
  for (const [name, original] of Object.entries(tools) as [string, AiTool][]) {
    if (typeof original.execute !== 'function') {
      untouched[name] = original;
      continue;
    }
    const execute = original.execute.bind(original);
    const input = (await asSchema(original.inputSchema).jsonSchema) as JsonSchema;
    defined.push(
      defineTool({
        name,
        description: original.description ?? name,
        input,
        ...settings[name],
        execute: (args, ctx) => {
          const ai = callScope.getStore();
          return settle(execute(args, { toolCallId: ai?.toolCallId ?? ctx.traceId, messages: ai?.messages ?? [], abortSignal: ctx.signal, ...(ai?.experimental_context !== undefined ? { experimental_context: ai.experimental_context } : {}) }));
        },
      }),
    );
  }
  for (const name of Object.keys(settings)) {
    if (!(name in tools)) throw new RangeError(`settings for "${name}", which is not one of the tools`);
  }
  const runtime = createRuntime({ ...runtimeOptions, tools: defined });
  const scope = (ai: ToolExecutionOptions, run: () => Promise<ExecuteResult>) => callScope.run(ai, run);
  const make = (session?: Session): ToolSet => ({ ...buildToolSet(runtime, { ...toolSetOptions, ...(session !== undefined ? { session } : {}) }, scope), ...untouched });
  return { runtime, tools: make(), forSession: (session) => make(session) };
}
