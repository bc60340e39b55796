/**
 * Tool calls paired with their results, as chat formats log them, into trajectory steps. Chat
 * logs carry no timings, so a repeat of the same call is a `retry`, never a `wait_and_retry`.
 */
import { NO_FAILURE, stepFailure } from '../assemble.js';
import { deriveDecision, type DecisionCall } from '../decide.js';
import { DeferredJson } from '../../core/deferred-json.js';
import type { ConversationTurn, ToolDefinition, TrajectoryStep } from '../../core/trajectory-types.js';
import { evidenceOfReading, failureResponse, mayShowFailure, parseResultText, type ResultReading } from './tool-result.js';

export interface ConversationCall {
  /** The call id the log pairs the result with. */
  id: string;
  tool_name: string;
  input_params: unknown;
  /** Undefined when the conversation ends before the result. */
  result?: { text: string; isError?: boolean };
  /** The text turns since the previous call's result (see `TrajectoryStep.turns_before`). */
  turns_before?: ConversationTurn[];
  /** The agent's text in the message that made this call. */
  call_text?: string;
}

/**
 * What a chat log holds besides its calls: the text turns (each call's `turns_before`, and the
 * turns after the last result), collected as the messages are read.
 */
export class TurnCollector {
  private pending: ConversationTurn[] | undefined;

  /** A user or assistant text turn; empty text is no turn. */
  say(role: ConversationTurn['role'], content: string | null): void {
    if (content === null || content.trim() === '') return;
    (this.pending ??= []).push({ role, content });
  }

  /** The turns said since the last call, which belong before `call`. */
  beforeCall(call: ConversationCall): void {
    if (this.pending === undefined) return;
    call.turns_before = this.pending;
    this.pending = undefined;
  }

  /** The turns after the last call: the closing ones. */
  closing(): ConversationTurn[] | undefined {
    return this.pending;
  }
}

/** The parts of a trajectory a chat log has beyond its steps, for `assembleTrajectory`. */
export interface ConversationExtras {
  system_prompt?: string;
  tools?: ToolDefinition[];
  closing_turns?: ConversationTurn[];
}

