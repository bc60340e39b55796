import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, reply, toolResultsIn, offeredSchema, type FakeModelServer } from '../llm/fake-model-server.test-helpers.js';
import { createVirtualClock } from '../core/clock.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW } from '../tools/index.js';
import { chatTools, responsesTools, runChatToolCalls, runResponsesFunctionCalls } from './openai.js';

let dir: string;
let server: FakeModelServer | undefined;
let rt: Runtime | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'faultline-openai-'));
});
afterEach(async () => {
  await rt?.close();
  await server?.close();
  rt = undefined;
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

function catalogRuntime(only: string[]) {
  const { tools, state } = createToolCatalog({ seed: 3, only });
  rt = createRuntime({ tools, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }), store: `sqlite:${join(dir, 'f.db')}`, seed: 1 });
  return { rt, state };
}

describe('OpenAI Chat Completions through faultline', () => {
  it('offers the tools, runs every tool call of a message and answers each id in order, over the real SDK', async () => {
    const { rt } = catalogRuntime(['get_weather', 'create_order']);
    server = await startFakeModelServer({
      replies: [
        reply.toolCalls([
          { id: 'call_w', name: 'get_weather', arguments: { city: 'Paris', date: '2026-03-30' } },
          // A model that wrote broken JSON: a recorded rejection, never a guess.
          { id: 'call_o', name: 'create_order', arguments: '{"customer_id": "CUS-001", "items": [' },
        ]),
        reply.text('It will be sunny; I could not place the order.'),
      ],
    });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: server.openaiBaseUrl, maxRetries: 0 });
    const session = rt.session({ agent: 'support-bot', model: 'gpt-test' });
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris on 2026-03-30, and order one SKU-1001.' }];
    const tools = chatTools(rt);

    const first = await client.chat.completions.create({ model: 'gpt-test', messages, tools });
    const message = first.choices[0]!.message;
    const answers = await runChatToolCalls(session, message, { intent: 'weather in Paris and an order' });
    expect(answers.map((a) => a.tool_call_id)).toEqual(['call_w', 'call_o']);
    messages.push(message, ...answers);
    const second = await client.chat.completions.create({ model: 'gpt-test', messages, tools });
    expect(second.choices[0]!.message.content).toContain('sunny');

    // What the endpoint received: the schemas as defined, and the two answers.
    const offered = offeredSchema(server.requests[0]!, 'create_order');
    expect(offered).toEqual(rt.tools.find((t) => t.name === 'create_order')!.inputSchema);
    const sent = toolResultsIn(server.requests[1]!);
    expect(sent.map((s) => s.id)).toEqual(['call_w', 'call_o']);
    const weather = JSON.parse(sent[0]!.content) as Record<string, unknown>;
    expect(weather['city']).toBe('Paris');
    const order = JSON.parse(sent[1]!.content) as { ok: boolean; error: Record<string, unknown>; feedback: Record<string, unknown> };
    expect(order.ok).toBe(false);
    expect(order.error).toMatchObject({ type: 'malformed_arguments', stage: 'request_build', category: 'parameter' });
    expect(order.feedback).toMatchObject({ action: 'retry_with_fixed_params', retryable: true });

    // Both calls are in the store, in one trace, with the call ids and the intent.
    await rt.flush();
    const store = rt.store!;
    const records = await store.query({ traceId: session.traceId });
    expect(records.map((r) => [r.step_index, r.tool_name, r.status])).toEqual([
      [0, 'get_weather', 'success'],
      [1, 'create_order', 'rejected'],
    ]);
    expect(records[1]!.input_params).toBe('{"customer_id": "CUS-001", "items": [');
    expect(records.map((r) => r.context_snapshot['tool_call_id'])).toEqual(['call_w', 'call_o']);
    expect(records[0]!.context_snapshot).toMatchObject({ intent: 'weather in Paris and an order', agent: 'support-bot' });
  });

  it('gives the model what to fix for invalid arguments, and what to wait for a rate limit', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const answers = await runChatToolCalls(rt, {
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris", "date": "tomorrow"}' } }],
    });
    const body = JSON.parse(answers[0]!.content as string) as { ok: false; error: { type: string; issues: { path: string }[] }; feedback: { hint: string } };
    expect(body.ok).toBe(false);
    expect(body.error.issues.length).toBeGreaterThan(0);
    expect(body.error.issues[0]!.path).toMatch(/date/);
    expect(body.feedback.hint).toMatch(/date/);
  });

  it('answers an unknown tool and a custom tool call instead of dropping them (the next request needs every id)', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const answers = await runChatToolCalls(rt, {
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'get_wether', arguments: '{}' } },
        { id: 'c2', type: 'custom', custom: { name: 'get_weather', input: 'Paris' } },
      ],
    });
    expect(answers.map((a) => a.tool_call_id)).toEqual(['c1', 'c2']);
    const unknown = JSON.parse(answers[0]!.content as string) as { error: { type: string }; feedback: { hint: string } };
    expect(unknown.error.type).toBe('unknown_tool');
    expect(unknown.feedback.hint).toContain('get_weather');
    const custom = JSON.parse(answers[1]!.content as string) as { ok: boolean; error: { stage: string } };
    expect(custom).toMatchObject({ ok: false, error: { stage: 'param_validation' } });
  });

  it('records a made-up name and unparsable arguments from the real SDK, and the next request carries their answers', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    server = await startFakeModelServer({
      replies: [
        reply.toolCalls([
          { id: 'call_unknown', name: 'get_wether', arguments: { city: 'Paris' } },
          { id: 'call_malformed', name: 'get_weather', arguments: "{'city': 'Paris'}" },
        ]),
        reply.text('Trying again.'),
      ],
    });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: server.openaiBaseUrl, maxRetries: 0 });
    const session = rt.session({ agent: 'support-bot' });
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: 'gpt-test', messages, tools: chatTools(rt) });
    const message = first.choices[0]!.message;
    messages.push(message, ...(await runChatToolCalls(session, message)));
    await client.chat.completions.create({ model: 'gpt-test', messages, tools: chatTools(rt) });

    const sent = toolResultsIn(server.requests[1]!);
    expect(sent.map((s) => s.id)).toEqual(['call_unknown', 'call_malformed']);
    expect(JSON.parse(sent[0]!.content)).toMatchObject({ ok: false, error: { type: 'unknown_tool', stage: 'request_build', category: 'parameter' } });
    expect(JSON.parse(sent[1]!.content)).toMatchObject({ ok: false, error: { type: 'malformed_arguments', stage: 'request_build', category: 'parameter' } });
    await rt.flush();
    const records = await rt.store!.query({ traceId: session.traceId });
    expect(records.map((r) => [r.tool_name, r.status, r.failure_stage, r.failure_type, r.context_snapshot['tool_call_id']])).toEqual([
      ['get_wether', 'rejected', 'request_build', 'unknown_tool', 'call_unknown'],
      ['get_weather', 'rejected', 'request_build', 'malformed_arguments', 'call_malformed'],
    ]);
    expect(records[1]!.input_params).toBe("{'city': 'Paris'}");
  });

  it('runs sequentially when asked, and reports each full result', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const seen: string[] = [];
    const message = {
      tool_calls: ['Paris', 'Tokyo', 'London'].map((city, i) => ({ id: `c${i}`, type: 'function' as const, function: { name: 'get_weather', arguments: JSON.stringify({ city }) } })),
    };
    const answers = await runChatToolCalls(rt, message, { sequential: true, traceId: 'tr', onResult: (r, call) => seen.push(`${call.id}:${r.record.step_index}:${r.ok}`) });
    expect(answers).toHaveLength(3);
    expect(seen).toEqual(['c0:0:true', 'c1:1:true', 'c2:2:true']);
  });

  it('lists a subset in a given order, and refuses names the runtime does not have', () => {
    const { rt } = catalogRuntime(['get_weather', 'create_order', 'get_order']);
    expect(chatTools(rt, { only: ['get_order', 'get_weather'] }).map((t) => t.function.name)).toEqual(['get_order', 'get_weather']);
    expect(() => chatTools(rt, { only: ['nope'] })).toThrow(/no tool named "nope"/);
    expect(responsesTools(rt.tools).map((t) => [t.type, t.name, t.strict])).toEqual([
      ['function', 'get_weather', false],
      ['function', 'create_order', false],
      ['function', 'get_order', false],
    ]);
  });
});

