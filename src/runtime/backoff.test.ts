import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffDelay } from './backoff.js';
import { seededRandom } from '../core/seeded-random.js';

const optionsArb = fc.record({
  baseDelayMs: fc.integer({ min: 1, max: 5_000 }),
  factor: fc.double({ min: 1, max: 4, noNaN: true }),
  maxDelayMs: fc.integer({ min: 1, max: 120_000 }),
});

describe('backoff', () => {
  it('every delay lies in [ceiling/2, ceiling] and never exceeds the cap', () => {
    fc.assert(
      fc.property(optionsArb, fc.integer({ min: 0, max: 60 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (options, attempt, r) => {
        const ceiling = backoffCeiling(attempt, options);
        const delay = backoffDelay(attempt, options, () => r);
        expect(ceiling).toBeLessThanOrEqual(options.maxDelayMs);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(delay).toBeLessThanOrEqual(Math.ceil(ceiling));
        expect(delay).toBeLessThanOrEqual(options.maxDelayMs);
      }),
    );
  });

  it('the ceiling never shrinks from one retry to the next', () => {
    fc.assert(
      fc.property(optionsArb, fc.integer({ min: 0, max: 60 }), (options, attempt) => {
        expect(backoffCeiling(attempt + 1, options)).toBeGreaterThanOrEqual(backoffCeiling(attempt, options));
      }),
    );
  });

  it('grows exponentially until the cap', () => {
    const options = { baseDelayMs: 100, factor: 2, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffCeiling(n, options))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffCeiling(10_000, options)).toBe(1000);
  });

  it('seeded randomness is reproducible and uniform enough', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const xs = Array.from({ length: 10_000 }, () => a());
    expect(xs.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => b()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.48);
    expect(mean).toBeLessThan(0.52);
  });
});
