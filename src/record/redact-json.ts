/** JSON-shaped values and text, as redaction reads and rebuilds them (DESIGN.md, "Redaction"). */

/** Default depth past which nested objects are not walked. */
export const DEFAULT_MAX_DEPTH = 32;

export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function looksLikeJson(s: string): boolean {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) <= 32) i++;
  const first = s.charCodeAt(i);
  if (first !== 123 && first !== 91) return false;
  let j = s.length - 1;
  while (j > i && s.charCodeAt(j) <= 32) j--;
  const last = s.charCodeAt(j);
  return last === 125 || last === 93;
}

export const NOT_JSON = Symbol('not-json');

export function parseJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return NOT_JSON;
  }
}
