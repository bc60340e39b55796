import { describe, expect, it } from 'vitest';
import type { AgentToolResult } from '../types.js';
import { readFailure } from './read-failure.js';

const NOW = Date.parse('2026-03-29T14:00:00Z');
const raw = (error: Extract<AgentToolResult, { ok: false }>['error']) => readFailure({ ok: false, error }, NOW);

describe('readFailure', () => {
  it('reads transport errors by their errno code, and knows which may have taken effect', () => {
    expect(raw({ code: 'TIMEOUT', message: 'x' })).toMatchObject({ category: 'network', type: 'timeout', ambiguous: true });
    expect(raw({ code: 'ECONNRESET', message: 'x' })).toMatchObject({ category: 'network', type: 'connection_reset', ambiguous: true });
    expect(raw({ code: 'ECONNREFUSED', message: 'x' })).toMatchObject({ category: 'network', ambiguous: false });
    expect(raw({ code: 'ENOTFOUND', message: 'x' })).toMatchObject({ category: 'network', type: 'dns_failure', ambiguous: false });
  });

  it('reads HTTP statuses, Retry-After in seconds or as a date, and the body', () => {
    expect(raw({ code: 'HTTP_429', message: 'x', status: 429, headers: { 'retry-after': '90' } })).toMatchObject({ category: 'rate_limit', retryAfterMs: 90_000 });
    expect(raw({ code: 'HTTP_429', message: 'x', status: 429, headers: { 'retry-after': 'Sun, 29 Mar 2026 14:00:30 GMT' } })).toMatchObject({ retryAfterMs: 30_000 });
    expect(raw({ code: 'HTTP_401', message: 'x', status: 401 })).toMatchObject({ category: 'auth', type: 'unauthorized' });
    expect(raw({ code: 'HTTP_503', message: 'x', status: 503 })).toMatchObject({ category: 'system', type: 'dependency_down', ambiguous: false });
    expect(raw({ code: 'HTTP_502', message: 'x', status: 502 })).toMatchObject({ category: 'system', type: 'server_error', ambiguous: true });
    expect(raw({ code: 'HTTP_400', message: 'x', status: 400, body: { error: { type: 'enum_mismatch' } } })).toMatchObject({ category: 'parameter', type: 'enum_mismatch' });
  });

  it('reads validation issues and service error codes with their details', () => {
    const invalid = raw({ code: 'INVALID_ARGUMENTS', message: 'x', status: 400, body: { issues: [{ path: 'unit', code: 'enum_mismatch', expected: ['celsius', 'fahrenheit'], received: 'k' }] } });
    expect(invalid).toMatchObject({ category: 'parameter', issues: [{ path: 'unit', expected: ['celsius', 'fahrenheit'] }] });
    expect(raw({ code: 'DATE_OUT_OF_RANGE', message: 'x', body: { parameter: 'date', min: 'a', max: 'b' } })).toMatchObject({ category: 'parameter', type: 'boundary_violation', details: { min: 'a', max: 'b' } });
    expect(raw({ code: 'CITY_NOT_FOUND', message: 'x', body: { city: 'Shanghia', suggestions: ['Shanghai'] } })).toMatchObject({ category: 'business', type: 'not_found', details: { suggestions: ['Shanghai'] } });
    expect(raw({ code: 'ORDER_ALREADY_SHIPPED', message: 'x' })).toMatchObject({ category: 'business', type: 'conflict' });
    expect(raw({ code: 'CHANNEL_ARCHIVED', message: 'x' })).toMatchObject({ category: 'business', type: 'precondition_failed' });
    expect(raw({ code: 'OUTPUT_SCHEMA_MISMATCH', message: 'x' })).toMatchObject({ category: 'system', type: 'output_schema_mismatch' });
  });

  it("prefers the runtime's classification in assisted mode", () => {
    const view = readFailure(
      {
        ok: false,
        error: { code: 'TIMEOUT', message: 'x' },
        assisted: { stage: 'execution', category: 'network', type: 'timeout', action: 'verify_state', hint: 'check', retryable: false, absorbedFailures: 0 },
      },
      NOW,
    );
    expect(view).toMatchObject({ category: 'network', type: 'timeout', ambiguous: true });
  });
});
