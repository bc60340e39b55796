import { describe, expect, it } from 'vitest';
import { lostReplyScenario, outageScenario, rateLimitScenario } from '../bench.test-helpers.js';
import { runScenario } from '../runner.js';
import { createRobustAgent } from './robust.js';
import { createSamplingAgent, SAMPLER_CHOICES, samplerChoice } from './sampler.js';

const RUN_ID = '019a0000-0000-7000-8000-0000000000aa';

describe('sampler agent', () => {
  it('is the robust agent, call for call, when the task asks for no sampling', async () => {
    for (const scenario of [outageScenario(), rateLimitScenario(), lostReplyScenario()]) {
      const robust = await runScenario(scenario, createRobustAgent(), { feedback: 'raw', seed: 3, runId: RUN_ID });
      const sampler = await runScenario(scenario, createSamplingAgent(), { feedback: 'raw', seed: 3, runId: RUN_ID });
      expect(sampler.calls).toEqual(robust.calls);
      expect(sampler.outcome).toEqual(robust.outcome);
    }
  });

  it('samples only after the branch point, and differently per seed', async () => {
    const scenario = outageScenario();
    const robust = await runScenario(scenario, createRobustAgent(), { feedback: 'raw', seed: 3, runId: RUN_ID });
    const branches = [];
    for (let seed = 1; seed <= 12; seed++) {
      branches.push(await runScenario(scenario, createSamplingAgent(), { feedback: 'raw', seed: 3, runId: RUN_ID, sampling: { seed, afterCall: 0, branch: seed - 1 } }));
    }
    for (const b of branches) expect(b.calls[0]).toEqual(robust.calls[0]);
    // An outage: following the playbook backs off and gives up after 3; the other choices stop at once, hammer, or claim success.
    const shapes = new Set(branches.map((b) => `${b.calls.length}:${b.outcome.status}`));
    expect(shapes.size).toBeGreaterThan(1);
  });

  it('draws its choices with the documented weights', () => {
    expect(SAMPLER_CHOICES.reduce((s, c) => s + c.weight, 0)).toBeCloseTo(1, 10);
    expect(samplerChoice(0)).toBe('playbook');
    expect(samplerChoice(0.3999)).toBe('playbook');
    expect(samplerChoice(0.4)).toBe('naive');
    expect(samplerChoice(0.65)).toBe('retry');
    expect(samplerChoice(0.8)).toBe('give_up');
    expect(samplerChoice(0.9)).toBe('escalate');
    expect(samplerChoice(0.999999)).toBe('escalate');
  });
});
