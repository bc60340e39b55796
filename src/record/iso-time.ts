/**
 * UTC ISO-8601 timestamps (`2026-03-29T14:23:11.123Z`), as every record field stores them.
 * `Date#toISOString` costs ~0.5 us, and a call needs two; consecutive calls almost always fall
 * in the same second, so the text up to the second is cached and only the milliseconds change.
 */
let cachedSecond = NaN;
let cachedPrefix = '';

export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    cachedSecond = second;
  }
  const millis = Math.floor(ms) - second * 1000;
  return cachedPrefix + (millis < 10 ? '00' : millis < 100 ? '0' : '') + millis + 'Z';
}
