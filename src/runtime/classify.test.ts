import { describe, expect, it } from 'vitest';
import { classifyError, classifyHttpStatus, classifyOutput } from './classify.js';
import { AuthError, BusinessError, HttpError, ParameterError, ToolError, toolError } from './tool-errors.js';

const NOW = Date.parse('2026-03-29T14:00:00Z');
const err = (props: Record<string, unknown>, message = 'failed') => Object.assign(new Error(message), props);

describe('classification: every row of the taxonomy table', () => {
  it.each([
    // parameter
    [err({ status: 400 }), 'parameter', 'schema_mismatch', 'HTTP_400'],
    [err({ statusCode: 422 }), 'parameter', 'schema_mismatch', 'HTTP_422'],
    [err({ status: 413 }), 'parameter', 'boundary_violation', 'HTTP_413'],
    [new ParameterError('boundary_violation', 'date before 2020'), 'parameter', 'boundary_violation', 'BOUNDARY_VIOLATION'],
    [err({ code: -32602 }), 'parameter', 'schema_mismatch', 'MCP_-32602'],
    [err({ code: -32601 }), 'parameter', 'unknown_tool', 'MCP_-32601'],
    // auth
    [err({ status: 401 }), 'auth', 'unauthorized', 'HTTP_401'],
    [err({ response: { status: 403 } }), 'auth', 'forbidden', 'HTTP_403'],
    [new AuthError('credential_expired', 'expired'), 'auth', 'credential_expired', 'CREDENTIAL_EXPIRED'],
    // network
    [err({ code: 'ECONNREFUSED' }), 'network', 'connection_refused', 'ECONNREFUSED'],
    [err({ code: 'ECONNRESET' }), 'network', 'connection_reset', 'ECONNRESET'],
    [err({ code: 'ENOTFOUND' }), 'network', 'dns_failure', 'ENOTFOUND'],
    [err({ code: 'EAI_AGAIN' }), 'network', 'dns_failure', 'EAI_AGAIN'],
    [err({ code: 'ETIMEDOUT' }), 'network', 'timeout', 'ETIMEDOUT'],
    [new TypeError('fetch failed', { cause: err({ code: 'ECONNREFUSED' }) }), 'network', 'connection_refused', 'ECONNREFUSED'],
    [new DOMException('signal timed out', 'TimeoutError'), 'network', 'timeout', 'TIMEOUT'],
    [err({ status: 407 }), 'network', 'proxy_failed', 'HTTP_407'],
    [err({ code: -32001 }), 'network', 'timeout', 'MCP_-32001'],
    // rate limit
    [err({ status: 429 }), 'rate_limit', 'rate_limited', 'HTTP_429'],
    [err({ status: 429, error: { code: 'insufficient_quota' } }), 'rate_limit', 'quota_exhausted', 'HTTP_429'],
    // business
    [new BusinessError('no_results', 'nothing'), 'business', 'no_results', 'NO_RESULTS'],
    [err({ status: 404 }), 'business', 'not_found', 'HTTP_404'],
    [err({ status: 409 }), 'business', 'conflict', 'HTTP_409'],
    [err({ status: 412 }), 'business', 'precondition_failed', 'HTTP_412'],
    [new BusinessError('partial_result', 'half'), 'business', 'partial_result', 'PARTIAL_RESULT'],
    // system
    [err({ status: 500 }), 'system', 'server_error', 'HTTP_500'],
    [new HttpError(502, 'bad gateway'), 'system', 'server_error', 'HTTP_502'],
    [err({ status: 503 }), 'system', 'dependency_down', 'HTTP_503'],
    [err({ code: -32603 }), 'system', 'server_error', 'MCP_-32603'],
    [new RangeError('bug'), 'system', 'runtime_error', 'RangeError'],
    [new Error('plain'), 'system', 'runtime_error', 'RUNTIME_ERROR'],
    ['a thrown string', 'system', 'runtime_error', 'THROWN_VALUE'],
    [new DOMException('aborted', 'AbortError'), 'system', 'cancelled', 'ABORTED'],
    [toolError('dependency_down', 'db is down'), 'system', 'dependency_down', 'DEPENDENCY_DOWN'],
  ])('%s -> %s/%s', (error, category, type, code) => {
    const c = classifyError(error, NOW);
    expect([c.category, c.type, c.code]).toEqual([category, type, code]);
  });

  it('never reads message text: a message that says "timeout" is still a runtime error', () => {
    expect(classifyError(new Error('ETIMEDOUT: upstream timeout 429'), NOW).type).toBe('runtime_error');
  });

  it('marks outcomes that may have taken effect as ambiguous', () => {
    expect(classifyError(err({ code: 'ECONNRESET' }), NOW).ambiguous).toBe(true);
    expect(classifyError(err({ status: 504 }), NOW).ambiguous).toBe(true);
    expect(classifyError(err({ code: 'ECONNREFUSED' }), NOW).ambiguous).toBe(false);
    expect(classifyError(err({ status: 503 }), NOW).ambiguous).toBe(false);
    expect(classifyError(err({ status: 429 }), NOW).ambiguous).toBe(false);
  });

  it('takes Retry-After, status and body from the error', () => {
    const c = classifyError(err({ status: 429, headers: { 'Retry-After': '7' }, body: { error: 'slow down' } }), NOW);
    expect(c).toMatchObject({ status: 429, retryAfterMs: 7000, body: { error: 'slow down' } });
    const axiosLike = classifyError(err({ response: { status: 503, headers: { 'retry-after': 'Sun, 29 Mar 2026 14:01:00 GMT' }, data: 'maintenance' } }), NOW);
    expect(axiosLike).toMatchObject({ retryAfterMs: 60_000, body: 'maintenance' });
    expect(classifyError(new ToolError('rate_limit', 'rate_limited', 'x', { retryAfterMs: 1234 }), NOW).retryAfterMs).toBe(1234);
  });

  it('keeps the stack of unknown throws', () => {
    expect(classifyError(new Error('x'), NOW).stack).toContain('classify.test.ts');
  });

  it('maps the remaining statuses sensibly', () => {
    expect(classifyHttpStatus(418)).toEqual({ category: 'business', type: 'precondition_failed' });
    expect(classifyHttpStatus(599)).toEqual({ category: 'system', type: 'server_error' });
    expect(classifyHttpStatus(408)).toEqual({ category: 'network', type: 'timeout' });
  });
});

