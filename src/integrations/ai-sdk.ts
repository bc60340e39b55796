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
 * The AI SDK parses a tool call before any tool runs: a name that is not in the tool set
 * (`NoSuchToolError`) or arguments that are not JSON (`InvalidToolInputError`) never reach an
 * `execute`, and the SDK answers them itself. `answerInvalidToolCalls`, passed as
 * `experimental_repairToolCall`, hands them to faultline instead, so they are recorded and
 * answered like everywhere else (`request_build` / `unknown_tool` or `malformed_arguments`).
 *
 * @example
 * const rt = createRuntime({ tools: [getWeather], store: 'sqlite:.faultline/faultline.db' });
 * const tools = aiSdkTools(rt, { session: rt.session({ agent: 'trip-planner' }) });
 * const { text } = await generateText({ model, tools, experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(5), prompt });
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  asSchema,
  dynamicTool,
  InvalidToolInputError,
  jsonSchema,
  NoSuchToolError,
  tool,
  type JSONSchema7,
  type ModelMessage,
  type Tool as AiTool,
  type ToolCallRepairFunction,
  type ToolExecutionOptions,
  type ToolSet,
} from 'ai';
import { FaultlineError } from '../core/errors.js';
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

type CallScope = (ai: ToolExecutionOptions, run: () => Promise<ExecuteResult>) => Promise<ExecuteResult>;

/**
 * What one built tool set shares with {@link answerInvalidToolCalls}: how a call of a name it
 * does not have is answered, and the argument text of the calls the hook rerouted. The hook finds
 * it from the tool objects themselves, since the SDK hands it the tool set it is using, which may
 * be a merge of several or the `activeTools` subset of one.
 */
interface ToolSetCalls {
  /** The raw argument text of rerouted calls, by tool call id, until their execute takes it. */
  unparsed: Map<string, string>;
  /** A tool that records and answers calls of `name`, which the runtime does not have. */
  unknownTool(name: string): AiTool;
}

const toolSetOf = new WeakMap<object, ToolSetCalls>();

/**
 * Rerouted calls whose execute never ran (a step that ended with `finishReason: 'length'` runs no
 * tools) leave their text behind; past this many, the oldest go.
 */
const MAX_UNPARSED = 256;

/**
 * The made-up names given a tool on each tool set object, oldest first. A long-lived set shared
 * by many conversations would otherwise gain a property per name a model ever invented; past
 * this many, the oldest whose call has run are taken off again (one that has not run yet is
 * still needed by the step that parsed it).
 */
const MAX_ANSWERED_NAMES = 256;
const answeredNames = new WeakMap<object, string[]>();
/** The made-up-name tools whose execute has run. */
const ranTools = new WeakSet<object>();

