import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, paramsHash } from './params-hash.js';

function shuffleKeys(value: unknown, seed: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  const entries = Object.entries(value);
  const rotated = entries.map((_, i) => entries[(i + seed) % entries.length]!);
  return Object.fromEntries(rotated.map(([k, v]) => [k, shuffleKeys(v, seed)]));
}

describe('paramsHash', () => {
  it('ignores key order at every depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 10 }), (value, seed) => {
        expect(paramsHash(shuffleKeys(value, seed))).toBe(paramsHash(value));
      }),
    );
  });

  it('tells different values apart, including delimiter tricks', () => {
    const values = [
      { a: 'x', b: 'y' },
      { a: 'x","b":"y' },
      { a: 'x', b: 'y', c: null },
      { a: ['x', 'y'] },
      { a: 'xy' },
      { a: 1 },
      { a: '1' },
      { a: true },
      { a: 'true' },
      [],
      {},
      '',
      null,
    ];
    const hashes = values.map(paramsHash);
    expect(new Set(hashes).size).toBe(values.length);
    hashes.forEach((h) => expect(h).toMatch(/^[0-9a-f]{16}$/));
  });

  it('has no collisions over many distinct small values', () => {
    const seen = new Map<string, string>();
    for (let i = 0; i < 50_000; i++) {
      const v = { city: `c${i}`, days: i % 7, unit: i % 2 ? 'celsius' : 'fahrenheit' };
      const h = paramsHash(v);
      expect(seen.has(h)).toBe(false);
      seen.set(h, JSON.stringify(v));
    }
  });
});

describe('canonicalJson', () => {
  it('sorts keys and parses back to an equal value', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }], e: undefined })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it('gives one text whatever the key order, integer-like and non-ASCII keys included', () => {
    expect(canonicalJson({ 10: 'a', 2: 'b', b: [undefined, () => 1], a: null, é: 1, Z: 2 })).toBe(
      '{"10":"a","2":"b","Z":2,"a":null,"b":[null,null],"é":1}',
    );
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(7), (v, seed) => {
        expect(canonicalJson(shuffleKeys(v, seed))).toBe(canonicalJson(v));
      }),
    );
  });
});
