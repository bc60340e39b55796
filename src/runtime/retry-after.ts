/**
 * Reads `Retry-After` (RFC 9110 section 10.2.3): either delay-seconds or an HTTP-date.
 * Headers may be a fetch `Headers`, a plain object with any key case, or a Map.
 */

export type HeaderBag = Headers | Map<string, unknown> | Record<string, unknown>;

/** Looks up a header case-insensitively in any of the supported shapes. */
export function getHeader(headers: unknown, name: string): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  const bag = headers as { get?: unknown };
  if (typeof bag.get === 'function') {
    const value = (bag.get as (key: string) => unknown).call(headers, name) ?? (bag.get as (key: string) => unknown).call(headers, name.toLowerCase());
    return headerText(value);
  }
  const lower = name.toLowerCase();
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() === lower) return headerText((headers as Record<string, unknown>)[key]);
  }
  return undefined;
}

function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/**
 * Milliseconds to wait according to a Retry-After value, relative to `nowMs`.
 * Returns undefined when the value is absent or unparseable; 0 for dates in the past.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  // HTTP-date always names a weekday or month; a bare number that failed the test above is junk.
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/** Retry-After from an error's own headers or its `response`'s headers, in milliseconds. */
export function retryAfterFrom(source: unknown, nowMs: number): number | undefined {
  if (source === null || typeof source !== 'object') return undefined;
  const s = source as { headers?: unknown; response?: { headers?: unknown } };
  return (
    parseRetryAfter(getHeader(s.headers, 'retry-after'), nowMs) ??
    parseRetryAfter(getHeader(s.response?.headers, 'retry-after'), nowMs)
  );
}
