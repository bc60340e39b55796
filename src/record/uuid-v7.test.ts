import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from './iso-time.js';
import { uuidv7, uuidv7LowerBound, uuidv7Time, uuidv7UpperBound } from './uuid-v7.js';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('is a valid version-7, variant-10 UUID encoding its time', () => {
    const t = Date.UTC(2026, 2, 29, 14, 23, 11, 123);
    const id = uuidv7(t);
    expect(id).toMatch(V7);
    expect(uuidv7Time(id)).toBe(t);
  });

  it('is strictly increasing, also within one millisecond and when the clock steps back', () => {
    const ids: string[] = [];
    const t = Date.now() + 10_000_000;
    for (let i = 0; i < 20_000; i++) ids.push(uuidv7(t));
    ids.push(uuidv7(t - 5000));
    ids.push(uuidv7(t + 1));
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    ids.forEach((id) => expect(id).toMatch(V7));
  });

  it('sorts like its timestamps', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), fc.integer({ min: 1, max: 2 ** 20 }), (a, d) => {
        const base = Date.now() + 20_000_000 + a;
        expect(uuidv7(base) < uuidv7(base + d)).toBe(true);
      }),
    );
  });
});

describe('uuidv7 bounds', () => {
  it('enclose every id of their millisecond and none of the next or previous one', () => {
    const ms = Date.UTC(2026, 11, 2, 3, 0, 0, 123);
    // An id of that millisecond (uuidv7() itself never goes back in time, so it cannot mint one for the past).
    const id = '01a234b1-d7fb-7123-8456-0123456789ab';
    expect(uuidv7Time(id)).toBe(ms);
    expect(uuidv7LowerBound(ms) < id && id < uuidv7UpperBound(ms)).toBe(true);
    expect(uuidv7UpperBound(ms - 1) < uuidv7LowerBound(ms)).toBe(true);
    expect(uuidv7Time(uuidv7LowerBound(ms))).toBe(ms);
    expect(uuidv7Time(uuidv7UpperBound(ms))).toBe(ms);
    expect(uuidv7LowerBound(-5)).toBe('00000000-0000-0000-0000-000000000000');
  });
});

describe('isoTime', () => {
  it('matches Date#toISOString for any millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4102444800000 }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 2000 },
    );
  });
});
