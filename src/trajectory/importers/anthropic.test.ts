import { describe, expect, it } from 'vitest';
import { importAnthropic } from './anthropic.js';
import { collect, jsonl } from './collect.test-helpers.js';

const conversation = {
  id: 'msg_01',
  reward: 0.5,
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Restart the api deployment in prod.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }, { type: 'tool_use', id: 'tu1', name: 'kubectl', input: { cmd: 'rollout restart', ns: 'prod' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', is_error: true, content: [{ type: 'text', text: '{"error":{"message":"forbidden"},"status":403}' }] }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'tu2', name: 'page_oncall', input: { team: 'platform' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu2', content: 'paged' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'tu3', name: 'status', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu3', is_error: true, content: 'upstream unavailable' }] },
  ],
};

describe('Anthropic messages importer', () => {
  it('pairs tool_use with tool_result, honours is_error, and classifies structured errors', async () => {
    const { trajectories, skipped } = await collect(importAnthropic, jsonl(conversation));
    expect(skipped).toEqual([]);
    const [t] = trajectories;
    expect(t).toMatchObject({ source_id: 'msg_01', task_description: 'Restart the api deployment in prod.', final_outcome: 'partial', metadata: { source: 'anthropic' } });
    expect(t!.steps.map((s) => [s.tool_name, s.status, s.failure_kind, s.failure_subtype, s.agent_decision.action])).toEqual([
      ['kubectl', 'failure', 'forbidden', 'authz', 'switch_tool'],
      ['page_oncall', 'success', null, null, 'proceed'],
      // Flagged by is_error; the category comes from its words alone, so at low confidence.
      ['status', 'failure', 'dependency_down', '5xx', 'abort'],
    ]);
    expect(t!.steps[2]!.failure_evidence).toEqual({ confidence: 0.45, evidence: ['words:unavailable', 'flag:is_error'] });
    expect(t!.steps[0]).toMatchObject({ input_params: { cmd: 'rollout restart', ns: 'prod' }, response: { status_code: 403, error_code: 'HTTP_403' }, agent_decision: { next_tool: 'page_oncall' } });
    expect(t!.steps[2]!.response).toMatchObject({ message: 'upstream unavailable', body: 'upstream unavailable' });
  });

  it('keeps the system prompt, the declared tools and the text said around the calls', async () => {
    const line = {
      ...conversation,
      system: [{ type: 'text', text: 'You operate the platform.' }],
      tools: [{ name: 'kubectl', description: 'Runs kubectl.', input_schema: { type: 'object' } }],
      messages: [...conversation.messages, { role: 'assistant', content: [{ type: 'text', text: 'The status service is down; I paged platform.' }] }],
    };
    const [t] = (await collect(importAnthropic, jsonl(line))).trajectories;
    expect(t!.system_prompt).toBe('You operate the platform.');
    expect(t!.tools).toEqual([{ name: 'kubectl', description: 'Runs kubectl.', parameters: { type: 'object' } }]);
    expect(t!.steps[0]!.turns_before).toEqual([{ role: 'user', content: 'Restart the api deployment in prod.' }]);
    expect(t!.steps[0]!.call_text).toBe('Checking.');
    expect(t!.steps[0]!.response.text).toBe('{"error":{"message":"forbidden"},"status":403}');
    expect(t!.closing_turns).toEqual([{ role: 'assistant', content: 'The status service is down; I paged platform.' }]);
  });

  it('skips malformed lines by number', async () => {
    const { trajectories, skipped } = await collect(
      importAnthropic,
      jsonl(
        conversation,
        { messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 'x' }] }] },
        { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'nope', content: '' }] }] },
        { messages: [{ role: 'user', content: 42 }] },
        'garbage',
      ),
    );
    expect(trajectories).toHaveLength(1);
    expect(skipped).toEqual([
      { line: 2, reason: 'messages[0].content[0] (tool_use) needs an id and a name' },
      { line: 3, reason: 'messages[0].content[0] answers tool_use_id "nope", which no earlier tool_use made' },
      { line: 4, reason: 'messages[0].content is neither a string nor a list of blocks' },
      { line: 5, reason: expect.stringMatching(/^not JSON/) as unknown as string },
    ]);
  });
});
