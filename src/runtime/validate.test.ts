import { describe, expect, it } from 'vitest';
import { compileInputValidator, compileOutputValidator, failureTypeOf, formatPath } from './validate.js';

const schema = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1 },
    days: { type: 'integer', minimum: 1, maximum: 7, default: 1 },
    unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius', 'x-synonyms': { c: 'celsius', f: 'fahrenheit' } },
    filters: {
      type: 'object',
      properties: { region: { enum: ['EU', 'US'] }, tags: { type: 'array', items: { type: 'string' }, maxItems: 2 } },
      additionalProperties: false,
    },
    items: { type: 'array', items: { type: 'object', properties: { qty: { type: 'number' } }, required: ['qty'] } },
    email: { type: 'string', format: 'email' },
  },
  required: ['city'],
};

describe('input validation', () => {
  const validate = compileInputValidator(schema);

  it('fills defaults and coerces numeric strings without touching the input', () => {
    const input = { city: 'Paris', days: '3' };
    const r = validate(input);
    expect(r).toEqual({ ok: true, value: { city: 'Paris', days: 3, unit: 'celsius' } });
    expect(input).toEqual({ city: 'Paris', days: '3' });
  });

  it('matches enums case-insensitively, through separators, and through synonyms, at any depth', () => {
    expect(validate({ city: 'X', unit: 'CELSIUS', filters: { region: 'eu' } })).toMatchObject({ ok: true, value: { unit: 'celsius', filters: { region: 'EU' } } });
    expect(validate({ city: 'X', unit: 'F' })).toMatchObject({ ok: true, value: { unit: 'fahrenheit' } });
  });

  it('tolerates extra properties unless the schema forbids them', () => {
    expect(validate({ city: 'X', verbose: true }).ok).toBe(true);
    const r = validate({ city: 'X', filters: { colour: 'red' } });
    expect(r).toEqual({ ok: false, issues: [{ code: 'unknown_property', path: 'filters.colour', message: 'unknown property "colour" is not allowed' }] });
  });

  it('reports every problem with a code, a path and a message', () => {
    const r = validate({ days: 0, unit: 'kelvin', filters: { tags: ['a', 'b', 'c'] }, items: [{ qty: 1 }, {}], email: 'not-an-email' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => [i.code, i.path])).toEqual([
      ['missing_required', 'city'],
      ['boundary_violation', 'days'],
      ['enum_mismatch', 'unit'],
      ['boundary_violation', 'filters.tags'],
      ['missing_required', 'items[1].qty'],
      ['format_mismatch', 'email'],
    ]);
    expect(r.issues[2]!.message).toBe('must be one of "celsius", "fahrenheit"; got "kelvin"');
    expect(r.issues[1]!.message).toBe('must be >= 1, got 0');
    expect(failureTypeOf(r.issues)).toBe('missing_required');
  });

  it('reports type mismatches that cannot be coerced', () => {
    const r = validate({ city: 'X', days: 'three' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]).toMatchObject({ code: 'type_mismatch', path: 'days', expected: 'integer', received: 'three' });
  });

  it('accepts a 2020-12 $schema declaration', () => {
    const v = compileInputValidator({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { a: { type: 'number' } } });
    expect(v({ a: '1' })).toEqual({ ok: true, value: { a: 1 } });
  });
});

describe('output validation', () => {
  it('is strict: no coercion, no defaults', () => {
    const v = compileOutputValidator({ type: 'object', properties: { n: { type: 'number' }, d: { type: 'string', default: 'x' } }, required: ['n'] });
    const out = { n: 1 };
    expect(v(out)).toEqual({ ok: true, value: out });
    expect(out).toEqual({ n: 1 });
    const bad = v({ n: '1' });
    expect(bad.ok).toBe(false);
  });
});

describe('helpers', () => {
  it('formats JSON pointers as readable paths', () => {
    expect(formatPath('')).toBe('');
    expect(formatPath('/a/0/b')).toBe('a[0].b');
    expect(formatPath('/with space/x~1y')).toBe('["with space"]["x/y"]');
  });

});

describe('compiled validators are shared between equal schemas', () => {
  it('compiles an equal schema (a new object each time, as tool catalogs make them) once, and still validates', () => {
    const schema = () => ({ $id: 'urn:test:shared', type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] });
    const a = compileInputValidator(schema());
    const b = compileInputValidator(schema());
    expect(a({ n: '2' })).toEqual({ ok: true, value: { n: 2 } });
    expect(b({ n: 0 })).toMatchObject({ ok: false, issues: [{ code: 'boundary_violation', path: 'n' }] });
    const out = compileOutputValidator(schema());
    expect(compileOutputValidator(schema())({ n: 1 })).toEqual({ ok: true, value: { n: 1 } });
    expect(out({})).toMatchObject({ ok: false, issues: [{ code: 'missing_required', path: 'n' }] });
  });
});
