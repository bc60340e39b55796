import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { generateText, stepCountIs, streamText, tool, ToolLoopAgent, type ToolExecutionOptions } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { reply, startFakeModelServer, toolResultsIn, offeredSchema, type FakeModelServer } from '../llm/fake-model-server.test-helpers.js';
import { createVirtualClock } from '../core/clock.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { HttpError } from '../runtime/tool-errors.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW } from '../tools/index.js';
import { aiSdkTools, answerInvalidToolCalls, lastUserText, ToolCallFailedError, wrapAiSdkTools } from './ai-sdk.js';

let dir: string;
let server: FakeModelServer;
let runtimes: Runtime[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'faultline-ai-sdk-'));
  server = await startFakeModelServer();
});
afterEach(async () => {
  for (const rt of runtimes) await rt.close();
  runtimes = [];
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function model() {
  return createOpenAICompatible({ name: 'fake', baseURL: server.openaiBaseUrl, apiKey: 'sk-test' }).chatModel('gpt-test');
}

function catalogRuntime(only: string[]) {
  const { tools, state } = createToolCatalog({ seed: 3, only });
  const rt = createRuntime({ tools, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }), store: `sqlite:${join(dir, 'f.db')}`, seed: 1 });
  runtimes.push(rt);
  return { rt, state };
}

