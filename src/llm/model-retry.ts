/**
 * Retries for the model endpoint itself (429, 5xx, dropped connections, unusable bodies). These
 * waits are real time, on the injected clock, and entirely separate from the tools: the scenario's
 * virtual clock and its tool trace never see them.
 */
import { notify, warnListenerError } from '../core/notify.js';
import { backoffDelay } from '../runtime/backoff.js';
import type { Clock } from '../core/clock.js';
import type { ModelAttemptResult, ModelFailure, ModelFailureKind } from './model-endpoint-error.js';

export interface ModelRetryOptions {
  /** Requests per model turn, the first included. Default 4. */
  maxAttempts: number;
  /** Backoff ceiling before the first retry, when the endpoint gave no Retry-After. Default 1 s. */
  baseDelayMs: number;
  /** Growth per retry. Default 2. */
  factor: number;
  /** Cap on one backoff delay. Default 20 s. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the turn fails instead. Default 60 s. */
  maxRetryAfterMs: number;
}

export const DEFAULT_MODEL_RETRY: Readonly<ModelRetryOptions> = {
  maxAttempts: 4,
  baseDelayMs: 1000,
  factor: 2,
  maxDelayMs: 20_000,
  maxRetryAfterMs: 60_000,
};

/** Passed to `onModelRetry` before each model-side retry. */
export interface ModelRetryEvent {
  provider: string;
  /** The attempt that failed, from 1. */
  attempt: number;
  failure: ModelFailure;
  delayMs: number;
}

const RETRYABLE: ReadonlySet<ModelFailureKind> = new Set(['rate_limit', 'server', 'connection', 'timeout', 'malformed']);

/**
 * The wait before retrying after `failure`, which ended attempt `attempt` (from 1), or undefined
 * when the policy says stop. Retry-After is honored exactly; without it, jittered exponential backoff.
 */
export function modelRetryDelay(failure: ModelFailure, attempt: number, options: ModelRetryOptions, random: () => number): number | undefined {
  if (!RETRYABLE.has(failure.kind) || attempt >= options.maxAttempts) return undefined;
  if (failure.retryAfterMs !== undefined) return failure.retryAfterMs <= options.maxRetryAfterMs ? failure.retryAfterMs : undefined;
  return backoffDelay(attempt - 1, options, random);
}

export interface ModelRetryContext {
  provider: string;
  options: ModelRetryOptions;
  clock: Clock;
  random: () => number;
  /** The scenario's signal: a wait it interrupts ends the turn as `aborted`. */
  signal: AbortSignal;
  onRetry?: ((event: ModelRetryEvent) => void) | undefined;
}

export type ModelRetryResult<T> = ({ ok: true; value: T } | { ok: false; failure: ModelFailure }) & { attempts: number };

/** Runs `attempt` until it succeeds or the policy stops; never throws for endpoint failures. */
export async function withModelRetry<T>(attempt: () => Promise<ModelAttemptResult<T>>, context: ModelRetryContext): Promise<ModelRetryResult<T>> {
  for (let n = 1; ; n++) {
    const result = await attempt();
    if (result.ok) return { ok: true, value: result.value, attempts: n };
    const delayMs = modelRetryDelay(result.failure, n, context.options, context.random);
    if (delayMs === undefined) return { ok: false, failure: result.failure, attempts: n };
    // A listener that throws must not turn a recoverable hiccup into a failed scenario.
    notify(context.onRetry, { provider: context.provider, attempt: n, failure: result.failure, delayMs }, onRetryFailed);
    try {
      await context.clock.sleep(delayMs, context.signal);
    } catch {
      return { ok: false, failure: { kind: 'aborted', message: 'the scenario was cancelled while waiting to retry the model' }, attempts: n };
    }
  }
}

const onRetryFailed = warnListenerError('onRetry');
