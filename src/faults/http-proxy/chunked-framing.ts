/**
 * Finds where a chunked body ends (RFC 9112 section 7.1) while its bytes pass through unchanged,
 * and hands on the payload between the chunk lines (for the record's arguments and raw_output).
 * The fast path relays chunked bodies as they came; it only needs to know where one ends, so that
 * the next message on the connection starts at the right byte. By hand for the reason given in
 * http1-head.ts.
 *
 * The bytes go on as they came, so the upstream (or the client) reads them with its own parser,
 * and the socket they travel on may carry other clients' requests next: anything two parsers
 * could read differently is refused here, at least as strictly as node:http's llhttp does. That
 * is the RFC's grammar without its optional whitespace: a size of hex digits; extensions
 * `;name[=value]`, the value a token or a quoted string; trailer fields `name: value` with no
 * control characters, no obs-fold, and none of the fields that frame or end a message.
 */

const enum State {
  Size,
  ExtName,
  ExtValueStart,
  ExtToken,
  ExtQuoted,
  ExtQuotedPair,
  ExtAfterQuoted,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  TrailerName,
  TrailerValue,
  TrailerLf,
  FinalLf,
  Done,
}

/** More significant hex digits than this is a size no body of ours will have (and would overflow a double's integers). */
const MAX_SIZE_DIGITS = 12;
const MAX_EXTENSION_BYTES = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;
/** Trailer fields llhttp refuses (they would frame or end the message), lower-cased. */
const FORBIDDEN_TRAILERS = new Set(['content-length', 'transfer-encoding', 'connection', 'proxy-connection']);
/** The longest of them: a longer name is none of them. */
const MAX_FORBIDDEN_NAME = 17;

