import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agedOutput, emptyOutput, malformedText, partialOutput, schemaDriftOutput, semanticDriftOutput } from './output-rewrites.js';

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

describe('output rewrites', () => {
  it('paths reach into arrays on the way', () => {
    const output = { items: [{ city: 'Paris', meta: { at: 1 } }, { city: 'Lyon', meta: { at: 2 } }] };
    expect(partialOutput(output, { drop_fields: ['items.meta.at'] })).toEqual({
      items: [
        { city: 'Paris', meta: {} },
        { city: 'Lyon', meta: {} },
      ],
      warning: 'partial result: items.meta.at unavailable',
    });
    expect(schemaDriftOutput(output, { rename: { 'items.city': 'town' } })).toEqual({
      items: [
        { town: 'Paris', meta: { at: 1 } },
        { town: 'Lyon', meta: { at: 2 } },
      ],
    });
    expect(semanticDriftOutput([{ city: 'Paris' }, { city: 'Lyon' }], { other_entity: { field: 'city', values: ['Paris', 'Nice'] } })).toEqual([{ city: 'Nice' }, { city: 'Paris' }]);
  });

  it('partial on an array output cuts its tail; a field that is not there is not reported missing', () => {
    expect(partialOutput([1, 2, 3], { drop_fraction: 0.5 })).toEqual([1]);
    expect(partialOutput({ a: 1 }, { drop_fields: ['b'] })).toEqual({ a: 1, warning: 'partial result' });
  });

  it('a silent partial cuts the same items and says nothing: only the count beside the list tells', () => {
    const page = { total: 4, offset: 0, limit: 20, orders: [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }] };
    expect(partialOutput(page, { drop_fraction: 0.5, silent: true })).toEqual({ total: 4, offset: 0, limit: 20, orders: [{ id: 1 }, { id: 2 }] });
    expect(partialOutput(page, { drop_fraction: 0.5 })).toMatchObject({ orders: [{ id: 1 }, { id: 2 }], warning: 'partial result: 2 of 4 items returned' });
    expect(page.orders).toHaveLength(4);
  });

  it('retype covers every target', () => {
    const out = schemaDriftOutput(
      { s: 18, n: '18.5', bad: 'x', b: 0, a: 'one', o: 3, z: 'gone', j: { k: 1 } },
      { retype: { s: 'string', n: 'number', bad: 'number', b: 'boolean', a: 'array', o: 'object', z: 'null', j: 'string' } },
    );
    expect(out).toEqual({ s: '18', n: 18.5, bad: 0, b: false, a: ['one'], o: { value: 3 }, z: null, j: '{"k":1}' });
  });

  it('renames keep the key order', () => {
    expect(Object.keys(schemaDriftOutput({ a: 1, b: 2, c: 3 }, { rename: { b: 'beta' } }) as object)).toEqual(['a', 'beta', 'c']);
  });

  it('empty: arrays emptied wherever they are; objects without arrays become {}', () => {
    expect(emptyOutput({ page: 1, data: { rows: [1], n: 1 } })).toEqual({ page: 1, data: { rows: [], n: 1 } });
    expect(emptyOutput({ temp: 18 })).toEqual({});
    expect(emptyOutput('text')).toBe('');
    expect(emptyOutput(5)).toBeNull();
  });

  it('semantic drift limited to listed fields', () => {
    const output = { start: '2026-03-29', end: '2026-03-30', log: ['2026-03-29T10:00:00Z'] };
    expect(semanticDriftOutput(output, { shift_date: 7, fields: ['start', 'log'] })).toEqual({ start: '2026-04-05', end: '2026-03-30', log: ['2026-04-05T10:00:00Z'] });
  });

  it('aging moves date-times only', () => {
    expect(agedOutput({ day: '2026-03-29', at: '2026-03-29T10:00:00Z' }, 3_600_000, undefined)).toEqual({ day: '2026-03-29', at: '2026-03-29T09:00:00Z' });
  });

  it('malformed text never parses', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.string()), (value) => {
        expect(parses(malformedText(value))).toBe(false);
      }),
    );
  });

  it('rewrites never touch the tool output they are given', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const before = JSON.stringify(value);
        partialOutput(value, { drop_fields: ['a', 'b.c'], drop_fraction: 0.5 });
        schemaDriftOutput(value, { rename: { a: 'x' }, retype: { b: 'string' } });
        semanticDriftOutput(value, { shift_date: 1, timezone_shift: 2, other_entity: { field: 'a', value: 1 } });
        agedOutput(value, 1000, undefined);
        emptyOutput(value);
        expect(JSON.stringify(value)).toBe(before);
      }),
    );
  });
});
