import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, isIsoTimestamp, shiftIsoTimestamp } from './timestamps.js';

describe('shiftIsoTimestamp', () => {
  it('keeps the textual form: precision, separator, zone label', () => {
    expect(shiftIsoTimestamp('2026-03-29T14:23:11Z', DAY_MS)).toBe('2026-03-30T14:23:11Z');
    expect(shiftIsoTimestamp('2026-03-29T14:23:11.250+08:00', -8 * HOUR_MS)).toBe('2026-03-29T06:23:11.250+08:00');
    expect(shiftIsoTimestamp('2026-03-29 23:30', HOUR_MS)).toBe('2026-03-30 00:30');
    expect(shiftIsoTimestamp('2026-03-29T14:23:11.5Z', 500)).toBe('2026-03-29T14:23:12.0Z');
    expect(shiftIsoTimestamp('2026-03-29T14:23:11.5Z', 250)).toBe('2026-03-29T14:23:11.750Z');
    expect(shiftIsoTimestamp('2026-03-29T14:23:11.123456Z', 1000)).toBe('2026-03-29T14:23:12.123456Z');
    expect(shiftIsoTimestamp('2026-12-31', DAY_MS)).toBe('2027-01-01');
    expect(shiftIsoTimestamp('2024-02-28', DAY_MS)).toBe('2024-02-29');
  });

  it('leaves what it cannot shift faithfully', () => {
    expect(shiftIsoTimestamp('2026-03-29', HOUR_MS)).toBeUndefined();
    expect(shiftIsoTimestamp('2026-03-29', DAY_MS, true)).toBeUndefined();
    expect(shiftIsoTimestamp('2026-02-30T00:00:00Z', DAY_MS)).toBeUndefined();
    expect(shiftIsoTimestamp('Paris', DAY_MS)).toBeUndefined();
    expect(shiftIsoTimestamp('20260329', DAY_MS)).toBeUndefined();
  });

  it('isIsoTimestamp', () => {
    expect(isIsoTimestamp('2026-03-29')).toBe(true);
    expect(isIsoTimestamp('2026-03-29', true)).toBe(false);
    expect(isIsoTimestamp('2026-03-29T14:23:11Z', true)).toBe(true);
    expect(isIsoTimestamp('2026-13-01')).toBe(false);
    expect(isIsoTimestamp('yesterday')).toBe(false);
  });

  it('shifting there and back gives the original text', () => {
    const stamp = fc
      .record({
        ms: fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2090, 0, 1) }),
        zone: fc.constantFrom('Z', '+08:00', '-05:30', ''),
        fraction: fc.boolean(),
      })
      .map(({ ms, zone, fraction }) => {
        const iso = new Date(ms).toISOString();
        return (fraction ? iso.slice(0, 23) : iso.slice(0, 19)) + zone;
      });
    fc.assert(
      // Whole seconds, so that texts without a fraction can carry the shift exactly.
      fc.property(stamp, fc.integer({ min: -1000 * 86_400, max: 1000 * 86_400 }), (text, seconds) => {
        const delta = seconds * 1000;
        const there = shiftIsoTimestamp(text, delta);
        expect(there).toBeDefined();
        expect(shiftIsoTimestamp(there!, -delta)).toBe(text);
      }),
    );
  });
});
