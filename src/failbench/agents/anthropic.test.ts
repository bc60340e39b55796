import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { createAnthropicAgent, parseMessage } from './anthropic.js';
import { reply, startFakeModelServer, type AnthropicRequestBody, type FakeModelServer } from '../../llm/fake-model-server.test-helpers.js';
import { makeTask, recordingClock, runModelAgentContract, TEST_KEY } from './model-agent-contract.test-helpers.js';

runModelAgentContract('anthropic', (server, options) => createAnthropicAgent({ model: 'test-model', baseUrl: server.anthropicBaseUrl, ...options }));

describe('anthropic adapter: wire format', () => {
  let server: FakeModelServer;
  beforeEach(async () => {
    server = await startFakeModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('sends the Messages API shape: headers, top-level system, input_schema, tool_result blocks in one user turn', async () => {
    server.enqueue(
      reply.toolCalls(
        [
          { name: 'get_weather', arguments: { city: 'Paris' }, id: 'toolu_a' },
          { name: 'create_order', arguments: { sku: 'umbrella', quantity: 1 }, id: 'toolu_b' },
        ],
        'Checking.',
      ),
      reply.text('Done.'),
    );
    const agent = createAnthropicAgent({ model: 'claude-test', baseUrl: server.anthropicBaseUrl, apiKey: TEST_KEY, temperature: 0.2 });
    await agent.run(makeTask({ results: { create_order: [{ ok: false, error: { code: 'HTTP_409', message: 'duplicate order', status: 409 } }] } }));

    const second = server.requests[1]!;
    expect(second.path).toBe('/v1/messages');
    expect(second.headers['x-api-key']).toBe(TEST_KEY);
    expect(second.headers['anthropic-version']).toBe('2023-06-01');
    expect(second.headers['authorization']).toBeUndefined();
    const body = second.body as AnthropicRequestBody;
    expect(body).toMatchObject({ model: 'claude-test', max_tokens: 4096, temperature: 0.2 });
    expect(body.system).toContain('report_tool_failure');
    expect(body.tools?.[0]).toEqual({
      name: 'get_weather',
      description: 'Weather for a city on a day.',
      input_schema: { type: 'object', properties: { city: { type: 'string' }, day: { type: 'string' } }, required: ['city'] },
    });
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(body.messages[1]!.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_b', name: 'create_order', input: { sku: 'umbrella', quantity: 1 } },
    ]);
    const results = body.messages[2]!.content as Array<Record<string, unknown>>;
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_a' });
    expect(results[0]).not.toHaveProperty('is_error');
    expect(results[1]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_b',
      content: '{"ok":false,"error":{"code":"HTTP_409","message":"duplicate order","status":409}}',
      is_error: true,
    });
  });

  it('reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from the env it is given, tolerating a trailing /v1', async () => {
    server.enqueue(reply.text('one'), reply.text('two'));
    const agent = createAnthropicAgent({ model: 'm', env: { ANTHROPIC_BASE_URL: server.anthropicBaseUrl, ANTHROPIC_API_KEY: 'sk-ant-from-env' } });
    expect(agent.name).toBe('anthropic:m');
    await agent.run(makeTask());
    await createAnthropicAgent({ model: 'm', apiKey: TEST_KEY, baseUrl: `${server.anthropicBaseUrl}/v1/` }).run(makeTask());
    expect(server.requests.map((r) => [r.path, r.headers['x-api-key']])).toEqual([
      ['/v1/messages', 'sk-ant-from-env'],
      ['/v1/messages', TEST_KEY],
    ]);
  });

  it('refuses to start without a key', () => {
    expect(() => createAnthropicAgent({ model: 'm', env: {} })).toThrow(ConfigError);
    expect(() => createAnthropicAgent({ model: 'm', env: { ANTHROPIC_API_KEY: '  ' } })).toThrow(/ANTHROPIC_API_KEY/);
  });

  it('retries 529 overloaded as a model-side failure', async () => {
    server.enqueue(reply.error(529), reply.text('ok'));
    const clock = recordingClock();
    const outcome = await createAnthropicAgent({ model: 'm', baseUrl: server.anthropicBaseUrl, apiKey: TEST_KEY, clock, retry: { baseDelayMs: 8 } }).run(makeTask());
    expect(outcome.status).toBe('completed');
    expect(clock.waits).toHaveLength(1);
    expect(clock.waits[0]).toBeGreaterThanOrEqual(4);
  });

});

describe('parseMessage', () => {
  const message = (content: unknown) => ({ id: 'msg_1', type: 'message', role: 'assistant', content, stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } });

  it('keeps thinking blocks for the history and normalizes tool_use input', () => {
    const thinking = { type: 'thinking', thinking: 'hmm', signature: 'sig' };
    const parsed = parseMessage(
      message([
        thinking,
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: '{"city":"Paris"}' },
        { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: 42 },
      ]),
    );
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.value.text).toBe('Let me look.');
    expect(parsed.value.toolCalls.map((c) => c.args)).toEqual([
      { ok: true, value: { city: 'Paris' } },
      { ok: false, problem: 'expected an object, got number' },
    ]);
    expect(parsed.value.raw).toEqual([
      thinking,
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: {} },
    ]);
  });

  it('flags bodies off the wire format as malformed', () => {
    const kindOf = (body: unknown) => {
      const r = parseMessage(body);
      return r.ok ? 'ok' : `${r.failure.kind}: ${r.failure.message}`;
    };
    expect(kindOf([])).toMatch(/^malformed: .*not a message/);
    expect(kindOf({ type: 'message' })).toMatch(/no content array/);
    expect(kindOf({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })).toMatch(/Overloaded/);
    expect(kindOf(message([{ type: 'tool_use', id: 'x', input: {} }]))).toMatch(/has no name/);
    expect(kindOf(message([null]))).toMatch(/not an object/);
  });
});
