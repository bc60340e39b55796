/**
 * The arguments that changed between two calls, as decisions, corrections and the memory that
 * replays them describe a retry with other arguments.
 */
import { jsonValue } from './deferred-json.js';
import { canonicalJson } from './params-hash.js';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The arguments that differ between two calls: changed or added keys with their new value,
 * removed keys as null. Arguments that are not objects are compared whole, under the key `$`.
 */
export function paramsDelta(beforeParams: unknown, afterParams: unknown): Record<string, unknown> {
  const before = jsonValue(beforeParams);
  const after = jsonValue(afterParams);
  if (!isPlainObject(before) || !isPlainObject(after)) return { $: after ?? null };
  const delta: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (!Object.hasOwn(after, key)) delta[key] = null;
    else if (!Object.hasOwn(before, key) || canonicalJson(before[key]) !== canonicalJson(after[key])) delta[key] = after[key];
  }
  return delta;
}
