/**
 * The tool-call loop both model adapters run: ask the model, execute the calls it makes, send the
 * results back, until it answers or the turn bound is hit. The wire format lives behind
 * {@link Conversation}; nothing here knows which provider it talks to.
 */
import { ConfigError } from '../../core/errors.js';
import { systemClock, type Clock } from '../../core/clock.js';
import type { AgentOutcome, AgentTask, AgentToolResult, Diagnosis } from '../types.js';
import { CONTROL_TOOL_NAMES, FINISH, parseDiagnosis, parseFinish, parseWait, REPORT_TOOL_FAILURE, WAIT_SECONDS } from './control-tools.js';
import { ModelEndpointError, type ModelAttemptResult } from '../../llm/model-endpoint-error.js';
import { DEFAULT_MODEL_RETRY, withModelRetry, type ModelRetryEvent, type ModelRetryOptions } from '../../llm/model-retry.js';

/** The arguments of a tool call: the parsed object, or why it could not be parsed. */
export type ToolCallArguments = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string };

export interface ModelToolCall {
  id: string;
  name: string;
  args: ToolCallArguments;
}

/** One assistant turn, normalized. `raw` is the provider's own message, kept for the history. */
export interface ModelTurn<Raw> {
  text: string;
  toolCalls: ModelToolCall[];
  raw: Raw;
}

/** The result sent back for one tool call. */
export interface ToolCallAnswer {
  call: ModelToolCall;
  /** JSON text. */
  content: string;
  isError: boolean;
}

/** One scenario's conversation with the model, in some wire format. */
export interface Conversation<Raw> {
  /** One request for the model's next turn. Does not change the history. */
  complete(signal: AbortSignal): Promise<ModelAttemptResult<ModelTurn<Raw>>>;
  /** Adds the turn and the answers to its tool calls to the history. */
  append(turn: ModelTurn<Raw>, answers: readonly ToolCallAnswer[]): void;
}

/** Options shared by every model adapter. */
export interface ModelAgentOptions {
  /** Model responses per scenario before it ends as `gave_up`. Default 20. */
  maxTurns?: number;
  /** Retries of the model endpoint's own failures (real time, on `clock`). */
  retry?: Partial<ModelRetryOptions>;
  /** Deadline per model request. Default 120 s. */
  requestTimeoutMs?: number;
  temperature?: number;
  /** Cap on tokens per model response. Default: the provider's (Anthropic requires one: 4096). */
  maxTokens?: number;
  /** Clock for the model-side retry waits. Default: the system clock. */
  clock?: Clock;
  /** Jitter source for model-side backoff. Default: Math.random. */
  random?: () => number;
  /** Called before each model-side retry; errors it throws are ignored. */
  onModelRetry?: (event: ModelRetryEvent) => void;
  /** Replaces the built-in system prompt (see `buildSystemPrompt`). */
  systemPrompt?: (task: AgentTask) => string;
}

export const DEFAULT_MAX_TURNS = 20;
export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

export interface ToolLoopSettings {
  provider: string;
  maxTurns: number;
  retry: ModelRetryOptions;
  clock: Clock;
  random: () => number;
  requestTimeoutMs: number;
  onModelRetry?: ((event: ModelRetryEvent) => void) | undefined;
}

/** Fills in the defaults and rejects nonsense up front, so a bad flag fails before any scenario runs. */
export function loopSettings(provider: string, options: ModelAgentOptions): ToolLoopSettings {
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  if (!Number.isInteger(maxTurns) || maxTurns < 1) throw new ConfigError(`${provider}: maxTurns must be a positive integer`, 'maxTurns');
  const retry = { ...DEFAULT_MODEL_RETRY, ...options.retry };
  if (!Number.isInteger(retry.maxAttempts) || retry.maxAttempts < 1) throw new ConfigError(`${provider}: retry.maxAttempts must be a positive integer`, 'retry.maxAttempts');
  for (const key of ['baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs', 'factor'] as const) {
    if (!Number.isFinite(retry[key]) || retry[key] < 0) throw new ConfigError(`${provider}: retry.${key} must be a non-negative number`, `retry.${key}`);
  }
  const timeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!Number.isFinite(timeout) || timeout <= 0) throw new ConfigError(`${provider}: requestTimeoutMs must be a positive number`, 'requestTimeoutMs');
  return { provider, maxTurns, retry, clock: options.clock ?? systemClock, random: options.random ?? Math.random, requestTimeoutMs: timeout, onModelRetry: options.onModelRetry };
}

/** A task tool named like a control function would make one of them unreachable. */
export function assertNoControlNameClash(provider: string, task: AgentTask): void {
  const clash = task.tools.find((t) => CONTROL_TOOL_NAMES.includes(t.name));
  if (clash !== undefined) throw new ConfigError(`${provider}: the task offers a tool named "${clash.name}", which this adapter reserves`, 'tools');
}

/**
 * Runs the loop for one task. Model-endpoint failures are retried (not counted as tool calls);
 * an endpoint that rejects the request or keeps failing throws {@link ModelEndpointError}; an
 * endpoint that keeps answering garbage ends the run as `gave_up`.
 */
