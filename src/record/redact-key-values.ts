/**
 * Secret key/value pairs in free text (DESIGN.md, "Redaction"): assignments, headers, XML elements
 * and attributes, YAML name/value entries, call arguments and percent-encoded pairs whose key is a
 * secret name, masked with their quoting kept.
 */
import { REDACTED, isPlaceholder, normalizeKey } from './redact-rules.js';
import { found } from './redact-found.js';
import { KeyCursor, MAX_TEXT_KEY, PAIR_NAME_KEYS, TYPE_WORDS, bareEnd, nextIsEquals, quotedEnd, structuredEnd } from './redact-assignment.js';
import { K8S_SECRET_HINT, K8S_SECRET_KIND } from './redact-secret-manifest.js';

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
/** A call's first two arguments, both quoted: `setProperty("DB_PASSWORD", "…")`. */
const CALL_PAIR = /\(\s*(["'])([A-Za-z0-9_.\- ]{1,64})\1\s*,\s*(["'])((?:\\.|(?!\3)[^\\\n]){1,4096})\3/g;
/** The first argument of a {@link CALL_PAIR}, also with its quotes escaped inside a JSON string. */
const CALL_KEY = /\(\s*\\?(["'])([A-Za-z0-9_.\- ]{1,64})\\?\1\s*,/g;
/** A long option quoted as one item of an argv list: `"--password", "…"`. */
const ARGV_SECRET_FLAG = /["']--([A-Za-z][\w-]{1,40})\\?["']\s*,/g;

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
export const AUTH_SCHEME = /^([A-Za-z][\w-]*)[ \t]+\S/;

/** How a value in text is delimited, which decides what replaces it. */
const QUOTED = 0;
const STRUCTURED = 1;
const BARE = 2;

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

/** The pairs of a text whose key `isSecretKey` names a secret. */
export class KeyValueText {
  constructor(private readonly isSecretKey: (key: string) => boolean) {}

  /** Whether some pair, element, call or manifest of `s` has a secret key: whether the key rules need to run. */
  hasSecretKey(s: string): boolean {
    const cursor = new KeyCursor(s);
    while (cursor.next()) {
      const key = s.slice(cursor.keyStart, cursor.keyEnd);
      if (this.isSecretKey(key)) return true;
      // `"name": "Cookie"` of a name/value pair: its value is redacted when the text is walked as JSON.
      // The same in XML attributes (`key="Password" value=…`), also inside a JSON string (`\"`).
      if (PAIR_NAME_KEYS.has(key)) {
        let open = cursor.valueStart;
        if (s.charCodeAt(open) === 92) open++;
        const q = s.charCodeAt(open);
        if (q === 34 || q === 39) {
          let end = s.indexOf(s[open]!, open + 1);
          if (end !== -1 && s.charCodeAt(end - 1) === 92) end--;
          if (end !== -1 && end - open <= MAX_TEXT_KEY && this.isSecretKey(s.slice(open + 1, end))) return true;
        }
      }
    }
    if (s.includes('</')) {
      XML_ELEMENT.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = XML_ELEMENT.exec(s)) !== null) if (this.isSecretKey(m[1]!)) return true;
    }
    if (hasSecretNameValuePair(s, this.isSecretKey)) return true;
    if (s.includes('(')) {
      CALL_KEY.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = CALL_KEY.exec(s)) !== null) if (this.isSecretKey(m[2]!)) return true;
    }
    // An argv list (`["--password", "…"]`) and a Secret manifest, also as escaped JSON: the walk
    // of the parsed JSON or the text rules below find the value.
    if (s.includes('--')) {
      ARGV_SECRET_FLAG.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = ARGV_SECRET_FLAG.exec(s)) !== null) if (this.isSecretKey(m[1]!)) return true;
    }
    return s.includes('kind') && (K8S_SECRET_KIND.test(s) || K8S_SECRET_HINT.test(s));
  }

  /** `s` with the value of each pair under a secret key masked, then each secret XML element's body. */
  redactKeyValues(s: string): string {
    const cursor = new KeyCursor(s);
    let out = '';
    let last = 0;
    while (cursor.next()) {
      const key = s.slice(cursor.keyStart, cursor.keyEnd);
      if (!this.isSecretKey(key)) {
        const q = s.charCodeAt(cursor.valueStart);
        if (PAIR_NAME_KEYS.has(key) && q !== 34 && q !== 39) {
          // `- name: API_TOKEN` then `value: …` on the next line: a Kubernetes env entry, YAML pairs.
          const close = bareNameEnd(s, cursor.valueStart);
          const line = close > cursor.valueStart && this.isSecretKey(s.slice(cursor.valueStart, close)) ? redactValueLine(s, close) : undefined;
          if (line !== undefined) {
            out += s.slice(last, close) + line.text;
            last = line.end;
            cursor.skipTo(line.end);
          }
        } else if (PAIR_NAME_KEYS.has(key)) {
          const close = s.indexOf(s[cursor.valueStart]!, cursor.valueStart + 1);
          if (close !== -1 && close - cursor.valueStart <= MAX_TEXT_KEY && this.isSecretKey(s.slice(cursor.valueStart + 1, close))) {
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
    return result.includes('</') ? result.replace(XML_ELEMENT, this.xmlElement) : result;
  }

  /** `setProperty("DB_PASSWORD", "…")`, `getenv('API_TOKEN', '…')`: a call's first two arguments as a pair. */
  redactCallPairs(s: string): string {
    return s.replace(CALL_PAIR, this.callPair);
  }

  /** Pairs percent-encoded inside a URL (see ENCODED_PAIR). */
  redactEncodedPairs(s: string): string {
    return s.replace(ENCODED_PAIR, this.encodedPair);
  }

  private readonly callPair = (match: string, _q: string, key: string, quote: string, value: string): string => {
    if (!this.isSecretKey(key) || value === REDACTED || isPlaceholder(value, key)) return match;
    found(value);
    return `${match.slice(0, match.length - value.length - 1)}${REDACTED}${quote}`;
  };

  private readonly encodedPair = (match: string, key: string, equals: string, value: string): string => {
    if (value === REDACTED || !this.isSecretKey(key) || isPlaceholder(decodePercent(value), key)) return match;
    found(value);
    return `${key}${equals}${REDACTED}`;
  };

  private readonly xmlElement = (match: string, tag: string, body: string): string => {
    if (body === REDACTED || !this.isSecretKey(tag) || isPlaceholder(body, tag)) return match;
    found(body.trim());
    return match.replace(`>${body}<`, `>${REDACTED}<`);
  };
}
