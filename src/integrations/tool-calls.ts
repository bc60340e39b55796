/**
 * What the SDK integrations that answer a model's tool calls share (openai.ts, anthropic.ts):
 * where calls go, which tools are offered, and how one message's calls are run.
 */
import { notify, warnListenerError } from '../core/notify.js';
import type { ExecuteOptions, ExecuteResult, Runtime, Session, ToolInfo } from '../runtime/runtime.js';

const onResultFailed = warnListenerError('onResult');

/** Where calls go: the runtime (each call its own trace unless `traceId` is given) or a session. */
export type ToolCallTarget = Runtime | Session;

export interface ToolListOptions {
  /** Only these tools, in this order. Unknown names throw. */
  only?: readonly string[];
}

export interface RunToolCallsOptions extends Omit<ExecuteOptions, 'stepIndex' | 'idempotencyKey'> {
  /** Run the calls of one message one after another instead of concurrently. Default false. */
  sequential?: boolean;
  /** Called with each call's full result (record, feedback) before it becomes a message. */
  onResult?: (result: ExecuteResult, call: { id: string; name: string }) => void;
}

/** The runtime's tools, or the named subset in the given order. */
export function selectTools(source: Runtime | readonly ToolInfo[], only: readonly string[] | undefined): readonly ToolInfo[] {
  const tools = Array.isArray(source) ? (source as readonly ToolInfo[]) : (source as Runtime).tools;
  if (only === undefined) return tools;
  const byName = new Map(tools.map((t) => [t.name, t]));
  return only.map((name) => {
    const tool = byName.get(name);
    if (tool === undefined) throw new RangeError(`no tool named "${name}" (known: ${[...byName.keys()].join(', ')})`);
    return tool;
  });
}

/** A model tool call, whatever the wire: its id, the tool, and how its arguments arrived. */
export interface PendingToolCall {
  id: string;
  name: string;
  /** JSON text (OpenAI function calls), a decoded value (Anthropic `input`), or free text (custom tools). */
  input: { json: string } | { value: unknown };
}

/**
 * Runs one message's calls through the target, concurrently unless `sequential`, and returns
 * their results in the calls' order. The call id goes into the record's context as
 * `tool_call_id`, which ties the record to the conversation it came from.
 */
export async function runToolCalls(target: ToolCallTarget, calls: readonly PendingToolCall[], options: RunToolCallsOptions): Promise<ExecuteResult[]> {
  const { sequential, onResult, ...rest } = options;
  const runOne = async (call: PendingToolCall): Promise<ExecuteResult> => {
    const opts: ExecuteOptions = { ...rest, context: { ...rest.context, tool_call_id: call.id } };
    const result = 'json' in call.input ? await target.executeJson(call.name, call.input.json, opts) : await target.execute(call.name, call.input.value, opts);
    // The call has run and is recorded: a listener that throws must not lose its result.
    if (onResult !== undefined) notify((r: ExecuteResult) => onResult(r, { id: call.id, name: call.name }), result, onResultFailed);
    return result;
  };
  if (sequential !== true) return Promise.all(calls.map(runOne));
  const out: ExecuteResult[] = [];
  for (const call of calls) out.push(await runOne(call));
  return out;
}
