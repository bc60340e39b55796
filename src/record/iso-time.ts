/**
 * UTC ISO-8601 timestamps (`2026-03-29T14:23:11.123Z`), as every record field stores them.
 * `Date#toISOString` costs ~0.5 us, and a call needs two; consecutive calls almost always fall
 * in the same second, so the text up to the second is kept and only the milliseconds are
 * written. The text is written into a buffer and read out as one flat string: a concatenation
 * would be a rope that every later reader (the batch encoder, the SQLite binding) flattens again,
 * and in perf measurements serializing the rope cost ~0.4 us more per timestamp. The last
 * timestamp is returned as is when the millisecond repeats (a call's start and its first attempt).
 */
const text = Buffer.alloc(24);
text[23] = 0x5a; // 'Z'
let cachedSecond = NaN;
let lastMs = NaN;
let last = '';

export function isoTime(ms: number): string {
  const whole = Math.floor(ms);
  if (whole === lastMs) return last;
  const second = Math.floor(ms / 1000);
  if (second !== cachedSecond) {
    text.write(new Date(second * 1000).toISOString().slice(0, 20), 0, 'latin1');
    cachedSecond = second;
  }
  const millis = whole - second * 1000;
  text[20] = 0x30 + Math.floor(millis / 100);
  text[21] = 0x30 + (Math.floor(millis / 10) % 10);
  text[22] = 0x30 + (millis % 10);
  lastMs = whole;
  last = text.toString('latin1', 0, 24);
  return last;
}
