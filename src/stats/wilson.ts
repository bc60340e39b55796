/**
 * Confidence intervals for pass rates: the Wilson score interval for one proportion, and
 * Newcombe's hybrid score interval (his method 10) for the difference of two. Both behave at
 * 0 % and 100 % and with a handful of scenarios, where the normal approximation does not.
 */

/** The two-sided 95 % normal quantile. */
export const Z95 = 1.959963984540054;

/**
 * The Wilson score interval for `successes` out of `n`. With n = 0 nothing is known: [0, 1].
 *
 * @example
 * wilson(81, 263); // [0.2553, 0.3662] (Newcombe 1998, table I)
 */
export function wilson(successes: number, n: number, z: number = Z95): [number, number] {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`wilson needs integers 0 <= successes <= n, got ${successes}/${n}`);
  }
  if (n === 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const denominator = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denominator;
  const half = (z / denominator) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // Exact at the edges: floating point would otherwise leave 1e-17 where the bound is 0 or 1.
  return [successes === 0 ? 0 : Math.max(0, center - half), successes === n ? 1 : Math.min(1, center + half)];
}

export interface ProportionDifference {
  /** pB - pA. */
  delta: number;
  ci95: [number, number];
}

/**
 * The interval for pB - pA from the two Wilson intervals (Newcombe 1998, method 10).
 *
 * @example
 * newcombeDifference({ successes: 48, n: 80 }, { successes: 56, n: 70 }); // delta 0.2, ci95 [0.0524, 0.3339]
 */
export function newcombeDifference(a: { successes: number; n: number }, b: { successes: number; n: number }, z: number = Z95): ProportionDifference {
  const pA = a.n === 0 ? 0 : a.successes / a.n;
  const pB = b.n === 0 ? 0 : b.successes / b.n;
  const [lA, uA] = wilson(a.successes, a.n, z);
  const [lB, uB] = wilson(b.successes, b.n, z);
  const delta = pB - pA;
  const below = Math.sqrt((pB - lB) ** 2 + (uA - pA) ** 2);
  const above = Math.sqrt((uB - pB) ** 2 + (pA - lA) ** 2);
  return { delta, ci95: [Math.max(-1, delta - below), Math.min(1, delta + above)] };
}
