import { describe, expect, it } from 'vitest';
import { getHeader, parseRetryAfter, retryAfterFrom } from './retry-after.js';

const NOW = Date.parse('2026-03-29T14:00:00Z');

describe('Retry-After', () => {
  it('parses delay-seconds', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter('1.5', NOW)).toBe(1500);
  });

  it('parses HTTP-dates relative to now, clamping the past to 0', () => {
    expect(parseRetryAfter('Sun, 29 Mar 2026 14:00:45 GMT', NOW)).toBe(45_000);
    expect(parseRetryAfter('Sun, 29 Mar 2026 13:00:00 GMT', NOW)).toBe(0);
  });

  it('ignores junk', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('', NOW)).toBeUndefined();
    expect(parseRetryAfter('-5', NOW)).toBeUndefined();
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter('12:30', NOW)).toBeUndefined();
  });

  it('reads headers from Headers, Maps and plain objects in any case', () => {
    expect(getHeader(new Headers({ 'Retry-After': '3' }), 'retry-after')).toBe('3');
    expect(getHeader(new Map([['retry-after', '4']]), 'Retry-After')).toBe('4');
    expect(getHeader({ 'RETRY-AFTER': 5 }, 'retry-after')).toBe('5');
    expect(getHeader({ 'retry-after': ['6', '7'] }, 'retry-after')).toBe('6');
    expect(getHeader(null, 'retry-after')).toBeUndefined();
  });

  it('reads from an error or its response', () => {
    expect(retryAfterFrom({ headers: { 'retry-after': '2' } }, NOW)).toBe(2000);
    expect(retryAfterFrom({ response: { headers: new Headers({ 'retry-after': '9' }) } }, NOW)).toBe(9000);
    expect(retryAfterFrom({}, NOW)).toBeUndefined();
  });
});
