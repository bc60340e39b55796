/**
 * `openai:<model>`: an agent backed by any OpenAI-compatible chat.completions endpoint (OpenAI,
 * a gateway, vLLM, Ollama, ...). One base URL and one key reach every model behind the gateway,
 * so switching models is a change of `<model>` only (seed 004's single-channel setup).
 *
 * The official SDK speaks the wire format; its own retries are off so that model-side failures go
 * through faultline's policy (honoring Retry-After, bounded, and kept apart from tool failures).
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { ConfigError } from '../../core/errors.js';
import { maskUrlPassword } from '../../core/mask-url-password.js';
import type { Agent, AgentTask } from '../types.js';
import { functionSpecs, type FunctionSpec } from './control-tools.js';
import type { ModelAttemptResult, ModelFailure } from '../../llm/model-endpoint-error.js';
import { errorBodyMessage, scrubSecrets, statusFailure, type FetchLike } from '../../llm/model-http.js';
import { DEFAULT_SAMPLING_TEMPERATURE, modelSamplingOf, trackBranch, type ModelSampling } from './branch-sampling.js';
import { buildSystemPrompt } from './system-prompt.js';
import {
  argumentsObject,
  assertNoControlNameClash,
  loopSettings,
  parseArgumentsText,
  runToolLoop,
  type Conversation,
  type ModelAgentOptions,
  type ModelToolCall,
  type ModelTurn,
  type ToolCallAnswer,
} from './tool-call-loop.js';

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIAgentOptions extends ModelAgentOptions {
  /** Model id as the endpoint knows it, e.g. `gpt-4o-mini` or `claude-sonnet-4-5` behind a gateway. */
  model: string;
  /** Including `/v1`. Default: `env.OPENAI_BASE_URL`, then https://api.openai.com/v1. */
  baseUrl?: string;
  /** Default: `env.OPENAI_API_KEY`. Required one way or the other. */
  apiKey?: string;
  /** Where `OPENAI_BASE_URL` / `OPENAI_API_KEY` are read from. Default: nothing is read. */
  env?: Readonly<Record<string, string | undefined>>;
  fetch?: FetchLike;
  /** Default `openai:<model>`. */
  name?: string;
  /**
   * Temperature of the requests after a fission branch point (`task.sampling`); they also carry
   * the branch's `seed`. Requests before it are sent as in an unsampled run. Default 1.
   */
  samplingTemperature?: number;
}

/**
 * Creates the agent. One instance serves any number of concurrent scenarios.
 *
 * @example
 * const agent = createOpenAIAgent({ model: 'gpt-4o-mini', env: process.env });
 * const outcome = await agent.run(task);
 */
