/**
 * The pre-filter of redaction (DESIGN.md, "Redaction"): one pass over a string's bytes says which
 * rules might match it, so clean text costs one scan and no regex.
 */
import { F_AT, F_DIGITS, F_HEX_RUN, F_KEY, F_LONG_TOKEN, F_MORE, F_WIDE_DIGITS, SECOND_LOOK_FLAGS, SECRET_KEY_PARTS, TRIGGER_TRIGRAMS } from './redact-rules.js';

/** Built-in rules never match fewer characters than this, so shorter strings skip the scan. */
export const MIN_SCAN_LENGTH = 6;

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
export function trigramIndex(text: string, at: number): number {
  let index = 0;
  for (let i = at; i < at + 3; i++) {
    const c = text.charCodeAt(i);
    const letter = c < 128 ? LETTER[c]! : 0;
    if (letter === 0) return -1;
    index = (index << 5) | letter;
  }
  return index;
}

export const BASE_TRIGRAMS = new Uint16Array(TRIGRAM_MASK + 1);
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

export function scan(s: string, trigrams: Uint16Array): number {
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
  if (n >= MIN_PREFIXED_TOKEN && (single >= 0 ? hasLongTokenRunInBuffer(single) : hasLongTokenRun(s))) flags |= F_LONG_TOKEN;
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

/** The shortest prefixed token: two letters, a separator and 32 characters. */
const MIN_PREFIXED_TOKEN = 35;
const TOKEN_RUN = 32;
/** 1 for a letter or digit, 2 for `_` or `-`, else 0; indexed by byte or by character code below 256. */
const TOKEN_BYTE = new Uint8Array(256);
for (let c = 48; c <= 57; c++) TOKEN_BYTE[c] = 1;
for (let c = 65; c <= 90; c++) TOKEN_BYTE[c] = 1;
for (let c = 97; c <= 122; c++) TOKEN_BYTE[c] = 1;
TOKEN_BYTE[45] = 2;
TOKEN_BYTE[95] = 2;

function tokenChar(c: number): number {
  return c < 256 ? TOKEN_BYTE[c]! : 0;
}

/**
 * {@link hasLongTokenRun} over the bytes still in the scan buffer. The two stay apart, as the
 * digit-run probes do: a shared loop would read each character through a callback.
 */
function hasLongTokenRunInBuffer(length: number): boolean {
  for (let i = TOKEN_RUN - 1; i < length; i += TOKEN_RUN) {
    if (TOKEN_BYTE[SCAN_BUFFER[i]!] === 0) continue;
    let start = i;
    let separator = 0;
    while (start > 0) {
      const k = TOKEN_BYTE[SCAN_BUFFER[start - 1]!]!;
      if (k === 0) break;
      separator |= k;
      start--;
    }
    let end = i;
    while (end < length) {
      const k = TOKEN_BYTE[SCAN_BUFFER[end]!]!;
      if (k === 0) break;
      separator |= k;
      end++;
    }
    if (end - start >= MIN_PREFIXED_TOKEN && (separator & 2) !== 0) return true;
    while (i + TOKEN_RUN < end) i += TOKEN_RUN;
  }
  return false;
}

/**
 * Whether some run of 35 or more letters, digits, `_` and `-` holds a `_` or `-` (see
 * F_LONG_TOKEN). Any run of 32 covers every 32nd character, so only those are probed, and a run
 * is walked once: the next probe starts past its end.
 */
function hasLongTokenRun(s: string): boolean {
  const n = s.length;
  for (let i = TOKEN_RUN - 1; i < n; i += TOKEN_RUN) {
    if (tokenChar(s.charCodeAt(i)) === 0) continue;
    let start = i;
    let separator = 0;
    while (start > 0) {
      const k = tokenChar(s.charCodeAt(start - 1));
      if (k === 0) break;
      separator |= k;
      start--;
    }
    let end = i;
    while (end < n) {
      const k = tokenChar(s.charCodeAt(end));
      if (k === 0) break;
      separator |= k;
      end++;
    }
    if (end - start >= MIN_PREFIXED_TOKEN && (separator & 2) !== 0) return true;
    while (i + TOKEN_RUN < end) i += TOKEN_RUN;
  }
  return false;
}
