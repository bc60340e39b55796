import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import {
  cachedFailureSignature,
  failureSignature,
  NORMALIZED_MESSAGE_MAX_LENGTH,
  normalizeMessage,
  SIGNATURE_CACHE_MAX_ENTRIES,
  signatureHash,
} from './failure-signature.js';

describe('normalizeMessage', () => {
  it.each([
    ['order 123 not found', 'order <n> not found'],
    ['order 456 not found', 'order <n> not found'],
    ['timed out after 3000.5ms (attempt 2/3)', 'timed out after <n>ms (attempt <n>/<n>)'],
    ['row 0195d1a0-7c3e-7a11-8f00-3c9d1e2f4a5b is locked', 'row <uuid> is locked'],
    ['GET https://api.example.com/v2/orders/88?x=1 failed', 'GET <url> failed'],
    ['mail to Jane.Doe+ops@example.co.uk bounced', 'mail to <email> bounced'],
    ['field "customer_id" is required', 'field <str> is required'],
    ["must have required property 'city'", 'must have required property <str>'],
    ["can't find user's cart", "can't find user's cart"],
    ['request req_9f86d081884c7d65 rejected', 'request req_<hex> rejected'],
    ['segfault at 0x7ffd5e8c', 'segfault at <hex>'],
    ['facade added to deadbeef cafe', 'facade added to deadbeef cafe'],
    ['  many\n\tspaces   here ', 'many spaces here'],
    ['ord_8812 missing', 'ord_<n> missing'],
  ])('%s', (input, expected) => {
    expect(normalizeMessage(input)).toBe(expected);
  });

  it('maps null, undefined and empty to the empty string', () => {
    expect(normalizeMessage(null)).toBe('');
    expect(normalizeMessage(undefined)).toBe('');
    expect(normalizeMessage('')).toBe('');
  });

  it('caps the length and never leaves digits, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 600 }), (s) => {
        const n = normalizeMessage(s);
        expect(n.length).toBeLessThanOrEqual(NORMALIZED_MESSAGE_MAX_LENGTH);
        expect(n).not.toMatch(/[0-9]/);
        expect(n).not.toMatch(/\s\s/);
      }),
    );
  });

  it('cuts long messages without leaving a trailing space or half a surrogate pair', () => {
    const spaced = `${'x'.repeat(NORMALIZED_MESSAGE_MAX_LENGTH - 1)} tail`;
    expect(normalizeMessage(spaced)).toBe('x'.repeat(NORMALIZED_MESSAGE_MAX_LENGTH - 1));
    const emoji = `${'y'.repeat(NORMALIZED_MESSAGE_MAX_LENGTH - 1)}😀`;
    expect(normalizeMessage(emoji)).toBe('y'.repeat(NORMALIZED_MESSAGE_MAX_LENGTH - 1));
  });

  // Arbitrary quote soup can pair differently once inner strings are replaced, so idempotency is
  // checked over messages assembled from the tokens real errors contain.
  const tokenArb = fc.oneof(
    fc.constantFrom('order', 'not', 'found', 'timed', 'out', 'after', 'at', 'row', 'is', 'locked', "can't", ':', ',', '(got', ')'),
    fc.nat().map(String),
    fc.uuid(),
    fc.stringMatching(/^https:\/\/[a-z]{2,8}\.example\.com\/[a-z0-9\/]{0,12}(\?id=[0-9]{1,4})?$/),
    fc.stringMatching(/^[a-z][a-z0-9.+]{0,10}@[a-z]{2,8}\.(com|org|io)$/),
    fc.stringMatching(/^[a-z ]{0,12}$/).map((w) => `"${w}"`),
    fc.stringMatching(/^[a-z_]{1,8}$/).map((w) => `'${w}'`),
    fc.stringMatching(/^[0-9a-f]{8,20}$/).map((h) => `req_${h}`),
  );
  it('is idempotent on realistic messages', () => {
    fc.assert(
      fc.property(fc.array(tokenArb, { maxLength: 60 }).map((t) => t.join(' ')), (s) => {
        const once = normalizeMessage(s);
        expect(normalizeMessage(once)).toBe(once);
      }),
    );
  });
});