describe('aiSdkTools: a runtime as an AI SDK ToolSet, driven by generateText over a real OpenAI-compatible wire', () => {
  it('lets faultline validate, sends its feedback as error-json, and records the conversation as one trace', async () => {
    const { rt } = catalogRuntime(['get_weather', 'create_order']);
    server.enqueue(
      reply.toolCall('get_weather', { city: 'Paris', date: 'tomorrow' }),
      reply.toolCall('get_weather', { city: 'paris', date: '2026-03-30', unit: 'c' }),
      reply.text('Sunny in Paris.'),
    );
    const session = rt.session({ agent: 'trip-planner', model: 'gpt-test' });
    const result = await generateText({
      model: model(),
      tools: aiSdkTools(rt, { session }),
      stopWhen: stepCountIs(5),
      prompt: 'What is the weather in Paris tomorrow?',
    });
    expect(result.text).toBe('Sunny in Paris.');
    expect(server.requests).toHaveLength(3);
    expect(offeredSchema(server.requests[0]!, 'get_weather')).toMatchObject({ required: ['city'] });

    // The model read the rejection, with the field to fix, as the tool's answer.
    const firstAnswer = toolResultsIn(server.requests[1]!)[0]!;
    const failure = JSON.parse(firstAnswer.content) as { ok: boolean; error: { type: string; stage: string; issues: { path: string }[] }; feedback: { action: string } };
    expect(failure).toMatchObject({ ok: false, error: { stage: 'param_validation' }, feedback: { action: 'retry_with_fixed_params' } });
    expect(failure.error.issues[0]!.path).toContain('date');
    // The second call went through faultline's normalization ("paris", unit "c").
    const secondAnswer = JSON.parse(toolResultsIn(server.requests[2]!)[0]!.content) as Record<string, unknown>;
    expect(secondAnswer).toMatchObject({ city: 'Paris', unit: 'celsius' });

    // The AI SDK saw a tool result, not an error: the failure envelope is the result.
    const parts = result.steps[0]!.content.filter((p) => p.type === 'tool-result' || p.type === 'tool-error');
    expect(parts.map((p) => p.type)).toEqual(['tool-result']);

    await rt.flush();
    const records = await rt.store!.query({ traceId: session.traceId });
    expect(records.map((r) => [r.step_index, r.status, r.failure_stage])).toEqual([
      [0, 'rejected', 'param_validation'],
      [1, 'success', null],
    ]);
    expect(records[0]!.context_snapshot).toMatchObject({ intent: 'What is the weather in Paris tomorrow?', agent: 'trip-planner' });
    expect(typeof records[0]!.context_snapshot['tool_call_id']).toBe('string');
  });

  it("with failures: 'throw', the AI SDK gets a tool-error carrying the classification and the hint", async () => {
    const { rt } = catalogRuntime(['get_order']);
    server.enqueue(reply.toolCall('get_order', { order_id: 'ORD-99999' }), reply.text('That order does not exist.'));
    const result = await generateText({ model: model(), tools: aiSdkTools(rt, { failures: 'throw' }), stopWhen: stepCountIs(3), prompt: 'Where is ORD-99999?' });
    const errors = result.steps[0]!.content.filter((p) => p.type === 'tool-error');
    expect(errors).toHaveLength(1);
    const error = (errors[0] as { error: unknown }).error;
    expect(ToolCallFailedError.isInstance(error)).toBe(true);
    if (!ToolCallFailedError.isInstance(error)) return;
    expect(error.failure.error).toMatchObject({ type: 'not_found', category: 'business' });
    expect(error.message).toContain(error.result.feedback.hint);
    expect(toolResultsIn(server.requests[1]!)[0]!.content).toContain('not_found');
  });

  it('offers only the named tools and records no intent when told not to', async () => {
    const { rt } = catalogRuntime(['get_weather', 'create_order', 'get_order']);
    const set = aiSdkTools(rt, { only: ['get_order'], intent: false });
    expect(Object.keys(set)).toEqual(['get_order']);
    expect(() => aiSdkTools(rt, { only: ['nope'] })).toThrow(/no tool named "nope"/);
    const r = await set['get_order']!.execute!({ order_id: 'ORD-99999' }, { toolCallId: 'c1', messages: [{ role: 'user', content: 'hi' }] });
    expect(r).toMatchObject({ ok: false, error: { type: 'not_found' } });
    await rt.flush();
    const [record] = await rt.store!.query({ toolName: 'get_order' });
    expect(record!.context_snapshot['intent']).toBeUndefined();
  });

  it('lastUserText reads string and part contents', () => {
    expect(lastUserText([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }])).toBe('a');
    expect(lastUserText([{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image', image: new URL('https://example.test/i.png') }, { type: 'text', text: 'y' }] }])).toBe('x\ny');
    expect(lastUserText([{ role: 'system', content: 's' }])).toBeUndefined();
  });
});

describe('wrapAiSdkTools: existing AI SDK tools run through faultline', () => {
  it('retries an idempotent tool after a 503, passes the AI SDK call options through, and leaves client-side tools alone', async () => {
    const seen: ToolExecutionOptions[] = [];
    let calls = 0;
    const getRate = tool({
      description: 'Exchange rate between two currencies.',
      inputSchema: z.object({ from: z.string().length(3), to: z.string().length(3) }),
      execute: async ({ from, to }, options) => {
        seen.push(options);
        calls += 1;
        if (calls === 1) throw new HttpError(503, 'upstream overloaded');
        return { from, to, rate: 1.08 };
      },
    });
    const askUser = tool({ description: 'Ask the user (answered by the client).', inputSchema: z.object({ question: z.string() }), outputSchema: z.object({ answer: z.string() }) });
    const { runtime, tools } = await wrapAiSdkTools(
      { getRate, askUser },
      { clock: createVirtualClock(), store: `sqlite:${join(dir, 'w.db')}`, seed: 1, settings: { getRate: { idempotent: true } } },
    );
    runtimes.push(runtime);
    expect(tools['askUser']).toBe(askUser);
    expect(runtime.tools.map((t) => t.name)).toEqual(['getRate']);
    expect(runtime.tools[0]!.inputSchema).toMatchObject({ type: 'object', required: ['from', 'to'] });

    server.enqueue(reply.toolCall('getRate', { from: 'EUR', to: 'USD' }), reply.text('1.08'));
    const result = await generateText({ model: model(), tools, stopWhen: stepCountIs(3), prompt: 'EUR to USD?' });
    expect(result.text).toBe('1.08');
    expect(JSON.parse(toolResultsIn(server.requests[1]!)[0]!.content)).toEqual({ from: 'EUR', to: 'USD', rate: 1.08 });
    expect(calls).toBe(2);
    const toolCallId = result.steps[0]!.toolCalls[0]!.toolCallId;
    expect(seen.map((o) => o.toolCallId)).toEqual([toolCallId, toolCallId]);
    expect(seen[0]!.messages.length).toBeGreaterThan(0);
    expect(seen[0]!.abortSignal).toBeInstanceOf(AbortSignal);

    await runtime.flush();
    const [record] = await runtime.store!.query({ toolName: 'getRate' });
    expect(record).toMatchObject({ status: 'success', retry_count: 1, idempotent: true });
    expect(record!.attempts.map((a) => a.error_code)).toEqual(['HTTP_503', null]);
  });

  it('never retries an undeclared (non-idempotent) tool after a timeout; the model is told to verify state', async () => {
    let calls = 0;
    const sendPayment = tool({
      description: 'Sends a payment.',
      inputSchema: z.object({ to: z.string(), amount: z.number().positive() }),
      execute: (_args, { abortSignal }) => {
        calls += 1;
        return new Promise((_, reject) => abortSignal?.addEventListener('abort', () => reject(abortSignal.reason)));
      },
    });
    const clock = createVirtualClock({ autoAdvance: true });
    const { runtime, forSession } = await wrapAiSdkTools({ sendPayment }, { clock, settings: { sendPayment: { timeoutMs: 2000 } } });
    runtimes.push(runtime);
    const session = runtime.session();
    const r = (await forSession(session)['sendPayment']!.execute!({ to: 'acct-1', amount: 10 }, { toolCallId: 'c1', messages: [] })) as {
      ok: boolean;
      error: { type: string };
      feedback: { action: string };
    };
    expect(calls).toBe(1);
    expect(r).toMatchObject({ ok: false, error: { type: 'timeout' }, feedback: { action: 'verify_state' } });
  });

  it('streams: the last value of an execute that yields preliminary results is the output', async () => {
    const progress = tool({
      description: 'Reports progress, then the answer.',
      inputSchema: z.object({}),
      async *execute() {
        yield { status: 'working' };
        yield { status: 'done', answer: 42 };
      },
    });
    const { runtime, tools } = await wrapAiSdkTools({ progress }, { settings: { progress: { idempotent: true } } });
    runtimes.push(runtime);
    const out = await tools['progress']!.execute!({}, { toolCallId: 'c', messages: [] });
    expect(out).toEqual({ status: 'done', answer: 42 });
  });

  it('refuses settings for a tool it was not given', async () => {
    await expect(wrapAiSdkTools({}, { settings: { ghost: { idempotent: true } } })).rejects.toThrow(/not one of the tools/);
  });
});

/** A model reply as the AI SDK's provider interface carries it: some tool calls, or a text. */
type MockStep = { calls: { id: string; name: string; input: string }[] } | { text: string };

const USAGE = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

function generateResult(step: MockStep) {
  return 'text' in step
    ? { content: [{ type: 'text' as const, text: step.text }], finishReason: { unified: 'stop' as const, raw: 'stop' }, usage: USAGE, warnings: [] }
    : {
        content: step.calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.input })),
        finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
        usage: USAGE,
        warnings: [],
      };
}

