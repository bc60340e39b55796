import { describe, expect, it } from 'vitest';
import { collect, FIXED_NOW, jsonl } from './collect.test-helpers.js';
import { importOpenAi } from './openai.js';

const call = (id: string, name: string, args: unknown) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });

/** A support conversation: a 429, a retry, a not-found, a fixed retry, a text error, then nothing. */
const conversation = {
  id: 'conv-42',
  messages: [
    { role: 'system', content: 'You are a travel agent.' },
    { role: 'user', content: 'Find my booking ABC123 and the weather in Paris.' },
    { role: 'assistant', content: null, tool_calls: [call('c1', 'get_weather', { city: 'Paris' })] },
    { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ error: { message: 'Too Many Requests' }, status_code: 429, retry_after: 30 }) },
    { role: 'assistant', content: null, tool_calls: [call('c2', 'get_weather', { city: 'Paris' })] },
    { role: 'tool', tool_call_id: 'c2', content: JSON.stringify({ city: 'Paris', temperature: 18 }) },
    { role: 'assistant', content: null, tool_calls: [call('c3', 'get_booking', { ref: 'ABC12' }), call('c4', 'get_booking', { ref: 'ABC123' })] },
    { role: 'tool', tool_call_id: 'c3', content: JSON.stringify({ status: 404, error: 'booking not found' }) },
    { role: 'tool', tool_call_id: 'c4', content: [{ type: 'text', text: '{"ref":"ABC123","seat":"12A"}' }] },
    { role: 'assistant', content: null, tool_calls: [call('c5', 'cancel_booking', { ref: 'ABC123' })] },
    { role: 'tool', tool_call_id: 'c5', content: 'Error: booking is non-refundable' },
    { role: 'assistant', content: 'Sorry, I cannot cancel it.' },
  ],
  tools: [],
};