describe('failureSignature', () => {
  const base = {
    tool_name: 'search_orders',
    failure_stage: 'execution' as const,
    failure_category: 'business' as const,
    failure_type: 'not_found',
    error_code: 'HTTP_404',
  };

  it('is null for successes', () => {
    expect(failureSignature(makeRecord())).toBeNull();
  });

  it('is the same for messages that differ only in ids, and stable across calls', () => {
    const a = failureSignature(makeFailureRecord({ ...base, error_message: 'order 123 not found' }))!;
    const b = failureSignature(makeFailureRecord({ ...base, error_message: 'order 456 not found' }))!;
    expect(a).toEqual(b);
    expect(a).toEqual({
      signature: signatureHash('search_orders', 'execution', 'not_found', 'HTTP_404', 'order <n> not found'),
      tool_name: 'search_orders',
      failure_stage: 'execution',
      failure_type: 'not_found',
      error_code: 'HTTP_404',
      normalized_message: 'order <n> not found',
    });
    expect(a.signature).toMatch(/^[0-9a-f]{16}$/);
  });

  it('differs when any part of the shape differs', () => {
    const sig = (over: Partial<Parameters<typeof makeFailureRecord>[0]>) =>
      failureSignature(makeFailureRecord({ ...base, error_message: 'order 1 not found', ...over }))!.signature;
    const reference = sig({});
    expect(sig({ tool_name: 'other' })).not.toBe(reference);
    expect(sig({ failure_stage: 'result_parse' })).not.toBe(reference);
    expect(sig({ failure_type: 'no_results' })).not.toBe(reference);
    expect(sig({ error_code: 'HTTP_410' })).not.toBe(reference);
    expect(sig({ error_code: null })).not.toBe(reference);
    expect(sig({ error_message: 'customer 1 not found' })).not.toBe(reference);
  });

  it('files unclassified failures under execution / unclassified and timeouts under timeout', () => {
    const unclassified = failureSignature(
      makeRecord({ status: 'failure', error_message: 'boom', error_code: null }),
    )!;
    expect(unclassified).toMatchObject({ failure_stage: 'execution', failure_type: 'unclassified' });
    const timeout = failureSignature(makeRecord({ status: 'timeout', error_message: null, error_code: null }))!;
    expect(timeout).toMatchObject({ failure_type: 'timeout', normalized_message: '' });
  });

  it('does not collide when fields would concatenate to the same text', () => {
    expect(signatureHash('a', 'execution', 'b_c', null, '')).not.toBe(signatureHash('a', 'execution', 'b', '_c', ''));
  });
});

describe('cachedFailureSignature', () => {
  const shape = fc.record({
    status: fc.constantFrom('failure' as const, 'timeout' as const, 'rejected' as const, 'success' as const),
    tool_name: fc.constantFrom('a', 'b'),
    failure_stage: fc.constantFrom(null, 'execution' as const, 'param_validation' as const),
    failure_type: fc.constantFrom(null, '', 'timeout', 'not_found'),
    error_code: fc.constantFrom(null, '', 'HTTP_404'),
    error_message: fc.oneof(fc.constantFrom(null, '', 'order 12 not found', 'order 13 not found'), fc.string({ maxLength: 1100 })),
  });

  it('answers exactly what failureSignature answers, including null and empty fields', () => {
    fc.assert(
      fc.property(fc.array(shape, { minLength: 1, maxLength: 30 }), (records) => {
        // Twice over: the second pass answers from the cache.
        for (const record of [...records, ...records]) expect(cachedFailureSignature(record)).toEqual(failureSignature(record));
      }),
    );
  });

  it('computes a repeated failure once (the same frozen object) and stays right past its size bound', () => {
    const record = { status: 'failure' as const, tool_name: 'cache_probe', failure_stage: 'execution' as const, failure_type: 'not_found', error_code: 'HTTP_404' };
    const first = cachedFailureSignature({ ...record, error_message: 'order 1 not found' })!;
    expect(cachedFailureSignature({ ...record, error_message: 'order 1 not found' })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    for (let i = 0; i <= SIGNATURE_CACHE_MAX_ENTRIES; i++) {
      const message = `user-${i} is not allowed`;
      expect(cachedFailureSignature({ ...record, error_message: message })).toEqual(failureSignature({ ...record, error_message: message }));
    }
    expect(cachedFailureSignature({ ...record, error_message: 'order 1 not found' })).toEqual(first);
  });
});