export async function runToolLoop<Raw>(task: AgentTask, conversation: Conversation<Raw>, settings: ToolLoopSettings): Promise<AgentOutcome> {
  const diagnoses: Diagnosis[] = [];
  const toolNames = task.tools.map((t) => t.name);
  const end = (status: AgentOutcome['status'], answer: string): AgentOutcome => ({ status, answer, diagnoses });
  const outOfBudget = () => end('gave_up', 'stopped: the scenario budget ran out');

  for (let turn = 1; turn <= settings.maxTurns; turn++) {
    if (task.signal.aborted) return outOfBudget();
    const response = await withModelRetry(() => conversation.complete(task.signal), {
      provider: settings.provider,
      options: settings.retry,
      clock: settings.clock,
      random: settings.random,
      signal: task.signal,
      onRetry: settings.onModelRetry,
    });
    if (!response.ok) {
      if (response.failure.kind === 'aborted') return outOfBudget();
      if (response.failure.kind === 'malformed') {
        return end('gave_up', `stopped: the model endpoint returned an unusable response ${response.attempts} times in a row (${response.failure.message})`);
      }
      throw new ModelEndpointError(settings.provider, response.failure, response.attempts);
    }

    const modelTurn = response.value;
    if (modelTurn.toolCalls.length === 0) {
      const text = modelTurn.text.trim();
      return text === '' ? end('gave_up', 'stopped: the model ended its turn with neither an answer nor a tool call') : end('completed', text);
    }

    const answers: ToolCallAnswer[] = [];
    let finished: Pick<AgentOutcome, 'status' | 'answer'> | undefined;
    for (const call of modelTurn.toolCalls) {
      // Diagnoses made in the same turn as `finish` still count; further work does not happen.
      if (finished !== undefined && call.name !== REPORT_TOOL_FAILURE) continue;
      if (!call.args.ok) {
        answers.push(adapterError(call, 'INVALID_ARGUMENTS', `the arguments of ${call.name} are not a JSON object: ${call.args.problem}. Send them again as valid JSON.`));
        continue;
      }
      const args = call.args.value;
      switch (call.name) {
        case REPORT_TOOL_FAILURE: {
          const parsed = parseDiagnosis(args, toolNames);
          if (!parsed.ok) answers.push(adapterError(call, 'INVALID_ARGUMENTS', parsed.problem));
          else {
            diagnoses.push(parsed.value);
            answers.push({ call, content: '{"recorded":true}', isError: false });
          }
          break;
        }
        case WAIT_SECONDS: {
          const parsed = parseWait(args);
          if (!parsed.ok) {
            answers.push(adapterError(call, 'INVALID_ARGUMENTS', parsed.problem));
            break;
          }
          try {
            await task.sleep(parsed.value);
          } catch (error) {
            if (task.signal.aborted) return outOfBudget();
            throw error;
          }
          answers.push({ call, content: JSON.stringify({ waited_seconds: parsed.value / 1000 }), isError: false });
          break;
        }
        case FINISH: {
          const parsed = parseFinish(args);
          if (!parsed.ok) answers.push(adapterError(call, 'INVALID_ARGUMENTS', parsed.problem));
          else finished = parsed.value;
          break;
        }
        default: {
          if (!toolNames.includes(call.name)) {
            answers.push(adapterError(call, 'UNKNOWN_TOOL', `there is no tool named "${call.name}"; the tools are: ${[...toolNames, ...CONTROL_TOOL_NAMES].join(', ')}`));
            break;
          }
          let result: AgentToolResult;
          try {
            result = await task.callTool(call.name, args);
          } catch (error) {
            if (task.signal.aborted) return outOfBudget();
            throw error;
          }
          answers.push({ call, content: JSON.stringify(result), isError: !result.ok });
        }
      }
      if (task.signal.aborted) return outOfBudget();
    }
    if (finished !== undefined) return end(finished.status, finished.answer);
    conversation.append(modelTurn, answers);
  }
  return end('gave_up', `stopped: no final answer after ${settings.maxTurns} model turns`);
}

/**
 * A mistake in the call itself, caught before any tool ran. Shaped like a raw tool error so the
 * model reads every failure the same way.
 */
function adapterError(call: ModelToolCall, code: 'INVALID_ARGUMENTS' | 'UNKNOWN_TOOL', message: string): ToolCallAnswer {
  return { call, content: JSON.stringify({ ok: false, error: { code, message } }), isError: true };
}

/**
 * Parses the JSON text of a call's arguments. An empty string means no arguments: several
 * OpenAI-compatible servers send that for a function without parameters.
 */
export function parseArgumentsText(text: string): ToolCallArguments {
  if (text.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: `invalid JSON: ${text.length > 120 ? `${text.slice(0, 120)}...` : text}` };
  }
  return argumentsObject(value);
}

/** Accepts only a plain object as arguments. */
export function argumentsObject(value: unknown): ToolCallArguments {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, problem: `expected an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}` };
  return { ok: true, value: value as Record<string, unknown> };
}
