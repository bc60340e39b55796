/**
 * Redaction: runs on every record before it leaves the process (store, export, listeners), so it
 * sits on the hot path of every tool call. Two kinds of rule:
 *
 * - **Key rules.** A value under a secret key name (`password`, `api_key`, `set-cookie`, …) is
 *   replaced whole. They apply to object keys, to JSON held inside strings, and to `key=value` /
 *   `key: value` pairs in free text.
 * - **Value rules.** Secret-shaped substrings (provider API keys, JWTs, auth headers, PEM keys,
 *   URL passwords, e-mail addresses, China mobile and resident ID numbers, payment cards) are
 *   masked wherever they appear, keeping enough shape to debug (`sk-proj-…[REDACTED]`).
 *
 * Speed comes from doing nothing for clean input: one byte pass over each string raises flags for
 * what it might hold, only flagged rules run, and `value()` hands back the very same reference when
 * nothing changed, so callers can skip copies.
 */
import type { ToolExecutionRecord } from '../core/record-types.js';
import {
  BUILTIN_RULES,
  F_AT,
  F_CLI,
  F_DIGITS,
  F_HEX_RUN,
  F_KEY,
  F_MORE,
  F_PROVIDER_WORD,
  F_WIDE_DIGITS,
  REDACTED,
  SECOND_LOOK_FLAGS,
  SECRET_KEY_PARTS,
  TRIGGER_TRIGRAMS,
  isBuiltinSecretKey,
  isPlaceholder,
  isPlaceholderToken,
  normalizeKey,
  type RedactionRule,
} from './redact-rules.js';

export { BUILTIN_RULES, REDACTED, type RedactionRule } from './redact-rules.js';

/** Options for {@link createRedactor}. */
export interface RedactOptions {
  /** Default true. False makes every method return its input untouched. */
  enabled?: boolean;
  /**
   * Extra secret key names. Strings match the whole key case-insensitively after removing `-`,
   * `_` and spaces (`'x-tenant-key'` matches `X_Tenant_Key` and `xTenantKey`); RegExps are tested
   * against the raw key, case-insensitively. RegExp keys make every string holding a `:` or `=` go
   * through key scanning, which costs more on large outputs.
   */
  keys?: readonly (string | RegExp)[];
  /** Key names never treated as secret (compared like string `keys`). Value rules still apply. */
  allowKeys?: readonly string[];
  /** Extra value rules, applied after the built-ins, to strings of any length. */
  rules?: readonly RedactionRule[];
  /** Default 32. Objects nested deeper are replaced by `[TRUNCATED_DEPTH]`. */
  maxDepth?: number;
}

/** Removes secrets from values, text and whole records. Never throws and never mutates input. */
export interface Redactor {
  /**
   * Deep-redacts objects, arrays and strings (including JSON held in strings). Returns the same
   * reference when nothing needed changing. Values JSON cannot hold are converted: Dates to ISO
   * strings, binary to `[BINARY n bytes]`, Maps and Sets to objects and arrays, BigInts to strings,
   * functions to `[FUNCTION]`, cycles to `[CIRCULAR]`; so the result is typed `T` for convenience.
   * @example redactor.value({ user: 'ann', password: 'hunter2' }) // { user: 'ann', password: '[REDACTED]' }
   */
  value<T>(value: T, found?: FoundSecrets): T;
  /**
   * Redacts free text (messages, stacks, raw output): value rules plus `key=value` pairs. When the
   * whole string is JSON and something in it is secret, it is redacted value by value and
   * re-serialized, so it stays valid JSON; text that does not parse (truncated) is redacted in place.
   * @example redactor.text('Authorization: Bearer 9f8e7d6c5b4a39281706') // 'Authorization: Bearer [REDACTED]'
   */
  text(value: string, found?: FoundSecrets): string;
  /**
   * Redacts every text field of a record: input_params, raw_output, error_message, error_stack,
   * context_snapshot, feedback, fault.params, fallback.reason; then scrubs each secret found in one
   * of them from all of them (see {@link Redactor.scrubRecord}). Returns the same record when
   * nothing changed, otherwise a shallow copy with the changed fields.
   */
  record(record: ToolExecutionRecord): ToolExecutionRecord;
  /**
   * Replaces every occurrence of the found secrets (as written, JSON-escaped or percent-encoded)
   * in the strings inside `value` (object keys and non-strings stay). A secret is replaced only
   * where it stands alone, not inside a longer word. The same reference when nothing changed.
   * @example
   * const found: FoundSecrets = [];
   * const args = redactor.value({ password: 'hunter2!' }, found);
   * redactor.scrub('login failed for password hunter2!', found) // 'login failed for password [REDACTED]'
   */
  scrub<T>(value: T, found: FoundSecrets): T;
  /**
   * {@link Redactor.scrub} over a record whose fields are already redacted: every free-text field
   * (input_params, raw_output, error_message, error_stack, context_snapshot, feedback, fault.params,
   * fallback.reason). The same record when `found` is empty or nothing changed.
   */
  scrubRecord(record: ToolExecutionRecord, found: FoundSecrets): ToolExecutionRecord;
  /**
   * Whether a value under this key name is replaced whole (built-in and custom `keys`, minus
   * `allowKeys`), for callers that hold a value apart from its key, such as a validation issue's
   * path and the value it quotes.
   * @example redactor.isSecretKey('X-Api-Key') // true
   */
  isSecretKey(key: string): boolean;
}

/**
 * The secret values redaction found while it redacted one record's fields (a value under a secret
 * key, the hidden part of a token), for {@link Redactor.scrub} to remove from its other fields.
 * Pass the same array to each call for one record. Only values of six characters or more are kept.
 */
export type FoundSecrets = string[];

const TRUNCATED_DEPTH = '[TRUNCATED_DEPTH]';
const CIRCULAR = '[CIRCULAR]';
const FUNCTION = '[FUNCTION]';
const SYMBOL = '[SYMBOL]';
/** A getter or proxy threw while being read. */
const UNREADABLE = '[UNREADABLE]';
const DEFAULT_MAX_DEPTH = 32;
/** Built-in rules never match fewer characters than this, so shorter strings skip the scan. */
const MIN_SCAN_LENGTH = 6;
/** Key classifications are memoised; a runaway set of distinct keys just starts the memo over. */
const KEY_CACHE_LIMIT = 4096;

// ---------------------------------------------------------------------------------------------
// Pre-filter. One pass per string looks up each trigram, over a 32-letter alphabet (letters
// case-folded, any digit, `-` and `_` as one, `@`, `.`, the URL delimiters `?`, `&` and `#` and
// the `;` of `&amp;` as one, everything else), in a table of flags for
// possible token prefixes and secret key names; `@` flags e-mails and URL passwords; three digits
// in a row send the string to a sparse probe for runs long enough for phones, IDs and cards; a
// less common token prefix sends it to a second look that tells which (F_MORE).
// A regex alternation over all of this costs several times more in V8, and reading bytes is
// cheaper than charCodeAt, so strings past a few words are encoded to UTF-8 first.

/** The alphabet letter of each byte; 0 for anything the rules do not key on. */
const LETTER = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  if (c >= 97 && c <= 122) LETTER[c] = c - 96;
  else if (c >= 65 && c <= 90) LETTER[c] = c - 64;
  else if (c >= 48 && c <= 57) LETTER[c] = 27;
  else if (c === 45 || c === 95) LETTER[c] = 28;
  else if (c === 64) LETTER[c] = 29;
  else if (c === 46) LETTER[c] = 30;
  // Apart from a space, so `?code=` in a URL (or `&amp;code=` in HTML) is told from `error code=`
  // in prose.
  else if (c === 63 || c === 38 || c === 35 || c === 59) LETTER[c] = 31;
}
const DIGIT_LETTER = 27;
const AT_LETTER = 29;
const TRIGRAM_MASK = 0x7fff;
/** Internal: three digits in a row, confirmed by a digit-run probe before it becomes F_DIGITS. */
const DIGIT_TRIPLE = 1 << 15;

