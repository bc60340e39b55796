import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bucketLowerMs,
  bucketOf,
  bucketUpperMs,
  bucketValueMs,
  exactPercentile,
  mergeBuckets,
  percentileFromBuckets,
  SKETCH_MAX_BUCKET,
  SKETCH_RELATIVE_ERROR,
} from './duration-sketch.js';

function sketch(values: readonly number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const v of values) m.set(bucketOf(v), (m.get(bucketOf(v)) ?? 0) + 1);
  return m;
}

const durationArb = fc.oneof(
  fc.integer({ min: 0, max: 10 }),
  fc.integer({ min: 0, max: 600_000 }),
  fc.double({ min: 1, max: 1e7, noNaN: true }),
);

describe('bucketOf', () => {
  it('puts zero, negatives and garbage in bucket 0 and (0, 1] in bucket 1', () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(-5)).toBe(0);
    expect(bucketOf(Number.NaN)).toBe(0);
    expect(bucketOf(0.001)).toBe(1);
    expect(bucketOf(1)).toBe(1);
    expect(bucketOf(1.0001)).toBe(2);
    expect(bucketOf(Infinity)).toBe(SKETCH_MAX_BUCKET);
    expect(bucketOf(1e300)).toBe(SKETCH_MAX_BUCKET);
  });

  it('places every value strictly above the lower bound and at most the upper bound of its bucket', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1e12, noNaN: true }), (ms) => {
        const i = bucketOf(ms);
        expect(ms).toBeGreaterThan(bucketLowerMs(i));
        expect(ms).toBeLessThanOrEqual(bucketUpperMs(i));
      }),
    );
  });

  it('places exact bucket boundaries in the bucket they close', () => {
    for (let i = 2; i < 200; i++) expect(bucketOf(bucketUpperMs(i))).toBe(i);
  });

  it('is monotonic', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.double({ min: 0, max: 1e9, noNaN: true }), (a, b) => {
        if (a <= b) expect(bucketOf(a)).toBeLessThanOrEqual(bucketOf(b));
      }),
    );
  });

  it('reports a value within the relative error bound for every value >= 1 ms', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 1e10, noNaN: true }), (ms) => {
        const v = bucketValueMs(bucketOf(ms));
        expect(Math.abs(v - ms) / ms).toBeLessThanOrEqual(SKETCH_RELATIVE_ERROR + 1e-12);
      }),
    );
    expect(SKETCH_RELATIVE_ERROR).toBeLessThan(0.05);
  });
});

describe('percentileFromBuckets', () => {
  it('returns null for no samples', () => {
    expect(percentileFromBuckets(new Map(), 0.5)).toBeNull();
    expect(percentileFromBuckets([[3, 0]], 0.5)).toBeNull();
  });

  it('is within the relative error of the exact nearest-rank percentile', () => {
    fc.assert(
      fc.property(fc.array(durationArb, { minLength: 1, maxLength: 300 }), fc.double({ min: 0, max: 1, noNaN: true }), (values, q) => {
        const exact = exactPercentile(values, q)!;
        const approx = percentileFromBuckets(sketch(values), q)!;
        if (exact === 0) expect(approx).toBe(0);
        else if (exact < 1) expect(approx).toBe(1);
        else expect(Math.abs(approx - exact)).toBeLessThanOrEqual(exact * SKETCH_RELATIVE_ERROR + 1e-9);
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same answer for merged partial sketches as for one sketch of everything', () => {
    fc.assert(
      fc.property(fc.array(fc.array(durationArb, { maxLength: 50 }), { minLength: 1, maxLength: 6 }), (parts) => {
        const merged = new Map<number, number>();
        for (const part of parts) mergeBuckets(merged, sketch(part));
        const all = sketch(parts.flat());
        for (const q of [0, 0.5, 0.95, 0.99, 1]) {
          expect(percentileFromBuckets(merged, q)).toBe(percentileFromBuckets(all, q));
        }
      }),
    );
  });

  it('accepts unordered, repeated entries as an iterable', () => {
    const entries: [number, number][] = [
      [bucketOf(900), 1],
      [bucketOf(120), 10],
      [bucketOf(120), 9],
    ];
    expect(percentileFromBuckets(entries, 0.95)).toBe(bucketValueMs(bucketOf(120)));
    expect(percentileFromBuckets(entries, 1)).toBe(bucketValueMs(bucketOf(900)));
  });

  it('clamps q into [0, 1]', () => {
    const m = sketch([10, 20, 30]);
    expect(percentileFromBuckets(m, -1)).toBe(percentileFromBuckets(m, 0));
    expect(percentileFromBuckets(m, 2)).toBe(percentileFromBuckets(m, 1));
  });
});

describe('exactPercentile', () => {
  it('uses the nearest-rank definition', () => {
    expect(exactPercentile([], 0.5)).toBeNull();
    expect(exactPercentile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(exactPercentile([1, 2, 3, 4], 0.5)).toBe(2);
    expect(exactPercentile([1, 2, 3, 4], 0.95)).toBe(4);
    expect(exactPercentile([7], 0)).toBe(7);
  });
});
