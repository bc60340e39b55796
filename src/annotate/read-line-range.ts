/**
 * The lines of a file that start in a byte range, read with positioned reads: several workers can
 * cut one file into ranges and each read its own, with no thread reading the file for the others.
 * A line belongs to the range its first byte is in, so consecutive ranges hold every line exactly
 * once: a range skips the end of a line begun before it and reads on past its end to finish its
 * last line. Only `\n` cuts ranges (it never occurs inside a UTF-8 sequence, and a CRLF's `\n` is
 * its last byte); the caller splits the lines as it likes.
 */
import { readSync } from 'node:fs';

const LF = 0x0a;
/** How far to read at a time past the range's end while looking for the end of its last line. */
const STEP = 64 << 10;

/** A reusable read buffer that grows to the largest block read. */
export class RangeBuffer {
  bytes: Buffer = Buffer.allocUnsafe(0);

  ensure(size: number, keep: number): Buffer {
    if (this.bytes.length < size) {
      const larger = Buffer.allocUnsafe(Math.max(size, this.bytes.length * 2));
      this.bytes.copy(larger, 0, 0, keep);
      this.bytes = larger;
    }
    return this.bytes;
  }
}

function readFully(fd: number, into: Buffer, offset: number, length: number, position: number): number {
  let done = 0;
  while (done < length) {
    const n = readSync(fd, into, offset + done, length - done, position + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * The bytes of the lines starting in [start, end) of the open file `fd`, in `buffer`; empty when
 * no line starts there. The result is a view of the buffer, valid until its next use.
 */
export function readLineRange(fd: number, start: number, end: number, buffer: RangeBuffer): Buffer {
  // Positions below are relative to `from`: one byte before the range tells whether a line starts at `start`.
  const from = start === 0 ? 0 : start - 1;
  const rangeEnd = end - from;
  let bytes = buffer.ensure(rangeEnd + STEP, 0);
  let filled = readFully(fd, bytes, 0, rangeEnd, from);
  let first = 0;
  if (start > 0) {
    const lf = bytes.subarray(0, filled).indexOf(LF);
    if (lf < 0) return bytes.subarray(0, 0);
    first = lf + 1;
  }
  if (first >= rangeEnd || first >= filled) return bytes.subarray(0, 0);
  if (filled < rangeEnd) return bytes.subarray(first, filled); // the file ends inside the range
  // The last line is the one holding the range's last byte: it ends at the first line end from there on.
  let searchFrom = rangeEnd - 1;
  for (;;) {
    const lf = bytes.subarray(0, filled).indexOf(LF, searchFrom);
    if (lf >= 0) return bytes.subarray(first, lf + 1);
    searchFrom = filled;
    bytes = buffer.ensure(filled + STEP, filled);
    const n = readFully(fd, bytes, filled, STEP, from + filled);
    if (n === 0) return bytes.subarray(first, filled);
    filled += n;
  }
}
