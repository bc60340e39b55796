/**
 * The behaviour every model adapter must show, as one suite run against each adapter over the
 * fake wire-format server: the tool-call loop, diagnoses, final statuses, the turn bound, model-side
 * retries kept apart from tool calls, malformed responses, secrets, concurrency.
 */
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Agent, AgentTask, AgentTool, AgentToolResult, FeedbackMode } from '../types.js';
import {
  apiKeyOf,
  instructionOf,
  offeredSchema,
  offeredToolNames,
  reply,
  startFakeModelServer,
  systemPromptOf,
  toolResultsIn,
  type FakeModelServer,
  type WireFormat,
} from '../../llm/fake-model-server.test-helpers.js';
import { ModelEndpointError } from '../../llm/model-endpoint-error.js';
import type { ModelRetryEvent } from '../../llm/model-retry.js';
import type { ModelAgentOptions } from './tool-call-loop.js';
import { recordingClock, TEST_KEY } from '../../llm/fake-model-server.test-helpers.js';

export { recordingClock, TEST_KEY };

export const WEATHER_TOOL: AgentTool = {
  name: 'get_weather',
  description: 'Weather for a city on a day.',
  inputSchema: { type: 'object', properties: { city: { type: 'string' }, day: { type: 'string' } }, required: ['city'] },
  annotations: { readOnlyHint: true, idempotentHint: true },
};

export const ORDER_TOOL: AgentTool = {
  name: 'create_order',
  description: 'Places an order. Not idempotent.',
  inputSchema: { type: 'object', properties: { sku: { type: 'string' }, quantity: { type: 'integer', minimum: 1 } }, required: ['sku', 'quantity'] },
  annotations: { readOnlyHint: false, idempotentHint: false },
};

type ToolHandler = (args: Record<string, unknown>, call: number) => AgentToolResult;

export interface FakeTask extends AgentTask {
  /** Every call that reached the tools, in order. */
  readonly calls: Array<{ name: string; args: Record<string, unknown> }>;
  /** Every virtual wait, in ms. */
  readonly sleeps: number[];
  readonly controller: AbortController;
}

export interface FakeTaskOptions {
  instruction?: string;
  feedback?: FeedbackMode;
  tools?: AgentTool[];
  /** Per tool: results in order (the last one repeats), or a function of the arguments. */
  results?: Record<string, AgentToolResult[] | ToolHandler>;
}

const SUNNY: AgentToolResult = { ok: true, output: { city: 'Paris', temperature_c: 18, condition: 'cloudy' } };

/** A small in-memory AgentTask: scripted tool results, recorded calls, virtual sleeps. */
export function makeTask(options: FakeTaskOptions = {}): FakeTask {
  const calls: FakeTask['calls'] = [];
  const sleeps: number[] = [];
  const controller = new AbortController();
  const counts = new Map<string, number>();
  return {
    id: 'task-1',
    instruction: options.instruction ?? 'What is the weather in Paris tomorrow?',
    now: '2026-03-02T09:00:00.000Z',
    tools: options.tools ?? [WEATHER_TOOL, ORDER_TOOL],
    feedback: options.feedback ?? 'raw',
    signal: controller.signal,
    controller,
    calls,
    sleeps,
    async callTool(name, args) {
      calls.push({ name, args });
      const n = counts.get(name) ?? 0;
      counts.set(name, n + 1);
      const scripted = options.results?.[name];
      if (scripted === undefined) return SUNNY;
      if (typeof scripted === 'function') return scripted(args, n);
      return scripted[Math.min(n, scripted.length - 1)] ?? SUNNY;
    },
    async sleep(ms) {
      sleeps.push(ms);
    },
  };
}

export interface ContractAgentOptions extends ModelAgentOptions {
  apiKey?: string;
  baseUrl?: string;
}

/** Builds the adapter under test against the server, with the given options on top of fast retries. */
export type MakeAgent = (server: FakeModelServer, options: ContractAgentOptions) => Agent;

const RATE_LIMITED: AgentToolResult = {
  ok: false,
  error: { code: 'HTTP_429', message: 'Too Many Requests', status: 429, headers: { 'retry-after': '2' }, body: { error: 'rate limited' } },
};

