/**
 * The scrub pass (DESIGN.md, "Redaction"): each secret found in one field of a record, removed
 * from every other field, as written, JSON-escaped or percent-encoded.
 */
import { REDACTED } from './redact-rules.js';
import { DEFAULT_MAX_DEPTH, setOwn } from './redact-json.js';

/** `c` is an ASCII letter, digit or `_`: a secret next to one is part of a longer word. */
function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** A character JSON escapes, or percent-encoding changes (anything but `A-Za-z0-9-_.!~*'()`). */
const RESPELLED = /[^A-Za-z0-9\-_.!~*'()]/;

/** Found secrets as they may be written: distinct, longest first, raw, JSON-escaped, percent-encoded. */
export function spellingsOf(found: readonly string[]): readonly string[] {
  if (found.length === 1 && !RESPELLED.test(found[0]!)) return found;
  const out = new Set<string>();
  for (const secret of found) {
    out.add(secret);
    if (!RESPELLED.test(secret)) continue;
    const json = JSON.stringify(secret).slice(1, -1);
    if (json !== secret) out.add(json);
    const url = encodeURIComponent(secret);
    if (url !== secret) out.add(url);
  }
  return out.size === 1 ? [...out] : [...out].sort((a, b) => b.length - a.length);
}

export function scrubText(s: string, spellings: readonly string[]): string {
  let out = s;
  for (const secret of spellings) {
    let at = out.indexOf(secret);
    if (at === -1) continue;
    const wordStart = isWordChar(secret.charCodeAt(0));
    const wordEnd = isWordChar(secret.charCodeAt(secret.length - 1));
    let result = '';
    let last = 0;
    while (at !== -1) {
      const end = at + secret.length;
      const alone = (!wordStart || at === 0 || !isWordChar(out.charCodeAt(at - 1))) && (!wordEnd || !isWordChar(out.charCodeAt(end)));
      if (alone) {
        result += out.slice(last, at) + REDACTED;
        last = end;
      }
      at = out.indexOf(secret, alone ? end : at + 1);
    }
    if (last !== 0) out = result + out.slice(last);
  }
  return out;
}

/** {@link scrubText} over the strings of a JSON-like value; copies only what changed. */
export function scrubValue(v: unknown, spellings: readonly string[], depth: number): unknown {
  if (typeof v === 'string') return scrubText(v, spellings);
  if (typeof v !== 'object' || v === null || depth > DEFAULT_MAX_DEPTH) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const next = scrubValue(v[i], spellings, depth + 1);
      if (out === undefined) {
        if (next === v[i]) continue;
        out = v.slice(0, i);
      }
      out.push(next);
    }
    return out ?? v;
  }
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  const o = v as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(o)) {
    const next = scrubValue(o[key], spellings, depth + 1);
    if (next === o[key]) continue;
    out ??= { ...o };
    setOwn(out, key, next);
  }
  return out ?? v;
}
