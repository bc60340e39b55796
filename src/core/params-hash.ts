/**
 * A stable fingerprint of a call's arguments: the same arguments in any key order give the same
 * hash. Used to spot an agent repeating itself (loops, blind retries), so it must be cheap (it
 * runs on every call) rather than cryptographic; the input is already redacted.
 *
 * The structure is hashed directly, without building a canonical JSON string first: two
 * 32-bit multiply-xor lanes (the cyrb53 construction) fed with type tags, lengths and
 * characters, object keys in sorted order. Lengths make the encoding prefix-free, so values
 * cannot collide by smuggling delimiters inside strings.
 */

// The two lanes live in a typed array: module-level `let` bindings are slower to update in a
// hot loop (every access goes through the module context with a TDZ check).
const lanes = new Int32Array(2);

function mixCode(code: number): void {
  lanes[0] = Math.imul(lanes[0]! ^ code, 2654435761);
  lanes[1] = Math.imul(lanes[1]! ^ code, 1597334677);
}

function mixString(text: string): void {
  let a = Math.imul(lanes[0]! ^ text.length, 2654435761);
  let b = Math.imul(lanes[1]! ^ text.length, 1597334677);
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 2654435761);
    b = Math.imul(b ^ code, 1597334677);
  }
  lanes[0] = a;
  lanes[1] = b;
}

const TAG = { null: 1, false: 2, true: 3, number: 4, string: 5, array: 6, object: 7, other: 8 } as const;

function walk(value: unknown, depth: number): void {
  switch (typeof value) {
    case 'string':
      mixCode(TAG.string);
      mixString(value);
      return;
    case 'number':
      mixCode(TAG.number);
      mixString(String(value));
      return;
    case 'boolean':
      mixCode(value ? TAG.true : TAG.false);
      return;
    case 'bigint':
      mixCode(TAG.number);
      mixString(value.toString());
      return;
    case 'object':
      break;
    default:
      mixCode(TAG.null);
      return;
  }
  if (value === null || depth > 64) {
    mixCode(TAG.null);
    return;
  }
  if (Array.isArray(value)) {
    mixCode(TAG.array);
    mixCode(value.length);
    for (const item of value) walk(item, depth + 1);
    return;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    walk((value as { toJSON(): unknown }).toJSON(), depth + 1);
    return;
  }
  const keys = Object.keys(value);
  if (keys.length > 1) sortKeys(keys);
  mixCode(TAG.object);
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    mixString(key);
    walk(v, depth + 1);
  }
  mixCode(TAG.other);
}

// Argument objects have a handful of keys: an inline insertion sort beats Array#sort's
// comparator calls at that size.
function sortKeys(keys: string[]): void {
  if (keys.length > 12) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
}

/** The hex digit characters of 0..15. */
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
/** The hash's text is written here and read out as one flat string (a concatenation is a rope every reader flattens again). */
const text = Buffer.alloc(16);

function putHex32(at: number, n: number): void {
  for (let i = 7; i >= 0; i--) {
    text[at + i] = HEX_DIGITS[n & 0xf]!;
    n >>>= 4;
  }
}

/** 16 hex digits identifying the value's content, independent of key order. */
export function paramsHash(params: unknown): string {
  lanes[0] = 0xdeadbeef;
  lanes[1] = 0x41c6ce57;
  walk(params, 0);
  const h1 = lanes[0]!;
  const h2 = lanes[1]!;
  const a = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  const b = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  putHex32(0, b);
  putHex32(8, a);
  return text.toString('latin1', 0, 16);
}

/**
 * JSON with object keys sorted at every level (for display, export and the correction memory's
 * recovery keys). Strings are built by appending, and keys already in order are not sorted again:
 * about a third faster than mapping and joining, for the runtime computes one per correction.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return canonicalJson((value as { toJSON(): unknown }).toJSON());
  const keys = Object.keys(value);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}
