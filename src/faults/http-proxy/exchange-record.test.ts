import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../record/redact.js';
import { createFaultPlan } from '../plan.js';
import { adminClientAllowed, isLoopbackAddress } from './admin-api.js';
import { buildExchangeRecord, type ExchangeOutcome, type ProxyExchange } from './exchange-record.js';

const T0 = Date.UTC(2026, 2, 29, 14, 0, 0);

function exchange(outcome: ExchangeOutcome, extra: Partial<ProxyExchange> = {}): ProxyExchange {
  return {
    toolName: 'create_order',
    args: { customer_id: 'CUS-1' },
    idempotent: false,
    method: 'POST',
    path: '/tools/create_order',
    route: 'POST /tools/:name',
    traceId: undefined,
    stepIndex: 0,
    startedAt: T0,
    endedAt: T0 + 40,
    decision: undefined,
    faultApplied: true,
    upstreamStatus: 200,
    upstreamError: null,
    outcome,
    details: {},
    ...extra,
  };
}

const options = { redactor: createRedactor() };

describe('proxy exchange records', () => {
  it('classifies a status the way the runtime classifies an HTTP error, Retry-After and ambiguity included', () => {
    const limited = buildExchangeRecord(exchange({ kind: 'response', status: 429, headers: { 'retry-after': '30' }, body: '{"error":{"message":"slow down"}}', bodyBytes: 33 }), options);
    expect(limited).toMatchObject({ status: 'failure', failure_category: 'rate_limit', failure_type: 'rate_limited', error_code: 'HTTP_429', error_message: 'HTTP 429: slow down', feedback: { action: 'wait_and_retry', retry_after_ms: 30_000 } });
    const gateway = buildExchangeRecord(exchange({ kind: 'response', status: 502, headers: {}, body: undefined, bodyBytes: 0 }), options);
    expect(gateway).toMatchObject({ failure_type: 'server_error', error_message: 'HTTP 502 Bad Gateway', raw_output: null, feedback: { action: 'verify_state' } });
    const idempotent = buildExchangeRecord(exchange({ kind: 'response', status: 502, headers: {}, body: undefined, bodyBytes: 0 }, { idempotent: true }), options);
    expect(idempotent.feedback!.action).toBe('skip');
    const fastapi = buildExchangeRecord(exchange({ kind: 'response', status: 401, headers: {}, body: '{"detail":"Unauthorized: token expired"}', bodyBytes: 40 }), options);
    expect(fastapi).toMatchObject({ failure_type: 'unauthorized', error_message: 'HTTP 401: Unauthorized: token expired' });
  });

  it('records a refused errno, a reset, a broken body, a client that gave up and a refused request', () => {
    const refused = buildExchangeRecord(exchange({ kind: 'response', status: 502, headers: {}, body: '{"error":{"code":"ECONNREFUSED"}}', bodyBytes: 33, errno: 'ECONNREFUSED' }), options);
    expect(refused).toMatchObject({ status: 'failure', failure_category: 'network', failure_type: 'connection_refused', error_code: 'ECONNREFUSED', feedback: { action: 'retry' } });
    const reset = buildExchangeRecord(exchange({ kind: 'reset' }), options);
    expect(reset).toMatchObject({ failure_type: 'connection_reset', error_code: 'ECONNRESET', raw_output: null, feedback: { action: 'verify_state' }, context_snapshot: { response_status: null } });
    const broken = buildExchangeRecord(exchange({ kind: 'broken', code: 'UPSTREAM_ERROR', message: 'stopped', status: 200, headers: {}, body: '[1,2', bodyBytes: 4 }), options);
    expect(broken).toMatchObject({ status: 'failure', failure_category: 'network', failure_type: 'connection_reset', error_code: 'ECONNRESET', raw_output: '[1,2', output_length: 4 });
    const gaveUp = buildExchangeRecord(exchange({ kind: 'gave_up' }), options);
    expect(gaveUp).toMatchObject({ status: 'timeout', failure_type: 'timeout', error_code: 'TIMEOUT', duration_ms: 40, attempts: [{ outcome: 'timeout', duration_ms: 40 }] });
    expect(gaveUp.error_message).toBe('no response within 40 ms: the client closed the connection');
    const rejected = buildExchangeRecord(exchange({ kind: 'refused', status: 400, code: 'INVALID_INJECTION', message: 'bad header', body: { error: 'bad header' } }), options);
    expect(rejected).toMatchObject({ status: 'rejected', failure_stage: 'request_build', error_code: 'INVALID_INJECTION', raw_output: '{"error":"bad header"}' });
  });

  it('calls an injected expired credential credential_expired, like the in-process injector', () => {
    const plan = createFaultPlan({ version: 1, rules: [{ tool: '*', fault: 'auth_expiry', params: { after_calls: 0 } }] });
    const decision = plan.decide({ toolName: 'create_order', args: {}, transport: 'http' })!;
    const record = buildExchangeRecord(exchange({ kind: 'response', status: 401, headers: {}, body: '{}', bodyBytes: 2 }, { decision }), options);
    expect(record).toMatchObject({ failure_type: 'credential_expired', fault: { kind: 'auth_expiry', transport: 'http' }, attempts: [{ fault_kind: 'auth_expiry' }] });
  });

  it('describes bodies it cannot show, counts bytes, truncates, and redacts everything it keeps', () => {
    const image = buildExchangeRecord(exchange({ kind: 'response', status: 200, headers: { 'content-type': 'image/png' }, body: '\u0089PNG', bodyBytes: 5120 }), options);
    expect(image).toMatchObject({ status: 'success', raw_output: '[5120 bytes of image/png]', output_length: 5120 });
    const zipped = buildExchangeRecord(exchange({ kind: 'response', status: 200, headers: { 'content-encoding': 'br' }, body: 'xx', bodyBytes: 900 }), options);
    expect(zipped.raw_output).toBe('[900 bytes, br-encoded]');
    const long = buildExchangeRecord(exchange({ kind: 'response', status: 200, headers: {}, body: 'x'.repeat(5000), bodyBytes: 1_000_000 }), { ...options, maxOutputChars: 100 });
    expect(long).toMatchObject({ raw_output: 'x'.repeat(100), output_length: 1_000_000 });
    const secret = buildExchangeRecord(
      exchange(
        { kind: 'response', status: 200, headers: {}, body: '{"token":"abc","note":"Authorization: Bearer 9f8e7d6c5b4a39281706"}', bodyBytes: 60 },
        { args: { password: 'hunter2' }, details: { idempotency_key: 'k-1' } },
      ),
      { ...options, context: { agent: 'a1' } },
    );
    expect(JSON.stringify(secret)).not.toMatch(/hunter2|9f8e7d6c5b4a39281706|"abc"/);
    expect(secret.context_snapshot).toMatchObject({ agent: 'a1', transport: 'http', idempotency_key: 'k-1' });
    const plain = buildExchangeRecord(exchange({ kind: 'response', status: 200, headers: {}, body: '{"password":"hunter2"}', bodyBytes: 22 }), { redactor: undefined });
    expect(plain.raw_output).toContain('hunter2');
  });
});

