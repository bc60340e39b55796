import { describe, expect, it } from 'vitest';
import { defineTool } from '../runtime/define-tool.js';
import { DEFAULT_CATALOG_NOW } from '../tools/index.js';
import { outageScenario } from './bench.test-helpers.js';
import { checkScenario, createWorld, derivedSeed, scenarioStartMs, withoutOwnRecovery } from './world.js';

describe('world', () => {
  it('strips a tool of its own retry, breaker and fallback, keeping the rest', async () => {
    const tool = defineTool({
      name: 'flaky',
      description: 'fails',
      input: { type: 'object', properties: { q: { type: 'string' } } },
      retry: { maxRetries: 5 },
      breaker: { failureThreshold: 2 },
      fallback: 'other',
      idempotent: true,
      timeoutMs: 1234,
      annotations: { readOnlyHint: true },
      execute: () => 'ok',
    });
    const bare = withoutOwnRecovery(tool);
    expect(bare.retry).toEqual({});
    expect(bare.breaker).toEqual({});
    expect(bare.fallback).toBeUndefined();
    expect(bare).toMatchObject({ name: 'flaky', idempotent: true, timeoutMs: 1234, annotations: { readOnlyHint: true }, inputSchema: tool.inputSchema });
    expect(await bare.execute({}, {} as never)).toBe('ok');
    const plain = defineTool({ name: 'plain', description: 'd', input: { type: 'object' }, execute: () => 1 });
    expect(withoutOwnRecovery(plain)).toBe(plain);
  });

  it('derives seeds from every part', () => {
    expect(derivedSeed(1, 'a')).toBe(derivedSeed(1, 'a'));
    expect(derivedSeed(1, 'a')).not.toBe(derivedSeed(2, 'a'));
    expect(derivedSeed(1, 'a')).not.toBe(derivedSeed(1, 'b'));
    expect(Number.isInteger(derivedSeed(1, 'a'))).toBe(true);
  });

  it('starts the clock at the scenario now, or the catalog default', async () => {
    expect(scenarioStartMs(outageScenario())).toBe(DEFAULT_CATALOG_NOW);
    expect(scenarioStartMs(outageScenario({ now: '2026-05-01T00:00:00Z' }))).toBe(Date.UTC(2026, 4, 1));
    expect(() => scenarioStartMs(outageScenario({ now: 'next tuesday' }))).toThrow(/not an ISO-8601 time/);
    const world = createWorld(outageScenario({ now: '2026-05-01T00:00:00Z' }), { feedback: 'raw', seed: 1 });
    expect(world.clock.now()).toBe(Date.UTC(2026, 4, 1));
    expect(world.catalog.state.anchor).toBe('2026-05-01T00:00:00.000Z');
    await world.runtime.close();
  });

  it('reports an invalid fault plan as a scenario problem', () => {
    const bad = outageScenario({ faults: [{ tool: 'get_weather', fault: 'http_status', params: { status: 418 as 503 } }] });
    expect(() => createWorld(bad, { feedback: 'raw', seed: 1 })).toThrow(/^scenario test\/weather-outage: /);
  });

  it('checkScenario refuses exactly what createWorld refuses, without building a world', () => {
    const good = outageScenario();
    expect(checkScenario(good, { seed: 1 })).toBe(scenarioStartMs(good));
    const cases = [
      outageScenario({ tools: ['get_weather', 'no_such_tool'] }),
      outageScenario({ tools: ['get_weather', 'get_weather'] }),
      outageScenario({ faults: [{ tool: 'get_weather', fault: 'not_a_fault' } as never] }),
    ];
    for (const scenario of cases) {
      let fromWorld: unknown;
      try {
        createWorld(scenario, { seed: 1, feedback: 'raw' });
      } catch (error) {
        fromWorld = error;
      }
      expect(fromWorld).toBeInstanceOf(Error);
      expect(() => checkScenario(scenario, { seed: 1 })).toThrow((fromWorld as Error).message);
    }
  });
});