function executeFor(rt: Runtime, name: string, options: AiSdkToolsOptions, calls: ToolSetCalls, scope: CallScope | undefined) {
  const intentOf = options.intent === false ? undefined : (options.intent ?? lastUserText);
  const target = options.session ?? rt;
  return async (input: unknown, ai: ToolExecutionOptions): Promise<unknown> => {
    const opts: ExecuteOptions = { ...options.callOptions, context: { ...options.callOptions?.context, tool_call_id: ai.toolCallId } };
    if (ai.abortSignal !== undefined) opts.signal = ai.abortSignal;
    const intent = intentOf?.(ai.messages);
    if (intent !== undefined) opts.intent = intent;
    const unparsed = calls.unparsed.get(ai.toolCallId);
    if (unparsed !== undefined) calls.unparsed.delete(ai.toolCallId);
    // A call the repair hook rerouted runs with the text the model wrote, so the runtime rejects
    // and records it as malformed_arguments (or unknown_tool) with that text as its input.
    const run = () => (unparsed !== undefined ? target.executeJson(name, unparsed, opts) : target.execute(name, input, opts));
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

function buildToolSet(rt: Runtime, options: AiSdkToolsOptions, scope?: CallScope): ToolSet {
  const set: ToolSet = {};
  const calls: ToolSetCalls = {
    unparsed: new Map(),
    unknownTool: (name) => {
      // Any input is taken as it is: the runtime rejects the name before it looks at arguments.
      const execute = executeFor(rt, name, options, calls, scope);
      const answer = dynamicTool({
        description: name,
        inputSchema: jsonSchema({}),
        execute: (input, ai) => {
          ranTools.add(answer);
          return execute(input, ai);
        },
        toModelOutput,
      });
      toolSetOf.set(answer, calls);
      return answer;
    },
  };
  for (const info of selectTools(rt, options.only)) {
    const made = tool({
      description: info.description,
      // A JSON Schema without a validator: the AI SDK hands the model's input over as it is, and
      // faultline validates it (normalizing first). A wrapped zod schema is not consulted either.
      inputSchema: jsonSchema(info.inputSchema as JSONSchema7),
      execute: executeFor(rt, info.name, options, calls, scope),
      toModelOutput,
    });
    toolSetOf.set(made, calls);
    set[info.name] = made;
  }
  return set;
}

/** Whether the AI SDK would read this text as arguments (it reads blank text as `{}`). */
function parsesAsJson(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `experimental_repairToolCall` hook that hands faultline the tool calls the AI SDK cannot
 * parse, for tool sets made by {@link aiSdkTools} or {@link wrapAiSdkTools}: a tool name that is
 * not in the set, and arguments that are not JSON. Each is recorded like any call
 * (`request_build` / `unknown_tool`, with the closest names as suggestions, or
 * `malformed_arguments`, with the text as it came) and answered with the same failure envelope as
 * every other failure, as the tool result of the call id the model used. Without it, the SDK
 * answers such calls with its own error text and faultline never sees them.
 *
 * How: a call of a known tool whose arguments are not JSON goes on as a call of that tool with
 * `{}` for input (what the SDK itself replays for unparsable input), and its execute runs the
 * original text through `executeJson`. A call of an unknown name gets a tool of that name that
 * the runtime answers, added to the tool set the SDK is using as a non-enumerable property: the
 * SDK finds tools by name but lists them with `Object.entries`, so the model is never offered it.
 * Calls on tools faultline did not make are left to the SDK (the hook returns null). To use your
 * own repair as well, call it first and fall back: `async (o) => (await mine(o)) ?? answerInvalidToolCalls(o)`.
 *
 * @example
 * const tools = aiSdkTools(rt, { session });
 * await generateText({ model, tools, experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(5), prompt });
 */
export const answerInvalidToolCalls: ToolCallRepairFunction<ToolSet> = async ({ toolCall, tools, error }) => {
  if (NoSuchToolError.isInstance(error)) {
    // The set's first faultline tool says which runtime (or session) answers for names it lacks.
    const calls = Object.values(tools)
      .map((t) => toolSetOf.get(t))
      .find((c) => c !== undefined);
    if (calls === undefined) return null;
    try {
      Object.defineProperty(tools, toolCall.toolName, { value: calls.unknownTool(toolCall.toolName), enumerable: false, configurable: true, writable: true });
    } catch {
      // A frozen tool set cannot take it: the SDK answers the call itself.
      return null;
    }
    const names = answeredNames.get(tools) ?? [];
    answeredNames.set(tools, names);
    names.push(toolCall.toolName);
    for (let i = 0; names.length > MAX_ANSWERED_NAMES && i < names.length; ) {
      const property = Object.getOwnPropertyDescriptor(tools, names[i]!);
      // Only a property this hook added: never one the caller has since made a real tool.
      const ours = property !== undefined && !property.enumerable && toolSetOf.has(property.value as object);
      if (ours && !ranTools.has(property.value as object)) {
        i++;
        continue;
      }
      if (ours) Reflect.deleteProperty(tools, names[i]!);
      names.splice(i, 1);
    }
  } else if (!InvalidToolInputError.isInstance(error)) {
    return null;
  }
  const owner = tools[toolCall.toolName];
  const calls = owner === undefined ? undefined : toolSetOf.get(owner);
  if (calls === undefined) return null;
  if (parsesAsJson(toolCall.input)) return toolCall;
  if (calls.unparsed.size >= MAX_UNPARSED) calls.unparsed.delete(calls.unparsed.keys().next().value!);
  calls.unparsed.set(toolCall.toolCallId, toolCall.input);
  return { ...toolCall, input: '{}' };
};

/**
 * The runtime's tools as an AI SDK `ToolSet`. Pass {@link answerInvalidToolCalls} as the call's
 * `experimental_repairToolCall` too, or calls of unknown names and unparsable arguments never
 * reach the runtime.
 */
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
 * await generateText({ model, tools, experimental_repairToolCall: answerInvalidToolCalls, prompt });
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
  const scope: CallScope = (ai, run) => callScope.run(ai, run);
  const make = (session?: Session): ToolSet => ({ ...buildToolSet(runtime, { ...toolSetOptions, ...(session !== undefined ? { session } : {}) }, scope), ...untouched });
  return { runtime, tools: make(), forSession: (session) => make(session) };
}
