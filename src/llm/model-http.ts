/**
 * The HTTP edge shared by the model adapters: one JSON POST per attempt, and the translation of
 * whatever comes back (status, Retry-After, a dropped connection, a body that is not JSON) into a
 * {@link ModelFailure} value. Every message that leaves this module has the API key scrubbed out.
 */
import { parseRetryAfter } from '../runtime/retry-after.js';
import type { ModelAttemptResult, ModelFailure, ModelFailureKind } from './model-endpoint-error.js';

/** `fetch`, injectable so tests and embedders can route or observe model traffic. */
export type FetchLike = typeof globalThis.fetch;

/** Replaces every occurrence of each secret (API keys) with `[redacted]`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    // Short strings would blank out ordinary words; no real API key is this short.
    if (secret.length >= 6) out = out.split(secret).join('[redacted]');
  }
  return out;
}

/**
 * Milliseconds the endpoint asked us to wait. OpenAI sends `retry-after-ms` beside the standard
 * `Retry-After`; the finer one wins when both are there.
 */
export function retryAfterFromHeaders(headers: Headers | undefined, nowMs: number): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  return parseRetryAfter(headers.get('retry-after') ?? undefined, nowMs);
}

/** The failure kind an HTTP status stands for (only called for non-2xx statuses). */
export function failureKindOfStatus(status: number): ModelFailureKind {
  if (status === 429) return 'rate_limit';
  if (status === 408) return 'timeout';
  // 409 is how OpenAI reports a lock timeout on its side; 529 is Anthropic's "overloaded".
  if (status === 409 || status >= 500) return 'server';
  return 'rejected';
}

/**
 * The human part of an error body. Both wire formats put it at `error.message`; anything else is
 * shown as (truncated) text so an unexpected proxy page still says something useful.
 */
export function errorBodyMessage(body: unknown, text: string): string {
  if (typeof body === 'object' && body !== null) {
    const error = (body as { error?: unknown }).error;
    if (typeof error === 'object' && error !== null) {
      const message = (error as { message?: unknown }).message;
      if (typeof message === 'string' && message !== '') return message;
    }
    if (typeof error === 'string' && error !== '') return error;
  }
  const trimmed = text.trim();
  if (trimmed === '') return '(empty body)';
  return trimmed.length > 200 ? `${trimmed.slice(0, 200)}...` : trimmed;
}

/** A failure for a non-2xx answer. */
export function statusFailure(
  status: number,
  headers: Headers | undefined,
  body: unknown,
  text: string,
  nowMs: number,
  secrets: readonly string[],
): ModelFailure {
  const failure: ModelFailure = {
    kind: failureKindOfStatus(status),
    status,
    message: scrubSecrets(`HTTP ${status}: ${errorBodyMessage(body, text)}`, secrets),
  };
  const retryAfterMs = retryAfterFromHeaders(headers, nowMs);
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs;
  return failure;
}

/** A failure for a request that threw before an HTTP status was known. */
export function transportFailure(error: unknown, signal: AbortSignal, timedOut: boolean, secrets: readonly string[]): ModelFailure {
  if (signal.aborted) return { kind: 'aborted', message: 'the scenario was cancelled while waiting for the model' };
  if (timedOut) return { kind: 'timeout', message: 'the request to the model endpoint timed out' };
  const detail = transportErrorCode(error);
  return { kind: 'connection', message: scrubSecrets(`could not reach the model endpoint${detail === undefined ? '' : ` (${detail})`}`, secrets) };
}

/** The errno-style code of a fetch failure (undici hides it in `cause`), for the message only. */
function transportErrorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export interface JsonPostRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
  timeoutMs: number;
  /** The scenario's signal: aborting it ends the request as `aborted`, not as a failure to retry. */
  signal: AbortSignal;
  fetch: FetchLike;
  /** Strings to scrub from every message (the API key). */
  secrets: readonly string[];
  nowMs: () => number;
}

/** POSTs JSON and returns the parsed JSON body of a 2xx answer, or the failure as a value. */
export async function postJson(request: JsonPostRequest): Promise<ModelAttemptResult<unknown>> {
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const signal = AbortSignal.any([request.signal, deadline]);
  let text: string;
  let response: Response;
  try {
    response = await request.fetch(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...request.headers },
      body: JSON.stringify(request.body),
      signal,
    });
    // Reading the body can fail on its own (the connection drops mid-body), so it is inside the try.
    text = await response.text();
  } catch (error) {
    return { ok: false, failure: transportFailure(error, request.signal, deadline.aborted, request.secrets) };
  }
  let body: unknown;
  let parsed = true;
  try {
    body = JSON.parse(text);
  } catch {
    parsed = false;
  }
  if (!response.ok) {
    return { ok: false, failure: statusFailure(response.status, response.headers, body, text, request.nowMs(), request.secrets) };
  }
  if (!parsed) {
    return { ok: false, failure: { kind: 'malformed', status: response.status, message: scrubSecrets(`the response body is not JSON: ${errorBodyMessage(undefined, text)}`, request.secrets) } };
  }
  return { ok: true, value: body };
}

/** Joins a base URL and a path without doubling or dropping the slash between them. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
