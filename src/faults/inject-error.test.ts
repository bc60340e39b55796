import { describe, expect, it } from 'vitest';
import { parseInjectHeader } from './inject-error.js';

function ok(value: string, commit?: string) {
  const r = parseInjectHeader(value, commit);
  if (!r.ok) throw new Error(r.message);
  return r.decision;
}

describe('parseInjectHeader', () => {
  it('turns statuses into responses that skip the tool unless committed', () => {
    const d = ok('503');
    expect(d).toMatchObject({ kind: 'http_status', forward: false, delayMs: 0, fault: { kind: 'http_status', rule_id: 'x-inject-error', transport: 'http' } });
    expect(d.effect).toMatchObject({ type: 'respond', status: 503, body: { error: { type: 'dependency_down' } } });
    expect(d.effect.type === 'respond' ? d.effect.headers['retry-after'] : 'not a response').toBeUndefined();
    expect(ok('500', 'true').forward).toBe(true);
    expect(ok('500', 'no').forward).toBe(false);
  });

  it('turns 400 into an invalid-parameters answer, as the fault plan\'s http_status 400', () => {
    const d = ok('400');
    expect(d).toMatchObject({ kind: 'http_status', forward: false, params: { status: 400, commit: false } });
    if (d.effect.type !== 'respond') throw new Error('expected a response');
    expect(d.effect.status).toBe(400);
    expect(d.effect.headers).toEqual({ 'content-type': 'application/json' });
    expect(d.effect.body).toEqual({ error: { type: 'schema_mismatch', code: 'HTTP_400', message: "Bad Request: invalid parameters: the arguments do not match the tool's input schema" } });
    expect(d.effect.message).toMatch(/^HTTP 400: Bad Request: invalid parameters/);
    const withWait = parseInjectHeader('400:5');
    expect(!withWait.ok && withWait.message).toBe('x-inject-error: only 429 and 503 take a Retry-After (":<seconds>")');
  });

  it('gives 429 a Retry-After, by default 2 s, and lets 429/503 set it', () => {
    const e429 = ok('429').effect;
    expect(e429.type === 'respond' && e429.headers['retry-after']).toBe('2');
    const e7 = ok('429:7').effect;
    expect(e7.type === 'respond' && e7.headers['retry-after']).toBe('7');
    const e503 = ok('503:0').effect;
    expect(e503.type === 'respond' && e503.headers['retry-after']).toBe('0');
    const e401 = ok('401').effect;
    expect(e401.type === 'respond' && e401.headers['www-authenticate']).toMatch(/invalid_token/);
  });

  it('maps the wire faults', () => {
    expect(ok('timeout')).toMatchObject({ kind: 'timeout', forward: false, effect: { type: 'timeout', afterMs: null } });
    expect(ok('timeout', '1')).toMatchObject({ kind: 'commit_then_drop', forward: true });
    expect(ok('RESET')).toMatchObject({ kind: 'connection_reset', effect: { type: 'drop', code: 'ECONNRESET' } });
    expect(ok('slow:250')).toMatchObject({ kind: 'latency', delayMs: 250, forward: true, effect: { type: 'pass' } });
    expect(ok('malformed').effect.type).toBe('malformed');
    expect(ok('empty').effect.type).toBe('rewrite');
  });

  it('rewrites partial and empty bodies the way a real degraded upstream would', () => {
    const partial = ok('partial').effect;
    if (partial.type !== 'rewrite') throw new Error('expected a rewrite');
    const lone = partial.rewrite({ city: 'Beijing', temp: 18, humidity: 40, wind: 3 }) as Record<string, unknown>;
    expect(lone).toMatchObject({ city: 'Beijing', temp: 18 });
    expect(lone).not.toHaveProperty('humidity');
    expect(lone['warning']).toMatch(/humidity, wind/);
    const listed = partial.rewrite({ total: 4, results: [1, 2, 3, 4] }) as Record<string, unknown>;
    expect(listed).toMatchObject({ total: 4, results: [1, 2] });
    const empty = ok('empty').effect;
    if (empty.type !== 'rewrite') throw new Error('expected a rewrite');
    expect(empty.rewrite({ total: 4, results: [1, 2, 3, 4] })).toEqual({ total: 4, results: [] });
  });

  it('cuts malformed bodies so they never parse', () => {
    const effect = ok('malformed').effect;
    if (effect.type !== 'malformed') throw new Error('expected malformed');
    expect(() => JSON.parse(effect.render({ city: 'Shanghai', temp: 18 }))).toThrow(SyntaxError);
  });

  it('refuses what it does not know, with a message listing what it does', () => {
    for (const bad of ['418', 'explode', 'slow', 'slow:-1', 'slow:abc', '401:5', '429:x', 'reset:3', '429:', '503:', 'slow:', 'slow:1e3', 'slow:0x10', '429:1.5', '429:1e2']) {
      const r = parseInjectHeader(bad);
      expect(r.ok, bad).toBe(false);
    }
    const r = parseInjectHeader('explode');
    expect(!r.ok && r.message).toMatch(/\(use 400, 401, 403, .*timeout, reset, partial/);
    const status = parseInjectHeader('418');
    expect(!status.ok && status.message).toBe('x-inject-error: unsupported status 418 (use 400, 401, 403, 404, 409, 429, 500, 502, 503 or 504)');
    expect(parseInjectHeader('500', 'maybe').ok).toBe(false);
  });
});
