import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, startFakeModelServer, type FakeModelServer } from './fake-model-server.test-helpers.js';
import { completionText, createJsonChat } from './json-chat.js';
import { recordingClock, TEST_KEY } from './fake-model-server.test-helpers.js';

const request = { system: 's', user: 'u', schemaName: 'answer', schema: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'], additionalProperties: false } };

describe('createJsonChat', () => {
  let server: FakeModelServer;
  beforeEach(async () => {
    server = await startFakeModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('asks with a strict JSON-schema response format and returns the text; reports exhausted retries as a value', async () => {
    server.enqueue(reply.error(503), reply.text('{"a":1}'));
    const clock = recordingClock();
    const chat = createJsonChat({ provider: 'test', model: 'm', baseUrl: server.openaiBaseUrl, apiKey: TEST_KEY, clock, retry: { maxAttempts: 2, baseDelayMs: 1 } });
    expect(await chat.ask(request)).toEqual({ ok: true, text: '{"a":1}' });
    expect(chat.requests).toBe(2);
    expect(server.requests[1]!.body).toMatchObject({ model: 'm', temperature: 0, response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: request.schema } } });
    server.respondWith(() => reply.error(502));
    const failed = await chat.ask(request);
    expect(failed.ok).toBe(false);
    expect(!failed.ok && failed.why).toMatch(/failed after 2 attempts: HTTP 502/);
  });
});

describe('completionText', () => {
  const completion = (message: unknown) => ({ choices: [{ index: 0, message }] });
  it('reads string and text-part content, passes refusals on as text, and calls anything else malformed', () => {
    expect(completionText(completion({ content: '{"a":1}' }))).toEqual({ ok: true, value: '{"a":1}' });
    expect(completionText(completion({ content: [{ type: 'text', text: '{"a"' }, { type: 'text', text: ':1}' }] }))).toEqual({ ok: true, value: '{"a":1}' });
    expect(completionText(completion({ content: null, refusal: 'no' }))).toEqual({ ok: true, value: '(refused) no' });
    expect(completionText({ error: { message: `bad key ${TEST_KEY}` } }, [TEST_KEY])).toEqual({ ok: false, failure: { kind: 'malformed', message: 'the response carries an error: bad key [redacted]' } });
    expect(completionText({ choices: [] })).toMatchObject({ ok: false, failure: { kind: 'malformed' } });
    expect(completionText('text')).toMatchObject({ ok: false });
  });
});
