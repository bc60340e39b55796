import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkedFraming } from './chunked-framing.js';

/** Feeds `wire` in the given pieces; returns the payload, where the body ended, or -1. */
function run(wire: Buffer, cuts: number[]): { payload: string; end: number } {
  const framing = new ChunkedFraming();
  const payload: Buffer[] = [];
  const points = [...new Set([0, ...cuts.filter((c) => c > 0 && c < wire.length), wire.length])].sort((a, b) => a - b);
  for (let i = 0; i + 1 < points.length; i++) {
    const piece = wire.subarray(points[i]!, points[i + 1]!);
    const used = framing.feed(piece, 0, piece.length, (b, s, e) => payload.push(b.subarray(s, e)));
    if (used === -1) return { payload: '', end: -1 };
    if (framing.done) return { payload: Buffer.concat(payload).toString(), end: points[i]! + used };
  }
  return { payload: Buffer.concat(payload).toString(), end: framing.done ? wire.length : NaN };
}

describe('ChunkedFraming', () => {
  it('finds the end of a chunked body however it is cut, and hands on the payload', () => {
    const wire = Buffer.from('5;ext=1\r\nhello\r\n1A\r\n' + 'x'.repeat(26) + '\r\n0\r\nTrailer: t\r\n\r\nGET /next');
    const end = wire.indexOf('GET /next');
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: wire.length }), { maxLength: 12 }), (cuts) => {
        expect(run(wire, cuts)).toEqual({ payload: 'hello' + 'x'.repeat(26), end });
      }),
    );
    // Byte by byte.
    expect(run(wire, Array.from({ length: wire.length }, (_, i) => i))).toEqual({ payload: 'hello' + 'x'.repeat(26), end });
  });

  it('takes an empty body and resets for the next message', () => {
    const framing = new ChunkedFraming();
    const wire = Buffer.from('0\r\n\r\n');
    expect(framing.feed(wire, 0, wire.length)).toBe(5);
    expect(framing.done).toBe(true);
    framing.reset();
    expect(framing.done).toBe(false);
    expect(framing.feed(wire, 0, 3)).toBe(3);
  });

  it('refuses broken framing', () => {
    for (const bad of ['x\r\n', '\r\n', '5\r\nhelloX\r\n', '5\n', '1234567890abc\r\n', '3\r\nabc\r\n0\r\nt: 1\n\r\n']) {
      expect(run(Buffer.from(bad), []).end, JSON.stringify(bad)).toBe(-1);
    }
  });
});
