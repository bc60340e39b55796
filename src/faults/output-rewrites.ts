/**
 * How faults rewrite a tool's (or upstream's) output: partial results, empty results, schema and
 * semantic drift, stale timestamps, malformed bodies. Every function works on a copy, because
 * tools often return references to their own state and a fault must not corrupt it.
 */
import { cloneJson } from '../core/clone-json.js';
import type { PartialParams, RetypeTarget, SchemaDriftParams, SemanticDriftParams } from './plan-spec.js';
import { DAY_MS, HOUR_MS, isIsoTimestamp, shiftIsoTimestamp } from './timestamps.js';

type Obj = Record<string, unknown>;

function isPlainObject(value: unknown): value is Obj {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Calls `visit(parent, key)` for every object that holds `path`'s last segment. Arrays met on
 * the way apply to each element, so `items.city` reaches the city of every item.
 */
function visitPath(value: unknown, segments: readonly string[], visit: (parent: Obj, key: string) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visitPath(item, segments, visit);
    return;
  }
  if (!isPlainObject(value) || segments.length === 0) return;
  const [head, ...rest] = segments as [string, ...string[]];
  if (rest.length === 0) {
    if (Object.hasOwn(value, head)) visit(value, head);
    return;
  }
  visitPath(value[head], rest, visit);
}

const splitPath = (path: string) => path.split('.');

/** Replaces every string in `value` (recursively) with `fn(string)` when that returns one. */
function mapStrings(value: unknown, fn: (text: string) => string | undefined): unknown {
  if (typeof value === 'string') return fn(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, fn));
  if (!isPlainObject(value)) return value;
  const out: Obj = {};
  for (const [key, item] of Object.entries(value)) out[key] = mapStrings(item, fn);
  return out;
}

function mapStringsAt(value: unknown, fields: readonly string[] | undefined, fn: (text: string) => string | undefined): unknown {
  if (fields === undefined) return mapStrings(value, fn);
  const out = cloneJson(value);
  for (const field of fields) visitPath(out, splitPath(field), (parent, key) => (parent[key] = mapStrings(parent[key], fn)));
  return out;
}

/** Removes fields and trailing items, and says so in a note field (object outputs only; none when `silent`). */
export function partialOutput(output: unknown, params: PartialParams): unknown {
  const out = cloneJson(output);
  const missing: string[] = [];
  for (const field of params.drop_fields ?? []) {
    let found = false;
    visitPath(out, splitPath(field), (parent, key) => {
      delete parent[key];
      found = true;
    });
    if (found) missing.push(field);
  }
  let kept = 0;
  let total = 0;
  const fraction = params.drop_fraction;
  if (fraction !== undefined) {
    const cut = (items: unknown[]) => {
      const drop = Math.min(items.length, Math.ceil(items.length * fraction));
      total += items.length;
      kept += items.length - drop;
      items.splice(items.length - drop, drop);
    };
    if (Array.isArray(out)) cut(out);
    else if (isPlainObject(out)) for (const item of Object.values(out)) if (Array.isArray(item)) cut(item);
  }
  if (isPlainObject(out) && params.silent !== true) {
    const said: string[] = [];
    if (missing.length > 0) said.push(`${missing.join(', ')} unavailable`);
    if (total > 0) said.push(`${kept} of ${total} items returned`);
    out[params.note_field ?? 'warning'] = params.note ?? (said.length > 0 ? `partial result: ${said.join('; ')}` : 'partial result');
  }
  return out;
}

/**
 * The empty answer of the same shape: arrays emptied (also inside objects); an object without
 * arrays becomes `{}`. Counts and totals beside a list are kept on purpose: `{ total: 12,
 * results: [] }` is the degraded answer an agent can catch by checking the list against its
 * count (FailBench's semantic-empty scenarios score exactly that).
 */
export function emptyOutput(output: unknown): unknown {
  if (Array.isArray(output)) return [];
  if (!isPlainObject(output)) return output === null || typeof output !== 'string' ? null : '';
  let hadArray = false;
  const empty = (value: unknown): unknown => {
    if (Array.isArray(value)) {
      hadArray = true;
      return [];
    }
    if (!isPlainObject(value)) return value;
    const out: Obj = {};
    for (const [key, item] of Object.entries(value)) out[key] = empty(item);
    return out;
  };
  const result = empty(output);
  return hadArray ? result : {};
}

function retype(value: unknown, to: RetypeTarget): unknown {
  switch (to) {
    case 'string':
      return typeof value === 'string' ? value : value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value);
    case 'number': {
      if (typeof value === 'number') return value;
      const n = Number(value);
      return Number.isFinite(n) ? n : 0;
    }
    case 'boolean':
      return Boolean(value);
    case 'array':
      return Array.isArray(value) ? value : [value];
    case 'object':
      return isPlainObject(value) ? value : { value };
    case 'null':
      return null;
  }
}

/** Renames keys in place, keeping their position, so the drifted output looks like a real new version. */
function renameKey(parent: Obj, from: string, to: string): void {
  const entries = Object.entries(parent);
  for (const [key] of entries) delete parent[key];
  for (const [key, value] of entries) parent[key === from ? to : key] = value;
}

/** Renames and retypes fields. */
export function schemaDriftOutput(output: unknown, params: SchemaDriftParams): unknown {
  const out = cloneJson(output);
  for (const [field, to] of Object.entries(params.retype ?? {})) {
    visitPath(out, splitPath(field), (parent, key) => (parent[key] = retype(parent[key], to)));
  }
  for (const [from, to] of Object.entries(params.rename ?? {})) {
    visitPath(out, splitPath(from), (parent, key) => renameKey(parent, key, to));
  }
  return out;
}

/** Shifted dates, another entity, timestamps in the wrong zone: a 200 that is wrong. */
export function semanticDriftOutput(output: unknown, params: SemanticDriftParams): unknown {
  let out = cloneJson(output);
  const days = params.shift_date;
  if (days !== undefined) out = mapStringsAt(out, params.fields, (text) => shiftIsoTimestamp(text, days * DAY_MS));
  const hours = params.timezone_shift;
  if (hours !== undefined) out = mapStringsAt(out, params.fields, (text) => shiftIsoTimestamp(text, hours * HOUR_MS, true));
  const entity = params.other_entity;
  if (entity !== undefined) {
    visitPath(out, splitPath(entity.field), (parent, key) => {
      const current = JSON.stringify(parent[key]);
      const replacement = entity.value !== undefined ? entity.value : entity.values?.find((v) => JSON.stringify(v) !== current);
      if (replacement !== undefined) parent[key] = cloneJson(replacement);
    });
  }
  return out;
}

/** Moves date-times back by `ageMs`, so fresh data reads as if it were served from an old cache. */
export function agedOutput(output: unknown, ageMs: number, fields: readonly string[] | undefined): unknown {
  return mapStringsAt(cloneJson(output), fields, (text) => (isIsoTimestamp(text, true) ? shiftIsoTimestamp(text, -ageMs, true) : undefined));
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * A body cut off half way, the way a dropped connection or a proxy's size limit truncates one.
 * A string is taken as the raw body text. When the cut happens to parse (a short number, say),
 * it is opened inside an object that is never closed, which can never parse.
 */
export function malformedText(output: unknown): string {
  const text = typeof output === 'string' ? output : (JSON.stringify(output) ?? 'null');
  const cut = text.slice(0, Math.ceil(text.length / 2));
  return cut !== '' && !parses(cut) ? cut : `{"data": ${cut}`;
}

/** Whether `text` is valid JSON (for validating a configured malformed body). */
export function isJsonText(text: string): boolean {
  return parses(text);
}
