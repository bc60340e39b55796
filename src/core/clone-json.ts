/**
 * A deep copy of JSON data. Kept apart from the validator (which loads Ajv) because the stores
 * use it too, down to the SQLite writer thread, which should not load a schema compiler to start.
 */

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Copies plain objects and arrays (what JSON arguments are made of); other objects are shared. */
export function cloneJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJson);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = cloneJson((value as Record<string, unknown>)[key]);
  return out;
}