describe('admin client check', () => {
  it('serves loopback clients always, others only on the admin host they came in on', () => {
    expect(['127.0.0.1', '127.8.9.1', '::1', '::ffff:127.0.0.1'].every(isLoopbackAddress)).toBe(true);
    expect(['10.0.0.5', '::ffff:10.0.0.5', '::2', undefined].some(isLoopbackAddress)).toBe(false);
    expect(adminClientAllowed('::ffff:127.0.0.1', '127.0.0.1', undefined)).toBe(true);
    expect(adminClientAllowed('10.0.0.9', '10.0.0.5', undefined)).toBe(false);
    expect(adminClientAllowed('10.0.0.9', '::ffff:10.0.0.5', '10.0.0.5')).toBe(true);
    expect(adminClientAllowed('10.0.0.9', '192.168.1.2', '10.0.0.5')).toBe(false);
    expect(adminClientAllowed('10.0.0.9', '192.168.1.2', '0.0.0.0')).toBe(true);
  });
});

describe('proxy exchange records: a secret found in one field is scrubbed from the others', () => {
  it('a token masked in the arguments is gone where the upstream error echoes it', () => {
    const token = 'tok_9Zq7Xw2Vb6Nm4Lp9Kj3H';
    const record = buildExchangeRecord(
      exchange({ kind: 'response', status: 401, headers: {}, body: `{"error":{"message":"token ${token} revoked"}}`, bodyBytes: 60 }, { args: { customer_id: 'CUS-1', access_token: token } }),
      options,
    );
    expect(JSON.stringify(record)).not.toContain(token);
    expect(record.error_message).toBe('HTTP 401: token [REDACTED] revoked');
  });
});
