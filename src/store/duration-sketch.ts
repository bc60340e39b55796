/**
 * A mergeable log-bucket histogram of call durations. Rollups keep one count per
 * (tool, hour, bucket); summing counts across hours and adapters is exact, and any percentile
 * read from the merged counts is within {@link SKETCH_RELATIVE_ERROR} of the exact percentile.
 *
 * Buckets:
 * - `0` holds durations `<= 0` (and non-finite garbage, so a bad value cannot poison a rollup);
 * - `1` holds `(0, 1]` ms;
 * - `i >= 2` holds `(BASE^(i-2), BASE^(i-1)]` ms.
 */

/** Growth factor between bucket bounds. */
export const SKETCH_BASE = 1.1;

/**
 * Worst-case relative error of a percentile read from the sketch, for durations >= 1 ms or 0:
 * `(BASE - 1) / (BASE + 1)`, about 4.8%.
 */
export const SKETCH_RELATIVE_ERROR = (SKETCH_BASE - 1) / (SKETCH_BASE + 1);

/** Beyond ~3.6e16 ms nothing is a real duration; clamping keeps bucket indexes small integers. */
export const SKETCH_MAX_BUCKET = 400;

const LOG_BASE = Math.log(SKETCH_BASE);
const SMALL_INTEGER_LIMIT = 16_384;
/** Lazily filled bucket of each whole-ms duration below the limit; 0 means "not computed yet". */
const SMALL_INTEGER_BUCKETS = new Uint16Array(SMALL_INTEGER_LIMIT);

/**
 * The bucket a duration falls into.
 * @example bucketOf(0) === 0; bucketOf(1) === 1; bucketOf(100) === 50
 */
export function bucketOf(ms: number): number {
  // Most recorded durations are whole milliseconds below a few seconds; a table lookup for those
  // keeps the per-record rollup cost off Math.log.
  if (ms < SMALL_INTEGER_LIMIT && (ms | 0) === ms && ms >= 0) {
    let b = SMALL_INTEGER_BUCKETS[ms]!;
    if (b === 0 && ms !== 0) SMALL_INTEGER_BUCKETS[ms] = b = computeBucket(ms);
    return b;
  }
  return computeBucket(ms);
}

function computeBucket(ms: number): number {
  if (!(ms > 0)) return 0;
  if (ms <= 1) return 1;
  if (ms === Infinity) return SKETCH_MAX_BUCKET;
  let i = Math.ceil(Math.log(ms) / LOG_BASE) + 1;
  // Math.log is not exact at bucket boundaries; nudge so that ms really lies in (lower, upper].
  if (ms > bucketUpperMs(i)) i += 1;
  else if (i > 2 && ms <= bucketUpperMs(i - 1)) i -= 1;
  return i > SKETCH_MAX_BUCKET ? SKETCH_MAX_BUCKET : i;
}

/** The inclusive upper bound of bucket `i` in ms (0 for bucket 0). */
export function bucketUpperMs(i: number): number {
  if (i <= 0) return 0;
  return SKETCH_BASE ** (i - 1);
}

/** The exclusive lower bound of bucket `i` in ms (0 for buckets 0 and 1). */
export function bucketLowerMs(i: number): number {
  if (i <= 1) return 0;
  return SKETCH_BASE ** (i - 2);
}

/**
 * The value reported for a bucket: the harmonic midpoint of its bounds, which minimises the
 * worst relative error over the bucket. Bucket 1 reports 1 ms, its upper bound, because
 * sub-millisecond durations have no meaningful relative error.
 */
export function bucketValueMs(i: number): number {
  if (i <= 0) return 0;
  if (i === 1) return 1;
  const lo = bucketLowerMs(i);
  const hi = bucketUpperMs(i);
  return (2 * lo * hi) / (lo + hi);
}

/** Adds `from`'s counts into `into` (mutates and returns `into`). */
export function mergeBuckets(
  into: Map<number, number>,
  from: Map<number, number> | Iterable<readonly [number, number]>,
): Map<number, number> {
  for (const [bucket, count] of from) into.set(bucket, (into.get(bucket) ?? 0) + count);
  return into;
}

/**
 * The `q`-quantile (0..1, nearest-rank) of the durations counted in `buckets`, or null when they
 * hold no samples. Buckets may be given in any order and may repeat (repeats are summed).
 * @example percentileFromBuckets(new Map([[bucketOf(120), 19], [bucketOf(900), 1]]), 0.95) // ≈ 120
 */
export function percentileFromBuckets(
  buckets: Map<number, number> | Iterable<readonly [number, number]>,
  q: number,
): number | null {
  const merged = buckets instanceof Map ? buckets : mergeBuckets(new Map(), buckets);
  let total = 0;
  for (const count of merged.values()) total += count;
  if (total <= 0) return null;
  const sorted = [...merged.entries()].filter(([, c]) => c > 0).sort((a, b) => a[0] - b[0]);
  const clampedQ = q <= 0 ? 0 : q >= 1 ? 1 : q;
  const rank = Math.max(1, Math.ceil(clampedQ * total));
  let seen = 0;
  for (const [bucket, count] of sorted) {
    seen += count;
    if (seen >= rank) return bucketValueMs(bucket);
  }
  // Unreachable while counts are finite; the largest bucket is the honest answer otherwise.
  const last = sorted[sorted.length - 1];
  return last === undefined ? null : bucketValueMs(last[0]);
}

/** The exact nearest-rank `q`-quantile of `values` (what the sketch approximates), or null. */
export function exactPercentile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const clampedQ = q <= 0 ? 0 : q >= 1 ? 1 : q;
  const rank = Math.max(1, Math.ceil(clampedQ * sorted.length));
  return sorted[rank - 1] ?? null;
}