/**
 * A Responses API endpoint on loopback, as strict as the real one about the part that matters
 * here: a request that continues a conversation must answer every function call it carries with
 * a `function_call_output` of the same `call_id`, or it gets the real API's 400.
 */
async function startResponsesEndpoint(turns: Array<(input: ResponseInputItem[]) => unknown[]>) {
  const received: ResponseInputItem[][] = [];
  const srv = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: ResponseInputItem[]; model: string };
      received.push(body.input);
      const calls = body.input.filter((i): i is ResponseInputItem & { type: 'function_call'; call_id: string } => i.type === 'function_call');
      const outputs = new Set(body.input.filter((i) => i.type === 'function_call_output').map((i) => (i as { call_id: string }).call_id));
      const missing = calls.find((c) => !outputs.has(c.call_id));
      if (missing !== undefined) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `No tool output found for function call ${missing.call_id}.`, type: 'invalid_request_error', param: 'input', code: null } }));
        return;
      }
      const turn = turns[received.length - 1];
      const output = turn === undefined ? [] : turn(body.input);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `resp_${received.length}`,
          object: 'response',
          created_at: 1_767_225_600,
          status: 'completed',
          model: body.model,
          output,
          parallel_tool_calls: true,
          tool_choice: 'auto',
          tools: [],
          usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  return { baseURL: `http://127.0.0.1:${port}/v1`, received, close: () => new Promise<void>((resolve) => srv.close(() => resolve())) };
}

