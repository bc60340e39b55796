/**
 * A trajectory as a chat conversation: the task as the user turn, each step as one assistant
 * turn calling its tool and one tool turn answering it. Shared by the SFT and preference
 * exporters, in OpenAI's wire shape (arguments as JSON text, call ids) and, for TRL, in the
 * Hugging Face chat-template shape (arguments as objects).
 */
import { isReadLikeName, nameWords } from '../annotate/step-facts.js';
import { jsonValue } from '../core/deferred-json.js';
import type { CorrectAction, ToolDefinition, Trajectory, TrajectoryStep } from '../core/trajectory-types.js';
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
  /** As the log declared it (description and schema), or with `parameters` inferred from the calls when it declared none. */
  function: { name: string; description?: string; parameters: InferredSchema | Record<string, unknown> };
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

/**
 * The text of a step's result as the model read it: the logged text itself when the source kept
 * it, else the body (text as it is, JSON as JSON text). Only a result that has neither (a
 * failure faultline's runtime recorded, which reaches the model as its feedback) is written as
 * the response object: error code, message and status.
 */
export function toolContent(step: TrajectoryStep): string {
  const { response } = step;
  if (response.text !== undefined) return response.text;
  const body = jsonValue(response.body);
  if (typeof body === 'string') return body;
  if (body !== undefined && (step.status === 'success' || response.error_code === undefined)) return JSON.stringify(body);
  return JSON.stringify(response);
}

/** The tool turn answering a step, with the result as the model read it ({@link toolContent}). */
export function toolMessage(step: TrajectoryStep): Extract<OpenAiMessage, { role: 'tool' }> {
  return { role: 'tool', tool_call_id: callId(step.step_index), content: toolContent(step) };
}

/** The agent's own closing answer, when the log kept it (its last assistant turn after the calls). */
export function closingAnswerText(trajectory: Trajectory): string | undefined {
  const turns = trajectory.closing_turns ?? [];
  for (let i = turns.length - 1; i >= 0; i--) if (turns[i]!.role === 'assistant' && turns[i]!.content.trim() !== '') return turns[i]!.content;
  return undefined;
}

/**
 * The closing assistant text: the agent's own answer when the log kept it; else, for sources
 * that keep calls but no prose, the last decision's logged reasoning, else a fixed sentence
 * naming the outcome.
 */
export function finalMessageText(trajectory: Trajectory): string {
  const answer = closingAnswerText(trajectory);
  if (answer !== undefined) return answer;
  const last = trajectory.steps[trajectory.steps.length - 1];
  const reasoning = last?.agent_decision.reasoning;
  if (reasoning !== undefined && reasoning !== '') return reasoning;
  if (last === undefined) return 'No tool call was needed.';
  if (last.status === 'success') return `Done: ${last.tool_name} succeeded.`;
  return `Stopping: ${last.tool_name} failed${last.response.error_code === undefined ? '' : ` (${last.response.error_code})`}.`;
}

/**
 * The tools for a training row: those the log declared to the model, in its order, with their
 * descriptions and schemas; then any tool called that the log did not declare (or every tool
 * called, for a source that declares none), in order of first use, with parameters inferred from
 * its calls.
 */