function streamResult(step: MockStep) {
  const parts =
    'text' in step
      ? [
          { type: 'text-start' as const, id: 't' },
          { type: 'text-delta' as const, id: 't', delta: step.text },
          { type: 'text-end' as const, id: 't' },
        ]
      : step.calls.flatMap((c) => [
          // Streamed as providers do: the input arrives in pieces, then the whole call.
          { type: 'tool-input-start' as const, id: c.id, toolName: c.name },
          { type: 'tool-input-delta' as const, id: c.id, delta: c.input },
          { type: 'tool-input-end' as const, id: c.id },
          { type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.input },
        ]);
  const finishReason = 'text' in step ? { unified: 'stop' as const, raw: 'stop' } : { unified: 'tool-calls' as const, raw: 'tool_calls' };
  return { stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([{ type: 'stream-start', warnings: [] }, ...parts, { type: 'finish', finishReason, usage: USAGE }]) };
}

/** The three calls the AI SDK alone would not let reach faultline, and a schema-invalid one that it would. */
const BAD_CALLS: MockStep = {
  calls: [
    { id: 'call_unknown', name: 'get_wether', input: '{"city":"Paris"}' },
    { id: 'call_malformed', name: 'get_weather', input: '{"city": "Paris", "date": ' },
    { id: 'call_invalid', name: 'get_weather', input: '{"date":"2026-03-30"}' },
  ],
};

