import { describe, expect, it } from 'vitest';
import { forwardableResponseHeaders, readRequestHeaders, responseHeaderObject, undecodedTransferCoding } from './wire-headers.js';

describe('wire headers', () => {
  it('forwards end-to-end request headers as sent, and keeps aside what the proxy sets or reads itself', () => {
    const h = readRequestHeaders([
      'Host', 'proxy:8080',
      'Content-Type', 'application/json',
      'Content-Length', '17',
      'Connection', 'keep-alive, X-Private',
      'X-Private', 'hop',
      'Keep-Alive', 'timeout=5',
      'Accept-Encoding', 'gzip',
      'X-Inject-Error', '429',
      'X-Inject-Commit', 'true',
      'X-Trace-Id', 'trace-1',
      'X-Trace-Id', 'trace-2',
      'Idempotency-Key', 'k-1',
      'X-Forwarded-For', '10.0.0.1',
      'x-forwarded-for', '10.0.0.2',
      'X-Forwarded-Proto', 'https',
      'Set-Cookie', 'a=1',
      'Set-Cookie', 'b=2',
      'Authorization', 'Bearer t',
    ]);
    expect(h.forward).toEqual([
      'Content-Type', 'application/json',
      'X-Trace-Id', 'trace-1',
      'X-Trace-Id', 'trace-2',
      'Idempotency-Key', 'k-1',
      'Set-Cookie', 'a=1',
      'Set-Cookie', 'b=2',
      'Authorization', 'Bearer t',
    ]);
    expect(h).toMatchObject({
      host: 'proxy:8080',
      contentType: 'application/json',
      contentLength: '17',
      hasBody: true,
      traceId: 'trace-1',
      idempotencyKey: 'k-1',
      inject: '429',
      commit: 'true',
      forwardedFor: '10.0.0.1, 10.0.0.2',
    });
  });

  it('knows when a request has a body', () => {
    expect(readRequestHeaders(['Host', 'x']).hasBody).toBe(false);
    expect(readRequestHeaders(['Content-Length', '0']).hasBody).toBe(false);
    expect(readRequestHeaders(['Transfer-Encoding', 'chunked']).hasBody).toBe(true);
    expect(readRequestHeaders(['Transfer-Encoding', 'chunked']).forward).toEqual([]);
  });

  it('names the transfer codings of a request body when one is not chunked', () => {
    expect(undecodedTransferCoding(['Host', 'x'])).toBeUndefined();
    expect(undecodedTransferCoding(['Transfer-Encoding', 'Chunked'])).toBeUndefined();
    expect(undecodedTransferCoding(['Transfer-Encoding', 'gzip, chunked'])).toBe('gzip, chunked');
    expect(undecodedTransferCoding(['transfer-encoding', 'gzip', 'Host', 'x', 'Transfer-Encoding', 'chunked'])).toBe('gzip, chunked');
  });

  it('drops hop-by-hop response headers, and the ones Connection names', () => {
    const raw = ['Content-Type', 'text/plain', 'Connection', 'keep-alive', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'];
    expect(forwardableResponseHeaders(raw)).toEqual(['Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']);
    expect(forwardableResponseHeaders(['Connection', 'close, X-Debug', 'X-Debug', '1', 'ETag', '"v1"'])).toEqual(['ETag', '"v1"']);
    expect(responseHeaderObject(raw)).toEqual({ 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] });
  });
});
