/**
 * The assignment-form reader (DESIGN.md, "Redaction"): where each `key: value`, `key=value`,
 * `key := value`, `"key": value` pair of a text has its key and its value, and where that value
 * ends.
 */

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
export const TYPE_WORDS = new Set(['string', 'String', 'str', 'char', 'byte', 'bytes', 'Text', 'CharSequence', 'SecretStr', 'SecureString', 'Secret', 'any', 'Object', 'object']);

export const MAX_TEXT_KEY = 64;
/** The keys that name the other field of a name/value pair object. */
export const PAIR_NAME_KEYS = new Set(['name', 'Name', 'key', 'Key']);
/** Pair objects are small; larger objects are not looked at as pairs. */
export const MAX_PAIR_KEYS = 6;

/**
 * Walks the `key: value`, `key=value`, `key => value`, `"key": value` and `\"key\": value` pairs of
 * a text. It jumps from separator to separator with indexOf and reads the key backwards, which is
 * several times cheaper than a key-matching regex on text that has few separators.
 */
export class KeyCursor {
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
      // `arn:aws:secretsmanager:us-east-1:…:secret:prod-db` names a stored secret; its parts are no keys.
      if (sep === 58 && quote === '' && insideArn(s, keyStart)) continue;
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

const ARN_PREFIX = /^arn:aws[a-z-]{0,12}:/;
const MAX_ARN = 2048;

/** Whether `keyStart` is inside an AWS resource name (`arn:aws:secretsmanager:…:secret:prod-db`). */
function insideArn(s: string, keyStart: number): boolean {
  if (s.charCodeAt(keyStart - 1) !== 58) return false;
  let k = keyStart - 1;
  const limit = Math.max(0, keyStart - MAX_ARN);
  while (k > limit && !isSpace(s.charCodeAt(k - 1)) && s.charCodeAt(k - 1) !== 34 && s.charCodeAt(k - 1) !== 39) k--;
  return ARN_PREFIX.test(s.slice(k, k + 20));
}

export function nextIsEquals(s: string, at: number): boolean {
  let i = at;
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  return s.charCodeAt(i) === 61;
}

/** End of a quoted value starting at `at` (the quote); escapes counted so `\"` does not end it. */
export function quotedEnd(s: string, at: number, quote: number, escapedLevel: boolean): number {
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
export function structuredEnd(s: string, at: number): number {
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

export function bareEnd(s: string, at: number, toLineEnd: boolean): number {
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
