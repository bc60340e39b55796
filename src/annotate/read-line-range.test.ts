import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RangeBuffer, readLineRange } from './read-line-range.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-line-range-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file cut at `cuts` (byte offsets), each range read on its own and the pieces joined. */
function readInRanges(text: string, cuts: number[]): string[] {
  const path = join(dir, 'f.txt');
  writeFileSync(path, text);
  const bytes = Buffer.byteLength(text);
  const fd = openSync(path, 'r');
  const buffer = new RangeBuffer();
  try {
    const bounds = [0, ...cuts.filter((c) => c > 0 && c < bytes).sort((a, b) => a - b), bytes];
    return bounds.slice(1).map((end, i) => readLineRange(fd, bounds[i]!, end, buffer).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

describe('readLineRange', () => {
  const lines = ['{"a":1}', '', 'Ünïcödé ✓ line', 'x'.repeat(200_000), 'crlf\r', 'last without end'];
  const text = `${lines.join('\n')}`;
  const bytes = Buffer.byteLength(text);

  it('gives every line exactly once, whole, to the range its first byte is in, wherever the cuts fall', () => {
    // Cuts on and around line ends, inside a multi-byte character and inside a line longer than the read step.
    const special = [1, 7, 8, 9, 10, 12, 30, 100, 70_000, 200_030, bytes - 3, bytes - 1];
    for (const cuts of [[], special, ...special.map((c) => [c]), Array.from({ length: 40 }, (_, i) => Math.floor((i * bytes) / 40))]) {
      const pieces = readInRanges(text, cuts);
      expect(pieces.join('')).toBe(text);
      for (const piece of pieces) {
        if (piece === '') continue;
        expect(text.startsWith(piece) || text.includes(`\n${piece}`)).toBe(true);
        expect(piece.endsWith('\n') || text.endsWith(piece)).toBe(true);
      }
    }
  });

  it('gives an empty range for a range inside one line', () => {
    expect(readInRanges(text, [40, 50, 60])[1]).toBe('');
    expect(readInRanges('abc', [1])).toEqual(['abc', '']);
  });
});
