import { afterEach, describe, expect, it } from 'vitest';
import { reply, startFakeModelServer, systemPromptOf, type FakeModelServer, type OpenAIRequestBody } from '../../llm/fake-model-server.test-helpers.js';
import { ModelEndpointError } from '../../llm/model-endpoint-error.js';
import { createVirtualClock } from '../../core/clock.js';
import { augmentTrajectory } from './augment.js';
import { weatherTrajectory } from './augment.test-helpers.js';
import { createLlmRewriter, protectedTokens, REWRITE_SYSTEM_PROMPT } from './llm-rewrite.js';

const KEY = 'sk-test-rewrite-key-0123456789';
let server: FakeModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const original = weatherTrajectory();
const variant = () => augmentTrajectory(original, 'rename', 0, 1);
const sent = (i: number) => JSON.parse((server!.requests[i]!.body as OpenAIRequestBody).messages[1]!.content!) as { instruction: string; messages: string[] };
const rewriter = (baseUrl: string) => createLlmRewriter({ model: 'gpt-test', baseUrl, apiKey: KEY, clock: createVirtualClock(), random: () => 0 });

describe('LLM rewrite of variants', () => {
  it('rewords the instruction and messages, keeping names and values, over a real socket', async () => {
    server = await startFakeModelServer({ apiKey: KEY });
    const v = variant();
    v.steps[1]!.response.message = 'upstream timed out after 30000 ms, token sk-proj-abcdefghijklmnopqrstuvwxyz0123';
    // First reply drops a protected value: asked again; the second keeps everything.
    server.respondWith((request) => {
      const texts = JSON.parse((request.body as OpenAIRequestBody).messages[1]!.content!) as { instruction: string; messages: string[] };
      const instruction = request.index === 1 ? 'Post the forecast somewhere' : `Please do this: ${texts.instruction}`;
      return reply.text(JSON.stringify({ instruction, messages: texts.messages.map((m) => `In other words: ${m}`) }));
    });
    const r = rewriter(server.openaiBaseUrl);
    const out = await r.rewrite(v, original);
    expect(server.requests).toHaveLength(2);
    expect(systemPromptOf(server.requests[0]!)).toBe(REWRITE_SYSTEM_PROMPT);
    expect(JSON.stringify(server.requests[0]!.body)).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz0123');
    expect(sent(0).messages).toHaveLength(2);
    expect(out).toBeDefined();
    expect(out!.task_description).toBe(`Please do this: ${v.task_description}`);
    expect(out!.steps[0]!.response.message).toBe(`In other words: ${v.steps[0]!.response.message}`);
    expect(out!.steps[2]!.response.message).toBeUndefined();
    // Its own id and tag; the failure pattern is the variant's.
    expect(out!.metadata.augmentation).toMatchObject({ kind: 'rename', seed: 0, variant: 1, llm_model: 'gpt-test', source_trajectory_id: original.trajectory_id });
    expect(out!.source_id).toBe(`${original.trajectory_id}:rename:0:1:llm:gpt-test`);
    expect(out!.trajectory_id).not.toBe(v.trajectory_id);
    expect(out!.trajectory_id).toBe(r.idFor(v, original));
    expect(out!.steps.map((s) => s.status)).toEqual(v.steps.map((s) => s.status));
    expect(r.stats).toEqual({ requests: 2, rewritten: 1, failed: 0, nothing_to_rewrite: 0 });
  });

  it('retries a 429, gives up on replies that are not the JSON asked for, and stops on a rejected key', async () => {
    server = await startFakeModelServer({ apiKey: KEY });
    server.enqueue(reply.rateLimited('1'), reply.text('not json'), reply.text(JSON.stringify({ instruction: 'x', messages: [] })));
    const r = rewriter(server.openaiBaseUrl);
    expect(await r.rewrite(variant(), original)).toBeUndefined();
    expect(r.stats).toMatchObject({ requests: 3, rewritten: 0, failed: 1 });

    const wrongKey = createLlmRewriter({ model: 'gpt-test', baseUrl: server.openaiBaseUrl, apiKey: 'sk-wrong-key-000000000', clock: createVirtualClock() });
    const error = await wrongKey.rewrite(variant(), original).catch((e: unknown) => e);
    expect(ModelEndpointError.isInstance(error)).toBe(true);
    expect(String((error as Error).message)).not.toContain('sk-wrong-key-000000000');
  });

  it('knows which tokens a rewrite must keep', () => {
    expect(protectedTokens('get_weather: date 2026-13-45 is not a date, ORD-1001, 30000 ms', original)).toEqual(['get_weather', 'date', '2026-13-45', 'ORD-1001', '30000']);
    expect(() => createLlmRewriter({ model: 'm', env: {} })).toThrow(/OPENAI_API_KEY/);
    expect(() => createLlmRewriter({ model: 'm', apiKey: KEY, baseUrl: 'nope' })).toThrow(/base URL/);
  });
});
