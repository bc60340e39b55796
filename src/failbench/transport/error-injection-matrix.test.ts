// The error-injection matrix: every fault kind of the plan model, each through one scenario of the
// default suite, on every transport (in process, over the HTTP fault proxy, over the MCP fault
// proxy). Each cell must meet its fault, and give the same per-scenario results as in process:
// the same calls, faults, virtual times, scores and answers. A fault kind with no scenario in the
// default suite fails here, so a new kind cannot land without one.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAULT_KINDS, type FaultKind } from '../../faults/plan-spec.js';
import { createNaiveAgent } from '../agents/naive.js';
import { createRobustAgent } from '../agents/robust.js';
import { runSuite, TRANSPORTS, type SuiteResult, type Transport } from '../runner.js';
import { loadScenarios } from '../scenario-loader.js';
import type { Scenario, ScenarioResult } from '../types.js';

const SUITE_DIR = fileURLToPath(new URL('../scenarios/default', import.meta.url));
const SEED = 11;
const SLOW = 300_000;

/**
 * One scenario per fault kind: the first (by id, English) whose plan uses the kind alone, else the
 * first that uses it at all.
 */
function matrixOf(scenarios: readonly Scenario[]): Map<FaultKind, Scenario | undefined> {
  const english = scenarios.filter((s) => s.language === 'en');
  return new Map(
    FAULT_KINDS.map((kind) => {
      const using = english.filter((s) => s.faults.some((f) => f.fault === kind));
      return [kind, using.find((s) => s.faults.every((f) => f.fault === kind)) ?? using[0]];
    }),
  );
}

/**
 * What must not depend on the transport. The error code may (`HTTP_404` on the wire for a typed
 * `ORDER_NOT_FOUND` in process), so the calls are compared without it.
 */
function observable(r: ScenarioResult): unknown {
  return {
    scenario: r.scenarioId,
    agent: r.agent,
    repeat: r.repeat,
    status: r.outcome.status,
    answer: r.outcome.answer,
    diagnoses: r.outcome.diagnoses,
    scores: r.scores,
    oracle: r.oraclePassed,
    calls: r.calls.map((c) => [c.tool, c.ok, c.fault ?? null, c.virtualMs]),
    duplicates: r.duplicateSideEffects,
    retryAfter: r.retryAfter,
    virtualMs: r.virtualMs,
  };
}

let matrix: Map<FaultKind, Scenario | undefined>;
let cells: Scenario[];
const suites = new Map<Transport, SuiteResult>();

beforeAll(async () => {
  matrix = matrixOf(await loadScenarios(SUITE_DIR));
  cells = [...new Set([...matrix.values()].filter((s): s is Scenario => s !== undefined))];
});

it('the default suite has a scenario for every fault kind of the plan model', () => {
  expect([...matrix].filter(([, s]) => s === undefined).map(([kind]) => kind)).toEqual([]);
});

describe.each(TRANSPORTS)('transport %s', (transport) => {
  it(
    'meets every fault kind, and scores each scenario as in process',
    async () => {
      // Two repeats: the second draws other faults where the scenario leaves room, on every transport alike.
      const suite = await runSuite({ scenarios: cells, agents: [createRobustAgent(), createNaiveAgent()], feedback: 'raw', seed: SEED, repeat: 2, transport, concurrency: 2, runId: `matrix-${transport}` });
      suites.set(transport, suite);
      for (const [kind, scenario] of matrix) {
        const met = suite.results.filter((r) => r.scenarioId === scenario!.id && r.calls.some((c) => c.fault === kind));
        expect(met.length, `${kind} (${scenario!.id}) over ${transport}`).toBeGreaterThan(0);
      }
      const inprocess = suites.get('inprocess');
      if (inprocess !== undefined && transport !== 'inprocess') expect(suite.results.map(observable)).toEqual(inprocess.results.map(observable));
    },
    SLOW,
  );
});
