import { describe, expect, it } from 'vitest';
import { cloneJson } from './clone-json.js';

describe('cloneJson', () => {
  it('clones JSON values deeply but shares other objects', () => {
    const date = new Date(0);
    const v = { a: [1, { b: 2 }], d: date };
    const c = cloneJson(v) as typeof v;
    expect(c).toEqual(v);
    expect(c.a).not.toBe(v.a);
    expect(c.d).toBe(date);
  });
});
