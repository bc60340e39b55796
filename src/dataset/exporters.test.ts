import { describe, expect, it } from 'vitest';
import { exportDpoOpenAi } from './dpo-openai-exporter.js';
import { exportDpoTrl } from './dpo-trl-exporter.js';
import { inferParametersSchema } from './infer-tool-schema.js';
import { exportKto } from './kto-exporter.js';
import { exportSft } from './sft-exporter.js';
import { exportTrajectory } from './trajectories-exporter.js';
import { blindRetry, failedTask, recovered } from './dataset.test-helpers.js';

const lines = (examples: readonly unknown[]): string[] => examples.map((e) => JSON.stringify(e));
const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });
const hfCall = (name: string, args: unknown) => ({ type: 'function', function: { name, arguments: args } });
const salesPrompt = [
  { role: 'user', content: 'Sales for March' },
  { role: 'assistant', content: null, tool_calls: [call('call_1', 'query_sales', '{"month":"2026-03"}')] },
  { role: 'tool', tool_call_id: 'call_1', content: '{"error_code":"timeout"}' },
];
const salesPromptHf = [
  { role: 'user', content: 'Sales for March' },
  { role: 'assistant', content: '', tool_calls: [hfCall('query_sales', { month: '2026-03' })] },
  { role: 'tool', name: 'query_sales', content: '{"error_code":"timeout"}' },
];
const salesTools = [{ type: 'function', function: { name: 'query_sales', parameters: { type: 'object', properties: { month: { type: 'string' } }, required: ['month'] } } }];

describe('trajectories exporter', () => {
  it('writes the stored trajectory as one line', () => {
    const t = blindRetry();
    expect(lines(exportTrajectory(t).examples)).toEqual([JSON.stringify(t)]);
  });
});

describe('sft exporter', () => {
  it('writes an OpenAI chat line with tool calls, tool replies, weights and inferred tools', () => {
    expect(lines(exportSft(blindRetry()).examples)).toEqual([
      JSON.stringify({
        messages: [
          ...salesPrompt.slice(0, 2).map((m) => (m.role === 'assistant' ? { ...m, weight: 1 } : m)),
          salesPrompt[2],
          // The retry followed a decision judged incorrect: weight 0.
          { role: 'assistant', content: null, tool_calls: [call('call_2', 'query_sales', '{"month":"2026-03"}')], weight: 0 },
          // The result as the model read it: the body, not the response object around it.
          { role: 'tool', tool_call_id: 'call_2', content: '{"records":31}' },
          { role: 'assistant', content: 'Done: query_sales succeeded.', weight: 1 },
        ],
        tools: salesTools,
      }),
    ]);
  });

  it('weights the recovery 1 and puts a system turn first when asked', () => {
    const [example] = exportSft(recovered(), { system: 'You are a support agent.' }).examples;
    expect(example!.messages.map((m) => `${m.role}${'weight' in m ? `:${m.weight}` : ''}`)).toEqual([
      'system', 'user', 'assistant:1', 'tool', 'assistant:0', 'tool', 'assistant:1', 'tool', 'assistant:1',
    ]);
    expect(example!.tools.map((t) => t.function.name)).toEqual(['get_order', 'search_orders']);
  });

  it('skips trajectories that did not succeed', () => {
    expect(exportSft(failedTask())).toEqual({ examples: [], skipped: 'outcome is failure' });
    expect(exportSft({ ...blindRetry(), task_description: null })).toEqual({ examples: [], skipped: 'no task description' });
  });
});

