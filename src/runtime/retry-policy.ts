/**
 * Whether the runtime retries a failed attempt, and after how long. Never blindly: the decision
 * follows the failure's category (DESIGN.md "Taxonomy"), the tool's idempotency and the
 * server's Retry-After.
 */
import { backoffDelay, type BackoffOptions } from './backoff.js';
import type { Classification } from './classify.js';

export interface RetryOptions extends BackoffOptions {
  /** Retries after the first attempt. Default 3. */
  maxRetries: number;
  /** Longest Retry-After the runtime waits out itself; longer ones go back to the agent. Default 60 s. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: Readonly<RetryOptions> = {
  maxRetries: 3,
  baseDelayMs: 200,
  factor: 2,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

export type StopReason =
  | 'not_retryable'
  | 'retries_exhausted'
  | 'ambiguous_non_idempotent'
  | 'retry_after_too_long'
  | 'circuit_open'
  | 'cancelled';

export type RetryDecision =
  | { kind: 'retry'; delayMs: number; honoredRetryAfter: boolean }
  | { kind: 'refresh_credential' }
  | { kind: 'stop'; reason: StopReason };

export interface RetryState {
  /** 0-based index of the attempt that just failed. */
  attempt: number;
  /** The tool is idempotent, or takes an idempotency key the runtime passes on every attempt. */
  safeToRepeat: boolean;
  /** A credential refresher is configured and has not been used in this call yet. */
  canRefresh: boolean;
}

export function decideRetry(c: Classification, state: RetryState, options: RetryOptions, random: () => number): RetryDecision {
  switch (c.category) {
    case 'parameter':
    case 'business':
    // A post-condition that failed or a refused repeat: the same call again gives the same answer.
    case 'semantic':
    case 'logic':
      return { kind: 'stop', reason: 'not_retryable' };
    case 'auth':
      // Only a fresh credential can change the answer, and only once.
      return state.canRefresh && c.type !== 'forbidden' ? { kind: 'refresh_credential' } : { kind: 'stop', reason: 'not_retryable' };
    case 'system':
      if (c.type !== 'server_error' && c.type !== 'dependency_down') return { kind: 'stop', reason: c.type === 'cancelled' ? 'cancelled' : 'not_retryable' };
      break;
    case 'rate_limit':
      if (c.type === 'quota_exhausted') return { kind: 'stop', reason: 'not_retryable' };
      break;
    case 'network':
      break;
  }
  if (c.ambiguous && !state.safeToRepeat) return { kind: 'stop', reason: 'ambiguous_non_idempotent' };
  if (state.attempt >= options.maxRetries) return { kind: 'stop', reason: 'retries_exhausted' };
  if (c.retryAfterMs !== undefined) {
    if (c.retryAfterMs > options.maxRetryAfterMs) return { kind: 'stop', reason: 'retry_after_too_long' };
    return { kind: 'retry', delayMs: c.retryAfterMs, honoredRetryAfter: true };
  }
  return { kind: 'retry', delayMs: backoffDelay(state.attempt, options, random), honoredRetryAfter: false };
}
