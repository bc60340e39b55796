/**
 * The walk over objects, arrays and JSON held in strings (DESIGN.md, "Redaction"): values under
 * secret keys replaced whole, strings handed to the text redactor, values JSON cannot hold
 * converted, cycles and depth cut.
 */
import { REDACTED, isPlaceholder } from './redact-rules.js';
import { found } from './redact-found.js';
import { MAX_PAIR_KEYS, MAX_TEXT_KEY } from './redact-assignment.js';
import { AUTH_SCHEME } from './redact-key-values.js';
import { isPlainObject, setOwn } from './redact-json.js';
import type { KeyNames } from './redact-key-names.js';

const TRUNCATED_DEPTH = '[TRUNCATED_DEPTH]';
const CIRCULAR = '[CIRCULAR]';
const FUNCTION = '[FUNCTION]';
const SYMBOL = '[SYMBOL]';
/** A getter or proxy threw while being read. */
export const UNREADABLE = '[UNREADABLE]';

/** Objects being walked, to spot cycles; shared, since redaction is synchronous. */
const ancestors: object[] = [];

/** How deep the cycle stack is, to restore with {@link unwindAncestors} after a throw. */
export function ancestorDepth(): number {
  return ancestors.length;
}

export function unwindAncestors(depth: number): void {
  // Only after a throw is the stack not already back where it was; setting length is slow.
  if (ancestors.length !== depth) ancestors.length = depth;
}

/** What the walker hands each string to. */
export interface StringRedaction {
  redactString(s: string, depth: number): string;
}

export class ValueWalker {
  constructor(
    private readonly keys: KeyNames,
    private readonly strings: StringRedaction,
    private readonly maxDepth: number,
  ) {}

  private redactNumber(n: number, depth: number): unknown {
    const s = String(n);
    const redacted = this.strings.redactString(s, depth);
    return redacted === s ? n : redacted;
  }

  walk(v: unknown, depth: number): unknown {
    switch (typeof v) {
      case 'string':
        return this.strings.redactString(v, depth);
      case 'number':
        // Eleven digits is the shortest personal number (a phone) worth checking.
        return v >= 1e10 && Number.isInteger(v) ? this.redactNumber(v, depth) : v;
      case 'object':
        return v === null ? v : this.walkObject(v, depth);
      case 'boolean':
      case 'undefined':
        return v;
      case 'bigint':
        return this.strings.redactString(String(v), depth);
      case 'function':
        return FUNCTION;
      default:
        return SYMBOL;
    }
  }

  private walkObject(o: object, depth: number): unknown {
    if (depth > this.maxDepth) return TRUNCATED_DEPTH;
    for (let i = 0; i < ancestors.length; i++) if (ancestors[i] === o) return CIRCULAR;
    if (Array.isArray(o)) return this.walkArray(o, depth);
    const proto: unknown = Object.getPrototypeOf(o);
    if (proto === Object.prototype || proto === null) return this.walkPlain(o as Record<string, unknown>, depth);
    return this.walkSpecial(o, depth);
  }

  // Each level catches its own throw (a getter, a proxy trap), so the pop after it always runs;
  // a try/finally here costs more than the catch.
  private walkPlain(o: Record<string, unknown>, depth: number): unknown {
    ancestors.push(o);
    let result: unknown;
    try {
      result = this.walkPlainEntries(o, depth);
    } catch {
      result = UNREADABLE;
    }
    ancestors.pop();
    return result;
  }

