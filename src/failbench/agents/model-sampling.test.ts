import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rateLimitScenario } from '../bench.test-helpers.js';
import { runFission } from '../fission.js';
import type { Agent } from '../types.js';
import { createAnthropicAgent } from './anthropic.js';
import { reply, startFakeModelServer, toolResultsIn, type FakeModelServer, type RecordedRequest } from '../../llm/fake-model-server.test-helpers.js';
import { TEST_KEY } from './model-agent-contract.test-helpers.js';
import { createOpenAIAgent } from './openai.js';

/**
 * The model calls get_weather until a call succeeds, then answers. The scenario's first call gets
 * a 429 (the fault, call 0), so every request after the first of a run is past the branch point.
 * Sampled with an even seed, it gives up instead of calling again: branches differ by their seed.
 */
function weatherModel(request: RecordedRequest) {
  const results = toolResultsIn(request);
  const seed = (request.body as { seed?: number }).seed;
  if (seed !== undefined && seed % 2 === 0) return reply.text('I could not get the forecast.');
  const succeeded = results.some((r) => r.content.includes('"ok":true'));
  return succeeded ? reply.text('Paris: 18 C and dry.') : reply.toolCall('get_weather', { city: 'Paris', date: '2026-03-30' });
}

const body = (r: RecordedRequest) => r.body as { temperature?: number; seed?: number };
/** Requests made before the fault's result came back: the first of each run. */
const beforeFault = (r: RecordedRequest) => toolResultsIn(r).length === 0;

async function fissionWith(agent: Agent, k: number) {
  return runFission({ scenarios: [rateLimitScenario()], agents: [agent], k, feedback: 'raw', seed: 5 });
}

describe('model adapters in a fission run', () => {
  let server: FakeModelServer;
  beforeEach(async () => {
    server = await startFakeModelServer({ handler: weatherModel });
  });
  afterEach(async () => {
    await server.close();
  });

  it('openai: sends each branch its own seed at the sampling temperature after the fault, and the unsampled request before it', async () => {
    const agent = createOpenAIAgent({ model: 'm', baseUrl: server.openaiBaseUrl, apiKey: TEST_KEY, temperature: 0, samplingTemperature: 0.9 });
    expect(agent.canSample).toBe(true);
    const result = await fissionWith(agent, 3);
    expect(result.diverged).toBe(0);
    expect(result.groups).toHaveLength(1);
    const group = result.groups[0]!;

    const requests = server.requests.filter((r) => r.format === 'openai');
    // The base run: call -> 429, call -> 200, answer; a branch with an odd seed the same, with an even one: call -> 429, answer.
    const even = group.continuations.filter((c) => c.sampleSeed % 2 === 0).length;
    expect(requests).toHaveLength(4 * 3 - even);
    for (const r of requests.filter(beforeFault)) expect(body(r)).toMatchObject({ temperature: 0 });
    for (const r of requests.filter(beforeFault)) expect(body(r).seed).toBeUndefined();
    const sampled = requests.filter((r) => !beforeFault(r) && body(r).seed !== undefined);
    expect(sampled).toHaveLength(3 * 2 - even);
    for (const r of sampled) expect(body(r).temperature).toBe(0.9);
    const seeds = [...new Set(sampled.map((r) => body(r).seed))];
    expect(seeds.sort()).toEqual(group.continuations.map((c) => c.sampleSeed).sort());
    // The base run never samples.
    expect(requests.filter((r) => !beforeFault(r) && body(r).seed === undefined)).toHaveLength(2);
    // Recovered without a diagnosis: oracle and 2 of 3 dimensions; gave no forecast: only loop avoidance.
    expect(group.continuations.map((c) => c.reward)).toEqual(group.continuations.map((c) => (c.sampleSeed % 2 === 0 ? 0.1667 : 0.8333)));
  });

  it('anthropic: samples at the sampling temperature after the fault only (the Messages API takes no seed)', async () => {
    const agent = createAnthropicAgent({ model: 'm', baseUrl: server.anthropicBaseUrl, apiKey: TEST_KEY, temperature: 0 });
    const result = await fissionWith(agent, 2);
    expect(result.groups).toHaveLength(1);
    const requests = server.requests.filter((r) => r.format === 'anthropic');
    expect(requests).toHaveLength(3 * 3);
    const temperatures = requests.map((r) => body(r).temperature);
    // Base run: 0, 0, 0; each branch: 0 before the fault, the default sampling temperature 1 after it.
    expect(temperatures).toEqual([0, 0, 0, 0, 1, 1, 0, 1, 1]);
    expect(requests.every((r) => body(r).seed === undefined)).toBe(true);
  });
});
