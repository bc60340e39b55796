import { describe, expect, it } from 'vitest';
import { stepsFromCalls, type ConversationCall } from './conversation.js';
import { mayShowFailure, parseResultText, readResult } from './tool-result.js';

/** Result bodies around the fields the extractor reads, with values that do and do not mean a failure. */
function bodies(): string[] {
  const keys = ['error', 'isError', 'status', 'status_code', 'statusCode', 'code', 'errcode', 'success', 'ok', 'retry_after', 'message', 'detail', 'Status', 'errors', 'output', 'msg'];
  const values: unknown[] = [null, false, true, '', 'error', 'ERROR', 'failed', 'fail', 'Failure', 'confirmed', 'ok', 'Not Found', 'timed out', '200', '404', '500', '99', '4040', 0, 1, 200, 399, 400, 404, 499.5, 500, 599, 600, 5e2, -500, -32602, [], [500], { status: 500 }, { message: 'x' }, 'HTTP 401 Unauthorized'];
  const out = new Set<string>(['{}', '[]', '[{"error":"x","status":500}]', '"error"', 'Error: nope', '{"st\\u0061tus":500}', '{"status":"5\\u0030\\u0030"}', '{"a":"\\"status\\":500"}', '{ "status" : 503 }', '{"status":\n500}', '{"error":', '  {"status":"error"}']);
  for (const k of keys) {
    for (const v of values) {
      out.add(JSON.stringify({ [k]: v }));
      out.add(JSON.stringify({ id: 1, nested: { [k]: v }, [k === 'status' ? 'status_code' : 'status']: 200 }));
      out.add(JSON.stringify({ data: [{ [k]: v }], error: k === 'error' ? v : undefined }));
      out.add(JSON.stringify({ [k]: v }, null, 2));
      out.add(JSON.stringify({ [k]: v, message: 'Order created' }));
    }
  }
  return [...out];
}

describe('mayShowFailure', () => {
  it('spares the parse of a good share of bodies, and the deferred path reads every body as the eager one', () => {
    const texts = bodies();
    const calls: ConversationCall[] = texts.map((text, i) => ({ id: `c${i}`, tool_name: 't', input_params: {}, result: { text } }));
    const read = (call: { result: { text: string } }, body: unknown) => readResult(call.result.text, {}, body);
    const eager = stepsFromCalls(calls, read, false);
    const deferred = stepsFromCalls(calls, read, true);
    for (let i = 0; i < texts.length; i++) {
      expect([deferred[i]!.status, deferred[i]!.failure_kind, deferred[i]!.failure_evidence], texts[i]).toEqual([eager[i]!.status, eager[i]!.failure_kind, eager[i]!.failure_evidence]);
    }
    expect(texts.filter((t) => t.trimStart().startsWith('{') && !mayShowFailure(t)).length).toBeGreaterThan(100);
  });

  it('spares ordinary results, reads a failing status and a wrapper', () => {
    expect(mayShowFailure('{"reservation_id":"ZFA04Y","status":"confirmed","flights":[{"status_code":200}]}')).toBe(false);
    expect(mayShowFailure('{"status":"Error"}')).toBe(true);
    expect(mayShowFailure('{"statusCode":"503"}')).toBe(true);
    expect(mayShowFailure('{"output":"HTTP 401 Unauthorized"}')).toBe(true);
    expect(readResult('{"output":"HTTP 401 Unauthorized"}').failure?.category).toBe('auth');
    expect(parseResultText('{"a":1')).toBe('{"a":1');
  });
});
