import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { canonicalJson } from '../core/params-hash.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Trajectory } from '../core/trajectory-types.js';
import { ModelEndpointError } from '../llm/model-endpoint-error.js';
import { createNaiveAgent } from './agents/naive.js';
import { createSamplingAgent } from './agents/sampler.js';
import { rateLimitScenario } from './bench.test-helpers.js';
import { fissionReward } from './fission-reward.js';
import { continuationTrajectoryId, focusDimension, runFission, type FissionGroup, type FissionResult } from './fission.js';
import { SuiteStoppedError } from './runner.js';
import { loadScenarios } from './scenario-loader.js';
import type { Agent, Scenario } from './types.js';

const SUITE_DIR = new URL('./scenarios/default/', import.meta.url).pathname;
/** A lost reply on a write, a 429, a 200 with the wrong city, a 500 after commit, a cascade with two faults. */
const IDS = [
  'messaging/commit-then-drop-engineering-en',
  'weather/rate-limit-retry-after-london-en',
  'weather/semantic-city-beijing-en',
  'orders/500-after-commit-cus-012-en',
  'weather/mixed-outage-then-drift-new-york-en',
];
const K = 4;
const RUN_ID = '019a0000-0000-7000-8000-000000000001';

const dir = mkdtempSync(join(tmpdir(), 'faultline-fission-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let scenarios: Scenario[];
let result: FissionResult;
let stored: Trajectory[];

beforeAll(async () => {
  const all = await loadScenarios(SUITE_DIR);
  scenarios = IDS.map((id) => all.find((s) => s.id === id) ?? expect.fail(`no scenario ${id}`));
  const store = createSqliteStore({ path: join(dir, 'fission.db') });
  try {
    result = await runFission({ scenarios, agents: [createSamplingAgent()], k: K, feedback: 'raw', seed: 7, store, runId: RUN_ID, concurrency: 2 });
    stored = await store.queryTrajectories({ limit: 10_000 });
  } finally {
    await store.close();
  }
}, 60_000);

/** What a group is, without the ids that come from the clock (execution ids, trajectory timestamps). */
function groupContent(g: FissionGroup): unknown {
  return {
    id: g.groupId,
    scenario: g.scenarioId,
    faultCall: g.faultCall,
    faultType: g.faultType,
    idempotent: g.toolIdempotent,
    continuations: g.continuations.map((c) => ({ seed: c.sampleSeed, reward: c.reward, calls: c.result.calls, outcome: c.result.outcome, trace: c.traceId })),
  };
}

describe('runFission with the sampling agent', () => {
  it('branches at every injected fault (at most two per run) into K continuations', () => {
    expect(result.base).toHaveLength(IDS.length);
    expect(result.diverged).toBe(0);
    for (const base of result.base) {
      const faults = base.calls.flatMap((c, i) => (c.fault === undefined ? [] : [i])).slice(0, 2);
      const groups = result.groups.filter((g) => g.scenarioId === base.scenarioId);
      expect(groups.map((g) => g.faultCall)).toEqual(faults);
    }
    expect(result.groups.length).toBeGreaterThanOrEqual(IDS.length);
    expect(result.groups.some((g) => g.faultCall > 0)).toBe(true);
    for (const g of result.groups) {
      expect(g.continuations.map((c) => c.branch)).toEqual([0, 1, 2, 3]);
      expect(new Set(g.continuations.map((c) => c.sampleSeed)).size).toBe(K);
    }
  });

  it('replays the base run call for call up to and including the fault', () => {
    for (const g of result.groups) {
      const base = result.base.find((b) => b.scenarioId === g.scenarioId)!;
      const prefix = canonicalJson(base.calls.slice(0, g.faultCall + 1));
      expect(base.calls[g.faultCall]!.fault).toBe(g.faultType);
      for (const c of g.continuations) {
        expect(canonicalJson(c.result.calls.slice(0, g.faultCall + 1))).toBe(prefix);
        expect(c.result.calls[g.faultCall]!.fault).toBe(g.faultType);
      }
    }
  });

  it('rewards each continuation from its oracle verdict and dimension scores, with variance within groups', () => {
    for (const g of result.groups) {
      for (const c of g.continuations) {
        const scores = Object.values(c.result.scores);
        const perfect = c.result.oraclePassed && scores.every((s) => s === true);
        expect(c.reward === 1).toBe(perfect);
        expect(c.reward).toBe(fissionReward(c.result));
      }
    }
    const varied = result.groups.filter((g) => new Set(g.continuations.map((c) => c.reward)).size > 1);
    expect(varied.length).toBeGreaterThan(0);
    // Both a full-credit and a failed continuation exist somewhere: the sampler really branches.
    const rewards = result.groups.flatMap((g) => g.continuations.map((c) => c.reward));
    expect(rewards).toContain(1);
    expect(rewards.some((r) => r < 0.5)).toBe(true);
  });

  it('stores every continuation as a trajectory with its group, whose first prefix_steps steps are shared', () => {
    expect(stored).toHaveLength(result.groups.length * K);
    const byGroup = new Map<string, Trajectory[]>();
    for (const t of stored) {
      const f = t.metadata.fission!;
      expect(f).toBeDefined();
      byGroup.set(f.group_id, [...(byGroup.get(f.group_id) ?? []), t]);
    }
    for (const g of result.groups) {
      const members = byGroup.get(g.groupId)!;
      expect(members).toHaveLength(K);
      const f = members[0]!.metadata.fission!;
      expect(f).toMatchObject({ k: K, fault_type: g.faultType, tool_idempotent: g.toolIdempotent, scenario_id: g.scenarioId, seed: 7, agent: 'sampler', dimension: g.dimension, dimensions: g.dimensions });
      expect(f.prefix_steps).toBe(g.faultCall + 1);
      const prefixOf = (t: Trajectory) => canonicalJson(t.steps.slice(0, t.metadata.fission!.prefix_steps).map((s) => [s.tool_name, s.input_params, s.response, s.status]));
      expect(new Set(members.map(prefixOf)).size).toBe(1);
      for (const m of members) {
        const c = g.continuations.find((x) => x.branch === m.metadata.fission!.branch)!;
        expect(m.source_id).toBe(c.traceId);
        expect(m.trajectory_id).toBe(continuationTrajectoryId(g.groupId, c.branch));
        expect(m.metadata.fission!.reward).toBe(c.reward);
        expect(m.final_outcome).toBe(c.result.oraclePassed ? 'success' : 'failure');
      }
    }
    const dimensionOf = (id: string) => result.groups.find((g) => g.scenarioId === id)!.dimension;
    expect(IDS.map(dimensionOf)).toEqual(['idempotency_safety', 'recovery', 'semantic_verification', 'idempotency_safety', 'semantic_verification']);
    expect(focusDimension({ dimensions: ['identification', 'loop_avoidance'] })).toBe('loop_avoidance');
    // The faults on idempotent reads and on non-idempotent writes are told apart.
    expect(new Set(result.groups.map((g) => g.toolIdempotent))).toEqual(new Set([true, false]));
  });

  it('gives identical groups for the same seed and run id', async () => {
    const again = await runFission({ scenarios, agents: [createSamplingAgent()], k: K, feedback: 'raw', seed: 7, store: createMemoryStore(), runId: RUN_ID });
    expect(again.groups.map(groupContent)).toEqual(result.groups.map(groupContent));
  }, 60_000);
});

describe('runFission refuses what cannot branch', () => {
  it('rejects agents that cannot sample and bad K, before running anything', async () => {
    let ran = false;
    const probe: Agent = { name: 'probe', canSample: true, run: async () => ((ran = true), { status: 'completed', answer: '', diagnoses: [] }) };
    await expect(runFission({ scenarios: [rateLimitScenario()], agents: [probe, createNaiveAgent()], k: 3, feedback: 'raw', seed: 1 })).rejects.toThrow(/agent "naive" cannot sample/);
    for (const k of [1, 0, 2.5, 65]) {
      await expect(runFission({ scenarios: [rateLimitScenario()], agents: [probe], k, feedback: 'raw', seed: 1 })).rejects.toBeInstanceOf(ConfigError);
    }
    expect(ran).toBe(false);
  });

  it('drops a group whose continuations do not replay the prefix', async () => {
    // Sends a different date when it has a sampling seed at all: a model that is not deterministic before the branch point.
    const drifting: Agent = {
      name: 'drifting',
      canSample: true,
      async run(task) {
        for (let i = 0; i < 3; i++) {
          const r = await task.callTool('get_weather', { city: 'Paris', date: task.sampling === undefined ? '2026-03-30' : '2026-03-31' });
          if (r.ok) return { status: 'completed', answer: 'Paris', diagnoses: [] };
          await task.sleep(30_000);
        }
        return { status: 'gave_up', answer: '', diagnoses: [] };
      },
    };
    const store = createMemoryStore();
    const r = await runFission({ scenarios: [rateLimitScenario()], agents: [drifting], k: 2, feedback: 'raw', seed: 1, store });
    expect(r.groups).toEqual([]);
    expect(r.diverged).toBe(1);
    expect(r.stored).toBe(0);
    expect(await store.countTrajectories!()).toBe(0);
  });

  /** Calls get_weather until it works; the model endpoint behind it fails the continuations `lost` says. */
  function endpointAgent(lost: (branch: number) => 'rejected' | 'server' | undefined): Agent {
    return {
      name: 'model',
      canSample: true,
      async run(task) {
        for (let i = 0; i < 3; i++) {
          const r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
          const kind = task.sampling === undefined ? undefined : lost(task.sampling.branch);
          // 401: a rejection every run would meet (a 400 would lose one continuation only).
          if (kind !== undefined) throw new ModelEndpointError('openai', { kind, status: kind === 'rejected' ? 401 : 503, message: `HTTP ${kind === 'rejected' ? 401 : 503}: no` }, 1);
          if (r.ok) return { status: 'completed', answer: 'Paris', diagnoses: [] };
          await task.sleep(30_000);
        }
        return { status: 'gave_up', answer: '', diagnoses: [] };
      },
    };
  }

  it('drops a group one of whose continuations the model endpoint failed: its reward would score the endpoint', async () => {
    const store = createMemoryStore();
    const r = await runFission({ scenarios: [rateLimitScenario()], agents: [endpointAgent((branch) => (branch === 1 ? 'server' : undefined))], k: 3, feedback: 'raw', seed: 1, store });
    expect(r.groups).toEqual([]);
    expect(r.lostToEndpoint).toBe(1);
    expect(await store.countTrajectories!()).toBe(0);
  });

  it('stops on a key the endpoint rejects and stores no group', async () => {
    const store = createMemoryStore();
    const error = await runFission({ scenarios: [rateLimitScenario()], agents: [endpointAgent(() => 'rejected')], k: 3, feedback: 'raw', seed: 1, store }).catch((e: unknown) => e);
    expect(SuiteStoppedError.isInstance(error)).toBe(true);
    // The base run and the first continuation ran; the other two were never started.
    expect(error).toMatchObject({ reason: 'rejected', completed: 2, total: 4 });
    expect(await store.countTrajectories!()).toBe(0);
  });
});