  private walkPlainEntries(o: Record<string, unknown>, depth: number): unknown {
    const keys = Object.keys(o);
    const pairValue = keys.length <= MAX_PAIR_KEYS ? this.secretPairValueKey(o) : undefined;
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const val = o[key];
      // A Kubernetes Secret as JSON: every value of its data is secret, whatever its name.
      if (key === 'kind' && typeof val === 'string' && val.toLowerCase() === 'secret' && (isPlainObject(o['data']) || isPlainObject(o['stringData']))) {
        return this.walkSecretManifest(o, depth);
      }
      const info = key === pairValue ? true : this.keys.info(key);
      let next: unknown;
      let outKey = key;
      if (info === true) {
        next = this.secretKeyed(val, key);
      } else {
        next = this.walk(val, depth + 1);
        if (info !== false) outKey = info;
      }
      if (out === undefined) {
        if (outKey === key && Object.is(next, val)) continue;
        out = {};
        for (let j = 0; j < i; j++) setOwn(out, keys[j]!, o[keys[j]!]);
      }
      setOwn(out, outKey, next);
    }
    return out ?? o;
  }

  private walkSecretManifest(o: Record<string, unknown>, depth: number): unknown {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(o)) {
      const val = o[key];
      if ((key === 'data' || key === 'stringData') && isPlainObject(val)) {
        const data: Record<string, unknown> = {};
        for (const name of Object.keys(val)) setOwn(data, name, this.secretKeyed(val[name], name));
        setOwn(out, key, data);
      } else {
        setOwn(out, key, this.walk(val, depth + 1));
      }
    }
    return out;
  }

  /** What replaces a value under a secret key: booleans, absent values and placeholders stay. */
  private secretKeyed(val: unknown, key: string): unknown {
    if (val === null || val === undefined || typeof val === 'boolean') return val;
    if (typeof val === 'string') {
      if (isPlaceholder(val, key)) return val;
      found(val);
      // `Bearer 9f8e…`: the credential may be echoed without its scheme.
      const scheme = AUTH_SCHEME.exec(val);
      if (scheme !== null) found(val.slice(scheme[1]!.length).trim());
    } else if (typeof val === 'number' || typeof val === 'bigint') {
      found(String(val));
    }
    return REDACTED;
  }

  /**
   * Name/value pair objects (`{ name: 'Cookie', value }` in HAR headers and environment lists,
   * `{ Key: 'api_key', Value }` tags): the value's key, when the name is a secret key.
   */
  private secretPairValueKey(o: Record<string, unknown>): string | undefined {
    // Property reads, not a scan of the keys: this runs for every small object walked.
    const valueKey = o['value'] !== undefined ? 'value' : o['Value'] !== undefined ? 'Value' : undefined;
    if (valueKey === undefined || o[valueKey] === null || !Object.hasOwn(o, valueKey)) return undefined;
    const name = o['name'] ?? o['Name'] ?? o['key'] ?? o['Key'];
    return typeof name === 'string' && name.length <= MAX_TEXT_KEY && this.keys.isSecret(name) ? valueKey : undefined;
  }

  private walkArray(o: readonly unknown[], depth: number): unknown {
    ancestors.push(o);
    let result: unknown;
    try {
      result = this.walkArrayItems(o, depth);
    } catch {
      result = UNREADABLE;
    }
    ancestors.pop();
    return result;
  }

  private walkArrayItems(o: readonly unknown[], depth: number): unknown {
    let out: unknown[] | undefined;
    // Header lists come as alternating names and values (`rawHeaders`, `[name, value]` pairs).
    const pairs = o.length % 2 === 0;
    for (let i = 0; i < o.length; i++) {
      const val = o[i];
      // Or an argv list, whose `--password` may stand anywhere: the item after it is its value.
      const before = i === 0 ? undefined : o[i - 1];
      const name = (pairs && (i & 1) === 1) || (typeof before === 'string' && before.charCodeAt(0) === 45 && before.charCodeAt(1) === 45) ? before : undefined;
      const next = typeof name === 'string' && name.length <= MAX_TEXT_KEY && this.keys.isSecret(name) ? this.secretKeyed(val, name) : this.walk(val, depth + 1);
      if (out === undefined) {
        if (Object.is(next, val)) continue;
        out = o.slice(0, i);
      }
      out.push(next);
    }
    return out ?? o;
  }

  /** Walks a converted stand-in for `original`, keeping `original` on the cycle stack. */
  private walkConverted(original: object, converted: unknown, depth: number): unknown {
    ancestors.push(original);
    try {
      return this.walk(converted, depth);
    } finally {
      ancestors.pop();
    }
  }

  private walkSpecial(o: object, depth: number): unknown {
    try {
      if (o instanceof Date) return Number.isNaN(o.getTime()) ? 'Invalid Date' : o.toISOString();
      if (ArrayBuffer.isView(o) || o instanceof ArrayBuffer || o instanceof SharedArrayBuffer) {
        return `[BINARY ${o.byteLength} bytes]`;
      }
      if (o instanceof Map) {
        const plain: Record<string, unknown> = {};
        for (const [k, v] of o) setOwn(plain, typeof k === 'string' ? k : String(k), v);
        return this.walkConverted(o, plain, depth);
      }
      if (o instanceof Set) return this.walkConverted(o, Array.from(o), depth);
      if (o instanceof Error) {
        const plain: Record<string, unknown> = { name: o.name, message: o.message };
        if (o.stack !== undefined) plain['stack'] = o.stack;
        if (o.cause !== undefined) plain['cause'] = o.cause;
        for (const key of Object.keys(o)) setOwn(plain, key, (o as unknown as Record<string, unknown>)[key]);
        return this.walkConverted(o, plain, depth);
      }
      if (o instanceof RegExp) return this.strings.redactString(String(o), depth);
      if (o instanceof String || o instanceof Number || o instanceof Boolean) return this.walk(o.valueOf(), depth);
      const toJSON = (o as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        const json: unknown = toJSON.call(o);
        if (json !== o) return this.walkConverted(o, json, depth);
      }
      // Any other class instance: its own enumerable fields, as JSON.stringify would see them.
      return this.walkPlain(o as Record<string, unknown>, depth);
    } catch {
      return UNREADABLE;
    }
  }
}
