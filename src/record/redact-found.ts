/**
 * The secrets found while one record is redacted, for the scrub pass to remove from its other
 * fields (DESIGN.md, "Redaction"; `FoundSecrets` in redact.ts).
 */
import { REDACTED, isPlaceholder } from './redact-rules.js';

// ---------------------------------------------------------------------------------------------
// Secrets found in one record (or trajectory), to scrub from its other fields: an API that
// rejects a key often quotes it back in its error, where no key name or format marks it.

/** Where found secrets go while a record is being redacted; shared, since redaction is synchronous. */
let collecting: string[] | undefined;
/**
 * Shorter values are not scrubbed elsewhere: `true`, `1` or a 4-digit PIN would hit ordinary text.
 * Six characters admit the short passwords people do use.
 */
const MIN_SCRUB_LENGTH = 6;
const MAX_SCRUB_LENGTH = 4096;

/** Starts collecting into `into` (undefined: stop); returns the collector it replaces, to restore. */
export function collectInto(into: string[] | undefined): string[] | undefined {
  const outer = collecting;
  collecting = into;
  return outer;
}

export function isCollecting(): boolean {
  return collecting !== undefined;
}

export function found(value: string): void {
  if (collecting === undefined || value.length < MIN_SCRUB_LENGTH || value.length > MAX_SCRUB_LENGTH) return;
  if (value.includes(REDACTED) || isPlaceholder(value)) return;
  collecting.push(value);
}

/** The part of `match` its mask hid: what lies between the prefix and suffix both keep. */
export function foundHidden(match: string, masked: string): void {
  let start = 0;
  while (start < match.length && start < masked.length && match.charCodeAt(start) === masked.charCodeAt(start)) start++;
  let end = 0;
  while (end < match.length - start && end < masked.length - start && match.charCodeAt(match.length - 1 - end) === masked.charCodeAt(masked.length - 1 - end)) end++;
  const hidden = match.slice(start, match.length - end).replace(/^["'\s]+|["'\s]+$/g, '');
  found(hidden);
}