/** Table index of the trigram at `at`, or -1 if it has a character outside the alphabet. */
function trigramIndex(text: string, at: number): number {
  let index = 0;
  for (let i = at; i < at + 3; i++) {
    const c = text.charCodeAt(i);
    const letter = c < 128 ? LETTER[c]! : 0;
    if (letter === 0) return -1;
    index = (index << 5) | letter;
  }
  return index;
}

const BASE_TRIGRAMS = new Uint16Array(TRIGRAM_MASK + 1);
/** The second look's table (see F_MORE): its flags shifted down by {@link SECOND_LOOK_SHIFT}. */
const MORE_TRIGRAMS = new Uint8Array(TRIGRAM_MASK + 1);
const SECOND_LOOK_SHIFT = 16;
/** Table index of a built-in trigger trigram, where a space stands for any character outside the alphabet. */
function triggerIndex(trigram: string): number {
  let index = 0;
  for (let i = 0; i < 3; i++) {
    const c = trigram.charCodeAt(i);
    const letter = c === 32 ? 0 : LETTER[c]!;
    if (c !== 32 && letter === 0) throw new Error(`trigger trigram ${JSON.stringify(trigram)} has a character outside the alphabet`);
    index = (index << 5) | letter;
  }
  return index;
}
for (const [trigram, flags] of TRIGGER_TRIGRAMS) {
  const index = triggerIndex(trigram);
  const more = flags & SECOND_LOOK_FLAGS;
  BASE_TRIGRAMS[index]! |= (flags & ~SECOND_LOOK_FLAGS) | (more === 0 ? 0 : F_MORE);
  MORE_TRIGRAMS[index]! |= more >>> SECOND_LOOK_SHIFT;
}
BASE_TRIGRAMS[(DIGIT_LETTER << 10) | (DIGIT_LETTER << 5) | DIGIT_LETTER]! |= DIGIT_TRIPLE;
for (let i = 0; i < 1 << 10; i++) BASE_TRIGRAMS[(i << 5) | AT_LETTER]! |= F_AT;

/** Built-in key names outside the trigram alphabet (Chinese), looked for only in non-ASCII text. */
const NON_ASCII_KEY_HINT = new RegExp(SECRET_KEY_PARTS.filter((part) => /[^\x00-\x7f]/.test(part)).join('|'));
/**
 * Eleven full-width digits (the shortest phone), the first three together as in every phone and
 * ID, single separators allowed after them. Leading with three digits keeps the search fast.
 */
const WIDE_DIGIT_RUN = /[０-９]{3}(?:[\u3000 －-]?[０-９]){8}/;
/** Either of the two, so clean non-ASCII text pays for one search rather than two. */
const NON_ASCII_HINT = new RegExp(`${NON_ASCII_KEY_HINT.source}|${WIDE_DIGIT_RUN.source}`);

const SHORT_SCAN = 24;
const SCAN_BUFFER = new Uint8Array(4096);
const ENCODER = new TextEncoder();

function scan(s: string, trigrams: Uint16Array): number {
  let flags = 0;
  let t = 0;
  let wide = false;
  // Bytes of the string when it fit one buffer load, so the digit probe can read bytes too.
  let single = -1;
  const n = s.length;
  if (n <= SHORT_SCAN) {
    let any = 0;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      any |= c;
      t = ((t << 5) | (c < 128 ? LETTER[c]! : 0)) & TRIGRAM_MASK;
      flags |= trigrams[t]!;
    }
    wide = any > 127;
  } else {
    let rest = s;
    for (;;) {
      const { read, written } = ENCODER.encodeInto(rest, SCAN_BUFFER);
      if (written !== read) wide = true;
      for (let i = 0; i < written; i++) {
        t = ((t << 5) | LETTER[SCAN_BUFFER[i]!]!) & TRIGRAM_MASK;
        flags |= trigrams[t]!;
      }
      if (read >= rest.length) {
        if (rest === s) single = written;
        break;
      }
      rest = rest.slice(read);
    }
  }
  if ((flags & F_MORE) !== 0) flags = (flags & ~F_MORE) | secondLook(s, single);
  if ((flags & DIGIT_TRIPLE) !== 0) {
    flags &= ~DIGIT_TRIPLE;
    if (single >= 0 ? hasDigitRunInBuffer(single) : hasDigitRun(s)) flags |= F_DIGITS;
    if (n >= MIN_HEX_PAIR && hasHexRun(s)) flags |= F_HEX_RUN;
  }
  if (wide && NON_ASCII_HINT.test(s)) {
    if ((flags & F_KEY) === 0 && NON_ASCII_KEY_HINT.test(s)) flags |= F_KEY;
    if (WIDE_DIGIT_RUN.test(s)) flags |= F_WIDE_DIGITS;
  }
  return flags;
}

/**
 * Which less common token prefixes the string holds: the scan again, over the bytes still in the
 * buffer when `bytes` is not -1, with the second look's table. Only strings with such a prefix pay.
 */
function secondLook(s: string, bytes: number): number {
  let more = 0;
  let t = 0;
  if (bytes >= 0) {
    for (let i = 0; i < bytes; i++) {
      t = ((t << 5) | LETTER[SCAN_BUFFER[i]!]!) & TRIGRAM_MASK;
      more |= MORE_TRIGRAMS[t]!;
    }
  } else {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      t = ((t << 5) | (c < 128 ? LETTER[c]! : 0)) & TRIGRAM_MASK;
      more |= MORE_TRIGRAMS[t]!;
    }
  }
  return more << SECOND_LOOK_SHIFT;
}

/** 2 for a digit, 1 for a space or dash (they may sit inside a phone or card number), else 0. */
const RUN_BYTE = new Uint8Array(256);
for (let c = 48; c <= 57; c++) RUN_BYTE[c] = 2;
RUN_BYTE[32] = 1;
RUN_BYTE[45] = 1;

/**
 * Whether some run of digits, spaces and dashes holds 11 or more digits (the shortest phone).
 * Any such run spans 11 bytes, so probing every 11th byte finds it.
 */
function hasDigitRunInBuffer(length: number): boolean {
  for (let i = 10; i < length; i += 11) {
    if (RUN_BYTE[SCAN_BUFFER[i]!] === 0) continue;
    let digits = 0;
    for (let j = i; j >= 0; j--) {
      const r = RUN_BYTE[SCAN_BUFFER[j]!]!;
      if (r === 0) break;
      digits += r >> 1;
    }
    for (let j = i + 1; j < length; j++) {
      const r = RUN_BYTE[SCAN_BUFFER[j]!]!;
      if (r === 0) break;
      digits += r >> 1;
    }
    if (digits >= 11) return true;
  }
  return false;
}

function isRunChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 32 || c === 45;
}

/** {@link hasDigitRunInBuffer} over the string's characters, for strings too long for one load. */
function hasDigitRun(s: string): boolean {
  const n = s.length;
  for (let i = 10; i < n; i += 11) {
    if (!isRunChar(s.charCodeAt(i))) continue;
    let digits = 0;
    for (let j = i; j >= 0; j--) {
      const c = s.charCodeAt(j);
      if (!isRunChar(c)) break;
      if (c >= 48) digits++;
    }
    for (let j = i + 1; j < n; j++) {
      const c = s.charCodeAt(j);
      if (!isRunChar(c)) break;
      if (c >= 48) digits++;
    }
    if (digits >= 11) return true;
  }
  return false;
}

/** A Twilio account SID and its auth token with one separator: `AC`, 32 hex digits, `:`, 32 more. */
const MIN_HEX_PAIR = 67;
const HEX_RUN = 32;
const IS_HEX = new Uint8Array(128);
for (const c of '0123456789abcdefABCDEF') IS_HEX[c.charCodeAt(0)] = 1;

function isHex(c: number): boolean {
  return c < 128 && IS_HEX[c] === 1;
}

