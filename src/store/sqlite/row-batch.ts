/**
 * A batch of insert rows (strings, numbers and nulls, every row as wide) as one byte buffer: how
 * the recorder's batches travel to the SQLite writer thread and wait, held by the recorder, until
 * their write is confirmed.
 *
 * Written by hand rather than with `v8.serialize`: the V8 serializer keeps every array it wrote
 * reachable until its own wrapper object is garbage collected (its identity map is a GC root), so
 * each batch's rows, and every string in them, outlived the next scavenge. In perf measurements of
 * the runtime's thread that made a quarter of the young generation survive each scavenge (4-5 ms
 * scavenges, against 1.5 ms), more than the serializing itself cost. Here the only objects made are
 * the buffer and one joined string.
 *
 * Layout: a header of four int32 (format, rows, width, UTF-8 length of the text), one int32 tag per
 * cell (the string's length in UTF-16 units, or NULL / NUMBER), padding to 8 bytes, one float64 per
 * cell (the number, for NUMBER cells), then the UTF-8 text of every string cell in order. The text
 * is decoded back in one piece and cut by the tags' lengths: UTF-8 round trips keep the length of
 * every string (a lone surrogate, which SQLite could not store either, becomes U+FFFD).
 */
import type { SqliteValue } from './record-row.js';

const FORMAT = 0x52_42_01; // "RB" v1
const HEADER_BYTES = 16;
const NULL = -1;
const NUMBER = -2;

const utf8 = new TextDecoder();

function layout(cells: number): { tagsAt: number; numbersAt: number; textAt: number } {
  const tagsAt = HEADER_BYTES;
  const numbersAt = Math.ceil((tagsAt + 4 * cells) / 8) * 8;
  return { tagsAt, numbersAt, textAt: numbersAt + 8 * cells };
}

/** The rows as one buffer. @throws TypeError for a value that is not a string, a number or null, or rows of different widths. */
export function encodeRowBatch(rows: readonly (readonly SqliteValue[])[]): Uint8Array {
  const width = rows[0]?.length ?? 0;
  const cells = rows.length * width;
  const tags = new Int32Array(cells);
  const numbers = new Float64Array(cells);
  const strings: string[] = [];
  let k = 0;
  for (const row of rows) {
    if (row.length !== width) throw new TypeError(`row of ${row.length} values in a batch of rows of ${width}`);
    for (let i = 0; i < width; i++, k++) {
      const value = row[i];
      if (typeof value === 'string') {
        tags[k] = value.length;
        strings.push(value);
      } else if (typeof value === 'number') {
        tags[k] = NUMBER;
        numbers[k] = value;
      } else if (value === null) {
        tags[k] = NULL;
      } else {
        throw new TypeError(`cannot encode a ${typeof value} in a batch of rows`);
      }
    }
  }
  const text = strings.join('');
  const textBytes = Buffer.byteLength(text, 'utf8');
  const { tagsAt, numbersAt, textAt } = layout(cells);
  const out = Buffer.allocUnsafeSlow(textAt + textBytes);
  new Int32Array(out.buffer, out.byteOffset, 4).set([FORMAT, rows.length, width, textBytes]);
  new Int32Array(out.buffer, out.byteOffset + tagsAt, cells).set(tags);
  out.fill(0, tagsAt + 4 * cells, numbersAt);
  new Float64Array(out.buffer, out.byteOffset + numbersAt, cells).set(numbers);
  out.write(text, textAt, textBytes, 'utf8');
  return out;
}

/** The rows of a buffer made by {@link encodeRowBatch}. @throws RangeError when the bytes are not such a buffer. */
export function decodeRowBatch(batch: Uint8Array): SqliteValue[][] {
  // Typed-array views need aligned offsets; a buffer that arrives at an odd offset is copied once.
  const bytes = batch.byteOffset % 8 === 0 ? batch : batch.slice();
  if (bytes.byteLength < HEADER_BYTES) throw new RangeError('not a batch of rows: too short');
  const [format, count, width, textBytes] = new Int32Array(bytes.buffer, bytes.byteOffset, 4) as unknown as [number, number, number, number];
  const cells = count * width;
  const { tagsAt, numbersAt, textAt } = layout(cells);
  if (format !== FORMAT || count < 0 || width < 0 || textAt + textBytes !== bytes.byteLength) {
    throw new RangeError('not a batch of rows: bad header');
  }
  const tags = new Int32Array(bytes.buffer, bytes.byteOffset + tagsAt, cells);
  const numbers = new Float64Array(bytes.buffer, bytes.byteOffset + numbersAt, cells);
  const text = utf8.decode(bytes.subarray(textAt));
  const rows: SqliteValue[][] = [];
  let pos = 0;
  let k = 0;
  for (let r = 0; r < count; r++) {
    const row = new Array<SqliteValue>(width);
    for (let i = 0; i < width; i++, k++) {
      const tag = tags[k]!;
      if (tag >= 0) {
        row[i] = text.slice(pos, pos + tag);
        pos += tag;
      } else if (tag === NUMBER) {
        row[i] = numbers[k]!;
      } else if (tag === NULL) {
        row[i] = null;
      } else {
        throw new RangeError('not a batch of rows: bad cell tag');
      }
    }
    rows.push(row);
  }
  if (pos !== text.length) throw new RangeError('not a batch of rows: text does not match its lengths');
  return rows;
}
