import { describe, expect, it } from 'vitest';
import { newcombeDifference, wilson } from './wilson.js';

const round4 = (xs: readonly number[]) => xs.map((x) => Math.round(x * 10_000) / 10_000);

describe('wilson', () => {
  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I, method 3.
  it.each([
    [81, 263, [0.2553, 0.3662]],
    [15, 148, [0.0624, 0.1605]],
    [0, 20, [0, 0.1611]],
    [1, 29, [0.0061, 0.1718]],
  ])('%i/%i -> %j', (successes, n, expected) => {
    expect(round4(wilson(successes, n))).toEqual(expected);
  });

  it('is exact at the edges and symmetric', () => {
    expect(wilson(0, 10)[0]).toBe(0);
    expect(wilson(10, 10)[1]).toBe(1);
    const [lo, hi] = wilson(3, 10);
    const [lo2, hi2] = wilson(7, 10);
    expect(lo2).toBeCloseTo(1 - hi, 12);
    expect(hi2).toBeCloseTo(1 - lo, 12);
  });

  it('knows nothing from no data, and refuses impossible counts', () => {
    expect(wilson(0, 0)).toEqual([0, 1]);
    expect(() => wilson(3, 2)).toThrow(RangeError);
    expect(() => wilson(-1, 2)).toThrow(RangeError);
    expect(() => wilson(0.5, 2)).toThrow(RangeError);
  });
});

describe('newcombeDifference', () => {
  // Newcombe (1998), "Interval estimation for the difference between independent proportions", table II, method 10.
  it.each([
    [56, 70, 48, 80, [0.0524, 0.3339]],
    [9, 10, 3, 10, [0.1705, 0.809]],
    [0, 10, 0, 20, [-0.1611, 0.2775]],
    [0, 10, 0, 10, [-0.2775, 0.2775]],
  ])('%i/%i - %i/%i -> %j', (s1, n1, s2, n2, expected) => {
    const d = newcombeDifference({ successes: s2, n: n2 }, { successes: s1, n: n1 });
    expect(d.delta).toBeCloseTo(s1 / n1 - s2 / n2, 12);
    expect(round4(d.ci95)).toEqual(expected);
  });
});