/** 1 for the bytes of a token (RFC 9110 section 5.6.2). */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TOKEN[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TOKEN[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TOKEN[c] = TOKEN[c + 0x20] = 1;

/** Bytes allowed in a field value or a quoted string: HTAB, SP, visible ASCII and obs-text. */
function isFieldByte(c: number): boolean {
  return c === 0x09 || (c >= 0x20 && c !== 0x7f);
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

export class ChunkedFraming {
  private state = State.Size;
  private size = 0;
  private digits = 0;
  /** Bytes of the current extension name or trailer name. */
  private nameBytes = 0;
  private lineBytes = 0;
  private trailerBytes = 0;
  /** The current trailer field's name, lower-cased, while it could still be a forbidden one. */
  private trailerName = '';

  /** The last chunk and the trailer section have been read. */
  get done(): boolean {
    return this.state === State.Done;
  }

  reset(): void {
    this.state = State.Size;
    this.size = 0;
    this.digits = 0;
    this.nameBytes = 0;
    this.lineBytes = 0;
    this.trailerBytes = 0;
    this.trailerName = '';
  }

  /**
   * Reads `buf[start, end)`. Returns where it stopped: `end`, or the byte after the body when the
   * body ends inside the range (what follows belongs to the next message), or -1 when the framing
   * is broken. `onData` gets each run of payload bytes.
   */
  feed(buf: Buffer, start: number, end: number, onData?: (buf: Buffer, start: number, end: number) => void): number {
    let i = start;
    while (i < end) {
      const c = buf[i]!;
      switch (this.state) {
        case State.Data: {
          const n = Math.min(this.size, end - i);
          onData?.(buf, i, i + n);
          i += n;
          this.size -= n;
          if (this.size === 0) this.state = State.DataCr;
          continue;
        }
        case State.Size: {
          const v = hexValue(c);
          if (v >= 0) {
            // Leading zeros are no part of the limit; a 13th significant digit is.
            if (this.size >= 2 ** ((MAX_SIZE_DIGITS - 1) * 4)) return -1;
            this.size = this.size * 16 + v;
            this.digits++;
          } else if (this.digits === 0) {
            return -1;
          } else if (c === 0x0d) {
            this.state = State.SizeLf;
          } else if (c === 0x3b) {
            this.startExtension();
          } else {
            // Whitespace included: llhttp refuses `5 ;x` and `5 `, and a lenient parser would not.
            return -1;
          }
          break;
        }
        // Only the states that repeat count towards the extensions' limit; the others take one byte.
        case State.ExtName:
          if (++this.lineBytes > MAX_EXTENSION_BYTES) return -1;
          if (TOKEN[c] === 1) this.nameBytes++;
          else if (this.nameBytes === 0) return -1;
          else if (c === 0x3d) this.state = State.ExtValueStart;
          else if (!this.endOfExtension(c)) return -1;
          break;
        case State.ExtValueStart:
          if (c === 0x22) this.state = State.ExtQuoted;
          else if (TOKEN[c] === 1) this.state = State.ExtToken;
          else return -1;
          break;
        case State.ExtToken:
          if (++this.lineBytes > MAX_EXTENSION_BYTES || (TOKEN[c] !== 1 && !this.endOfExtension(c))) return -1;
          break;
        case State.ExtQuoted:
          if (++this.lineBytes > MAX_EXTENSION_BYTES) return -1;
          if (c === 0x22) this.state = State.ExtAfterQuoted;
          else if (c === 0x5c) this.state = State.ExtQuotedPair;
          else if (!isFieldByte(c)) return -1;
          break;
        case State.ExtQuotedPair:
          if (!isFieldByte(c)) return -1;
          this.state = State.ExtQuoted;
          break;
        case State.ExtAfterQuoted:
          if (!this.endOfExtension(c)) return -1;
          break;
        case State.SizeLf:
          if (c !== 0x0a) return -1;
          this.state = this.size === 0 ? State.TrailerStart : State.Data;
          this.digits = 0;
          break;
        case State.DataCr:
          if (c !== 0x0d) return -1;
          this.state = State.DataLf;
          break;
        case State.DataLf:
          if (c !== 0x0a) return -1;
          this.state = State.Size;
          break;
        case State.TrailerStart:
          if (c === 0x0d) {
            this.state = State.FinalLf;
            break;
          }
          // A field name, not whitespace (obs-fold) nor a colon (an empty name).
          this.state = State.TrailerName;
          this.nameBytes = 0;
          this.trailerName = '';
          continue;
        case State.TrailerName:
          if (++this.trailerBytes > MAX_TRAILER_BYTES) return -1;
          if (TOKEN[c] === 1) {
            if (++this.nameBytes <= MAX_FORBIDDEN_NAME) this.trailerName += String.fromCharCode(c | 0x20);
          } else if (c === 0x3a && this.nameBytes > 0 && !(this.nameBytes <= MAX_FORBIDDEN_NAME && FORBIDDEN_TRAILERS.has(this.trailerName))) {
            this.state = State.TrailerValue;
          } else {
            return -1;
          }
          break;
        case State.TrailerValue:
          if (++this.trailerBytes > MAX_TRAILER_BYTES) return -1;
          if (c === 0x0d) this.state = State.TrailerLf;
          else if (!isFieldByte(c)) return -1;
          break;
        case State.TrailerLf:
          if (c !== 0x0a) return -1;
          this.state = State.TrailerStart;
          break;
        case State.FinalLf:
          if (c !== 0x0a) return -1;
          this.state = State.Done;
          return i + 1;
        case State.Done:
          return i;
      }
      i++;
    }
    return i;
  }

  private startExtension(): void {
    if (this.state === State.Size) this.lineBytes = 0;
    this.state = State.ExtName;
    this.nameBytes = 0;
  }

  /** After an extension's name or value: another extension or the end of the line; false for anything else. */
  private endOfExtension(c: number): boolean {
    if (c === 0x3b) this.startExtension();
    else if (c === 0x0d) this.state = State.SizeLf;
    else return false;
    return true;
  }
}
