import { describe, expect, it } from 'vitest';
import { failureOfBody, mayReportStructuredFailure, parseResultText } from './tool-result.js';

/** Result bodies around every field `failureOfBody` reads, with values that do and do not mean a failure. */
function bodies(): string[] {
  const keys = ['error', 'isError', 'status', 'status_code', 'statusCode', 'retry_after', 'message', 'detail', 'Status', 'errors'];
  const values: unknown[] = [null, false, true, '', 'error', 'ERROR', 'failed', 'Failure', 'confirmed', 'ok', '200', '404', '500', '99', '4040', 0, 200, 399, 400, 404, 499.5, 500, 599, 600, 5e2, -500, [], [500], { status: 500 }, { message: 'x' }];
  const out = new Set<string>(['{}', '[]', '[{"error":"x","status":500}]', '"error"', 'Error: nope', '{"st\\u0061tus":500}', '{"status":"5\\u0030\\u0030"}', '{"a":"\\"status\\":500"}', '{ "status" : 503 }', '{"status":\n500}', '{"error":', '  {"status":"error"}']);
  for (const k of keys) {
    for (const v of values) {
      out.add(JSON.stringify({ [k]: v }));
      out.add(JSON.stringify({ id: 1, nested: { [k]: v }, [k === 'status' ? 'status_code' : 'status']: 200 }));
      out.add(JSON.stringify({ data: [{ [k]: v }], error: k === 'error' ? v : undefined }));
      out.add(JSON.stringify({ [k]: v }, null, 2));
    }
  }
  return [...out];
}

describe('mayReportStructuredFailure', () => {
  it('never says no for a body in which failureOfBody finds a failure', () => {
    let skipped = 0;
    for (const text of bodies()) {
      const failure = failureOfBody(parseResultText(text), text);
      if (!mayReportStructuredFailure(text)) {
        skipped += 1;
        expect(failure, text).toBeNull();
      }
    }
    // It spares the parse for a good share of them (ordinary results), else it would be useless.
    expect(skipped).toBeGreaterThan(100);
  });

  it('spares ordinary results and reads the value after a status key', () => {
    expect(mayReportStructuredFailure('{"reservation_id":"ZFA04Y","status":"confirmed","flights":[{"status_code":200}]}')).toBe(false);
    expect(mayReportStructuredFailure('{"status":"Error"}')).toBe(true);
    expect(mayReportStructuredFailure('{"statusCode":"503"}')).toBe(true);
    expect(mayReportStructuredFailure('{"ok":true,"error":null}')).toBe(true); // conservative: any error key is parsed
  });
});
