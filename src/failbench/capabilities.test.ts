import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { createFeedbackFollowingAgent } from './agents/follow-feedback.js';
import { hammerAgent, outageScenario } from './bench.test-helpers.js';
import { CAPABILITIES, parseCapabilities } from './capabilities.js';
import { loadSuite } from './default-suite.js';
import { runScenario, runSuite } from './runner.js';
import { createWorld } from './world.js';

const follower = createFeedbackFollowingAgent();

async function scenario(id: string) {
  const [found] = await loadSuite('default', { filter: id });
  if (found === undefined) throw new Error(`no scenario ${id}`);
  return found;
}

describe('FailBench capabilities', () => {
  it('parses a list, all, and names the known ones for an unknown one', () => {
    expect(parseCapabilities('post-conditions, loop-guard,loop-guard')).toEqual(['loop-guard', 'post-conditions']);
    expect(parseCapabilities('all')).toEqual([...CAPABILITIES]);
    expect(parseCapabilities('')).toEqual([]);
    const error = (() => {
      try {
        return parseCapabilities('loop-guard,idempotence');
      } catch (e) {
        return e;
      }
    })();
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe('unknown capability "idempotence": use loop-guard, post-conditions, adaptive-timeout, breaker-probes or all');
  });

  it('loop-guard: the runtime refuses the fourth identical failing call of a run', async () => {
    const plain = await runScenario(outageScenario(), hammerAgent(6), { feedback: 'raw', seed: 1 });
    const guarded = await runScenario(outageScenario(), hammerAgent(6), { feedback: 'raw', seed: 1, capabilities: ['loop-guard'] });
    expect(plain.calls.map((c) => c.code)).toEqual(Array(6).fill('HTTP_503'));
    // The refused calls never reach the tool: the fault plan sees only the first three.
    expect(guarded.calls.map((c) => c.code)).toEqual(['HTTP_503', 'HTTP_503', 'HTTP_503', 'LOOP_DETECTED', 'LOOP_DETECTED', 'LOOP_DETECTED']);
    expect(guarded.calls.filter((c) => c.fault !== undefined)).toHaveLength(3);
  });

  it('adaptive-timeout gives each tool an adaptive timeout; without it there is none', () => {
    const s = outageScenario();
    const off = createWorld(s, { feedback: 'assisted', seed: 1 });
    const on = createWorld(s, { feedback: 'assisted', seed: 1, capabilities: ['adaptive-timeout'] });
    expect(off.runtime.adaptiveTimeouts.current('get_weather')).toBeUndefined();
    expect(on.runtime.adaptiveTimeouts.current('get_weather')).toBeDefined();
  });

  it('post-conditions: a drifted 200 comes back as a semantic failure, still scored as a wrong 200 the agent received', async () => {
    const s = await scenario('weather/semantic-*-en');
    const off = await runScenario(s, follower, { feedback: 'assisted', seed: 1 });
    const on = await runScenario(s, follower, { feedback: 'assisted', seed: 1, capabilities: ['post-conditions'] });
    const wrong = (r: typeof on) => r.calls.filter((c) => c.wrongResult === true);
    expect(wrong(off)[0]).toMatchObject({ ok: true });
    expect(off.scores.semantic_verification).toBe(false);
    expect(wrong(on)[0]).toMatchObject({ ok: false, category: 'semantic' });
    expect(on.scores.semantic_verification).toBe(true);
    expect(on.outcome.diagnoses).toEqual(expect.arrayContaining([expect.objectContaining({ tool: s.oracle.diagnosis?.tool ?? 'get_weather', category: 'semantic' })]));
  });

  it('post-conditions: a write whose answer drifted is checked against the state, not repeated nor left in doubt', async () => {
    const s = await scenario('orders/semantic-create-cus-007-en');
    const on = await runScenario(s, follower, { feedback: 'assisted', seed: 1, capabilities: ['post-conditions'] });
    const first = on.calls[0]!;
    expect(first).toMatchObject({ tool: 'create_order', ok: false, category: 'semantic', wrongResult: true });
    expect(on.calls.map((c) => c.tool)).toEqual(['create_order', 'list_orders']);
    expect(on.scores.idempotency_safety).toBe(true);
    expect(on.duplicateSideEffects).toBe(0);
  });

  it('runSuite hands the capabilities to every run and names them in the metadata', async () => {
    const suite = await runSuite({ scenarios: [outageScenario()], agents: [hammerAgent(5)], feedback: 'assisted', seed: 1, capabilities: ['loop-guard', 'breaker-probes'] });
    expect(suite.meta.capabilities).toEqual(['loop-guard', 'breaker-probes']);
    const none = await runSuite({ scenarios: [outageScenario()], agents: [hammerAgent(5)], feedback: 'assisted', seed: 1 });
    expect(none.meta.capabilities).toBeUndefined();
  });
});
