import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration-option.js';

describe('duration flags', () => {
  it('take a number and its unit, within bounds, and 0 only where it means off', () => {
    const bounds = { minMs: 1, maxMs: 86_400_000 };
    expect(['500ms', '30s', '1500ms', '5m', '2h', '1d', ' 30s '].map((t) => parseDuration(t, '--x', bounds))).toStrictEqual([500, 30_000, 1500, 300_000, 7_200_000, 86_400_000, 30_000]);
    for (const bad of ['30', '0', '0s', '-1s', '1.5s', '2d', 's', '25h', '']) expect(() => parseDuration(bad, '--x', bounds), bad).toThrow(`invalid --x ${JSON.stringify(bad)}: expected a duration from 1ms to 24h, like 500ms, 30s or 5m`);
    expect(parseDuration('0', '--refresh', { ...bounds, zero: true })).toBe(0);
    expect(parseDuration('0s', '--refresh', { ...bounds, zero: true })).toBe(0);
    expect(() => parseDuration('5', '--refresh', { ...bounds, zero: true })).toThrow('or 0 for never');
  });

  it('print in the largest unit that says the value exactly', () => {
    expect([0, 10, 1500, 30_000, 300_000, 3_600_000, 90_000, 86_400_000].map(formatDuration)).toStrictEqual(['0', '10ms', '1500ms', '30s', '5m', '1h', '90s', '24h']);
  });
});
