/**
 * One question, one JSON answer: a chat.completions request to any OpenAI-compatible endpoint
 * with a JSON-schema `response_format` (structured outputs), for the tools that ask a model for
 * data rather than run an agent (the LLM judge; an LLM rewriter). Endpoint failures go through
 * the model adapters' HTTP edge and retry policy (429 and 5xx retried, Retry-After honoured); an
 * endpoint that refuses the request outright (bad key, unknown model) throws
 * {@link ModelEndpointError}. Parsing the JSON is the caller's: only it knows its schema.
 *
 * The reply is read here rather than with the OpenAI adapter's parser, which loads the OpenAI
 * SDK (a third of a second) for tool-call handling these callers do not need.
 */
import { ConfigError } from '../core/errors.js';
import { systemClock, type Clock } from '../core/clock.js';
import { ModelEndpointError, type ModelAttemptResult } from './model-endpoint-error.js';
import { errorBodyMessage, joinUrl, postJson, scrubSecrets, type FetchLike } from './model-http.js';
import { DEFAULT_MODEL_RETRY, withModelRetry, type ModelRetryOptions } from './model-retry.js';

export const DEFAULT_OPENAI_COMPATIBLE_BASE_URL = 'https://api.openai.com/v1';

export interface JsonChatOptions {
  /** Names the caller in messages: `judge: no API key: ...`. */
  provider: string;
  /** Model id as the endpoint knows it. */
  model: string;
  /** Including `/v1`. Default: `env.OPENAI_BASE_URL`, then https://api.openai.com/v1. */
  baseUrl?: string;
  /** Default: the environment variable `apiKeyEnv` names. */
  apiKey?: string;
  /** Default `OPENAI_API_KEY`. */
  apiKeyEnv?: string;
  /** Where the base URL and key are read from. Default: nothing is read. */
  env?: Readonly<Record<string, string | undefined>>;
  fetch?: FetchLike;
  /** Endpoint retries; defaults as for the bench's model agents. */
  retry?: Partial<ModelRetryOptions>;
  clock?: Clock;
  random?: () => number;
  /** Per request. Default 60 s. */
  requestTimeoutMs?: number;
}

export interface JsonChatRequest {
  system: string;
  user: string;
  /** The `json_schema.name` of the response format. */
  schemaName: string;
  /** A strict structured-outputs schema: every property required, no additional ones. */
  schema: Record<string, unknown>;
  /** Default 0. */
  temperature?: number;
}

export type JsonChatReply = { ok: true; text: string } | { ok: false; why: string };

export interface JsonChat {
  readonly model: string;
  /** HTTP requests sent so far, retries included. */
  readonly requests: number;
  /** The reply's text, or why there is none after the retries; throws only when the endpoint refuses the request. */
  ask(request: JsonChatRequest): Promise<JsonChatReply>;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** @throws ConfigError without a model, an API key or a valid base URL. */
export function createJsonChat(options: JsonChatOptions): JsonChat {
  const { provider } = options;
  const model = options.model.trim();
  if (model === '') throw new ConfigError(`${provider}: a model name is required`, 'model');
  const keyEnv = options.apiKeyEnv ?? 'OPENAI_API_KEY';
  const apiKey = options.apiKey ?? nonEmpty(options.env?.[keyEnv]);
  if (apiKey === undefined) throw new ConfigError(`${provider}: no API key: set ${keyEnv}`, 'apiKey');
  const baseUrl = options.baseUrl ?? nonEmpty(options.env?.['OPENAI_BASE_URL']) ?? DEFAULT_OPENAI_COMPATIBLE_BASE_URL;
  if (!URL.canParse(baseUrl) || !/^https?:/i.test(baseUrl)) throw new ConfigError(`${provider}: base URL is not an http(s) URL: ${baseUrl}`, 'baseUrl');
  const url = joinUrl(baseUrl, 'chat/completions');
  const secrets = [apiKey];
  const clock = options.clock ?? systemClock;
  const retry = { ...DEFAULT_MODEL_RETRY, ...options.retry };
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  // Nothing cancels these requests from outside; the per-request timeout bounds each one.
  const signal = new AbortController().signal;
  let requests = 0;

  async function attempt(request: JsonChatRequest): Promise<ModelAttemptResult<string>> {
    requests++;
    const body = {
      model,
      temperature: request.temperature ?? 0,
      messages: [
        { role: 'system', content: request.system },
        { role: 'user', content: request.user },
      ],
      response_format: { type: 'json_schema', json_schema: { name: request.schemaName, strict: true, schema: request.schema } },
    };
    const posted = await postJson({ url, headers: { authorization: `Bearer ${apiKey}` }, body, timeoutMs, signal, fetch: options.fetch ?? globalThis.fetch, secrets, nowMs: () => clock.now() });
    return posted.ok ? completionText(posted.value, secrets) : posted;
  }

  return {
    model,
    get requests() {
      return requests;
    },
    async ask(request) {
      const reply = await withModelRetry(() => attempt(request), { provider, options: retry, clock, random: options.random ?? Math.random, signal });
      if (reply.ok) return { ok: true, text: reply.value };
      if (reply.failure.kind === 'rejected') throw new ModelEndpointError(provider, reply.failure, reply.attempts);
      return { ok: false, why: `the model endpoint failed after ${reply.attempts} ${reply.attempts === 1 ? 'attempt' : 'attempts'}: ${reply.failure.message}` };
    },
  };
}

/** The assistant text of a chat.completion; anything off the wire format is `malformed` (and retried). */
export function completionText(response: unknown, secrets: readonly string[] = []): ModelAttemptResult<string> {
  const malformed = (why: string): ModelAttemptResult<never> => ({ ok: false, failure: { kind: 'malformed', message: scrubSecrets(why, secrets) } });
  if (typeof response !== 'object' || response === null) return malformed('the response is not a chat.completion object');
  const body = response as { choices?: unknown; error?: unknown };
  // Some gateways answer 200 with an error object instead of an error status.
  if (body.error !== undefined && body.error !== null) return malformed(`the response carries an error: ${errorBodyMessage(body, '')}`);
  const message = Array.isArray(body.choices) ? (body.choices[0] as { message?: unknown } | undefined)?.message : undefined;
  if (typeof message !== 'object' || message === null) return malformed('the response has no message');
  const { content, refusal } = message as { content?: unknown; refusal?: unknown };
  // A refusal is an answer, not an outage: the caller sees it as text that does not parse.
  if (typeof refusal === 'string' && refusal !== '') return { ok: true, value: `(refused) ${refusal}` };
  // A string on OpenAI; some compatible servers send an array of text parts.
  if (typeof content === 'string') return { ok: true, value: content };
  if (!Array.isArray(content)) return { ok: true, value: '' };
  return { ok: true, value: content.map((p) => (typeof (p as { text?: unknown } | null)?.text === 'string' ? (p as { text: string }).text : '')).join('') };
}
