import { describe, expect, it } from 'vitest';
import { canonicalJson, paramsHash } from './params-hash.js';
import { DeferredJson, jsonValue } from './deferred-json.js';
import { anthropicTrajectory } from '../trajectory/importers/anthropic.js';
import { openAiTrajectory } from '../trajectory/importers/openai.js';

describe('DeferredJson', () => {
  it('parses once, on first read, and stands for its value in JSON, canonical JSON and params hashes', () => {
    let parses = 0;
    const deferred = new DeferredJson('{"b":[1,2],"a":"x"}', (text) => (parses++, JSON.parse(text) as unknown));
    expect(parses).toBe(0);
    expect(JSON.stringify({ p: deferred })).toBe('{"p":{"b":[1,2],"a":"x"}}');
    expect(canonicalJson(deferred)).toBe('{"a":"x","b":[1,2]}');
    expect(paramsHash(deferred)).toBe(paramsHash({ a: 'x', b: [1, 2] }));
    expect(jsonValue(deferred)).toBe(jsonValue(deferred));
    expect(parses).toBe(1);
    expect(jsonValue(7)).toBe(7);
  });

  it('gives the same trajectories when the chat importers defer, byte for byte', () => {
    const openai = {
      id: 'c1',
      messages: [
        { role: 'user', content: 'cancel ZFA04Y' },
        { role: 'assistant', content: null, tool_calls: [
          { id: 'a', type: 'function', function: { name: 'get_reservation', arguments: '{"reservation_id":"ZFA04Y"}' } },
          { id: 'b', type: 'function', function: { name: 'cancel_reservation', arguments: 'not json' } },
          { id: 'c', type: 'function', function: { name: 'ping', arguments: '  ' } },
          { id: 'd', type: 'function', function: { name: 'cancel_reservation', arguments: '{"reservation_id":"ZFA04Y","x":1}' } },
        ] },
        { role: 'tool', tool_call_id: 'a', content: '{"reservation_id":"ZFA04Y","status":"confirmed","flights":[]}' },
        { role: 'tool', tool_call_id: 'b', content: '{"error":{"message":"Too Many Requests"},"status":429,"retry_after":2}' },
        { role: 'tool', tool_call_id: 'c', content: '[1,2' },
        { role: 'tool', tool_call_id: 'd', content: '{"status":"500"}' },
      ],
    };
    const anthropic = {
      id: 'c2',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'fetch', input: { id: 7 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', is_error: true, content: '{"detail":"nope"}' }] },
      ],
    };
    const options = { now: () => 0 };
    expect(JSON.stringify(openAiTrajectory(openai, { ...options, deferJson: true }))).toBe(JSON.stringify(openAiTrajectory(openai, options)));
    expect(JSON.stringify(anthropicTrajectory(anthropic, { ...options, deferJson: true }))).toBe(JSON.stringify(anthropicTrajectory(anthropic, options)));
    const t = openAiTrajectory(openai, { ...options, deferJson: true });
    if (typeof t === 'string') throw new Error(t);
    expect(t.steps[0]!.response.body).toBeInstanceOf(DeferredJson);
    expect(t.steps.map((s) => s.status)).toEqual(['success', 'failure', 'success', 'failure']);
  });
});
