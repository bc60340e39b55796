import { describe, expect, it } from 'vitest';
import { readBody, readResult } from './read-result.js';

const read = (text: string, isError = false) => {
  const { failure } = readResult(text, { isError });
  return failure === null ? 'ok' : `${failure.category}/${failure.type}`;
};

describe('readResult', () => {
  it('reads the codes that JSON bodies state, through the runtime classifier', () => {
    expect(read('{"error": {"code": 429, "message": "Rate limit reached", "type": "rate_limit_error"}}')).toBe('rate_limit/rate_limited');
    expect(read('{"success": false, "error_message": "db down", "code": 500}')).toBe('system/server_error');
    expect(read('{"data": null, "errors": [{"message": "Variable $id is invalid", "extensions": {"code": "BAD_USER_INPUT"}}]}')).toBe('parameter/schema_mismatch');
    expect(read('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')).toBe('system/dependency_down');
    expect(read('{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}')).toBe('rate_limit/quota_exhausted');
    expect(read('{"ok":false,"error":"channel_not_found"}')).toBe('business/not_found');
    expect(read('{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}')).toBe('parameter/unknown_tool');
    expect(read('{"code": 403, "msg": "权限不足，请联系管理员", "data": null}')).toBe('auth/forbidden');
    expect(read('{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}')).toBe('business/not_found');
    expect(read('{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}')).toBe('system/dependency_down');
    expect(read('{"detail":[{"loc":["body","date"],"msg":"field required","type":"value_error.missing"}]}')).toBe('parameter/schema_mismatch');
    expect(read('{"content":[{"type":"text","text":"Error executing tool fetch: HTTP 403 Forbidden"}],"isError":true}')).toBe('auth/forbidden');
    expect(read('{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}')).toBe('business/not_found');
  });

  it('reads the forms that texts state', () => {
    expect(read('HTTP 401 Unauthorized: token expired')).toBe('auth/unauthorized');
    expect(read('429 Too Many Requests')).toBe('rate_limit/rate_limited');
    expect(read('Error: 503 Service Unavailable')).toBe('system/dependency_down');
    expect(read('<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>')).toBe('system/server_error');
    expect(read('Traceback (most recent call last):\n  File "/app/tool.py", line 12, in run\n    raise ReadTimeout(e)\nrequests.exceptions.ReadTimeout: HTTPSConnectionPool(host=\'api.example.com\', port=443): Read timed out. (read timeout=10)')).toBe('network/timeout');
    expect(read('ToolException: 404 Not Found')).toBe('business/not_found');
    expect(read('Error: socket hang up (ECONNRESET)')).toBe('network/connection_reset');
    expect(read('connect ECONNREFUSED 127.0.0.1:8080')).toBe('network/connection_refused');
    expect(read('rpc error: code = DeadlineExceeded desc = context deadline exceeded')).toBe('network/timeout');
    expect(read('MCP error -32602: Invalid arguments for tool search')).toBe('parameter/schema_mismatch');
    expect(read('An error occurred (ThrottlingException) when calling the PutItem operation: Rate exceeded')).toBe('rate_limit/rate_limited');
    expect(read('调用失败：请求超时（504 Gateway Timeout）')).toBe('system/server_error');
  });

  it('gives each failure its evidence and confidence, and words a low one', () => {
    // A stated code tells the cause: the message's words are not read then.
    expect(readResult('{"error": {"code": 429, "message": "Rate limit reached"}}').failure!.evidence).toEqual({ confidence: 0.85, evidence: ['field:error.code=429', 'field:error'] });
    expect(readResult('Error: read ECONNRESET').failure!.evidence!.evidence[0]).toBe('errno:ECONNRESET');
    const worded = readResult('{"status": "error", "detail": "upstream timed out after 30s"}').failure!;
    expect([worded.category, worded.evidence]).toEqual(['network', { confidence: 0.45, evidence: ['words:timed out', 'field:status=error'] }]);
    expect(readResult('The upstream took too long and timed out').failure).toMatchObject({ category: 'network', evidence: { confidence: 0.35, evidence: ['words:took too long'] } });
    expect(readResult('Error: the tool could not finish').failure).toMatchObject({ category: 'business', type: 'tool_reported_error', evidence: { confidence: 0.7 } });
  });

  it('keeps successes that mention errors successes', () => {
    for (const text of [
      '{"error": null, "results": [1]}',
      '{"errors": [], "data": {"x": 1}}',
      '{"status": "ok"}',
      '{"code": 0, "msg": "success", "data": {"id": 7}}',
      '{"results": [{"title": "Error budget policy", "url": "https://sre.google/"}]}',
      'Error budget policy\nThe SRE book describes an error budget as the rate at which ...',
      'The HTTP 500 Internal Server Error is a generic error response. '.repeat(10),
      '{"job_id": 12, "status": "failed", "finished_at": "2026-01-02"}',
      'Found 3 flights from SFO to JFK.',
    ]) expect(read(text), text).toBe('ok');
    expect(readResult('The HTTP 500 Internal Server Error is a generic error response. '.repeat(10)).doubts).toEqual({ confidence: 0.2, evidence: ['words:internal server error'] });
  });

  it('reads a structured body beside a logged status', () => {
    expect(readBody({ detail: 'slow down' }, { status: 429, retryAfter: '3' }).failure).toMatchObject({ category: 'rate_limit', retryAfterMs: 3000, status: 429 });
    expect(readBody({ order_id: 'o1' }, { status: 200 }).failure).toBeNull();
  });
});
