/**
 * A trajectory as a chat conversation: the task as the user turn, each step as one assistant
 * turn calling its tool and one tool turn answering it. Shared by the SFT and preference
 * exporters, in OpenAI's wire shape (arguments as JSON text, call ids) and, for TRL, in the
 * Hugging Face chat-template shape (arguments as objects).
 */
import type { CorrectAction, Trajectory, TrajectoryStep } from '../core/trajectory-types.js';
import { inferParametersSchema, type InferredSchema } from './infer-tool-schema.js';

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type OpenAiMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: OpenAiToolCall[]; weight?: 0 | 1 }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface OpenAiTool {
  type: 'function';
  function: { name: string; parameters: InferredSchema };
}

/** Hugging Face chat-template messages, as TRL's conversational datasets take them. */
export type HfMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: { type: 'function'; function: { name: string; arguments: unknown } }[] }
  | { role: 'tool'; name: string; content: string };

/** The id of the call made at a step: `call_<step_index>`, unique within the conversation. */
export const callId = (stepIndex: number): string => `call_${stepIndex}`;

/** The arguments as sent, as JSON text (a model's unparseable argument text is kept as it was). */
export function argumentsText(params: unknown): string {
  return typeof params === 'string' ? params : JSON.stringify(params ?? {});
}

/** The assistant turn that made a step's call. */
export function callMessage(step: Pick<TrajectoryStep, 'step_index' | 'tool_name' | 'input_params'>, content: string | null = null): Extract<OpenAiMessage, { role: 'assistant' }> {
  return { role: 'assistant', content, tool_calls: [{ id: callId(step.step_index), type: 'function', function: { name: step.tool_name, arguments: argumentsText(step.input_params) } }] };
}

/** The tool turn answering a step: its response object (status code, error code, message, body) as JSON text. */
export function toolMessage(step: TrajectoryStep): Extract<OpenAiMessage, { role: 'tool' }> {
  return { role: 'tool', tool_call_id: callId(step.step_index), content: JSON.stringify(step.response) };
}

/**
 * The closing assistant text. Trajectories keep tool calls, not the agent's final prose, so it
 * is written from the last decision: its logged reasoning when there is one, else a fixed
 * sentence naming the outcome.
 */
export function finalMessageText(trajectory: Trajectory): string {
  const last = trajectory.steps[trajectory.steps.length - 1];
  const reasoning = last?.agent_decision.reasoning;
  if (reasoning !== undefined && reasoning !== '') return reasoning;
  if (last === undefined) return 'No tool call was needed.';
  if (last.status === 'success') return `Done: ${last.tool_name} succeeded.`;
  return `Stopping: ${last.tool_name} failed${last.response.error_code === undefined ? '' : ` (${last.response.error_code})`}.`;
}

/** The tools a trajectory called, in order of first use, with parameters inferred from its calls. */
export function toolsOf(steps: readonly Pick<TrajectoryStep, 'tool_name' | 'input_params'>[]): OpenAiTool[] {
  const calls = new Map<string, unknown[]>();
  for (const s of steps) {
    const list = calls.get(s.tool_name) ?? [];
    list.push(s.input_params);
    calls.set(s.tool_name, list);
  }
  return [...calls].map(([name, args]) => ({ type: 'function', function: { name, parameters: inferParametersSchema(args) } }));
}

/**
 * The conversation before the assistant turn that follows `afterStep` (1-based; 0: before the
 * first call): the optional system turn, the task, and each step's call and answer.
 */
export function promptMessages(trajectory: Trajectory, afterStep: number, system?: string): OpenAiMessage[] {
  const messages: OpenAiMessage[] = [];
  if (system !== undefined) messages.push({ role: 'system', content: system });
  messages.push({ role: 'user', content: trajectory.task_description ?? '' });
  for (const s of trajectory.steps) {
    if (s.step_index > afterStep) break;
    messages.push(callMessage(s), toolMessage(s));
  }
  return messages;
}

function mergedParams(params: unknown, delta: Record<string, unknown> | undefined): unknown {
  if (delta === undefined) return params;
  const base = typeof params === 'object' && params !== null && !Array.isArray(params) ? { ...(params as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(delta)) {
    if (v === null) delete base[k];
    else base[k] = v;
  }
  return base;
}

/**
 * An annotator's `correct_action` for the failed `step`, as the assistant turn that carries it
 * out: a call of the same tool (arguments patched by `params_delta`, a null removing one) when
 * the action retries or changes arguments, otherwise a text turn with the reasoning. The call id
 * is the next step's, as it would have been.
 */
export function correctActionMessage(step: TrajectoryStep, action: CorrectAction): Extract<OpenAiMessage, { role: 'assistant' }> {
  const note = action.reasoning ?? (action.wait_seconds === undefined ? null : `Waiting ${action.wait_seconds}s before retrying ${step.tool_name}.`);
  if (action.params_delta !== undefined || /retry/.test(action.action)) {
    return callMessage({ step_index: step.step_index + 1, tool_name: step.tool_name, input_params: mergedParams(step.input_params, action.params_delta) }, note);
  }
  return { role: 'assistant', content: note ?? `${action.action.replace(/_/g, ' ')} after ${step.tool_name} failed.` };
}

/** The same message for TRL: tool call arguments as objects, tool turns named by their tool. */
export function toHfMessages(messages: readonly OpenAiMessage[]): HfMessage[] {
  const names = new Map<string, string>();
  return messages.map((m): HfMessage => {
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => {
        names.set(c.id, c.function.name);
        let args: unknown = c.function.arguments;
        try {
          args = JSON.parse(c.function.arguments);
        } catch {
          // Unparseable argument text stays text: it is what the model sent.
        }
        return { type: 'function' as const, function: { name: c.function.name, arguments: args } };
      });
      return calls.length > 0 ? { role: 'assistant', content: m.content ?? '', tool_calls: calls } : { role: 'assistant', content: m.content ?? '' };
    }
    if (m.role === 'tool') return { role: 'tool', name: names.get(m.tool_call_id) ?? '', content: m.content };
    return { role: m.role, content: m.content };
  });
}
