/**
 * Exponential backoff with jitter, as a pure function of (attempt, options, random).
 *
 * The delay before retry n (n = 0 for the first retry) is drawn uniformly from
 * [ceiling / 2, ceiling], where ceiling = min(maxDelayMs, baseDelayMs * factor^n). Keeping half
 * of the ceiling as a floor ("equal jitter") spreads synchronized clients apart while still
 * guaranteeing the backoff grows, which full jitter does not.
 */

export interface BackoffOptions {
  /** Delay ceiling for the first retry. Default 200 ms. */
  baseDelayMs: number;
  /** Growth per retry. Default 2. */
  factor: number;
  /** Cap on any single delay. Default 10 s. */
  maxDelayMs: number;
}

export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = { baseDelayMs: 200, factor: 2, maxDelayMs: 10_000 };

/** The ceiling before jitter for retry `attempt` (0-based). */
export function backoffCeiling(attempt: number, options: BackoffOptions): number {
  const raw = options.baseDelayMs * Math.pow(options.factor, Math.max(0, attempt));
  return Math.min(options.maxDelayMs, Number.isFinite(raw) ? raw : options.maxDelayMs);
}

/**
 * The jittered delay before retry `attempt` (0-based). `random` returns a number in [0, 1);
 * pass a seeded generator for reproducible runs.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const ceiling = backoffCeiling(attempt, options);
  const floor = ceiling / 2;
  return Math.round(floor + random() * (ceiling - floor));
}
