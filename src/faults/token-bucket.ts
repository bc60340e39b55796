/**
 * A token bucket as a pure function of (state, options, now), for `rate_limit_burst`: the
 * bucket starts full, refills continuously, and each admitted call takes one token. When it is
 * empty the caller learns how long until the next token, which becomes the 429's Retry-After.
 */

export interface TokenBucketOptions {
  capacity: number;
  refillPerSec: number;
}

export interface TokenBucketState {
  tokens: number;
  /** Clock time the token count was last brought up to date. */
  at: number;
}

export type TakeResult = { granted: true; state: TokenBucketState } | { granted: false; waitMs: number; state: TokenBucketState };

export function fullBucket(options: TokenBucketOptions, now: number): TokenBucketState {
  return { tokens: options.capacity, at: now };
}

/** Refills up to `now`; a bucket resized to a smaller capacity keeps no more than the new capacity. */
export function refill(state: TokenBucketState, options: TokenBucketOptions, now: number): TokenBucketState {
  const elapsed = Math.max(0, now - state.at);
  return { tokens: Math.min(options.capacity, state.tokens + (elapsed * options.refillPerSec) / 1000), at: Math.max(now, state.at) };
}

export function takeToken(state: TokenBucketState, options: TokenBucketOptions, now: number): TakeResult {
  const current = refill(state, options, now);
  // Float refills can land a hair below 1 after exactly the advertised wait; treat that as a token.
  if (current.tokens >= 1 - 1e-9) return { granted: true, state: { tokens: Math.max(0, current.tokens - 1), at: current.at } };
  const waitMs = Math.max(1, Math.ceil(((1 - current.tokens) * 1000) / options.refillPerSec - 1e-9));
  return { granted: false, waitMs, state: current };
}
