import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply, startFakeModelServer, toolResultsIn, type FakeModelServer } from '../llm/fake-model-server.test-helpers.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createVirtualClock } from '../core/clock.js';
import { createRuntime } from '../runtime/runtime.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW } from '../tools/index.js';
import { anthropicTools, runToolUseBlocks } from './anthropic.js';

let server: FakeModelServer;
beforeEach(async () => void (server = await startFakeModelServer()));
afterEach(() => server.close());

/** One Messages API request, as the Anthropic SDK sends it. */
async function createMessage(body: unknown): Promise<{ content: { type: string }[]; stop_reason: string }> {
  const res = await fetch(`${server.anthropicBaseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { content: { type: string }[]; stop_reason: string };
}

describe('Anthropic Messages through faultline', () => {
  it('offers the tools, answers each tool_use block with a tool_result (is_error on failures) in order', async () => {
    const records: ToolExecutionRecord[] = [];
    const { tools } = createToolCatalog({ seed: 3, only: ['get_weather', 'get_order'] });
    const rt = createRuntime({ tools, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }), onRecord: (r) => records.push(r) });
    const session = rt.session({ agent: 'claude-agent' });
    server.enqueue(
      reply.toolCalls(
        [
          { id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris', date: '2026-03-30' } },
          { id: 'toolu_2', name: 'get_order', arguments: { order_id: 'ORD-99999' } },
        ],
        'Let me check both.',
      ),
      reply.text('Sunny; the order does not exist.'),
    );
    const messages: unknown[] = [{ role: 'user', content: 'Weather in Paris on 2026-03-30 and order ORD-99999?' }];
    const first = await createMessage({ model: 'claude-test', max_tokens: 512, messages, tools: anthropicTools(rt) });
    expect(first.stop_reason).toBe('tool_use');
    const results = await runToolUseBlocks(session, first);
    expect(results.map((r) => [r.tool_use_id, r.is_error ?? false])).toEqual([
      ['toolu_1', false],
      ['toolu_2', true],
    ]);
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: results });
    await createMessage({ model: 'claude-test', max_tokens: 512, messages, tools: anthropicTools(rt) });

    const offered = (server.requests[0]!.body as { tools: { name: string; input_schema: unknown }[] }).tools;
    expect(offered.map((t) => t.name)).toEqual(['get_weather', 'get_order']);
    expect(offered[0]!.input_schema).toEqual(rt.tools[0]!.inputSchema);
    const sent = toolResultsIn(server.requests[1]!);
    expect(sent.map((s) => [s.id, s.isError ?? false])).toEqual([
      ['toolu_1', false],
      ['toolu_2', true],
    ]);
    expect(JSON.parse(sent[1]!.content)).toMatchObject({ ok: false, error: { type: 'not_found' }, feedback: { action: 'try_alternative' } });
    expect(records.map((r) => [r.trace_id, r.step_index, r.context_snapshot['tool_call_id']])).toEqual([
      [session.traceId, 0, 'toolu_1'],
      [session.traceId, 1, 'toolu_2'],
    ]);
    await rt.close();
  });
});

describe('Anthropic Messages: unknown tools and malformed input are recorded and answered', () => {
  it('answers a made-up name and text that is not JSON with is_error results, and records both, in one trace', async () => {
    const records: ToolExecutionRecord[] = [];
    const { tools } = createToolCatalog({ seed: 3, only: ['get_weather'] });
    const rt = createRuntime({ tools, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }), onRecord: (r) => records.push(r) });
    const session = rt.session({ agent: 'claude-agent' });
    server.enqueue(
      reply.toolCalls([
        { id: 'toolu_unknown', name: 'get_wether', arguments: { city: 'Paris' } },
        // The input as a streaming client accumulates it from input_json_delta events, cut short.
        { id: 'toolu_malformed', name: 'get_weather', arguments: '{"city": "Paris", "date": "2026-' },
        { id: 'toolu_text_ok', name: 'get_weather', arguments: '{"city": "Paris", "date": "2026-03-30"}' },
      ]),
      reply.text('Sorry.'),
    );
    const messages: unknown[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await createMessage({ model: 'claude-test', max_tokens: 512, messages, tools: anthropicTools(rt) });
    const results = await runToolUseBlocks(session, first);
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: results });
    await createMessage({ model: 'claude-test', max_tokens: 512, messages, tools: anthropicTools(rt) });

    const sent = toolResultsIn(server.requests[1]!);
    expect(sent.map((s) => [s.id, s.isError ?? false])).toEqual([
      ['toolu_unknown', true],
      ['toolu_malformed', true],
      ['toolu_text_ok', false],
    ]);
    const unknown = JSON.parse(sent[0]!.content) as { error: { type: string; stage: string }; feedback: { hint: string } };
    expect(unknown.error).toMatchObject({ type: 'unknown_tool', stage: 'request_build' });
    expect(unknown.feedback.hint).toContain('"get_weather"');
    expect(JSON.parse(sent[1]!.content)).toMatchObject({ ok: false, error: { type: 'malformed_arguments', stage: 'request_build', category: 'parameter' }, feedback: { action: 'retry_with_fixed_params' } });
    expect(JSON.parse(sent[2]!.content)).toMatchObject({ city: 'Paris' });
    expect(records.map((r) => [r.trace_id, r.step_index, r.tool_name, r.status, r.failure_type, r.context_snapshot['tool_call_id']])).toEqual([
      [session.traceId, 0, 'get_wether', 'rejected', 'unknown_tool', 'toolu_unknown'],
      [session.traceId, 1, 'get_weather', 'rejected', 'malformed_arguments', 'toolu_malformed'],
      [session.traceId, 2, 'get_weather', 'success', null, 'toolu_text_ok'],
    ]);
    expect(records[1]!.input_params).toBe('{"city": "Paris", "date": "2026-');
    await rt.close();
  });
});
