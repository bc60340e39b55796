/**
 * A batch of insert rows (strings, numbers and nulls, every row as wide) as one byte buffer: how
 * the recorder's batches travel to the SQLite writer thread and wait, held by the recorder, until
 * their write is confirmed.
 *
 * Written by hand rather than with `v8.serialize`: the V8 serializer keeps every array it wrote
 * reachable until its own wrapper object is garbage collected (its identity map is a GC root), so
 * each batch's rows, and every string in them, outlived the next scavenge. In perf measurements of
 * the runtime's thread that made a quarter of the young generation survive each scavenge (4-5 ms
 * scavenges, against 1.5 ms), more than the serializing itself cost. Here each row's strings are
 * written straight into one reused buffer (no objects), which is then copied out at its size.
 *
 * Layout: a header of six int32 (format, rows, width, bytes of text, 0, 0), one int32 tag per cell
 * (NULL, NUMBER, or a string: its length when it is ASCII, else UTF8 minus its UTF-8 length),
 * padding to 8 bytes, one float64 per cell (the number, for NUMBER cells), then the strings' bytes
 * in cell order. The reader copies the text once as one-byte characters and cuts the ASCII strings
 * from it; the others (a hint with an ellipsis) are decoded from their bytes one by one. A lone
 * surrogate, which SQLite could not store either, becomes U+FFFD.
 */
import type { SqliteValue } from './record-row.js';

const FORMAT = 0x52_42_03; // "RB" v3
const HEADER_INTS = 6;
const HEADER_BYTES = 4 * HEADER_INTS;
const NULL = -1;
const NUMBER = -2;
/** Tags at or below this mark a string stored as UTF-8 of UTF8 - tag bytes. */
const UTF8 = -3;

function layout(cells: number): { tagsAt: number; numbersAt: number; textAt: number } {
  const tagsAt = HEADER_BYTES;
  const numbersAt = Math.ceil((tagsAt + 4 * cells) / 8) * 8;
  return { tagsAt, numbersAt, textAt: numbersAt + 8 * cells };
}

/** Where batches are written before they are copied out at their exact size; grows as needed. */
let scratch = Buffer.allocUnsafeSlow(1 << 20);

function room(needed: number, used: number): void {
  if (needed <= scratch.length) return;
  const bigger = Buffer.allocUnsafeSlow(Math.max(needed, 2 * scratch.length));
  scratch.copy(bigger, 0, 0, used);
  scratch = bigger;
}

/** The rows as one buffer. @throws TypeError for a value that is not a string, a number or null, or rows of different widths. */
export function encodeRowBatch(rows: readonly (readonly SqliteValue[])[]): Uint8Array {
  const width = rows[0]?.length ?? 0;
  const cells = rows.length * width;
  const { tagsAt, numbersAt, textAt } = layout(cells);
  room(textAt, 0);
  scratch.fill(0, 0, textAt);
  const tags = new Int32Array(scratch.buffer, scratch.byteOffset + tagsAt, cells);
  const numbers = new Float64Array(scratch.buffer, scratch.byteOffset + numbersAt, cells);
  let at = textAt;
  let k = 0;
  for (const row of rows) {
    if (row.length !== width) throw new TypeError(`row of ${row.length} values in a batch of rows of ${width}`);
    // A row's strings are written with one call, joined: a write per string costs more per row
    // than the joining (perf/RESULTS.md). A string is stored as ASCII when its UTF-8 takes as many
    // bytes as it has characters, which holds for the joined text exactly when it holds for each.
    const first = k;
    let text = '';
    for (let i = 0; i < width; i++, k++) {
      const value = row[i];
      if (typeof value === 'string') {
        tags[k] = value.length;
        text += value;
      } else if (typeof value === 'number') {
        tags[k] = NUMBER;
        numbers[k] = value;
      } else if (value === null) {
        tags[k] = NULL;
      } else {
        throw new TypeError(`cannot encode a ${typeof value} in a batch of rows`);
      }
    }
    if (at + 3 * text.length > scratch.length) {
      room(at + 3 * text.length, at);
      return encodeRowBatch(rows); // the views above point into the old buffer: start over in the new one
    }
    const bytes = scratch.write(text, at, 'utf8');
    if (bytes === text.length) {
      at += bytes;
      continue;
    }
    // Some string of the row is not ASCII: its strings again, one by one over the same bytes, so
    // that each gets its own UTF-8 length (and the halves of a surrogate pair split between two
    // cells stay apart, as SQLite would store them).
    for (let i = 0, cell = first; i < width; i++, cell++) {
      const value = row[i];
      if (typeof value !== 'string') continue;
      const written = scratch.write(value, at, 'utf8');
      tags[cell] = written === value.length ? written : UTF8 - written;
      at += written;
    }
  }
  new Int32Array(scratch.buffer, scratch.byteOffset, HEADER_INTS).set([FORMAT, rows.length, width, at - textAt, 0, 0]);
  const out = Buffer.allocUnsafeSlow(at);
  scratch.copy(out, 0, 0, at);
  return out;
}

/** How many rows a buffer made by {@link encodeRowBatch} holds (0 for bytes that are not one). */
export function rowCountOfBatch(batch: Uint8Array): number {
  if (batch.byteLength < HEADER_BYTES) return 0;
  const header = new DataView(batch.buffer, batch.byteOffset, HEADER_BYTES);
  return header.getInt32(0, true) === FORMAT ? Math.max(0, header.getInt32(4, true)) : 0;
}

/** The rows of a buffer made by {@link encodeRowBatch}. @throws RangeError when the bytes are not such a buffer. */
export function decodeRowBatch(batch: Uint8Array): SqliteValue[][] {
  // Typed-array views need aligned offsets; a buffer that arrives at an odd offset is copied once.
  const bytes = batch.byteOffset % 8 === 0 ? batch : batch.slice();
  if (bytes.byteLength < HEADER_BYTES) throw new RangeError('not a batch of rows: too short');
  const [format, count, width, textBytes] = new Int32Array(bytes.buffer, bytes.byteOffset, HEADER_INTS) as unknown as number[];
  const cells = count! * width!;
  const { tagsAt, numbersAt, textAt } = layout(cells);
  if (format !== FORMAT || count! < 0 || width! < 0 || textBytes! < 0 || textAt + textBytes! !== bytes.byteLength) {
    throw new RangeError('not a batch of rows: bad header');
  }
  const tags = new Int32Array(bytes.buffer, bytes.byteOffset + tagsAt, cells);
  const numbers = new Float64Array(bytes.buffer, bytes.byteOffset + numbersAt, cells);
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset + textAt, textBytes);
  // One byte per character: ASCII strings are cut from it at their byte offsets.
  const text = raw.toString('latin1');
  const rows: SqliteValue[][] = [];
  let at = 0;
  let k = 0;
  for (let r = 0; r < count!; r++) {
    const row = new Array<SqliteValue>(width!);
    for (let i = 0; i < width!; i++, k++) {
      const tag = tags[k]!;
      if (tag >= 0) {
        row[i] = text.slice(at, at + tag);
        at += tag;
      } else if (tag === NUMBER) {
        row[i] = numbers[k]!;
      } else if (tag === NULL) {
        row[i] = null;
      } else {
        const length = UTF8 - tag;
        row[i] = raw.toString('utf8', at, at + length);
        at += length;
      }
      if (at > textBytes!) throw new RangeError('not a batch of rows: a string runs past the text');
    }
    rows.push(row);
  }
  if (at !== textBytes) throw new RangeError('not a batch of rows: text does not match its lengths');
  return rows;
}
