import { describe, expect, it } from 'vitest';
import type { SqliteValue } from './record-row.js';
import { decodeRowBatch, encodeRowBatch, rowCountOfBatch } from './row-batch.js';

describe('row batches', () => {
  it('round-trips strings (any text), numbers and nulls, row by row', () => {
    const rows: SqliteValue[][] = [
      ['plain', 0, null, '', -1.5],
      ['héllo wörld ✓ 😀 日本', Number.MAX_SAFE_INTEGER, 'null', '{"a":"\\u0000\\n"}', 1e300],
      ['\u0000\u001f', -0, null, 'x'.repeat(5000), Number.NaN],
    ];
    const decoded = decodeRowBatch(encodeRowBatch(rows));
    expect(decoded).toEqual(rows);
    expect(Object.is(decoded[2]![1], -0)).toBe(true);
    expect(decodeRowBatch(encodeRowBatch([]))).toEqual([]);
    expect(rowCountOfBatch(encodeRowBatch(rows))).toBe(3);
    expect(rowCountOfBatch(new Uint8Array([1, 2, 3]))).toBe(0);
  });

  it('encodes batches larger than its scratch buffer, and what follows them', () => {
    const big = Array.from({ length: 400 }, (_, i) => [`${i}:${'é'.repeat(1000)}${'x'.repeat(3000)}`, i]);
    expect(decodeRowBatch(encodeRowBatch(big))).toEqual(big);
    expect(decodeRowBatch(encodeRowBatch([['small', 1]]))).toEqual([['small', 1]]);
  });

  it('stores a lone surrogate as U+FFFD (as SQLite would), keeping the strings after it intact', () => {
    const [row] = decodeRowBatch(encodeRowBatch([['a\ud800b', 'after']]));
    expect(row).toEqual(['a\ufffdb', 'after']);
  });

  it('keeps each string its own: halves of a surrogate pair in two cells, ASCII rows around a non-ASCII one', () => {
    const rows: SqliteValue[][] = [
      ['ascii', 1, 'more ascii'],
      ['\ud83d', 2, '\ude00'],
      ['x', 3, '…'],
      ['tail', 4, null],
    ];
    expect(decodeRowBatch(encodeRowBatch(rows))).toEqual([
      ['ascii', 1, 'more ascii'],
      ['\ufffd', 2, '\ufffd'],
      ['x', 3, '…'],
      ['tail', 4, null],
    ]);
  });

  it('decodes a batch that arrives at an unaligned offset', () => {
    const bytes = encodeRowBatch([['x', 1, null]]);
    const shifted = new Uint8Array(bytes.byteLength + 3);
    shifted.set(bytes, 3);
    expect(decodeRowBatch(shifted.subarray(3))).toEqual([['x', 1, null]]);
  });

  it('refuses values it cannot carry, rows of different widths, and bytes that are not a batch', () => {
    expect(() => encodeRowBatch([[{ a: 1 } as unknown as SqliteValue]])).toThrow(TypeError);
    expect(() => encodeRowBatch([['a', 'b'], ['c']])).toThrow(TypeError);
    expect(() => decodeRowBatch(new Uint8Array([1, 2, 3]))).toThrow(RangeError);
    const bytes = encodeRowBatch([['abc', 2]]);
    expect(() => decodeRowBatch(bytes.subarray(0, bytes.byteLength - 1))).toThrow(RangeError);
    const tampered = Uint8Array.from(bytes);
    new Int32Array(tampered.buffer, 24, 1)[0] = 5; // the first cell: a string longer than the text
    expect(() => decodeRowBatch(tampered)).toThrow(RangeError);
  });
});
