import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, tool, type ToolExecutionOptions } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { reply, startFakeModelServer, toolResultsIn, offeredSchema, type FakeModelServer } from '../failbench/agents/fake-model-server.test-helpers.js';
import { createVirtualClock } from '../runtime/clock.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { HttpError } from '../runtime/tool-errors.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW } from '../tools/index.js';
import { aiSdkTools, lastUserText, ToolCallFailedError, wrapAiSdkTools } from './ai-sdk.js';

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