/** `extras` without its undefined members (the trajectory keeps no key it has no value for). */
export function definedExtras(extras: { system_prompt?: string | null | undefined; tools?: ToolDefinition[] | undefined; closing_turns?: ConversationTurn[] | undefined }): ConversationExtras {
  const out: ConversationExtras = {};
  if (extras.system_prompt != null && extras.system_prompt !== '') out.system_prompt = extras.system_prompt;
  if (extras.tools !== undefined && extras.tools.length > 0) out.tools = extras.tools;
  if (extras.closing_turns !== undefined && extras.closing_turns.length > 0) out.closing_turns = extras.closing_turns;
  return out;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A log's tool declarations, in the shapes the chat APIs take them: OpenAI's
 * `{ type: 'function', function: { name, description, parameters } }` (and the older bare
 * `{ name, description, parameters }`), Anthropic's `{ name, description, input_schema }`.
 * Entries without a name are left out: a declaration nobody can call is no tool.
 */
export function toolDefinitions(tools: unknown): ToolDefinition[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const out: ToolDefinition[] = [];
  for (const entry of tools) {
    if (!isObject(entry)) continue;
    const fn = isObject(entry['function']) ? entry['function'] : entry;
    const name = fn['name'];
    if (typeof name !== 'string' || name === '') continue;
    const tool: ToolDefinition = { name };
    if (typeof fn['description'] === 'string' && fn['description'] !== '') tool.description = fn['description'];
    const parameters = fn['parameters'] ?? fn['input_schema'];
    if (isObject(parameters)) tool.parameters = parameters;
    out.push(tool);
  }
  return out;
}

/** A call whose result the conversation holds. */
export type AnsweredCall = ConversationCall & { result: { text: string; isError?: boolean } };

function looksLikeJson(text: string): boolean {
  const trimmed = text.trimStart();
  return trimmed.startsWith('{') || trimmed.startsWith('[');
}

/** How a result's text becomes its body: parsed now, or (with `defer`) when read, unless classifying it needs the value. */
function resultBody(text: string, defer: boolean): { classify: unknown; body: unknown; screened?: boolean } {
  if (!looksLikeJson(text)) return { classify: text, body: text };
  if (!defer) {
    const value = parseResultText(text);
    return { classify: value, body: value };
  }
  const screened = mayShowFailure(text);
  if (screened) {
    const value = parseResultText(text);
    return { classify: value, body: value, screened };
  }
  // No failure can be read from it: `readResult` answers from the text alone, as it would from the value.
  return { classify: text, body: new DeferredJson(text, parseResultText), screened };
}

/**
 * Turns calls in order into steps; `classify` reads a result, given its text and `body`, the text
 * parsed (once: it becomes the step's response body too), and, with `defer`, what `mayShowFailure`
 * said of it (result texts in which no failure can be read are left unparsed, see `DeferredJson`).
 */
export function stepsFromCalls(
  calls: readonly ConversationCall[],
  classify: (call: AnsweredCall, body: unknown, screened?: boolean) => ResultReading,
  defer = false,
): TrajectoryStep[] {
  const n = calls.length;
  const bodies: unknown[] = new Array(n);
  const readings: (ResultReading | null)[] = new Array(n);
  const decisionCalls: DecisionCall[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const call = calls[i]!;
    let reading: ResultReading | null = null;
    if (call.result !== undefined) {
      const { classify: value, body, screened } = resultBody(call.result.text, defer);
      bodies[i] = body;
      reading = classify(call as AnsweredCall, value, screened);
    }
    readings[i] = reading;
    const failure = reading?.failure ?? null;
    // The arguments' hash is taken only if a decision compares them (see deriveDecision).
    decisionCalls[i] = { tool_name: call.tool_name, input_params: call.input_params, failed: failure !== null };
  }
  const steps: TrajectoryStep[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const call = calls[i]!;
    const reading = readings[i]!;
    const failure = reading?.failure ?? null;
    const response = failureResponse(failure);
    if (call.result !== undefined) {
      const body = bodies[i];
      response.body = body;
      // The text is kept beside a body that may be parsed from it (JSON-looking text, whether or
      // not it parsed: a deferred body is not parsed yet), so exports give the tool turn as the
      // model read it.
      if (body !== call.result.text || looksLikeJson(call.result.text)) response.text = call.result.text;
    }
    const f = failure === null ? NO_FAILURE : stepFailure(failure.category, failure.type, failure.stage);
    steps[i] = {
      step_index: i + 1,
      tool_name: call.tool_name,
      input_params: call.input_params,
      response,
      status: call.result === undefined ? null : failure === null ? 'success' : 'failure',
      failure_type: f.failure_type,
      failure_subtype: f.failure_subtype,
      failure_category: f.failure_category,
      failure_stage: f.failure_stage,
      failure_kind: f.failure_kind,
      agent_decision: deriveDecision(decisionCalls[i]!, decisionCalls[i + 1]),
      decision_correctness: null,
      correctness_reason: null,
      correct_action: null,
      source_ref: call.id,
    };
    if (call.turns_before !== undefined) steps[i]!.turns_before = call.turns_before;
    if (call.call_text !== undefined) steps[i]!.call_text = call.call_text;
    const evidence = reading === null ? undefined : evidenceOfReading(reading);
    if (evidence !== undefined) steps[i]!.failure_evidence = evidence;
  }
  return steps;
}

/** Tool arguments as a model wrote them, parsed when read (see `DeferredJson`). */
export function deferredArguments(raw: unknown): unknown {
  return typeof raw === 'string' && raw.trim() !== '' ? new DeferredJson(raw, parseArguments) : parseArguments(raw);
}

/** Tool arguments as a model wrote them: JSON text parsed, anything unparseable kept as the raw string. */
export function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw ?? {};
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/** Text of a message content that is a string or a list of parts with `text`. */
export function contentText(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return null;
  const texts = content.flatMap((part) =>
    typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? [(part as { text: string }).text] : [],
  );
  return texts.length === 0 ? null : texts.join('\n');
}