export function createOpenAIAgent(options: OpenAIAgentOptions): Agent {
  const provider = 'openai';
  if (options.model.trim() === '') throw new ConfigError('openai: a model name is required, e.g. openai:gpt-4o-mini', 'model');
  const settings = loopSettings(provider, options);
  const apiKey = options.apiKey ?? nonEmpty(options.env?.['OPENAI_API_KEY']);
  if (apiKey === undefined) throw new ConfigError('openai: no API key: set OPENAI_API_KEY or pass apiKey', 'apiKey');
  const baseURL = options.baseUrl ?? nonEmpty(options.env?.['OPENAI_BASE_URL']) ?? DEFAULT_OPENAI_BASE_URL;
  if (!URL.canParse(baseURL)) throw new ConfigError(`openai: base URL is not a URL: ${baseURL}`, 'baseUrl');
  const secrets = [apiKey];
  const client = new OpenAI({
    apiKey,
    baseURL,
    // Passed explicitly so the SDK does not pick up an organization or project from the environment.
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: settings.requestTimeoutMs,
    logLevel: 'off',
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const name = options.name ?? `openai:${options.model}`;
  const now = () => settings.clock.now();
  const complete = (body: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal) => requestTurn(client, body, signal, secrets, now);
  const samplingTemperature = options.samplingTemperature ?? DEFAULT_SAMPLING_TEMPERATURE;

  return {
    name,
    canSample: true,
    endpoint: { provider, url: scrubSecrets(maskUrlPassword(baseURL), secrets), urlEnv: 'OPENAI_BASE_URL' },
    async run(given: AgentTask) {
      const branch = trackBranch(given);
      const task = branch.task;
      assertNoControlNameClash(provider, task);
      const system = (options.systemPrompt ?? buildSystemPrompt)(task);
      const messages: ChatCompletionMessageParam[] = [
        { role: 'system', content: system },
        { role: 'user', content: task.instruction },
      ];
      const tools = functionSpecs(task.tools).map(toOpenAITool);
      const conversation: Conversation<ChatCompletionAssistantMessageParam> = {
        complete: (signal) => complete(requestBody(options, messages, tools, modelSamplingOf(task, branch, samplingTemperature)), signal),
        append: (turn, answers) => appendTurn(messages, turn, answers),
      };
      return runToolLoop(task, conversation, settings);
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function toOpenAITool(spec: FunctionSpec): ChatCompletionTool {
  return { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
}

function requestBody(options: OpenAIAgentOptions, messages: ChatCompletionMessageParam[], tools: ChatCompletionTool[], sampling: ModelSampling | undefined): ChatCompletionCreateParamsNonStreaming {
  const body: ChatCompletionCreateParamsNonStreaming = { model: options.model, messages: [...messages], tools, tool_choice: 'auto' };
  if (sampling !== undefined) {
    body.temperature = sampling.temperature;
    body.seed = sampling.seed;
  } else if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.maxTokens !== undefined) body.max_tokens = options.maxTokens;
  return body;
}

function appendTurn(messages: ChatCompletionMessageParam[], turn: ModelTurn<ChatCompletionAssistantMessageParam>, answers: readonly ToolCallAnswer[]): void {
  messages.push(turn.raw);
  for (const answer of answers) messages.push({ role: 'tool', tool_call_id: answer.call.id, content: answer.content });
}

async function requestTurn(
  client: OpenAI,
  body: ChatCompletionCreateParamsNonStreaming,
  signal: AbortSignal,
  secrets: readonly string[],
  now: () => number,
): Promise<ModelAttemptResult<ModelTurn<ChatCompletionAssistantMessageParam>>> {
  let response: unknown;
  // The SDK adds an abort listener to the signal it is given and never takes it off: given the
  // scenario's signal, a conversation of more than 10 turns printed Node's
  // MaxListenersExceededWarning. Each request gets its own signal, which follows the scenario's
  // while the request runs.
  const request = new AbortController();
  const follow = () => request.abort(signal.reason);
  if (signal.aborted) follow();
  else signal.addEventListener('abort', follow, { once: true });
  try {
    response = await client.chat.completions.create(body, { signal: request.signal });
  } catch (error) {
    return { ok: false, failure: sdkFailure(error, signal, secrets, now) };
  } finally {
    signal.removeEventListener('abort', follow);
  }
  return parseCompletion(response, secrets);
}

/** Translates what the SDK throws into a failure value, by error class, never by message text. */
function sdkFailure(error: unknown, signal: AbortSignal, secrets: readonly string[], now: () => number): ModelFailure {
  if (error instanceof APIUserAbortError || signal.aborted) return { kind: 'aborted', message: 'the scenario was cancelled while waiting for the model' };
  if (error instanceof APIConnectionTimeoutError) return { kind: 'timeout', message: 'the request to the model endpoint timed out' };
  if (error instanceof APIConnectionError) return { kind: 'connection', message: 'could not reach the model endpoint' };
  if (error instanceof APIError && error.status !== undefined) {
    // The SDK keeps a JSON body's `error` member; for a non-JSON body only its own message has the text.
    if (error.error !== undefined) return statusFailure(error.status, error.headers, { error: error.error }, '', now(), secrets);
    return statusFailure(error.status, error.headers, undefined, error.message, now(), secrets);
  }
  // A 2xx whose JSON body does not parse surfaces as a SyntaxError from the SDK's response.json().
  if (error instanceof SyntaxError) return { kind: 'malformed', message: 'the response body is not valid JSON' };
  // Anything else is the transport failing mid-body (undici's "terminated" and the like).
  return { kind: 'connection', message: 'the connection to the model endpoint failed while reading the response' };
}

/** Validates a chat.completion body; anything off the wire format is `malformed` (and retried). */
export function parseCompletion(response: unknown, secrets: readonly string[] = []): ModelAttemptResult<ModelTurn<ChatCompletionAssistantMessageParam>> {
  const malformed = (why: string): ModelAttemptResult<never> => ({ ok: false, failure: { kind: 'malformed', message: scrubSecrets(why, secrets) } });
  if (typeof response !== 'object' || response === null || Array.isArray(response)) {
    return malformed(`the response is not a chat.completion object (${typeof response === 'string' ? 'text' : typeof response})`);
  }
  const body = response as { choices?: unknown; error?: unknown };
  // Some gateways answer 200 with an error object instead of an error status.
  if (body.error !== undefined && body.error !== null) return malformed(`the response carries an error: ${errorBodyMessage(body, '')}`);
  if (!Array.isArray(body.choices) || body.choices.length === 0) return malformed('the response has no choices');
  const message = (body.choices[0] as { message?: unknown } | null)?.message;
  if (typeof message !== 'object' || message === null) return malformed('the first choice has no message');
  const { content, tool_calls: rawCalls } = message as { content?: unknown; tool_calls?: unknown };

  const text = contentText(content);
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) return malformed('tool_calls is not an array');
  const toolCalls: ModelToolCall[] = [];
  const echoed: NonNullable<ChatCompletionAssistantMessageParam['tool_calls']> = [];
  for (const [index, raw] of ((rawCalls as unknown[] | null | undefined) ?? []).entries()) {
    const fn = (raw as { function?: unknown } | null)?.function as { name?: unknown; arguments?: unknown } | undefined;
    if (typeof fn !== 'object' || fn === null || typeof fn.name !== 'string' || fn.name === '') return malformed(`tool call ${index} has no function name`);
    const rawId = (raw as { id?: unknown }).id;
    // Some compatible servers omit ids; the history still needs one to pair results with calls.
    const id = typeof rawId === 'string' && rawId !== '' ? rawId : `call_${index}`;
    const argsText = typeof fn.arguments === 'string' ? fn.arguments : fn.arguments === undefined ? '' : JSON.stringify(fn.arguments);
    const args = typeof fn.arguments === 'string' || fn.arguments === undefined ? parseArgumentsText(argsText) : argumentsObject(fn.arguments);
    toolCalls.push({ id, name: fn.name, args });
    echoed.push({ id, type: 'function', function: { name: fn.name, arguments: argsText } });
  }
  const raw: ChatCompletionAssistantMessageParam = { role: 'assistant', content: text === '' ? null : text };
  if (echoed.length > 0) raw.tool_calls = echoed;
  return { ok: true, value: { text, toolCalls, raw } };
}

/** `content` is a string on OpenAI; some compatible servers send an array of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (typeof part === 'object' && part !== null && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
    .join('');
}
