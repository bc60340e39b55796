import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, startFakeModelServer, type FakeModelServer } from './fake-model-server.test-helpers.js';
import { failureKindOfStatus, joinUrl, postJson, retryAfterFromHeaders, scrubSecrets, type JsonPostRequest } from './model-http.js';

describe('model-http helpers', () => {
  it('scrubs every occurrence of a secret but leaves too-short strings alone', () => {
    expect(scrubSecrets('key sk-abcdef and again sk-abcdef.', ['sk-abcdef'])).toBe('key [redacted] and again [redacted].');
    expect(scrubSecrets('a b c', ['a'])).toBe('a b c');
  });

  it('reads retry-after-ms before Retry-After, and HTTP-dates relative to now', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterFromHeaders(new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), now)).toBe(1500);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(retryAfterFromHeaders(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterFromHeaders(undefined, now)).toBeUndefined();
  });

  it('maps statuses to failure kinds', () => {
    expect([429, 408, 409, 500, 503, 529, 400, 401, 403, 404, 422].map(failureKindOfStatus)).toEqual([
      'rate_limit',
      'timeout',
      'server',
      'server',
      'server',
      'server',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
      'rejected',
    ]);
  });

  it('joins base URLs and paths', () => {
    expect(joinUrl('http://h/api/', '/v1/messages')).toBe('http://h/api/v1/messages');
    expect(joinUrl('http://h', 'v1/messages')).toBe('http://h/v1/messages');
  });
});

describe('postJson', () => {
  let server: FakeModelServer;
  beforeEach(async () => {
    server = await startFakeModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  const post = (overrides: Partial<JsonPostRequest> = {}) =>
    postJson({
      url: `${server.url}/v1/messages`,
      headers: { 'x-api-key': 'sk-secret-abcdef' },
      body: { model: 'm', messages: [] },
      timeoutMs: 2000,
      signal: new AbortController().signal,
      fetch: globalThis.fetch,
      secrets: ['sk-secret-abcdef'],
      nowMs: () => Date.now(),
      ...overrides,
    });

  it('returns the parsed body of a 2xx', async () => {
    server.enqueue(reply.json({ hello: 'world' }));
    await expect(post()).resolves.toEqual({ ok: true, value: { hello: 'world' } });
    expect(server.requests[0]!.headers['content-type']).toBe('application/json');
  });

  it('turns statuses, resets, timeouts, aborts and bad bodies into failure values', async () => {
    server.enqueue(
      reply.error(429, 'slow down', { 'retry-after': '3' }),
      reply.error(401, 'invalid x-api-key sk-secret-abcdef'),
      reply.reset(),
      { kind: 'turn', text: 'late', delayMs: 300 },
      reply.raw('{"truncated": '),
    );
    expect(await post()).toEqual({ ok: false, failure: { kind: 'rate_limit', status: 429, retryAfterMs: 3000, message: 'HTTP 429: slow down' } });
    expect(await post()).toEqual({ ok: false, failure: { kind: 'rejected', status: 401, message: 'HTTP 401: invalid x-api-key [redacted]' } });
    expect(await post()).toMatchObject({ ok: false, failure: { kind: 'connection' } });
    expect(await post({ timeoutMs: 50 })).toMatchObject({ ok: false, failure: { kind: 'timeout' } });
    expect(await post()).toMatchObject({ ok: false, failure: { kind: 'malformed', status: 200 } });
    const controller = new AbortController();
    controller.abort();
    expect(await post({ signal: controller.signal })).toMatchObject({ ok: false, failure: { kind: 'aborted' } });
  });

  it('reports a refused connection as a connection failure with its code', async () => {
    const port = new URL(server.url).port;
    await server.close();
    const result = await post({ url: `http://127.0.0.1:${port}/v1/messages` });
    expect(result).toMatchObject({ ok: false, failure: { kind: 'connection', message: expect.stringContaining('ECONNREFUSED') } });
    server = await startFakeModelServer();
  });
});