describe('OpenAI Responses API through faultline', () => {
  it('answers function_call items with function_call_output items the next request accepts', async () => {
    const { rt } = catalogRuntime(['get_weather', 'get_order']);
    const endpoint = await startResponsesEndpoint([
      () => [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'get_order', arguments: '{"order_id":"ORD-99999"}', status: 'completed' },
      ],
      () => [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] }],
    ]);
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: endpoint.baseURL, maxRetries: 0 });
      const input: ResponseInputItem[] = [{ role: 'user', content: 'Weather in Oslo and order ORD-99999' }];
      const first = await client.responses.create({ model: 'gpt-test', input, tools: responsesTools(rt) });
      const outputs = await runResponsesFunctionCalls(rt, first.output);
      expect(outputs.map((o) => [o.type, o.call_id])).toEqual([
        ['function_call_output', 'call_1'],
        ['function_call_output', 'call_2'],
      ]);
      const second = await client.responses.create({ model: 'gpt-test', input: [...input, ...(first.output as ResponseInputItem[]), ...outputs], tools: responsesTools(rt) });
      expect(second.output_text).toBe('done');
      const notFound = JSON.parse(outputs[1]!.output as string) as { ok: boolean; error: { type: string; category: string } };
      expect(notFound).toMatchObject({ ok: false, error: { type: 'not_found', category: 'business' } });
    } finally {
      await endpoint.close();
    }
  });

  it('answers and records a made-up name and arguments that are not JSON, and the strict endpoint takes the answers', async () => {
    const { rt } = catalogRuntime(['get_weather']);
    const endpoint = await startResponsesEndpoint([
      () => [
        { type: 'function_call', id: 'fc_1', call_id: 'call_unknown', name: 'get_wether', arguments: '{"city":"Oslo"}', status: 'completed' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_malformed', name: 'get_weather', arguments: '{"city":"Oslo"', status: 'completed' },
      ],
      () => [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'retrying', annotations: [] }] }],
    ]);
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: endpoint.baseURL, maxRetries: 0 });
      const input: ResponseInputItem[] = [{ role: 'user', content: 'Weather in Oslo' }];
      const first = await client.responses.create({ model: 'gpt-test', input, tools: responsesTools(rt) });
      const session = rt.session({ agent: 'responses-bot' });
      const outputs = await runResponsesFunctionCalls(session, first.output);
      const second = await client.responses.create({ model: 'gpt-test', input: [...input, ...(first.output as ResponseInputItem[]), ...outputs], tools: responsesTools(rt) });
      expect(second.output_text).toBe('retrying');
      expect(outputs.map((o) => [o.call_id, (JSON.parse(o.output as string) as { error: { type: string } }).error.type])).toEqual([
        ['call_unknown', 'unknown_tool'],
        ['call_malformed', 'malformed_arguments'],
      ]);
      expect((JSON.parse(outputs[0]!.output as string) as { feedback: { hint: string } }).feedback.hint).toContain('"get_weather"');
      await rt.flush();
      const records = await rt.store!.query({ traceId: session.traceId });
      expect(records.map((r) => [r.tool_name, r.failure_stage, r.failure_type, r.context_snapshot['tool_call_id']])).toEqual([
        ['get_wether', 'request_build', 'unknown_tool', 'call_unknown'],
        ['get_weather', 'request_build', 'malformed_arguments', 'call_malformed'],
      ]);
    } finally {
      await endpoint.close();
    }
  });

  it('the strict endpoint does refuse a conversation with an unanswered call (the check above can fail)', async () => {
    const endpoint = await startResponsesEndpoint([]);
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: endpoint.baseURL, maxRetries: 0 });
      await expect(
        client.responses.create({
          model: 'gpt-test',
          input: [{ type: 'function_call', call_id: 'call_x', name: 'get_weather', arguments: '{}' }],
        }),
      ).rejects.toThrow(/No tool output found/);
    } finally {
      await endpoint.close();
    }
  });
});
