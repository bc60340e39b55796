/** Size limits applied to records before they are stored (seed 001 section 4.1). */

export const DEFAULT_MAX_OUTPUT_CHARS = 2000;
export const DEFAULT_STACK_FRAMES = 5;

/** Cuts text to `max` characters; the record keeps the original length beside it. */
export function truncateText(text: string, max: number = DEFAULT_MAX_OUTPUT_CHARS): string {
  if (text.length <= max) return text;
  // Never split a surrogate pair: a lone half is not valid UTF-8 when stored.
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Keeps the error line(s) and the innermost `frames` stack frames. V8 lists the innermost frame
 * first, so these are the first `at` lines.
 */
export function trimStack(stack: string | undefined, frames: number = DEFAULT_STACK_FRAMES): string | null {
  if (stack === undefined || stack === '') return null;
  const lines = stack.split('\n');
  const out: string[] = [];
  let kept = 0;
  for (const line of lines) {
    if (/^\s+at /.test(line)) {
      if (kept >= frames) continue;
      kept++;
    }
    out.push(line);
  }
  return out.join('\n');
}

/** JSON text of any value, never throwing (cycles, BigInt): what `raw_output` holds. */
export function toJsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    // Without a replacer first: a replacer function makes stringify several times slower, and
    // only BigInt (which throws) needs one.
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(value);
    } catch {
      return String(value);
    }
  }
}