describe('failure-shaped outputs', () => {
  it('MCP isError results, with a status in structuredContent when present', () => {
    expect(classifyOutput({ isError: true, content: [{ type: 'text', text: 'bad' }] }, NOW)).toMatchObject({ type: 'tool_reported_error', message: 'bad' });
    expect(classifyOutput({ isError: true, content: [], structuredContent: { status: 429 } }, NOW)).toMatchObject({ category: 'rate_limit', code: 'HTTP_429' });
    expect(classifyOutput({ isError: false, content: [] }, NOW)).toBeUndefined();
    // A protocol error an MCP SDK server sent as a result: classified by its JSON-RPC code.
    expect(classifyOutput({ isError: true, content: [{ type: 'text', text: 'MCP error -32602: Input validation error: Invalid URL at data' }] }, NOW)).toMatchObject({
      stage: 'param_validation',
      category: 'parameter',
      type: 'schema_mismatch',
      code: 'MCP_-32602',
      message: 'MCP error -32602: Input validation error: Invalid URL at data',
    });
    expect(classifyOutput({ isError: true, content: [{ type: 'text', text: 'MCP error -32603: boom' }] }, NOW)).toMatchObject({ category: 'system', code: 'MCP_-32603' });
    // Only the whole, single text part in that format counts: a tool's own words stay its own.
    expect(classifyOutput({ isError: true, content: [{ type: 'text', text: 'lookup failed: MCP error -32602: x' }] }, NOW)).toMatchObject({ code: 'MCP_TOOL_ERROR' });
    expect(classifyOutput({ isError: true, content: [{ type: 'text', text: 'MCP error -32602: x' }, { type: 'text', text: 'more' }] }, NOW)).toMatchObject({ code: 'MCP_TOOL_ERROR' });
  });

  it('fetch Responses that are not ok', () => {
    const c = classifyOutput(new Response(null, { status: 429, headers: { 'retry-after': '3' } }), NOW);
    expect(c).toMatchObject({ category: 'rate_limit', retryAfterMs: 3000 });
    expect(classifyOutput(new Response('fine'), NOW)).toBeUndefined();
    expect(classifyOutput({ plain: 'object' }, NOW)).toBeUndefined();
  });
});