export function runModelAgentContract(format: WireFormat, makeAgent: MakeAgent): void {
  describe(`${format} adapter contract`, () => {
    let server: FakeModelServer;
    let clock: ReturnType<typeof recordingClock>;
    const agentWith = (options: ContractAgentOptions = {}) => makeAgent(server, { apiKey: TEST_KEY, clock, retry: { baseDelayMs: 1, maxDelayMs: 5 }, ...options });

    beforeEach(async () => {
      server = await startFakeModelServer();
      clock = recordingClock();
    });
    afterEach(async () => {
      await server.close();
    });

    it('runs a tool-call conversation: raw failure back to the model, diagnosis, virtual wait, answer', async () => {
      server.enqueue(
        reply.toolCall('get_weather', { city: 'Paris', day: 'tomorrow' }),
        reply.toolCalls([
          { name: 'report_tool_failure', arguments: { tool: 'get_weather', category: 'rate_limit', type: 'rate_limited', note: '429 with Retry-After: 2' } },
          { name: 'wait_seconds', arguments: { seconds: 2 } },
        ]),
        reply.toolCall('get_weather', { city: 'Paris', day: 'tomorrow' }),
        reply.text('Tomorrow in Paris: 18 °C and cloudy.'),
      );
      const task = makeTask({ results: { get_weather: [RATE_LIMITED, SUNNY] } });
      const outcome = await agentWith().run(task);

      expect(outcome).toEqual({
        status: 'completed',
        answer: 'Tomorrow in Paris: 18 °C and cloudy.',
        diagnoses: [{ tool: 'get_weather', category: 'rate_limit', type: 'rate_limited', note: '429 with Retry-After: 2' }],
      });
      expect(task.calls).toEqual([
        { name: 'get_weather', args: { city: 'Paris', day: 'tomorrow' } },
        { name: 'get_weather', args: { city: 'Paris', day: 'tomorrow' } },
      ]);
      expect(task.sleeps).toEqual([2000]);
      expect(server.requests).toHaveLength(4);

      const [failed] = toolResultsIn(server.requests[1]!);
      expect(JSON.parse(failed!.content)).toEqual(RATE_LIMITED);
      if (format === 'anthropic') expect(failed!.isError).toBe(true);
      const control = toolResultsIn(server.requests[2]!);
      expect(control.map((r) => JSON.parse(r.content))).toEqual([{ recorded: true }, { waited_seconds: 2 }]);
      const [succeeded] = toolResultsIn(server.requests[3]!);
      expect(JSON.parse(succeeded!.content)).toEqual(SUNNY);
      if (format === 'anthropic') expect(succeeded!.isError).toBeUndefined();
    });

    it('offers the task tools with their schemas, the control functions, the system prompt and the key', async () => {
      server.enqueue(reply.text('ok'));
      await agentWith().run(makeTask());
      const [request] = server.requests;
      expect(offeredToolNames(request!)).toEqual(['get_weather', 'create_order', 'report_tool_failure', 'wait_seconds', 'finish']);
      expect(offeredSchema(request!, 'get_weather')).toEqual(WEATHER_TOOL.inputSchema);
      const report = offeredSchema(request!, 'report_tool_failure') as { properties: { tool: { enum: string[] }; category: { enum: string[] } } };
      expect(report.properties.tool.enum).toEqual(['get_weather', 'create_order']);
      expect(report.properties.category.enum).toEqual(['parameter', 'auth', 'network', 'rate_limit', 'business', 'system', 'semantic']);
      const system = systemPromptOf(request!);
      expect(system).toContain('report_tool_failure');
      expect(system).toContain('wait_seconds');
      expect(system).toContain('Retry-After');
      expect(system).toContain('2026-03-02T09:00:00.000Z');
      expect(instructionOf(request!)).toBe('What is the weather in Paris tomorrow?');
      expect(apiKeyOf(request!)).toBe(TEST_KEY);
      expect((request!.body as { model: string }).model).toBe('test-model');
    });

    it('passes assisted results through exactly as the runtime gave them', async () => {
      const assisted: AgentToolResult = {
        ok: false,
        error: { code: 'HTTP_401', message: 'Unauthorized: token expired', status: 401 },
        assisted: { stage: 'execution', category: 'auth', type: 'unauthorized', action: 'escalate_to_user', hint: 'The credential is invalid.', retryable: false, absorbedFailures: 0 },
      };
      server.enqueue(
        reply.toolCall('get_weather', { city: 'Paris' }),
        reply.toolCalls([
          { name: 'report_tool_failure', arguments: { tool: 'get_weather', category: 'auth', type: 'unauthorized' } },
          { name: 'finish', arguments: { status: 'escalated', answer: 'The weather service rejected our credentials; please renew them.' } },
        ]),
      );
      const task = makeTask({ feedback: 'assisted', results: { get_weather: [assisted] } });
      const outcome = await agentWith().run(task);
      expect(outcome).toEqual({
        status: 'escalated',
        answer: 'The weather service rejected our credentials; please renew them.',
        diagnoses: [{ tool: 'get_weather', category: 'auth', type: 'unauthorized' }],
      });
      expect(JSON.parse(toolResultsIn(server.requests[1]!)[0]!.content)).toEqual(assisted);
      expect(systemPromptOf(server.requests[0]!)).toContain('"assisted"');
    });

    it('finish ends the run with its status; later tool calls in the same turn do not run', async () => {
      server.enqueue(
        reply.toolCalls([
          { name: 'finish', arguments: { status: 'gave_up', answer: 'The city does not exist.' } },
          { name: 'create_order', arguments: { sku: 'A', quantity: 1 } },
          { name: 'report_tool_failure', arguments: { tool: 'get_weather', category: 'business', type: 'not_found' } },
        ]),
      );
      const task = makeTask();
      const outcome = await agentWith().run(task);
      expect(outcome).toEqual({ status: 'gave_up', answer: 'The city does not exist.', diagnoses: [{ tool: 'get_weather', category: 'business', type: 'not_found' }] });
      expect(task.calls).toEqual([]);
    });

    it('rejects bad control-function arguments back to the model without recording them', async () => {
      server.enqueue(
        reply.toolCalls([
          { name: 'report_tool_failure', arguments: { tool: 'get_weather', category: 'cosmic_rays' } },
          { name: 'wait_seconds', arguments: { seconds: -1 } },
          { name: 'finish', arguments: { status: 'done', answer: 'x' } },
        ]),
        reply.text('Sorry, done.'),
      );
      const task = makeTask();
      const outcome = await agentWith().run(task);
      expect(outcome).toEqual({ status: 'completed', answer: 'Sorry, done.', diagnoses: [] });
      expect(task.sleeps).toEqual([]);
      const results = toolResultsIn(server.requests[1]!).map((r) => JSON.parse(r.content) as { ok: boolean; error: { code: string; message: string } });
      expect(results.map((r) => r.error.code)).toEqual(['INVALID_ARGUMENTS', 'INVALID_ARGUMENTS', 'INVALID_ARGUMENTS']);
      expect(results[0]!.error.message).toContain('category');
    });

    it('ends as gave_up when the turn bound is hit', async () => {
      server.respondWith(() => reply.toolCall('get_weather', { city: 'Paris' }));
      const task = makeTask();
      const outcome = await agentWith({ maxTurns: 3 }).run(task);
      expect(outcome.status).toBe('gave_up');
      expect(outcome.answer).toContain('3 model turns');
      expect(server.requests).toHaveLength(3);
      expect(task.calls).toHaveLength(3);
    });

    it('retries model-side 429 (honoring Retry-After), 500 and dropped connections without touching the tools', async () => {
      server.enqueue(
        reply.toolCall('get_weather', { city: 'Paris' }),
        reply.rateLimited('1'),
        reply.error(500),
        reply.reset(),
        reply.text('18 °C, cloudy.'),
      );
      const events: ModelRetryEvent[] = [];
      const task = makeTask();
      const outcome = await agentWith({ onModelRetry: (e) => events.push(e) }).run(task);
      expect(outcome).toEqual({ status: 'completed', answer: '18 °C, cloudy.', diagnoses: [] });
      expect(task.calls).toHaveLength(1);
      expect(task.sleeps).toEqual([]);
      expect(events.map((e) => [e.attempt, e.failure.kind, e.failure.status])).toEqual([
        [1, 'rate_limit', 429],
        [2, 'server', 500],
        [3, 'connection', undefined],
      ]);
      expect(clock.waits[0]).toBe(1000);
      expect(clock.waits).toHaveLength(3);
      expect(server.requests).toHaveLength(5);
      // The retried request carries the same history as the failed one: nothing was appended.
      expect(server.requests[4]!.body).toEqual(server.requests[1]!.body);
    });

    it('waits in real time on the system clock with short configured delays', async () => {
      server.enqueue(reply.error(503), reply.error(502), reply.text('done'));
      const started = Date.now();
      const agent = makeAgent(server, { apiKey: TEST_KEY, retry: { baseDelayMs: 20, maxDelayMs: 40 } });
      const outcome = await agent.run(makeTask());
      expect(outcome.status).toBe('completed');
      // Equal jitter: at least half of each ceiling (20 ms, then 40 ms).
      expect(Date.now() - started).toBeGreaterThanOrEqual(30);
    });

    it('times out a slow model response and retries it', async () => {
      server.enqueue({ kind: 'turn', text: 'too late', delayMs: 500 }, reply.text('in time'));
      const events: ModelRetryEvent[] = [];
      const outcome = await agentWith({ requestTimeoutMs: 100, onModelRetry: (e) => events.push(e) }).run(makeTask());
      expect(outcome.answer).toBe('in time');
      expect(events.map((e) => e.failure.kind)).toEqual(['timeout']);
    });

    it('abandons a model request in flight when the scenario is cancelled', async () => {
      server.enqueue({ kind: 'turn', text: 'never read', delayMs: 2000 });
      const task = makeTask();
      setTimeout(() => task.controller.abort(new Error('budget')), 50);
      const started = Date.now();
      const outcome = await agentWith().run(task);
      expect(outcome.status).toBe('gave_up');
      expect(outcome.answer).toContain('budget');
      expect(Date.now() - started).toBeLessThan(1500);
      expect(clock.waits).toEqual([]);
    });

    it('throws ModelEndpointError after the last attempt, with no tool call counted', async () => {
      server.respondWith(() => reply.error(500));
      const task = makeTask();
      const error = await agentWith().run(task).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(ModelEndpointError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ provider: format, kind: 'server', status: 500, attempts: 4 });
      expect(server.requests).toHaveLength(4);
      expect(task.calls).toHaveLength(0);
    });

    it('does not retry a request the endpoint rejects, nor a Retry-After beyond the cap', async () => {
      server.enqueue(reply.error(404, 'The model `test-model` does not exist'));
      await expect(agentWith().run(makeTask())).rejects.toMatchObject({ kind: 'rejected', status: 404, attempts: 1 });
      server.enqueue(reply.rateLimited('3600'));
      await expect(agentWith().run(makeTask())).rejects.toMatchObject({ kind: 'rate_limit', attempts: 1 });
      expect(server.requests).toHaveLength(2);
    });

    it('sends invalid tool arguments back as a tool error so the model can correct itself', async () => {
      server.enqueue(reply.toolCall('get_weather', '{"city": "Par'), reply.toolCall('get_weather', { city: 'Paris' }), reply.text('18 °C'));
      const task = makeTask();
      const outcome = await agentWith().run(task);
      expect(outcome.status).toBe('completed');
      expect(task.calls).toEqual([{ name: 'get_weather', args: { city: 'Paris' } }]);
      const [sent] = toolResultsIn(server.requests[1]!);
      expect(JSON.parse(sent!.content)).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENTS' } });
      if (format === 'anthropic') expect(sent!.isError).toBe(true);
    });

    it('answers a call to an unknown tool with the list of real ones', async () => {
      server.enqueue(reply.toolCall('get_wether', { city: 'Paris' }), reply.text('done'));
      const task = makeTask();
      await agentWith().run(task);
      expect(task.calls).toEqual([]);
      const error = (JSON.parse(toolResultsIn(server.requests[1]!)[0]!.content) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('UNKNOWN_TOOL');
      expect(error.message).toContain('get_weather');
    });

    it('ends as gave_up, with the reason, when responses cannot be parsed after every retry', async () => {
      server.respondWith(() => reply.raw('{"id": "chatcmpl-1", "choices": ['));
      const outcome = await agentWith().run(makeTask());
      expect(outcome.status).toBe('gave_up');
      expect(outcome.answer).toMatch(/unusable response 4 times/);
      expect(server.requests).toHaveLength(4);
    });

    it('treats a JSON body without the wire format (no choices, no content) as unusable', async () => {
      server.respondWith(() => reply.json({ id: 'x', object: 'nothing' }));
      const outcome = await agentWith({ retry: { maxAttempts: 2, baseDelayMs: 1 } }).run(makeTask());
      expect(outcome.status).toBe('gave_up');
      expect(outcome.answer).toMatch(format === 'openai' ? /no choices/ : /no content/);
      expect(server.requests).toHaveLength(2);
    });

    it('recovers when a malformed response is followed by a good one', async () => {
      server.enqueue(reply.raw('<html>502 Bad Gateway</html>', 'text/html'), reply.text('fine'));
      const outcome = await agentWith().run(makeTask());
      expect(outcome).toMatchObject({ status: 'completed', answer: 'fine' });
    });

    it('ends as gave_up when the model stops with neither text nor a tool call', async () => {
      server.enqueue(reply.text(''));
      const outcome = await agentWith().run(makeTask());
      expect(outcome.status).toBe('gave_up');
    });

    it('stops when the scenario budget runs out', async () => {
      server.respondWith(() => reply.toolCall('get_weather', { city: 'Paris' }));
      const task = makeTask({
        results: {
          get_weather: () => {
            task.controller.abort(new Error('budget'));
            return SUNNY;
          },
        },
      });
      const outcome = await agentWith().run(task);
      expect(outcome).toMatchObject({ status: 'gave_up', answer: expect.stringContaining('budget') });
      expect(server.requests).toHaveLength(1);
    });

    it('never lets the API key into errors, answers or the agent object', async () => {
      const leaky = 'sk-leaky-SECRET-9876543210';
      await server.close();
      server = await startFakeModelServer({ apiKey: 'sk-the-right-one-000000' });
      const agent = agentWith({ apiKey: leaky });
      const error = await agent.run(makeTask()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(ModelEndpointError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('Incorrect API key provided: [redacted]');
      for (const text of [(error as Error).message, String((error as Error).stack), JSON.stringify(error), inspect(error, { depth: 10 }), inspect(agent, { depth: 10, showHidden: true })]) {
        expect(text).not.toContain(leaky);
      }
      // A 200 whose body echoes the key is unusable, and the reason quoted in the answer is scrubbed.
      await server.close();
      server = await startFakeModelServer();
      server.respondWith(() => reply.raw(`upstream said: bad key ${leaky}`, 'text/plain'));
      const outcome = await agentWith({ apiKey: leaky, retry: { maxAttempts: 1 } }).run(makeTask());
      expect(outcome.status).toBe('gave_up');
      expect(outcome.answer).not.toContain(leaky);
    });

    it('serves concurrent scenarios from one instance without mixing their conversations', async () => {
      await server.close();
      server = await startFakeModelServer({ latencyMs: 15 });
      server.respondWith((request) => {
        const n = /#(\d+)/.exec(instructionOf(request) ?? '')?.[1] ?? '?';
        const results = toolResultsIn(request);
        if (results.length === 0) return reply.toolCall('get_weather', { city: `city-${n}` });
        const seen = (JSON.parse(results[0]!.content) as { output: { city: string } }).output.city;
        return reply.text(`task #${n} saw ${seen}`);
      });
      const agent = agentWith();
      const tasks = Array.from({ length: 12 }, (_, i) =>
        makeTask({ instruction: `Weather for task #${i}`, results: { get_weather: (args) => ({ ok: true, output: { city: args['city'] } }) } }),
      );
      const outcomes = await Promise.all(tasks.map((t) => agent.run(t)));
      outcomes.forEach((o, i) => expect(o.answer).toBe(`task #${i} saw city-${i}`));
      tasks.forEach((t, i) => expect(t.calls).toEqual([{ name: 'get_weather', args: { city: `city-${i}` } }]));
      // An instance that serialised its tasks would never have two model requests open at once.
      expect(server.maxInFlight).toBeGreaterThan(1);
    });

    it('refuses a task whose tool names clash with the control functions', async () => {
      const task = makeTask({ tools: [{ ...WEATHER_TOOL, name: 'finish' }] });
      await expect(agentWith().run(task)).rejects.toThrow(/reserves/);
    });
  });
}
