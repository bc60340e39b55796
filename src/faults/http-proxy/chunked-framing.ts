/**
 * Finds where a chunked body ends (RFC 9112 section 7.1) while its bytes pass through unchanged,
 * and hands on the payload between the chunk lines (for the record's arguments and raw_output).
 * The fast path relays chunked bodies as they came; it only needs to know where one ends, so that
 * the next message on the connection starts at the right byte. By hand for the reason given in
 * http1-head.ts.
 */

const enum State {
  Size,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  TrailerLine,
  TrailerLf,
  FinalLf,
  Done,
}

/** More hex digits than this is a size no body of ours will have (and would overflow a double's integers). */
const MAX_SIZE_DIGITS = 12;
const MAX_EXTENSION_BYTES = 4096;
const MAX_TRAILER_BYTES = 16 * 1024;

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
  private lineBytes = 0;
  private trailerBytes = 0;

  /** The last chunk and the trailer section have been read. */
  get done(): boolean {
    return this.state === State.Done;
  }

  reset(): void {
    this.state = State.Size;
    this.size = 0;
    this.digits = 0;
    this.lineBytes = 0;
    this.trailerBytes = 0;
  }

  /**
   * Reads `buf[start, end)`. Returns where it stopped: `end`, or the byte after the body when the
   * body ends inside the range (what follows belongs to the next message), or -1 when the framing
   * is broken. `onData` gets each run of payload bytes.
   */
  feed(buf: Buffer, start: number, end: number, onData?: (buf: Buffer, start: number, end: number) => void): number {
    let i = start;
    while (i < end) {
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
          const c = buf[i]!;
          const v = hexValue(c);
          if (v >= 0) {
            if (++this.digits > MAX_SIZE_DIGITS) return -1;
            this.size = this.size * 16 + v;
          } else if (this.digits === 0) {
            return -1;
          } else if (c === 0x0d) {
            this.state = State.SizeLf;
          } else if (c === 0x3b || c === 0x20 || c === 0x09) {
            this.state = State.Extension;
            this.lineBytes = 0;
          } else {
            return -1;
          }
          break;
        }
        case State.Extension: {
          const c = buf[i]!;
          if (c === 0x0d) this.state = State.SizeLf;
          else if (c === 0x0a || ++this.lineBytes > MAX_EXTENSION_BYTES) return -1;
          break;
        }
        case State.SizeLf:
          if (buf[i] !== 0x0a) return -1;
          this.state = this.size === 0 ? State.TrailerStart : State.Data;
          this.digits = 0;
          break;
        case State.DataCr:
          if (buf[i] !== 0x0d) return -1;
          this.state = State.DataLf;
          break;
        case State.DataLf:
          if (buf[i] !== 0x0a) return -1;
          this.state = State.Size;
          break;
        case State.TrailerStart:
          if (buf[i] === 0x0d) {
            this.state = State.FinalLf;
            break;
          }
          this.state = State.TrailerLine;
          continue;
        case State.TrailerLine: {
          const c = buf[i]!;
          if (c === 0x0d) this.state = State.TrailerLf;
          else if (c === 0x0a || ++this.trailerBytes > MAX_TRAILER_BYTES) return -1;
          break;
        }
        case State.TrailerLf:
          if (buf[i] !== 0x0a) return -1;
          this.state = State.TrailerStart;
          break;
        case State.FinalLf:
          if (buf[i] !== 0x0a) return -1;
          this.state = State.Done;
          return i + 1;
        case State.Done:
          return i;
      }
      i++;
    }
    return i;
  }
}