/** Whether some run of 32 or more hex digits is in `s`; any such run covers every 32nd character. */
function hasHexRun(s: string): boolean {
  const n = s.length;
  for (let i = HEX_RUN - 1; i < n; i += HEX_RUN) {
    if (!isHex(s.charCodeAt(i))) continue;
    let start = i;
    while (start > 0 && isHex(s.charCodeAt(start - 1))) start--;
    let end = i + 1;
    while (end < n && isHex(s.charCodeAt(end))) end++;
    if (end - start >= HEX_RUN) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Key/value pairs in text.

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Characters of an unquoted key: ASCII word characters, `$ . -`, and letters of other scripts. */
function isKeyChar(c: number): boolean {
  if (c < 128) {
    return (
      (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c === 46 || c === 45
    );
  }
  return (
    (c >= 0xc0 && c <= 0x24f) ||
    (c >= 0x370 && c <= 0x52f) ||
    (c >= 0x3040 && c <= 0x30ff) ||
    (c >= 0x3400 && c <= 0x9fff) ||
    (c >= 0xac00 && c <= 0xd7af)
  );
}

/** The characters an assignment operator may start with before its `=` (see KeyCursor). */
function isOperatorChar(c: number): boolean {
  return c === 58 || c === 63 || c === 46 || c === 43 || c === 124 || c === 38;
}

/** Type names that stand between a variable and its `=` in typed declarations. */
const TYPE_WORDS = new Set(['string', 'String', 'str', 'char', 'byte', 'bytes', 'Text', 'CharSequence', 'SecretStr', 'SecureString', 'Secret', 'any', 'Object', 'object']);

const MAX_TEXT_KEY = 64;
/** The keys that name the other field of a name/value pair object. */
const PAIR_NAME_KEYS = new Set(['name', 'Name', 'key', 'Key']);
/** Pair objects are small; larger objects are not looked at as pairs. */
const MAX_PAIR_KEYS = 6;

/**
 * Walks the `key: value`, `key=value`, `key => value`, `"key": value` and `\"key\": value` pairs of
 * a text. It jumps from separator to separator with indexOf and reads the key backwards, which is
 * several times cheaper than a key-matching regex on text that has few separators.
 */
class KeyCursor {
  keyStart = 0;
  keyEnd = 0;
  /** `"`, `'`, `\"`, `\'` or empty: how the key was quoted. */
  quote = '';
  /** Whether the separator was a colon (headers), not `=`. */
  colon = false;
  valueStart = 0;
  private colonAt: number;
  private equalsAt: number;
  private wideAt: number;

  constructor(private readonly s: string) {
    this.colonAt = s.indexOf(':');
    this.equalsAt = s.indexOf('=');
    this.wideAt = s.indexOf('\uff1a');
  }

  /** Continue from `index`, skipping separators inside a value already handled. */
  skipTo(index: number): void {
    if (this.colonAt !== -1 && this.colonAt < index) this.colonAt = this.s.indexOf(':', index);
    if (this.equalsAt !== -1 && this.equalsAt < index) this.equalsAt = this.s.indexOf('=', index);
    if (this.wideAt !== -1 && this.wideAt < index) this.wideAt = this.s.indexOf('\uff1a', index);
  }

  next(): boolean {
    const s = this.s;
    for (;;) {
      let p = -1;
      if (this.colonAt !== -1) p = this.colonAt;
      if (this.equalsAt !== -1 && (p === -1 || this.equalsAt < p)) p = this.equalsAt;
      if (this.wideAt !== -1 && (p === -1 || this.wideAt < p)) p = this.wideAt;
      if (p === -1) return false;
      const sep = s.charCodeAt(p);
      if (p === this.colonAt) this.colonAt = s.indexOf(':', p + 1);
      else if (p === this.equalsAt) this.equalsAt = s.indexOf('=', p + 1);
      else this.wideAt = s.indexOf('\uff1a', p + 1);

      let valueStart = p + 1;
      const before = s.charCodeAt(p - 1);
      const after = s.charCodeAt(p + 1);
      // Where the assignment operator starts: `:=`, `::=`, `:::=` (Go, Makefiles), `?=`, `.=`
      // (PHP), `+=`, `||=`, `??=` end in `=`, and their first characters are not the key's last.
      let opStart = p;
      if (sep === 61) {
        // `==`, `!=`, `<=`, `>=` compare; `=>` assigns.
        if (after === 61 || before === 61 || before === 33 || before === 60 || before === 62) continue;
        if (after === 62) valueStart++;
        while (opStart > p - 3 && isOperatorChar(s.charCodeAt(opStart - 1))) opStart--;
      } else if (sep === 58) {
        // `::` paths and `scheme://` are not pairs; `:=` is read at its `=`.
        if (after === 58 || before === 58 || after === 61 || (after === 47 && s.charCodeAt(p + 2) === 47)) continue;
      }

      let j = opStart - 1;
      while (j >= 0 && isSpace(s.charCodeAt(j))) j--;
      // `$config['password'] = …`, `env["API_TOKEN"] = …`: the key is the quoted index.
      if (s.charCodeAt(j) === 93 && (s.charCodeAt(j - 1) === 34 || s.charCodeAt(j - 1) === 39)) j--;
      const q = s.charCodeAt(j);
      let keyStart: number;
      let keyEnd: number;
      let quote = '';
      if (q === 34 || q === 39 || q === 96) {
        const escaped = s.charCodeAt(j - 1) === 92;
        keyEnd = escaped ? j - 1 : j;
        let k = keyEnd - 1;
        const limit = Math.max(0, keyEnd - MAX_TEXT_KEY - 1);
        while (k >= limit && s.charCodeAt(k) !== q && s.charCodeAt(k) !== 10) k--;
        if (k < limit || s.charCodeAt(k) !== q) continue;
        if (escaped !== (s.charCodeAt(k - 1) === 92)) continue;
        keyStart = k + 1;
        quote = escaped ? `\\${s[j]!}` : s[j]!;
      } else {
        keyEnd = j + 1;
        while (j >= 0 && isKeyChar(s.charCodeAt(j))) j--;
        keyStart = j + 1;
        if (keyEnd - keyStart > MAX_TEXT_KEY) continue;
        // A typed declaration names its variable before the type: `var apiToken string = …`,
        // `val apiToken: String = …`, `let token: &str = …`.
        if (keyEnd > keyStart && TYPE_WORDS.has(s.slice(keyStart, keyEnd))) {
          let k = keyStart - 1;
          while (k >= 0 && (s.charCodeAt(k) === 32 || s.charCodeAt(k) === 9 || s.charCodeAt(k) === 38 || s.charCodeAt(k) === 42)) k--;
          if (s.charCodeAt(k) === 58) k--;
          while (k >= 0 && (s.charCodeAt(k) === 32 || s.charCodeAt(k) === 9)) k--;
          const end = k + 1;
          while (k >= 0 && isKeyChar(s.charCodeAt(k))) k--;
          if (end > k + 1 && end - k - 1 <= MAX_TEXT_KEY) {
            keyStart = k + 1;
            keyEnd = end;
          }
        }
      }
      if (keyEnd <= keyStart) continue;
      // `https://token:…@host` is a URL's user and password, not a pair: the url-credentials rule
      // masks the password alone and keeps the host; as a pair the value would run over the host.
      if (sep === 58 && quote === '' && keyStart >= 3 && s.startsWith('://', keyStart - 3)) continue;
      while (valueStart < s.length && (s.charCodeAt(valueStart) === 32 || s.charCodeAt(valueStart) === 9)) {
        valueStart++;
      }
      this.keyStart = keyStart;
      this.keyEnd = keyEnd;
      this.quote = quote;
      this.colon = sep !== 61;
      this.valueStart = valueStart;
      return true;
    }
  }
}

// Booleans are never secret (one bit hides nothing), like the absent values; nor are the `0` and
// `1` that INI files, the registry and `.env` files write for them (`SavePassword=0`).
const NOT_REDACTED_BARE = new Set(['null', 'undefined', 'None', 'nil', 'true', 'false', 'True', 'False', '0', '1']);
/** `<password>…</password>`, the key/value pair of XML and SOAP bodies. */
const XML_ELEMENT = /<([A-Za-z_][\w.:-]{0,63})(?:\s[^<>]*)?>([^<]{1,4096})<\/\1>/g;
/**
 * A `key=value` pair percent-encoded inside a URL (`redirect=https%3A%2F%2Fx%2F%3Faccess_token%3D…`),
 * or encoded twice (`%253Faccess_token%253D…`): the value runs to the next encoded or plain `&`,
 * `=`, space or line break, or the end of the URL. The name starts after an escape, so `%3Fsig`
 * is `sig`, not `Fsig`.
 */
const ENCODED_PAIR =
  /(?<=%(?:25)?[0-9A-Fa-f]{2}|^|[^\w.%-])([A-Za-z][\w.-]{0,63})(%(?:25)?3[Dd])((?:(?!%(?:25)?(?:26|3[Dd]|20|0[9AaDd]))[^&\s"'<>#\\])+)/g;
/** A query parameter whose value holds percent escapes (see redactEncodedQuery). */
const ENCODED_QUERY_VALUE = /([?&;][A-Za-z0-9_.~[\]-]{1,64}=)([^&#\s"<>\\]*%[0-9A-Fa-f]{2}[^&#\s"<>\\]*)/g;
const ENCODED_MASK = /%5BREDACTED%5D/g;
/** A call's first two arguments, both quoted: `setProperty("DB_PASSWORD", "…")`. */
const CALL_PAIR = /\(\s*(["'])([A-Za-z0-9_.\- ]{1,64})\1\s*,\s*(["'])((?:\\.|(?!\3)[^\\\n]){1,4096})\3/g;
/** The first argument of a {@link CALL_PAIR}, also with its quotes escaped inside a JSON string. */
const CALL_KEY = /\(\s*\\?(["'])([A-Za-z0-9_.\- ]{1,64})\\?\1\s*,/g;
/** A long option quoted as one item of an argv list: `"--password", "…"`. */
const ARGV_SECRET_FLAG = /["']--([A-Za-z][\w-]{1,40})\\?["']\s*,/g;
/** `kind: Secret` where the text may be JSON with the manifest escaped inside a string. */
const K8S_SECRET_HINT = /kind\\?["']?[ \t]*:[ \t]*\\?["']?secret(?![\w-])/i;
/** A Kubernetes `kind: Secret` manifest in YAML text, whose `data:` values are all secret whatever their names. */
const K8S_SECRET_KIND = /^[ \t]*["']?kind["']?[ \t]*:[ \t]*["']?secret["']?[ \t]*\r?$/im;
const K8S_DATA_BLOCK = /^([ \t]*)["']?(?:data|stringData)["']?[ \t]*:[ \t]*\r?\n/gm;
const YAML_BLOCK_INDICATOR = /^[|>][-+0-9]*$/;
const YAML_DOCUMENT_END = /^---/gm;

/** The text a base64 value decodes to, when it is printable; else the value itself. */
function decodeBase64(value: string): string {
  if (value.length > 256 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return value;
  const decoded = Buffer.from(value, 'base64').toString('latin1').trim();
  return /^[\x20-\x7e]*$/.test(decoded) ? decoded : value;
}

/**
 * The values of a Secret manifest's `data:` and `stringData:` blocks masked: each `name: value`
 * one level in, and the lines of a block scalar (`.dockercfg: |`). Placeholders stay.
 */
function redactSecretData(s: string): string {
  let out = '';
  let last = 0;
  const mask = (start: number, end: number, quoted: boolean): void => {
    const inner = s.slice(quoted ? start + 1 : start, quoted ? end - 1 : end);
    if (isPlaceholder(inner)) return;
    // `YmFyCg==` is `bar`: a short value that decodes to a placeholder is one.
    const decoded = decodeBase64(inner);
    if (decoded !== inner && decoded.length <= 24 && isPlaceholder(decoded)) return;
    found(inner);
    out += s.slice(last, start) + (quoted ? `${s[start]!}${REDACTED}${s[start]!}` : REDACTED);
    last = end;
  };
  K8S_DATA_BLOCK.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = K8S_DATA_BLOCK.exec(s)) !== null) {
    // Only the data of the YAML document (between `---` lines) that is the Secret.
    const docStart = s.lastIndexOf('\n---', m.index) + 1;
    YAML_DOCUMENT_END.lastIndex = m.index;
    const docEnd = YAML_DOCUMENT_END.exec(s)?.index ?? s.length;
    if (!K8S_SECRET_KIND.test(s.slice(docStart, docEnd))) continue;
    const indent = m[1]!.length;
    let entryIndent = -1;
    let at = m.index + m[0].length;
    while (at < s.length) {
      const eol = s.indexOf('\n', at);
      const lineEnd = eol === -1 ? s.length : eol;
      let lead = at;
      while (lead < lineEnd && (s.charCodeAt(lead) === 32 || s.charCodeAt(lead) === 9)) lead++;
      let end = lineEnd;
      while (end > lead && s.charCodeAt(end - 1) <= 32) end--;
      if (end === lead || s.charCodeAt(lead) === 35) {
        at = lineEnd + 1;
        continue;
      }
      if (lead - at <= indent) break;
      if (entryIndent === -1) entryIndent = lead - at;
      if (lead - at > entryIndent) {
        mask(lead, end, false);
      } else {
        const colon = s.indexOf(':', lead);
        if (colon !== -1 && colon < end) {
          let v = colon + 1;
          while (v < end && (s.charCodeAt(v) === 32 || s.charCodeAt(v) === 9)) v++;
          const first = s.charCodeAt(v);
          if (v < end && !YAML_BLOCK_INDICATOR.test(s.slice(v, end))) mask(v, end, (first === 34 || first === 39) && end - v >= 2);
        }
      }
      at = lineEnd + 1;
    }
    K8S_DATA_BLOCK.lastIndex = Math.max(K8S_DATA_BLOCK.lastIndex, at);
  }
  return last === 0 ? s : out + s.slice(last);
}

/** The rest of a line, then a `value:` line (YAML name/value pairs), after a bare pair name; also as JSON string text (`\\n`, `\\"`). */
const VALUE_LINE = /([ \t]*(?:\r?\n|\\(?:r\\)?n)[ \t]*[Vv]alue[ \t]*:[ \t]*)(?:(\\?["'])([^"'\\\r\n]{0,4096})\2|([^\s"'#\\][^\r\n\\]{0,4095}?))[ \t]*(?=\r?\n|\\[rn"]|"|$)/y;

function valueLineAt(s: string, at: number): RegExpExecArray | null {
  VALUE_LINE.lastIndex = at;
  return VALUE_LINE.exec(s);
}

/** A bare pair name and the `value:` line under it, in text or in JSON string text. */
const NAME_VALUE_PAIR = /(?:^|[\s"'-])(?:[Nn]ame|[Kk]ey)[ \t]*:[ \t]*([\w.-]{2,128})[ \t]*(?:\r?\n|\\(?:r\\)?n)[ \t]*[Vv]alue[ \t]*:/g;

/**
 * Whether text holds YAML name/value pairs under a secret name, also inside a JSON string
 * (`"- name: API_TOKEN\\n  value: …"`), which the key walk does not enter.
 */
function hasSecretNameValuePair(s: string, isSecretKey: (key: string) => boolean): boolean {
  if (!s.includes('alue')) return false;
  NAME_VALUE_PAIR.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = NAME_VALUE_PAIR.exec(s)) !== null) if (isSecretKey(m[1]!)) return true;
  return false;
}

/** Where a bare pair name (`API_TOKEN`, `db.password`) ends. */
function bareNameEnd(s: string, at: number): number {
  let i = at;
  while (i < s.length && i - at <= MAX_BARE_NAME && /[\w.-]/.test(s[i]!)) i++;
  return i;
}
const MAX_BARE_NAME = 128;

/** The `value="…"` attribute after a `key="…"` or `name="…"` one, in the same tag. */
const VALUE_ATTRIBUTE = /(\s+[Vv]alue\s*=\s*)(["'])((?:(?!\2)[^\n]){1,4096})\2/y;
/**
 * Values that carry spaces run to the end of the line after a colon: header values with `;`
 * (`Cookie: a=1; b=2`) and pass phrases (`password: correct horse battery`).
 */
const PASS_PHRASE_SUFFIXES = ['password', 'passwd', 'passphrase', 'pwd'];
const HEADER_KEY_SUFFIXES = ['cookie', 'cookies', 'authorization', ...PASS_PHRASE_SUFFIXES];
const AUTH_SCHEME = /^([A-Za-z][\w-]*)[ \t]+\S/;

/** How a value in text is delimited, which decides what replaces it. */
const QUOTED = 0;
const STRUCTURED = 1;
const BARE = 2;

interface RuleRunner {
  pattern: RegExp;
  replacer: (match: string) => string;
}

/** Rules for personal data: a match is no credential to scrub elsewhere, nor a token with filler. */
const PERSONAL_DATA_RULES = new Set(['email', 'cn-resident-id', 'payment-card', 'cn-mobile', 'fullwidth-digits', 'private-key']);

const BUILTIN_RUNNERS: readonly (RuleRunner & { needs: number })[] = BUILTIN_RULES.map((rule) => {
  const { validate, mask } = rule;
  if (PERSONAL_DATA_RULES.has(rule.id)) {
    return { pattern: rule.pattern, needs: rule.needs, replacer: validate === undefined ? mask : (match: string) => (validate(match) ? mask(match) : match) };
  }
  return {
    pattern: rule.pattern,
    needs: rule.needs,
    replacer: (match: string, ...rest: unknown[]) => {
      if ((validate !== undefined && !validate(match)) || isPlaceholderToken(match, textAfter(match, rest))) return match;
      const masked = mask(match);
      if (collecting !== undefined) foundHidden(match, masked);
      return masked;
    },
  };
});

/** The few characters after a match, from the offset and whole string `replace` passes after the groups. */
function textAfter(match: string, rest: readonly unknown[]): string {
  let i = rest.length - 1;
  if (typeof rest[i] === 'object') i--;
  const whole = rest[i];
  const offset = rest[i - 1];
  if (typeof whole !== 'string' || typeof offset !== 'number') return '';
  const end = offset + match.length;
  return end >= whole.length ? '' : whole.slice(end, end + 4);
}

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

function found(value: string): void {
  if (collecting === undefined || value.length < MIN_SCRUB_LENGTH || value.length > MAX_SCRUB_LENGTH) return;
  if (value.includes(REDACTED) || isPlaceholder(value)) return;
  collecting.push(value);
}

/** The part of `match` its mask hid: what lies between the prefix and suffix both keep. */
function foundHidden(match: string, masked: string): void {
  let start = 0;
  while (start < match.length && start < masked.length && match.charCodeAt(start) === masked.charCodeAt(start)) start++;
  let end = 0;
  while (end < match.length - start && end < masked.length - start && match.charCodeAt(match.length - 1 - end) === masked.charCodeAt(masked.length - 1 - end)) end++;
  const hidden = match.slice(start, match.length - end).replace(/^["'\s]+|["'\s]+$/g, '');
  found(hidden);
}

function nextIsEquals(s: string, at: number): boolean {
  let i = at;
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  return s.charCodeAt(i) === 61;
}

function compileRule(rule: RedactionRule): RuleRunner {
  // Always a private copy, so the caller's lastIndex is never touched; sticky would stop at gaps.
  const flags = rule.pattern.flags.replace(/[gy]/g, '') + 'g';
  const pattern = new RegExp(rule.pattern.source, flags);
  const { validate, mask } = rule;
  const replacer = (match: string): string => {
    if (validate !== undefined) {
      let keep = false;
      try {
        keep = !validate(match);
      } catch {
        // A validator that breaks must not let its match through.
      }
      if (keep) return match;
    }
    if (mask === undefined) return REDACTED;
    try {
      const masked = mask(match);
      return typeof masked === 'string' ? masked : REDACTED;
    } catch {
      return REDACTED;
    }
  };
  return { pattern, replacer };
}

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** `value` percent-decoded (twice at most, as ENCODED_PAIR reads it), or as it is if that fails. */
function decodePercent(value: string): string {
  let out = value;
  for (let pass = 0; pass < 2 && out.includes('%'); pass++) {
    try {
      out = decodeURIComponent(out);
    } catch {
      break;
    }
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function looksLikeJson(s: string): boolean {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) <= 32) i++;
  const first = s.charCodeAt(i);
  if (first !== 123 && first !== 91) return false;
  let j = s.length - 1;
  while (j > i && s.charCodeAt(j) <= 32) j--;
  const last = s.charCodeAt(j);
  return last === 125 || last === 93;
}

const NOT_JSON = Symbol('not-json');

function parseJson(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return NOT_JSON;
  }
}

/** End of a quoted value starting at `at` (the quote); escapes counted so `\"` does not end it. */
function quotedEnd(s: string, at: number, quote: number, escapedLevel: boolean): number {
  for (let i = at + (escapedLevel ? 2 : 1); i < s.length; i++) {
    if (s.charCodeAt(i) !== quote) continue;
    let backslashes = 0;
    for (let j = i - 1; j >= at && s.charCodeAt(j) === 92; j--) backslashes++;
    // In JSON inside a JSON string the closing quote is `\"` (one backslash); `\\\"` is a quote
    // escaped inside the inner string.
    if (escapedLevel ? backslashes % 4 === 1 : backslashes % 2 === 0) return i + 1;
  }
  return s.length;
}

/** End of a `{…}` or `[…]` value, honoring strings; the rest of the text if it never closes. */
function structuredEnd(s: string, at: number): number {
  let depth = 0;
  let inString = false;
  for (let i = at; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return s.length;
}

function bareEnd(s: string, at: number, toLineEnd: boolean): number {
  let i = at;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10 || c === 13 || c === 34 || c === 92) break;
    if (toLineEnd) continue;
    // whitespace " ' , ; & ) } ] < >
    if (c <= 32 || c === 39 || c === 44 || c === 59 || c === 38 || c === 41 || c === 125 || c === 93) break;
    if (c === 60 || c === 62) break;
  }
  while (i > at && s.charCodeAt(i - 1) <= 32) i--;
  return i;
}

// ---------------------------------------------------------------------------------------------
// The redactor.

/** Objects being walked, to spot cycles; shared, since redaction is synchronous. */
const ancestors: object[] = [];

const PASSTHROUGH: Redactor = {
  value: <T>(value: T): T => value,
  text: (value: string): string => value,
  record: (record: ToolExecutionRecord): ToolExecutionRecord => record,
  scrub: <T>(value: T): T => value,
  scrubRecord: (record: ToolExecutionRecord): ToolExecutionRecord => record,
  isSecretKey: (): boolean => false,
};

/** `c` is an ASCII letter, digit or `_`: a secret next to one is part of a longer word. */
function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
}

/** A character JSON escapes, or percent-encoding changes (anything but `A-Za-z0-9-_.!~*'()`). */
const RESPELLED = /[^A-Za-z0-9\-_.!~*'()]/;

/** Found secrets as they may be written: distinct, longest first, raw, JSON-escaped, percent-encoded. */
function spellingsOf(found: readonly string[]): readonly string[] {
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

function scrubText(s: string, spellings: readonly string[]): string {
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
function scrubValue(v: unknown, spellings: readonly string[], depth: number): unknown {
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

/**
 * After `key="Password"` or `name="api.token"` (XML attributes, `<add key=… value=…/>`): the
 * end of the `value="…"` attribute that follows in the same tag, masked; -1 if there is none.
 */
function redactValueAttribute(s: string, at: number): { end: number; text: string } | undefined {
  VALUE_ATTRIBUTE.lastIndex = at;
  const m = VALUE_ATTRIBUTE.exec(s);
  if (m === null || isPlaceholder(m[3]!)) return undefined;
  found(m[3]!);
  return { end: at + m[0].length, text: `${m[1]!}${m[2]!}${REDACTED}${m[2]!}` };
}

/** After a bare `name: API_TOKEN`: the `value: …` line that follows, masked. */
function redactValueLine(s: string, at: number): { end: number; text: string } | undefined {
  const m = valueLineAt(s, at);
  if (m === null) return undefined;
  const [whole, lead] = m as unknown as [string, string];
  const quote = m[2] ?? '';
  const inner = m[3] ?? m[4] ?? '';
  if (inner === '' || inner === REDACTED || isPlaceholder(inner)) return undefined;
  found(inner);
  return { end: at + whole.length, text: `${lead}${quote}${REDACTED}${quote}` };
}

/**
 * Builds a redactor. Construction does the expensive part (compiling rules, key tables), so make
 * one per runtime and reuse it.
 * @example
 * const redactor = createRedactor({ keys: ['tenant_key'], rules: [{ id: 'order', pattern: /ORD-\d{8}/ }] });
 * redactor.record(record);
 */
export function createRedactor(options: RedactOptions = {}): Redactor {
  if (options.enabled === false) return PASSTHROUGH;

  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const allowKeys = new Set((options.allowKeys ?? []).map(normalizeKey));
  const extraKeys = new Set<string>();
  const extraKeyPatterns: RegExp[] = [];
  let trigrams = BASE_TRIGRAMS;
  // Whether some secret key cannot be spotted by trigrams, so any `:` or `=` must be looked at.
  let keyGateAlways = false;
  for (const key of options.keys ?? []) {
    if (typeof key !== 'string') {
      extraKeyPatterns.push(new RegExp(key.source, key.flags.replace(/[gyi]/g, '') + 'i'));
      keyGateAlways = true;
      continue;
    }
    extraKeys.add(normalizeKey(key));
    if (trigrams === BASE_TRIGRAMS) trigrams = BASE_TRIGRAMS.slice();
    // Every trigram of both spellings (`-` and `_` are one letter), so the key is seen as
    // `x_tenant_key`, `X-Tenant-Key` or `xTenantKey`. A name with no trigram inside the alphabet
    // (short, or in another script) falls back to looking at every `:` and `=`.
    let marked = 0;
    for (const form of [normalizeKey(key), key.toLowerCase()]) {
      for (let i = 0; i + 3 <= form.length; i++) {
        const index = trigramIndex(form, i);
        if (index < 0) continue;
        trigrams[index]! |= F_KEY;
        marked++;
      }
    }
    if (marked === 0) keyGateAlways = true;
  }
  const userRules = (options.rules ?? []).map(compileRule);

  /**
   * Per key name: true when its value is secret; false when the name is ordinary; a string when
   * the name itself holds something value rules mask (`{"ann@example.com": …}`), to use instead.
   */
  const keyCache = new Map<string, boolean | string>();

  function classifyKey(key: string): boolean {
    const normalized = normalizeKey(key);
    if (allowKeys.has(normalized)) return false;
    if (extraKeys.has(normalized)) return true;
    for (const pattern of extraKeyPatterns) if (pattern.test(key)) return true;
    return isBuiltinSecretKey(key, normalized);
  }

  function keyInfo(key: string): boolean | string {
    let info = keyCache.get(key);
    if (info === undefined) {
      info = classifyKey(key);
      if (!info) {
        const flags = key.length >= MIN_SCAN_LENGTH ? scan(key, trigrams) & ~F_KEY : 0;
        const masked = applyUserRules(applyValueRules(key, flags));
        if (masked !== key) info = masked;
      }
      if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
      keyCache.set(key, info);
    }
    return info;
  }

  function isSecretKey(key: string): boolean {
    return keyInfo(key) === true;
  }

  function applyValueRules(s: string, flags: number): string {
    let out = s;
    if (flags !== 0) {
      for (const rule of BUILTIN_RUNNERS) {
        if ((rule.needs & flags) !== 0) out = out.replace(rule.pattern, rule.replacer);
      }
    }
    return out;
  }

  function applyUserRules(s: string): string {
    let out = s;
    if (userRules.length !== 0) for (const rule of userRules) out = out.replace(rule.pattern, rule.replacer);
    return out;
  }

  function hasSecretKey(s: string): boolean {
    const cursor = new KeyCursor(s);
    while (cursor.next()) {
      const key = s.slice(cursor.keyStart, cursor.keyEnd);
      if (isSecretKey(key)) return true;
      // `"name": "Cookie"` of a name/value pair: its value is redacted when the text is walked as JSON.
      // The same in XML attributes (`key="Password" value=…`), also inside a JSON string (`\"`).
      if (PAIR_NAME_KEYS.has(key)) {
        let open = cursor.valueStart;
        if (s.charCodeAt(open) === 92) open++;
        const q = s.charCodeAt(open);
        if (q === 34 || q === 39) {
          let end = s.indexOf(s[open]!, open + 1);
          if (end !== -1 && s.charCodeAt(end - 1) === 92) end--;
          if (end !== -1 && end - open <= MAX_TEXT_KEY && isSecretKey(s.slice(open + 1, end))) return true;
        }
      }
    }
    if (s.includes('</')) {
      XML_ELEMENT.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = XML_ELEMENT.exec(s)) !== null) if (isSecretKey(m[1]!)) return true;
    }
    if (hasSecretNameValuePair(s, isSecretKey)) return true;
    if (s.includes('(')) {
      CALL_KEY.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = CALL_KEY.exec(s)) !== null) if (isSecretKey(m[2]!)) return true;
    }
    // An argv list (`["--password", "…"]`) and a Secret manifest, also as escaped JSON: the walk
    // of the parsed JSON or the text rules below find the value.
    if (s.includes('--')) {
      ARGV_SECRET_FLAG.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = ARGV_SECRET_FLAG.exec(s)) !== null) if (isSecretKey(m[1]!)) return true;
    }
    return s.includes('kind') && (K8S_SECRET_KIND.test(s) || K8S_SECRET_HINT.test(s));
  }

  /** `setProperty("DB_PASSWORD", "…")`, `getenv('API_TOKEN', '…')`: a call's first two arguments as a pair. */
  function redactCallPair(match: string, _q: string, key: string, quote: string, value: string): string {
    if (!isSecretKey(key) || value === REDACTED || isPlaceholder(value, key)) return match;
    found(value);
    return `${match.slice(0, match.length - value.length - 1)}${REDACTED}${quote}`;
  }

  function redactKeyValues(s: string): string {
    const cursor = new KeyCursor(s);
    let out = '';
    let last = 0;
    while (cursor.next()) {
      const key = s.slice(cursor.keyStart, cursor.keyEnd);
      if (!isSecretKey(key)) {
        const q = s.charCodeAt(cursor.valueStart);
        if (PAIR_NAME_KEYS.has(key) && q !== 34 && q !== 39) {
          // `- name: API_TOKEN` then `value: …` on the next line: a Kubernetes env entry, YAML pairs.
          const close = bareNameEnd(s, cursor.valueStart);
          const line = close > cursor.valueStart && isSecretKey(s.slice(cursor.valueStart, close)) ? redactValueLine(s, close) : undefined;
          if (line !== undefined) {
            out += s.slice(last, close) + line.text;
            last = line.end;
            cursor.skipTo(line.end);
          }
        } else if (PAIR_NAME_KEYS.has(key)) {
          const close = s.indexOf(s[cursor.valueStart]!, cursor.valueStart + 1);
          if (close !== -1 && close - cursor.valueStart <= MAX_TEXT_KEY && isSecretKey(s.slice(cursor.valueStart + 1, close))) {
            const attribute = redactValueAttribute(s, close + 1);
            if (attribute !== undefined) {
              out += s.slice(last, close + 1) + attribute.text;
              last = attribute.end;
              cursor.skipTo(attribute.end);
            }
          }
        }
        continue;
      }
      const keyQuote = cursor.quote;
      const start = cursor.valueStart;
      const c = s.charCodeAt(start);
      let end: number;
      let kind: number;
      let phrase = false;
      if (c === 34 || c === 39 || c === 96) {
        end = quotedEnd(s, start, c, false);
        kind = QUOTED;
      } else if (c === 92 && (s.charCodeAt(start + 1) === 34 || s.charCodeAt(start + 1) === 39)) {
        end = quotedEnd(s, start, s.charCodeAt(start + 1), true);
        kind = QUOTED;
      } else if (c === 123 || c === 91) {
        end = structuredEnd(s, start);
        kind = STRUCTURED;
      } else {
        const normalized = normalizeKey(key);
        const header =
          keyQuote === '' && cursor.colon && HEADER_KEY_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
        phrase = header && PASS_PHRASE_SUFFIXES.some((suffix) => normalized.endsWith(suffix));
        end = bareEnd(s, start, header);
        kind = BARE;
      }
      if (end <= start) continue;
      const value = s.slice(start, end);
      let masked: string;
      if (kind === QUOTED) {
        const open = value.charCodeAt(0) === 92 ? value.slice(0, 2) : value[0]!;
        const inner = value.slice(open.length, value.endsWith(open) && value.length >= 2 * open.length ? -open.length : undefined);
        // A shell's command substitution (`KEY=\`vault read …\``) reads the secret, it is not one.
        if (isPlaceholder(inner, key) || (open === '`' && /\s/.test(inner.trim()))) {
          masked = value;
        } else {
          masked = `${open}${REDACTED}${open}`;
          found(inner);
        }
      } else if (
        (kind === BARE && (NOT_REDACTED_BARE.has(value) || isPlaceholder(value, key) || (TYPE_WORDS.has(value) && nextIsEquals(s, end)))) ||
        (kind === STRUCTURED && isPlaceholder(value, key))
      ) {
        // A type between a key and its `=` (`apiToken: String = "…"`): the `=` reads the value.
        masked = value;
      } else if (keyQuote.endsWith('"')) {
        // Inside JSON text the replacement must stay a JSON string.
        masked = `${keyQuote}${REDACTED}${keyQuote}`;
      } else {
        // `Authorization: Bearer x` keeps its scheme; a pass phrase's first word is no scheme.
        const scheme = kind === BARE && !phrase ? AUTH_SCHEME.exec(value) : null;
        const credential = scheme === null ? value : value.slice(scheme[1]!.length).trim();
        if (scheme !== null && isPlaceholder(credential)) {
          masked = value;
        } else {
          masked = scheme === null ? REDACTED : `${scheme[1]!} ${REDACTED}`;
          if (kind !== STRUCTURED) found(credential);
        }
      }
      if (masked !== value) {
        out += s.slice(last, start) + masked;
        last = end;
      }
      cursor.skipTo(end);
    }
    const result = last === 0 ? s : out + s.slice(last);
    return result.includes('</') ? result.replace(XML_ELEMENT, redactXmlElement) : result;
  }

  function redactEncodedPair(match: string, key: string, equals: string, value: string): string {
    if (value === REDACTED || !isSecretKey(key) || isPlaceholder(decodePercent(value), key)) return match;
    found(value);
    return `${key}${equals}${REDACTED}`;
  }

  function redactXmlElement(match: string, tag: string, body: string): string {
    if (body === REDACTED || !isSecretKey(tag) || isPlaceholder(body, tag)) return match;
    found(body.trim());
    return match.replace(`>${body}<`, `>${REDACTED}<`);
  }

  function redactString(s: string, depth: number): string {
    let flags = 0;
    if (s.length >= MIN_SCAN_LENGTH) {
      flags = scan(s, trigrams);
      if (keyGateAlways && (flags & F_KEY) === 0 && (s.includes(':') || s.includes('=') || s.includes('\uff1a'))) {
        flags |= F_KEY;
      }
    }
    if (flags === 0 && userRules.length === 0) return s;
    const scanned = flags;
    let triedJson = false;
    const keyFlagged = (flags & F_KEY) !== 0;
    if (keyFlagged) {
      if (!hasSecretKey(s)) {
        flags &= ~F_KEY;
      } else if (looksLikeJson(s)) {
        triedJson = true;
        const redacted = redactJson(s, depth);
        if (redacted !== undefined) return redacted;
      }
    }
    // Command lines and provider-named secrets are read with their quotes, which JSON escapes:
    // JSON text holding one is redacted value by value.
    if (!triedJson && (flags & (F_CLI | F_PROVIDER_WORD)) !== 0 && looksLikeJson(s)) {
      triedJson = true;
      const redacted = redactJson(s, depth);
      if (redacted !== undefined) return redacted;
    }
    let out = s;
    // Key/value pairs first, so a bare value is cut at its real end rather than at the `]` of a
    // mask a value rule left inside it.
    if ((flags & F_KEY) !== 0) out = redactKeyValues(out);
    if ((flags & F_KEY) !== 0 && out.includes('(')) out = out.replace(CALL_PAIR, redactCallPair);
    if ((flags & F_KEY) !== 0 && out.includes('kind') && K8S_SECRET_KIND.test(out)) out = redactSecretData(out);
    if (keyFlagged && (out.includes('%3D') || out.includes('%3d') || out.includes('%253'))) out = out.replace(ENCODED_PAIR, redactEncodedPair);
    out = applyUserRules(applyValueRules(out, flags));
    if (scanned !== 0 && depth < maxDepth && out.includes('%')) out = redactEncodedQuery(out, depth);
    // Masks written into JSON text can turn a number into a bare word; when the text parses, redo
    // it value by value so it stays JSON. Keep the textual result if that finds nothing.
    if (out !== s && !triedJson && looksLikeJson(s)) {
      const redacted = redactJson(s, depth);
      if (redacted !== undefined && redacted !== s) return redacted;
    }
    return out;
  }

  /**
   * Percent-encoded query values (`?q=awsToken%20%3A%3D%20%22…%22`, `&data=%7B%22password%22…`)
   * redacted as the text they decode to, then encoded again: encoded, a value hides the quotes,
   * `=` and word boundaries every rule needs.
   */
  function redactEncodedQuery(s: string, depth: number): string {
    return s.replace(ENCODED_QUERY_VALUE, (match: string, name: string, value: string) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        return match;
      }
      if (decoded === value) return match;
      const redacted = redactString(decoded, depth + 1);
      return redacted === decoded ? match : name + encodeURIComponent(redacted).replace(ENCODED_MASK, REDACTED);
    });
  }

  /** The JSON text redacted value by value and re-serialized; undefined if it does not parse. */
  function redactJson(s: string, depth: number): string | undefined {
    const parsed = parseJson(s);
    if (parsed === NOT_JSON) return undefined;
    const redacted = walk(parsed, depth);
    return redacted === parsed ? s : JSON.stringify(redacted);
  }

  function redactNumber(n: number, depth: number): unknown {
    const s = String(n);
    const redacted = redactString(s, depth);
    return redacted === s ? n : redacted;
  }

  function walk(v: unknown, depth: number): unknown {
    switch (typeof v) {
      case 'string':
        return redactString(v, depth);
      case 'number':
        // Eleven digits is the shortest personal number (a phone) worth checking.
        return v >= 1e10 && Number.isInteger(v) ? redactNumber(v, depth) : v;
      case 'object':
        return v === null ? v : walkObject(v, depth);
      case 'boolean':
      case 'undefined':
        return v;
      case 'bigint':
        return redactString(String(v), depth);
      case 'function':
        return FUNCTION;
      default:
        return SYMBOL;
    }
  }

  function walkObject(o: object, depth: number): unknown {
    if (depth > maxDepth) return TRUNCATED_DEPTH;
    for (let i = 0; i < ancestors.length; i++) if (ancestors[i] === o) return CIRCULAR;
    if (Array.isArray(o)) return walkArray(o, depth);
    const proto: unknown = Object.getPrototypeOf(o);
    if (proto === Object.prototype || proto === null) return walkPlain(o as Record<string, unknown>, depth);
    return walkSpecial(o, depth);
  }

  // Each level catches its own throw (a getter, a proxy trap), so the pop after it always runs;
  // a try/finally here costs more than the catch.
  function walkPlain(o: Record<string, unknown>, depth: number): unknown {
    ancestors.push(o);
    let result: unknown;
    try {
      result = walkPlainEntries(o, depth);
    } catch {
      result = UNREADABLE;
    }
    ancestors.pop();
    return result;
  }

  function walkPlainEntries(o: Record<string, unknown>, depth: number): unknown {
    const keys = Object.keys(o);
    const pairValue = keys.length <= MAX_PAIR_KEYS ? secretPairValueKey(o) : undefined;
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const val = o[key];
      // A Kubernetes Secret as JSON: every value of its data is secret, whatever its name.
      if (key === 'kind' && typeof val === 'string' && val.toLowerCase() === 'secret' && (isPlainObject(o['data']) || isPlainObject(o['stringData']))) {
        return walkSecretManifest(o, depth);
      }
      const info = key === pairValue ? true : keyInfo(key);
      let next: unknown;
      let outKey = key;
      if (info === true) {
        next = secretKeyed(val, key);
      } else {
        next = walk(val, depth + 1);
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

  function walkSecretManifest(o: Record<string, unknown>, depth: number): unknown {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(o)) {
      const val = o[key];
      if ((key === 'data' || key === 'stringData') && isPlainObject(val)) {
        const data: Record<string, unknown> = {};
        for (const name of Object.keys(val)) setOwn(data, name, secretKeyed(val[name], name));
        setOwn(out, key, data);
      } else {
        setOwn(out, key, walk(val, depth + 1));
      }
    }
    return out;
  }

  /** What replaces a value under a secret key: booleans, absent values and placeholders stay. */
  function secretKeyed(val: unknown, key: string): unknown {
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
  function secretPairValueKey(o: Record<string, unknown>): string | undefined {
    // Property reads, not a scan of the keys: this runs for every small object walked.
    const valueKey = o['value'] !== undefined ? 'value' : o['Value'] !== undefined ? 'Value' : undefined;
    if (valueKey === undefined || o[valueKey] === null || !Object.hasOwn(o, valueKey)) return undefined;
    const name = o['name'] ?? o['Name'] ?? o['key'] ?? o['Key'];
    return typeof name === 'string' && name.length <= MAX_TEXT_KEY && isSecretKey(name) ? valueKey : undefined;
  }

  function walkArray(o: readonly unknown[], depth: number): unknown {
    ancestors.push(o);
    let result: unknown;
    try {
      result = walkArrayItems(o, depth);
    } catch {
      result = UNREADABLE;
    }
    ancestors.pop();
    return result;
  }

  function walkArrayItems(o: readonly unknown[], depth: number): unknown {
    let out: unknown[] | undefined;
    // Header lists come as alternating names and values (`rawHeaders`, `[name, value]` pairs).
    const pairs = o.length % 2 === 0;
    for (let i = 0; i < o.length; i++) {
      const val = o[i];
      // Or an argv list, whose `--password` may stand anywhere: the item after it is its value.
      const before = i === 0 ? undefined : o[i - 1];
      const name = (pairs && (i & 1) === 1) || (typeof before === 'string' && before.charCodeAt(0) === 45 && before.charCodeAt(1) === 45) ? before : undefined;
      const next = typeof name === 'string' && name.length <= MAX_TEXT_KEY && isSecretKey(name) ? secretKeyed(val, name) : walk(val, depth + 1);
      if (out === undefined) {
        if (Object.is(next, val)) continue;
        out = o.slice(0, i);
      }
      out.push(next);
    }
    return out ?? o;
  }

  /** Walks a converted stand-in for `original`, keeping `original` on the cycle stack. */
  function walkConverted(original: object, converted: unknown, depth: number): unknown {
    ancestors.push(original);
    try {
      return walk(converted, depth);
    } finally {
      ancestors.pop();
    }
  }

  function walkSpecial(o: object, depth: number): unknown {
    try {
      if (o instanceof Date) return Number.isNaN(o.getTime()) ? 'Invalid Date' : o.toISOString();
      if (ArrayBuffer.isView(o) || o instanceof ArrayBuffer || o instanceof SharedArrayBuffer) {
        return `[BINARY ${o.byteLength} bytes]`;
      }
      if (o instanceof Map) {
        const plain: Record<string, unknown> = {};
        for (const [k, v] of o) setOwn(plain, typeof k === 'string' ? k : String(k), v);
        return walkConverted(o, plain, depth);
      }
      if (o instanceof Set) return walkConverted(o, Array.from(o), depth);
      if (o instanceof Error) {
        const plain: Record<string, unknown> = { name: o.name, message: o.message };
        if (o.stack !== undefined) plain['stack'] = o.stack;
        if (o.cause !== undefined) plain['cause'] = o.cause;
        for (const key of Object.keys(o)) setOwn(plain, key, (o as unknown as Record<string, unknown>)[key]);
        return walkConverted(o, plain, depth);
      }
      if (o instanceof RegExp) return redactString(String(o), depth);
      if (o instanceof String || o instanceof Number || o instanceof Boolean) return walk(o.valueOf(), depth);
      const toJSON = (o as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        const json: unknown = toJSON.call(o);
        if (json !== o) return walkConverted(o, json, depth);
      }
      // Any other class instance: its own enumerable fields, as JSON.stringify would see them.
      return walkPlain(o as Record<string, unknown>, depth);
    } catch {
      return UNREADABLE;
    }
  }

  function value<T>(input: T, into?: FoundSecrets): T {
    const mark = ancestors.length;
    const outer = collecting;
    collecting = into;
    try {
      return walk(input, 0) as T;
    } catch {
      return UNREADABLE as T;
    } finally {
      collecting = outer;
      // Only after a throw is the stack not already back where it was; setting length is slow.
      if (ancestors.length !== mark) ancestors.length = mark;
    }
  }

  function text(input: string, into?: FoundSecrets): string {
    if (typeof input !== 'string') return value(input, into);
    const mark = ancestors.length;
    const outer = collecting;
    collecting = into;
    try {
      return redactString(input, 0);
    } catch {
      return UNREADABLE;
    } finally {
      collecting = outer;
      if (ancestors.length !== mark) ancestors.length = mark;
    }
  }

  function textOrValue<T>(input: T, into: FoundSecrets): T {
    if (input === null || input === undefined) return input;
    return typeof input === 'string' ? (text(input, into) as T) : value(input, into);
  }

  function scrub<T>(input: T, into: FoundSecrets): T {
    if (into.length === 0) return input;
    try {
      return scrubValue(input, spellingsOf(into), 0) as T;
    } catch {
      return UNREADABLE as T;
    }
  }

  function record(r: ToolExecutionRecord): ToolExecutionRecord {
    if (typeof r !== 'object' || r === null) return value(r);
    const into: FoundSecrets = [];
    const redacted = mapRecordFields(r, (v) => textOrValue(v, into));
    return into.length === 0 ? redacted : scrubRecord(redacted, into);
  }

  function scrubRecord(r: ToolExecutionRecord, into: FoundSecrets): ToolExecutionRecord {
    if (into.length === 0 || typeof r !== 'object' || r === null) return r;
    const spellings = spellingsOf(into);
    try {
      return mapRecordFields(r, (v) => scrubValue(v, spellings, 0) as typeof v);
    } catch {
      return r;
    }
  }

  return { value, text, record, scrub, scrubRecord, isSecretKey };
}

/** `r` with `map` applied to each free-text field; the same record when nothing changed. */
function mapRecordFields(r: ToolExecutionRecord, map: <T>(v: T) => T): ToolExecutionRecord {
    const input = map(r.input_params);
    const rawOutput = map(r.raw_output);
    const errorMessage = map(r.error_message);
    const errorStack = map(r.error_stack);
    const context = map(r.context_snapshot);
    let feedback = r.feedback;
    if (feedback !== null && typeof feedback === 'object') {
      const hint = map(feedback.hint);
      const last = feedback.last_recovery === undefined ? undefined : map(feedback.last_recovery);
      if (hint !== feedback.hint || last !== feedback.last_recovery) {
        feedback = { ...feedback, hint };
        if (last !== undefined) feedback.last_recovery = last;
      }
    }
    let fault = r.fault;
    if (fault !== null && typeof fault === 'object' && fault.params !== undefined) {
      const params = map(fault.params);
      if (params !== fault.params) fault = { ...fault, params };
    }
    let fallback = r.fallback;
    if (fallback !== null && typeof fallback === 'object') {
      const reason = map(fallback.reason);
      if (reason !== fallback.reason) fallback = { ...fallback, reason };
    }
    if (
      input === r.input_params &&
      rawOutput === r.raw_output &&
      errorMessage === r.error_message &&
      errorStack === r.error_stack &&
      context === r.context_snapshot &&
      feedback === r.feedback &&
      fault === r.fault &&
      fallback === r.fallback
    ) {
      return r;
    }
    return {
      ...r,
      input_params: input,
      raw_output: rawOutput,
      error_message: errorMessage,
      error_stack: errorStack,
      context_snapshot: context,
      feedback,
      fault,
      fallback,
    };
}

/** A redactor with the built-in rules and no extras. */
export const defaultRedactor: Redactor = createRedactor();