interface ToolResultInPrompt {
  toolCallId: string;
  toolName: string;
  output: { type: string; value: unknown };
}

/** The tool results of the last tool message of a prompt the model received. */
function toolResultsOf(prompt: readonly { role: string; content: unknown }[]): ToolResultInPrompt[] {
  const tool = prompt.filter((m) => m.role === 'tool').at(-1);
  return ((tool?.content ?? []) as ToolResultInPrompt[]).filter((p) => (p as { type?: string }).type === 'tool-result');
}

function failureOf(result: ToolResultInPrompt | undefined): { ok: boolean; error: { type: string; stage: string; category: string }; feedback: { action: string; hint: string } } {
  expect(result?.output.type).toBe('error-json');
  return result!.output.value as never;
}

describe('answerInvalidToolCalls: unknown tools and malformed arguments reach faultline (MockLanguageModelV3)', () => {
  async function expectAnsweredAndRecorded(rt: Runtime, traceId: string, prompt: readonly { role: string; content: unknown }[], offered: readonly string[]) {
    const results = toolResultsOf(prompt);
    expect(results.map((r) => [r.toolCallId, r.toolName])).toEqual([
      ['call_unknown', 'get_wether'],
      ['call_malformed', 'get_weather'],
      ['call_invalid', 'get_weather'],
    ]);
    const unknown = failureOf(results[0]);
    expect(unknown).toMatchObject({ ok: false, error: { type: 'unknown_tool', stage: 'request_build', category: 'parameter' }, feedback: { action: 'retry_with_fixed_params' } });
    expect(unknown.feedback.hint).toContain('"get_weather"');
    expect(failureOf(results[1])).toMatchObject({ ok: false, error: { type: 'malformed_arguments', stage: 'request_build', category: 'parameter' } });
    expect(failureOf(results[2])).toMatchObject({ ok: false, error: { stage: 'param_validation', category: 'parameter' } });
    // The made-up name was answered but never offered.
    expect(offered).toEqual(['get_weather']);

    await rt.flush();
    const records = await rt.store!.query({ traceId });
    expect(records.map((r) => [r.step_index, r.tool_name, r.status, r.failure_stage, r.failure_type, r.context_snapshot['tool_call_id']])).toEqual([
      [0, 'get_wether', 'rejected', 'request_build', 'unknown_tool', 'call_unknown'],
      [1, 'get_weather', 'rejected', 'request_build', 'malformed_arguments', 'call_malformed'],
      [2, 'get_weather', 'rejected', 'param_validation', records[2]!.failure_type, 'call_invalid'],
    ]);
    // The malformed call is recorded with the text the model wrote, not with what the SDK replayed.
    expect(records[1]!.input_params).toBe('{"city": "Paris", "date": ');
    expect(records[0]!.input_params).toEqual({ city: 'Paris' });
  }

  function offeredNames(call: { tools?: readonly { name: string }[] | undefined }): string[] {
    return (call.tools ?? []).map((t) => t.name);
  }

  it('generateText: records and answers all three, and the conversation goes on', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const steps: MockStep[] = [BAD_CALLS, { text: 'Let me try again.' }];
    const model = new MockLanguageModelV3({ doGenerate: async () => generateResult(steps.shift()!) });
    const session = rt.session({ agent: 'trip-planner' });
    const result = await generateText({ model, tools: aiSdkTools(rt, { session }), experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(4), prompt: 'Weather in Paris?' });
    expect(result.text).toBe('Let me try again.');
    expect(model.doGenerateCalls).toHaveLength(2);
    await expectAnsweredAndRecorded(rt, session.traceId, model.doGenerateCalls[1]!.prompt, offeredNames(model.doGenerateCalls[1]!));
    // The SDK saw three answered calls, none of them a tool-error of its own.
    expect(result.steps[0]!.content.filter((p) => p.type === 'tool-result').map((p) => p.toolCallId)).toEqual(['call_unknown', 'call_malformed', 'call_invalid']);
    expect(result.steps[0]!.content.filter((p) => p.type === 'tool-error')).toEqual([]);
  });

  it('streamText: the same, over a streamed response', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const steps: MockStep[] = [BAD_CALLS, { text: 'Let me try again.' }];
    const model = new MockLanguageModelV3({ doStream: async () => streamResult(steps.shift()!) });
    const session = rt.session({ agent: 'trip-planner' });
    const result = streamText({ model, tools: aiSdkTools(rt, { session }), experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(4), prompt: 'Weather in Paris?' });
    expect(await result.text).toBe('Let me try again.');
    expect(model.doStreamCalls).toHaveLength(2);
    await expectAnsweredAndRecorded(rt, session.traceId, model.doStreamCalls[1]!.prompt, offeredNames(model.doStreamCalls[1]!));
  });

  it('wrapAiSdkTools: the same for zod tools wrapped in a runtime, in one session', async () => {
    let ran = 0;
    const getWeather = tool({
      description: 'Weather for a city on a date.',
      inputSchema: z.object({ city: z.string(), date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) }),
      execute: async ({ city }) => {
        ran += 1;
        return { city, sky: 'clear' };
      },
    });
    const { runtime, forSession } = await wrapAiSdkTools({ get_weather: getWeather }, { store: `sqlite:${join(dir, 'wrapped.db')}`, settings: { get_weather: { idempotent: true } } });
    runtimes.push(runtime);
    const steps: MockStep[] = [
      { calls: [...(BAD_CALLS as { calls: { id: string; name: string; input: string }[] }).calls.slice(0, 2), { id: 'call_invalid', name: 'get_weather', input: '{"city":"Paris","date":"tomorrow"}' }] },
      { calls: [{ id: 'call_ok', name: 'get_weather', input: '{"city":"Paris","date":"2026-03-30"}' }] },
      { text: 'Clear.' },
    ];
    const model = new MockLanguageModelV3({ doGenerate: async () => generateResult(steps.shift()!) });
    const session = runtime.session();
    const result = await generateText({ model, tools: forSession(session), experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(5), prompt: 'Weather in Paris on 2026-03-30?' });
    expect(result.text).toBe('Clear.');
    expect(ran).toBe(1);
    await runtime.flush();
    const records = await runtime.store!.query({ traceId: session.traceId });
    expect(records.map((r) => [r.tool_name, r.status, r.failure_type])).toEqual([
      ['get_wether', 'rejected', 'unknown_tool'],
      ['get_weather', 'rejected', 'malformed_arguments'],
      ['get_weather', 'rejected', records[2]!.failure_type],
      ['get_weather', 'success', null],
    ]);
    expect(records[2]!.failure_stage).toBe('param_validation');
    expect(failureOf(toolResultsOf(model.doGenerateCalls[1]!.prompt)[0])).toMatchObject({ error: { type: 'unknown_tool' } });
  });

  it('a made-up name called twice is answered both times, and tools faultline did not make are left to the SDK', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const own = tool({ description: 'Not faultline.', inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => q });
    const steps: MockStep[] = [
      { calls: [{ id: 'c1', name: 'get_wether', input: '{}' }, { id: 'c2', name: 'own', input: '{"q": ' }] },
      { calls: [{ id: 'c3', name: 'get_wether', input: 'not json' }] },
      { text: 'done' },
    ];
    const model = new MockLanguageModelV3({ doGenerate: async () => generateResult(steps.shift()!) });
    const tools = { ...aiSdkTools(rt), own };
    const result = await generateText({ model, tools, experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(5), prompt: 'hi' });
    expect(result.text).toBe('done');
    // The other tool's unparsable call got the SDK's own answer.
    expect(result.steps[0]!.content.filter((p) => p.type === 'tool-error').map((p) => p.toolCallId)).toEqual(['c2']);
    expect(offeredNames(model.doGenerateCalls[2]!)).toEqual(['get_weather', 'own']);
    expect(Object.keys(tools)).toEqual(['get_weather', 'own']);
    await rt.flush();
    const records = await rt.store!.query({ toolName: 'get_wether' });
    expect(records.map((r) => r.failure_type)).toEqual(['unknown_tool', 'unknown_tool']);
    expect(records[0]!.input_params).toEqual({});
    // An unknown name with unparsable arguments, as executeJson records it everywhere.
    expect(records[1]!.input_params).toMatchObject({ raw: 'not json' });
  });

  it('works where the SDK uses a copy of the tool set (activeTools) and in a ToolLoopAgent', async () => {
    const { rt } = catalogRuntime(['get_weather', 'get_order']);
    const steps: MockStep[] = [BAD_CALLS, { text: 'one' }, BAD_CALLS, { text: 'two' }];
    const model = new MockLanguageModelV3({ doGenerate: async () => generateResult(steps.shift()!) });
    const tools = aiSdkTools(rt);
    const first = await generateText({ model, tools, activeTools: ['get_weather'], experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(3), prompt: 'Weather?' });
    expect(first.text).toBe('one');
    expect(offeredNames(model.doGenerateCalls[1]!)).toEqual(['get_weather']);
    // activeTools gave the SDK a copy of the set: the caller's own object was not touched.
    expect(Object.getOwnPropertyNames(tools)).toEqual(['get_weather', 'get_order']);
    const agent = new ToolLoopAgent({ model, tools, experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(3) });
    const second = await agent.generate({ prompt: 'Weather?' });
    expect(second.text).toBe('two');
    expect(offeredNames(model.doGenerateCalls[3]!)).toEqual(['get_weather', 'get_order']);
    await rt.flush();
    const records = await rt.store!.query({});
    expect(records.map((r) => r.failure_type).filter((t) => t === 'unknown_tool' || t === 'malformed_arguments')).toEqual(['unknown_tool', 'malformed_arguments', 'unknown_tool', 'malformed_arguments']);
    expect(records).toHaveLength(6);
  });

  it('a long-lived tool set keeps at most 256 answered made-up names, dropping the oldest once they have run', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const tools = aiSdkTools(rt);
    const names = Array.from({ length: 300 }, (_, i) => `made_up_${i}`);
    const steps: MockStep[] = [{ calls: names.map((name, i) => ({ id: `c${i}`, name, input: '{}' })) }, { calls: [{ id: 'last', name: 'made_up_last', input: '{}' }] }, { text: 'done' }];
    const model = new MockLanguageModelV3({ doGenerate: async () => generateResult(steps.shift()!) });
    const result = await generateText({ model, tools, experimental_repairToolCall: answerInvalidToolCalls, stopWhen: stepCountIs(4), prompt: 'hi' });
    // One step with 300 made-up names: none is taken off before its call has run.
    expect(result.text).toBe('done');
    expect(result.steps[0]!.content.filter((p) => p.type === 'tool-result')).toHaveLength(300);
    const own = Object.getOwnPropertyNames(tools);
    expect(own).toHaveLength(1 + 256);
    expect(own).not.toContain('made_up_0');
    expect(own).toContain('made_up_last');
    expect(Object.keys(tools)).toEqual(['get_weather']);
  });

  it('without the hook, the AI SDK answers such calls itself and faultline records only the schema-invalid one', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const steps: MockStep[] = [BAD_CALLS, { text: 'ok' }];
    const model = new MockLanguageModelV3({ doGenerate: async () => generateResult(steps.shift()!) });
    const result = await generateText({ model, tools: aiSdkTools(rt), stopWhen: stepCountIs(3), prompt: 'Weather in Paris?' });
    expect(result.steps[0]!.content.filter((p) => p.type === 'tool-error').map((p) => p.toolCallId)).toEqual(['call_unknown', 'call_malformed']);
    await rt.flush();
    expect((await rt.store!.query({})).map((r) => r.context_snapshot['tool_call_id'])).toEqual(['call_invalid']);
  });
});