describe('preference exporters', () => {
  // The call the model would make after waiting: a tool call, not a sentence about waiting.
  const waitThenRetry = { role: 'assistant', content: null, tool_calls: [call('call_2', 'query_sales', '{"month":"2026-03"}')] };
  const blindAgain = { role: 'assistant', content: null, tool_calls: [call('call_2', 'query_sales', '{"month":"2026-03"}')] };

  it('dpo-openai: correct_action preferred over the blind retry', () => {
    expect(lines(exportDpoOpenAi(blindRetry()).examples)).toEqual([
      JSON.stringify({ input: { messages: salesPrompt, tools: salesTools }, preferred_output: [waitThenRetry], non_preferred_output: [blindAgain] }),
    ]);
  });

  it('dpo-trl: the same pair in conversational format', () => {
    expect(lines(exportDpoTrl(blindRetry()).examples)).toEqual([
      JSON.stringify({
        prompt: salesPromptHf,
        chosen: [{ role: 'assistant', content: '', tool_calls: [hfCall('query_sales', { month: '2026-03' })] }],
        rejected: [{ role: 'assistant', content: '', tool_calls: [hfCall('query_sales', { month: '2026-03' })] }],
      }),
    ]);
  });

  it('uses the recovery that worked when there is no correct_action', () => {
    const [pair] = exportDpoOpenAi(recovered()).examples;
    expect(pair!.preferred_output).toEqual([{ role: 'assistant', content: null, tool_calls: [call('call_2', 'search_orders', '{"customer":"c1","limit":5}')] }]);
    expect(pair!.non_preferred_output).toEqual([{ role: 'assistant', content: null, tool_calls: [call('call_2', 'get_order', '{"id":"A1"}')] }]);
    expect(pair!.input.messages).toHaveLength(3);
    expect(exportDpoTrl(failedTask())).toEqual({ examples: [], skipped: 'no preference pair' });
  });

  it('kto: the wrong turn false, the better turn true, a correct decision true', () => {
    expect(lines(exportKto(blindRetry()).examples)).toEqual([
      JSON.stringify({ prompt: salesPromptHf, completion: [{ role: 'assistant', content: '', tool_calls: [hfCall('query_sales', { month: '2026-03' })] }], label: false }),
      JSON.stringify({ prompt: salesPromptHf, completion: [{ role: 'assistant', content: '', tool_calls: [hfCall('query_sales', { month: '2026-03' })] }], label: true }),
    ]);
    const kto = exportKto(recovered()).examples;
    expect(kto.map((e) => `${e.prompt.length}:${JSON.stringify(e.completion[0])}:${e.label}`)).toEqual([
      `3:${JSON.stringify({ role: 'assistant', content: '', tool_calls: [hfCall('get_order', { id: 'A1' })] })}:false`,
      `3:${JSON.stringify({ role: 'assistant', content: '', tool_calls: [hfCall('search_orders', { customer: 'c1', limit: 5 })] })}:true`,
      `5:${JSON.stringify({ role: 'assistant', content: '', tool_calls: [hfCall('search_orders', { customer: 'c1', limit: 5 })] })}:true`,
    ]);
    expect(exportKto(failedTask())).toEqual({ examples: [], skipped: 'no judged failure point' });
  });

  it('a semantic failure with a correct_action patches the arguments', () => {
    const t = blindRetry();
    const last = t.steps[1]!;
    last.decision_correctness = 'incorrect';
    last.correct_action = { action: 'self_verify_and_retry', params_delta: { month: '2026-04' }, reasoning: 'asked for April' };
    const pairs = exportDpoOpenAi(t).examples;
    expect(pairs).toHaveLength(2);
    expect(pairs[1]!.preferred_output).toEqual([{ role: 'assistant', content: null, tool_calls: [call('call_3', 'query_sales', '{"month":"2026-04"}')] }]);
    expect(pairs[1]!.non_preferred_output).toEqual([{ role: 'assistant', content: 'Done: query_sales succeeded.' }]);
  });
});

describe('inferParametersSchema', () => {
  it('unions types and requires only keys present in every call', () => {
    expect(inferParametersSchema([{ city: 'Paris', days: 1, tags: ['a'] }, { city: 'Rome', days: 1.5 }, 'not json'])).toEqual({
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['city', 'days'],
    });
    expect(inferParametersSchema([])).toEqual({ type: 'object', properties: {}, required: [] });
    expect(inferParametersSchema([{ a: null }, { a: { b: 1 } }])).toEqual({
      type: 'object',
      properties: { a: { type: ['null', 'object'], properties: { b: { type: 'integer' } }, required: ['b'] } },
      required: ['a'],
    });
  });
});