export function toolsOf(steps: readonly Pick<TrajectoryStep, 'tool_name' | 'input_params'>[], declared: readonly ToolDefinition[] = []): OpenAiTool[] {
  const out: OpenAiTool[] = declared.map((d) => ({
    type: 'function',
    function: { name: d.name, ...(d.description === undefined ? {} : { description: d.description }), parameters: isObject(d.parameters) ? d.parameters : { type: 'object', properties: {} } },
  }));
  const known = new Set(declared.map((d) => d.name));
  const calls = new Map<string, unknown[]>();
  for (const s of steps) {
    if (known.has(s.tool_name)) continue;
    const list = calls.get(s.tool_name) ?? [];
    list.push(jsonValue(s.input_params));
    calls.set(s.tool_name, list);
  }
  for (const [name, args] of calls) out.push({ type: 'function', function: { name, parameters: inferParametersSchema(args) } });
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A trajectory's tools for its training rows ({@link toolsOf}). */
export const trajectoryTools = (trajectory: Trajectory): OpenAiTool[] => toolsOf(trajectory.steps, trajectory.tools);

/**
 * The conversation before the assistant turn that follows `afterStep` (1-based; 0: before the
 * first call): the optional system turn, the task, and each step's call and answer.
 */
export function promptMessages(trajectory: Trajectory, afterStep: number, system?: string): OpenAiMessage[] {
  const messages: OpenAiMessage[] = [];
  conversationMessages(trajectory, { system, upToStep: afterStep, onTurn: (m) => messages.push(m) });
  return messages;
}

/**
 * The conversation as the model saw it, in order, up to and including step `upToStep`'s answer:
 * the system prompt (`system`, else the log's own), the text turns the log kept between calls
 * (the first user message is the task; a source without turns gets the task as the one user
 * turn), each call with the text the agent wrote beside it, and each result's text.
 * `onTurn` receives each message with the step whose decision it carries out (0: before the first call).
 */
export function conversationMessages(
  trajectory: Trajectory,
  options: { system?: string | undefined; upToStep: number; onTurn: (message: OpenAiMessage, afterStep: number) => void },
): void {
  const system = options.system ?? trajectory.system_prompt;
  if (system !== undefined) options.onTurn({ role: 'system', content: system }, 0);
  let told = false;
  let previous = 0;
  for (const s of trajectory.steps) {
    if (s.step_index > options.upToStep) break;
    for (const turn of s.turns_before ?? []) {
      if (turn.role === 'user') told = true;
      options.onTurn(turn.role === 'user' ? { role: 'user', content: turn.content } : { role: 'assistant', content: turn.content }, previous);
    }
    if (!told) {
      options.onTurn({ role: 'user', content: trajectory.task_description ?? '' }, 0);
      told = true;
    }
    options.onTurn(callMessage(s, s.call_text !== undefined && s.call_text.trim() !== '' ? s.call_text : null), previous);
    options.onTurn(toolMessage(s), s.step_index);
    previous = s.step_index;
  }
  if (!told) options.onTurn({ role: 'user', content: trajectory.task_description ?? '' }, 0);
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
 * The read that checks whether a failed write took effect, as the model would call it: a tool
 * the log declared or the trajectory called whose name reads state (get, list, search, ...) and
 * shares a noun with the write (`create_order` → `list_orders`, `get_order`), with the write's
 * arguments that the read declares (or, undeclared, its id-like ones). Undefined when there is
 * no such tool.
 */
export function verifyingCall(trajectory: Trajectory, step: TrajectoryStep): { tool_name: string; input_params: Record<string, unknown> } | undefined {
  const nouns = new Set(nameWords(step.tool_name).map(singular).filter((w) => !VERB_WORDS.has(w)));
  const args = jsonValue(step.input_params);
  const argKeys = isObject(args) ? Object.keys(args) : [];
  const candidates = new Map<string, Record<string, unknown> | undefined>();
  for (const d of trajectory.tools ?? []) candidates.set(d.name, isObject(d.parameters) && isObject(d.parameters['properties']) ? d.parameters['properties'] : undefined);
  for (const s of trajectory.steps) if (!candidates.has(s.tool_name)) candidates.set(s.tool_name, undefined);
  let best: { name: string; score: number; keys: string[] } | undefined;
  for (const [name, props] of candidates) {
    if (name === step.tool_name || !isReadLikeName(name)) continue;
    const words = nameWords(name).map(singular);
    const sharedNouns = words.filter((w) => nouns.has(w)).length;
    // The write's arguments the read takes: declared ones, or (undeclared) the id-like ones.
    const keys = argKeys.filter((k) => (props === undefined ? ID_LIKE.test(k) : Object.hasOwn(props, k)));
    if (sharedNouns === 0 && keys.length === 0) continue;
    // A read of the same thing by the same arguments checks the write best; a listing finds a
    // write that made a new thing.
    const score = sharedNouns * 2 + keys.length * 2 + (words.includes('list') || words.includes('search') ? 1 : 0);
    if (best === undefined || score > best.score) best = { name, score, keys };
  }
  if (best === undefined || !isObject(args)) return best === undefined ? undefined : { tool_name: best.name, input_params: {} };
  return { tool_name: best.name, input_params: Object.fromEntries(best.keys.map((k) => [k, args[k]])) };
}

const ID_LIKE = /(?:^|_)id$|Id$|^(?:user|customer|account|email)/;
const VERB_WORDS = new Set(['create', 'add', 'insert', 'post', 'send', 'submit', 'delete', 'remove', 'book', 'reserve', 'cancel', 'pay', 'charge', 'refund', 'transfer', 'place', 'issue', 'update', 'modify', 'change', 'set', 'put', 'edit', 'make', 'new', 'do', 'get', 'list', 'search', 'find', 'fetch', 'read', 'check', 'verify', 'by', 'for', 'of', 'the', 'a', 'to']);
const singular = (word: string): string => (word.length > 3 && word.endsWith('ies') ? `${word.slice(0, -3)}y` : word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);

/** How a failure reads to a user: the error text the tool gave, else its code. */
function failureShown(step: TrajectoryStep): string {
  const text = step.response.message ?? step.response.error_code ?? step.status ?? 'an error';
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 160 ? `${oneLine.slice(0, 157)}...` : oneLine;
}

/**
 * An annotator's `correct_action` for `step`, as the assistant turn that carries it out, the
 * way the model would emit it:
 * - a retry or changed arguments: the same tool called again (arguments patched by
 *   `params_delta`, a null removing one; a fix nobody spelled out is the later call of the same
 *   tool that succeeded, when there is one);
 * - `verify_state`: the read that checks whether the write took effect ({@link verifyingCall});
 * - `refresh_credential`: a declared or called tool that signs in again, when there is one;
 * - otherwise (abort, escalate, or no tool to carry it out): the answer to the user that says
 *   what failed and what they can do, not a description of the action.
 * A call's id is the next step's, as it would have been.
 */
export function correctActionMessage(trajectory: Trajectory, step: TrajectoryStep, action: CorrectAction): Extract<OpenAiMessage, { role: 'assistant' }> {
  const nextId = step.step_index + 1;
  const kind = action.action;
  if (action.params_delta !== undefined) return callMessage({ step_index: nextId, tool_name: step.tool_name, input_params: mergedParams(jsonValue(step.input_params), action.params_delta) });
  if (/fix|verify_and_retry|with_params/.test(kind)) {
    const fixed = trajectory.steps.find((s) => s.step_index > step.step_index && s.tool_name === step.tool_name && s.status === 'success');
    if (fixed !== undefined) return callMessage({ step_index: nextId, tool_name: fixed.tool_name, input_params: jsonValue(fixed.input_params) });
    return { role: 'assistant', content: `${step.tool_name} rejected the request (${failureShown(step)}). Could you check the details you gave me so I can try again with the right values?` };
  }
  if (/retry/.test(kind)) return callMessage({ step_index: nextId, tool_name: step.tool_name, input_params: jsonValue(step.input_params) });
  if (kind === 'verify_state') {
    const read = verifyingCall(trajectory, step);
    if (read !== undefined) return callMessage({ step_index: nextId, ...read });
    return { role: 'assistant', content: `${step.tool_name} failed (${failureShown(step)}), and I cannot tell whether it took effect. Please check before I try again, so that it is not done twice.` };
  }
  if (kind === 'refresh_credential') {
    const names = [...(trajectory.tools ?? []).map((t) => t.name), ...trajectory.steps.map((s) => s.tool_name)];
    const refresh = names.find((n) => nameWords(n).some((w) => ['login', 'authenticate', 'auth', 'token', 'refresh', 'signin'].includes(w)));
    if (refresh !== undefined) return callMessage({ step_index: nextId, tool_name: refresh, input_params: {} });
    return { role: 'assistant', content: `${step.tool_name} refused the request as unauthorised (${failureShown(step)}). Please sign in again or check the access rights, and I will continue.` };
  }
  const next = kind === 'abort' ? 'I have stopped here rather than carry on from a step that did not work.' : 'How would you like me to proceed?';
  return { role: 'assistant', content: `I could not complete this: ${step.tool_name} failed (${failureShown(step)}), and trying the same again would not help. ${next}` };
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