describe('OpenAI chat-messages importer', () => {
  it('turns tool calls and their tool messages into steps with classified failures and derived decisions', async () => {
    const { trajectories, skipped } = await collect(importOpenAi, jsonl(conversation));
    expect(skipped).toEqual([]);
    const [t] = trajectories;
    expect(t).toMatchObject({
      source_id: 'conv-42',
      task_description: 'Find my booking ABC123 and the weather in Paris.',
      final_outcome: 'unknown',
      created_at: new Date(FIXED_NOW).toISOString(),
      metadata: { source: 'openai', annotator: null, human_verified: false },
    });
    expect(t!.trajectory_id).toMatch(/^traj_[0-9a-f]{24}$/);
    expect(t!.steps.map((s) => [s.tool_name, s.status, s.failure_category, s.failure_kind, s.agent_decision.action])).toEqual([
      ['get_weather', 'failure', 'rate_limit', 'rate_limited', 'retry'],
      ['get_weather', 'success', null, null, 'proceed'],
      ['get_booking', 'failure', 'business', 'not_found', 'retry_with_params'],
      ['get_booking', 'success', null, null, 'proceed'],
      ['cancel_booking', 'failure', 'business', 'tool_reported_error', 'abort'],
    ]);
    expect(t!.steps[0]).toMatchObject({
      response: { status_code: 429, error_code: 'HTTP_429', message: 'Too Many Requests' },
      failure_type: 'infrastructure',
      failure_subtype: 'rate_limit',
      failure_stage: 'execution',
      source_ref: 'c1',
    });
    expect(t!.steps[2]!.agent_decision.params_delta).toEqual({ ref: 'ABC123' });
    expect(t!.steps[3]!.response.body).toEqual({ ref: 'ABC123', seat: '12A' });
    // Business failures carry seed 001's category but no seed 000 label: only annotators can give one.
    expect(t!.steps[4]).toMatchObject({ failure_type: null, failure_subtype: null, response: { error_code: 'TOOL_ERROR', message: 'Error: booking is non-refundable' } });
    expect(t!.failure_summary).toMatchObject({ total_failures: 3, failure_types: ['infrastructure/rate_limit'], failure_categories: { rate_limit: 1, business: 2 }, recovery_success: false });
  });

  it('reports malformed lines with their line numbers and keeps the rest', async () => {
    const text = jsonl(
      conversation,
      '',
      '{"messages": [',
      { id: 7, messages: [{ role: 'user', content: 'hi' }] },
      { messages: 'nope' },
      { messages: [{ role: 'tool', tool_call_id: 'ghost', content: 'x' }] },
      { messages: [{ role: 'assistant', tool_calls: [{ id: 'a', function: { arguments: '{}' } }] }] },
      [1, 2],
    );
    const { trajectories, skipped } = await collect(importOpenAi, text);
    expect(trajectories.map((t) => [t.source_id, t.steps.length])).toEqual([
      ['conv-42', 5],
      ['7', 0],
    ]);
    expect(skipped.map((s) => s.line)).toEqual([3, 5, 6, 7, 8]);
    expect(skipped[0]!.reason).toMatch(/^not JSON/);
    expect(skipped[1]!.reason).toBe('expected "messages" to be an array');
    expect(skipped[2]!.reason).toMatch(/ghost/);
    expect(skipped[3]!.reason).toBe('messages[0].tool_calls[0] has no function name');
  });

  it('keeps unparseable arguments as text, leaves a dangling call without status, and reads a reward', async () => {
    const { trajectories } = await collect(
      importOpenAi,
      jsonl({ reward: 1, messages: [{ role: 'assistant', tool_calls: [{ id: 'x', function: { name: 'search', arguments: '{"q": "par' } }] }] }),
    );
    const [t] = trajectories;
    expect(t!.source_id).toBeNull();
    expect(t!.final_outcome).toBe('success');
    expect(t!.steps[0]).toMatchObject({ input_params: '{"q": "par', status: null, response: {}, agent_decision: { action: 'proceed' } });
  });

  it('keeps the system prompt, the declared tools, the text turns around the calls and each result as the model read it', async () => {
    const line = {
      messages: [
        { role: 'system', content: 'You are a shop assistant.' },
        { role: 'user', content: 'Order two mugs.' },
        { role: 'assistant', content: 'Which colour?' },
        { role: 'user', content: [{ type: 'text', text: 'Blue.' }] },
        { role: 'assistant', content: 'Placing it.', tool_calls: [call('c1', 'create_order', { sku: 'MUG-BLUE', qty: 2 })] },
        { role: 'tool', tool_call_id: 'c1', content: '{"order_id": "o-17",  "status": "placed"}' },
        { role: 'assistant', content: 'Order o-17 is placed.' },
        { role: 'user', content: 'Thanks!' },
      ],
      tools: [
        { type: 'function', function: { name: 'create_order', description: 'Places an order.', parameters: { type: 'object', properties: { sku: { type: 'string' } } } } },
        { type: 'function', function: { description: 'no name: left out' } },
      ],
    };
    const [t] = (await collect(importOpenAi, jsonl(line))).trajectories;
    expect(t!.system_prompt).toBe('You are a shop assistant.');
    expect(t!.tools).toEqual([{ name: 'create_order', description: 'Places an order.', parameters: { type: 'object', properties: { sku: { type: 'string' } } } }]);
    expect(t!.steps[0]!.turns_before).toEqual([
      { role: 'user', content: 'Order two mugs.' },
      { role: 'assistant', content: 'Which colour?' },
      { role: 'user', content: 'Blue.' },
    ]);
    expect(t!.steps[0]!.call_text).toBe('Placing it.');
    // The spacing of the original text is kept beside the parsed body.
    expect(t!.steps[0]!.response).toEqual({ body: { order_id: 'o-17', status: 'placed' }, text: '{"order_id": "o-17",  "status": "placed"}' });
    expect(t!.closing_turns).toEqual([
      { role: 'assistant', content: 'Order o-17 is placed.' },
      { role: 'user', content: 'Thanks!' },
    ]);
    // A plain-text result is its own body: no second copy.
    const [u] = (await collect(importOpenAi, jsonl(conversation))).trajectories;
    expect(u!.steps[4]!.response.text).toBeUndefined();
    expect(u!.tools).toBeUndefined();
  });

  it('gives the same content the same id on every import, and different content a different one', async () => {
    const line = { messages: [{ role: 'user', content: 'a' }] };
    const first = await collect(importOpenAi, jsonl(line));
    const again = await collect(importOpenAi, jsonl(line), { now: () => 0 });
    const other = await collect(importOpenAi, jsonl({ messages: [{ role: 'user', content: 'b' }] }));
    expect(again.trajectories[0]!.trajectory_id).toBe(first.trajectories[0]!.trajectory_id);
    expect(other.trajectories[0]!.trajectory_id).not.toBe(first.trajectories[0]!.trajectory_id);
  });
});
