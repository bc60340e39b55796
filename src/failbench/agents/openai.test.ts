import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { reply, startFakeModelServer, type FakeModelServer, type OpenAIRequestBody } from '../../llm/fake-model-server.test-helpers.js';
import { makeTask, recordingClock, runModelAgentContract, TEST_KEY } from './model-agent-contract.test-helpers.js';
import { createOpenAIAgent, parseCompletion } from './openai.js';

runModelAgentContract('openai', (server, options) => createOpenAIAgent({ model: 'test-model', baseUrl: server.openaiBaseUrl, ...options }));

describe('openai adapter: wire format', () => {
  let server: FakeModelServer;
  beforeEach(async () => {
    server = await startFakeModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('keeps the chat history in the chat.completions shape', async () => {
    server.enqueue(
      reply.toolCalls([
        { name: 'get_weather', arguments: { city: 'Paris' }, id: 'call_a' },
        { name: 'create_order', arguments: { sku: 'umbrella', quantity: 1 }, id: 'call_b' },
      ], 'Checking.'),
      reply.text('Done.'),
    );
    const agent = createOpenAIAgent({ model: 'gpt-test', baseUrl: server.openaiBaseUrl, apiKey: TEST_KEY, temperature: 0, maxTokens: 256 });
    await agent.run(makeTask({ results: { create_order: [{ ok: false, error: { code: 'ECONNRESET', message: 'socket hang up' } }] } }));

    const second = server.requests[1]!;
    expect(second.path).toBe('/v1/chat/completions');
    expect(second.headers['authorization']).toBe(`Bearer ${TEST_KEY}`);
    const body = second.body as OpenAIRequestBody;
    expect(body).toMatchObject({ model: 'gpt-test', temperature: 0, max_tokens: 256, tool_choice: 'auto' });
    expect(body.tools?.[0]).toEqual({
      type: 'function',
      function: { name: 'get_weather', description: 'Weather for a city on a day.', parameters: { type: 'object', properties: { city: { type: 'string' }, day: { type: 'string' } }, required: ['city'] } },
    });
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
    expect(body.messages[2]).toEqual({
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_b', type: 'function', function: { name: 'create_order', arguments: '{"sku":"umbrella","quantity":1}' } },
      ],
    });
    expect(body.messages[3]).toMatchObject({ role: 'tool', tool_call_id: 'call_a' });
    expect(body.messages[4]).toEqual({ role: 'tool', tool_call_id: 'call_b', content: '{"ok":false,"error":{"code":"ECONNRESET","message":"socket hang up"}}' });
  });

  it('reads OPENAI_BASE_URL and OPENAI_API_KEY from the env it is given; explicit options win', async () => {
    server.enqueue(reply.text('one'), reply.text('two'));
    const fromEnv = createOpenAIAgent({ model: 'm', env: { OPENAI_BASE_URL: server.openaiBaseUrl, OPENAI_API_KEY: 'sk-from-env-123' } });
    expect(fromEnv.name).toBe('openai:m');
    await fromEnv.run(makeTask());
    expect(server.requests[0]!.headers['authorization']).toBe('Bearer sk-from-env-123');

    const explicit = createOpenAIAgent({ model: 'm', apiKey: 'sk-explicit-456', baseUrl: server.openaiBaseUrl, env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-from-env-123' } });
    await explicit.run(makeTask());
    expect(server.requests[1]!.headers['authorization']).toBe('Bearer sk-explicit-456');
  });

  it('refuses to start without a key, a model or a valid base URL', () => {
    expect(() => createOpenAIAgent({ model: 'm', env: {} })).toThrow(ConfigError);
    expect(() => createOpenAIAgent({ model: 'm', env: {} })).toThrow(/OPENAI_API_KEY/);
    expect(() => createOpenAIAgent({ model: ' ', apiKey: TEST_KEY })).toThrow(/model/);
    expect(() => createOpenAIAgent({ model: 'm', apiKey: TEST_KEY, baseUrl: 'not a url' })).toThrow(/base URL/);
    expect(() => createOpenAIAgent({ model: 'm', apiKey: TEST_KEY, maxTurns: 0 })).toThrow(/maxTurns/);
  });

  it('honors retry-after-ms ahead of Retry-After', async () => {
    server.enqueue(reply.error(429, undefined, { 'retry-after-ms': '250', 'retry-after': '1' }), reply.text('ok'));
    const clock = recordingClock();
    await createOpenAIAgent({ model: 'm', baseUrl: server.openaiBaseUrl, apiKey: TEST_KEY, clock }).run(makeTask());
    expect(clock.waits).toEqual([250]);
  });
});

describe('parseCompletion', () => {
  const completion = (message: unknown) => ({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'stop' }] });

  it('reads text given as an array of parts and tool calls without ids', () => {
    const parsed = parseCompletion(
      completion({ role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }], tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
    );
    expect(parsed).toMatchObject({ ok: true, value: { text: 'ab', toolCalls: [{ id: 'call_0', name: 'get_weather', args: { ok: true, value: {} } }] } });
  });

  it('accepts arguments sent as an object and flags arguments that are not an object', () => {
    const parsed = parseCompletion(
      completion({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'x', type: 'function', function: { name: 'a', arguments: { city: 'Paris' } } },
          { id: 'y', type: 'function', function: { name: 'b', arguments: '[1,2]' } },
        ],
      }),
    );
    expect(parsed.ok && parsed.value.toolCalls.map((c) => c.args)).toEqual([
      { ok: true, value: { city: 'Paris' } },
      { ok: false, problem: 'expected an object, got an array' },
    ]);
  });

  it('flags bodies off the wire format as malformed', () => {
    const kindOf = (body: unknown) => {
      const r = parseCompletion(body, ['sk-hidden-123']);
      return r.ok ? 'ok' : `${r.failure.kind}: ${r.failure.message}`;
    };
    expect(kindOf('plain text')).toMatch(/^malformed: .*not a chat.completion/);
    expect(kindOf({ choices: [] })).toMatch(/no choices/);
    expect(kindOf({ choices: [{ index: 0 }] })).toMatch(/no message/);
    expect(kindOf(completion({ role: 'assistant', tool_calls: {} }))).toMatch(/not an array/);
    expect(kindOf(completion({ role: 'assistant', tool_calls: [{ id: 'x', function: { arguments: '{}' } }] }))).toMatch(/no function name/);
    expect(kindOf({ error: { message: 'key sk-hidden-123 revoked' } })).toBe('malformed: the response carries an error: key [redacted] revoked');
  });
});
