// The default suite's validity: it covers what the issue asks for, the robust agent passes it in
// both feedback modes, the naive agent fails where seed 000 says it should, and a seed fixes the
// results. That every measure can fail on every scenario is failability.test.ts.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createNaiveAgent } from './agents/naive.js';
import { createRobustAgent } from './agents/robust.js';
import { runScenario } from './runner.js';
import { SEED_SUBTYPES, loadScenarios } from './scenario-loader.js';
import { scoreAgent } from './score.js';
import { FAULT_KINDS } from '../faults/plan-spec.js';
import { DIAGNOSIS_CATEGORIES } from './fault-effects.js';
import { DIMENSIONS, type Agent, type FeedbackMode, type Scenario, type ScenarioResult } from './types.js';

const SUITE_DIR = fileURLToPath(new URL('./scenarios/default', import.meta.url));
const SEED = 7;
const SLOW = 120_000;

let scenarios: Scenario[];

beforeAll(async () => {
  scenarios = await loadScenarios(SUITE_DIR);
});

async function runAll(agent: Agent, feedback: FeedbackMode, list: readonly Scenario[] = scenarios): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const scenario of list) results.push(await runScenario(scenario, agent, { feedback, seed: SEED, runId: 'suite-test' }));
  return results;
}

/** A run failed its scenario: the oracle, or any dimension the scenario scores. */
function failed(r: ScenarioResult): boolean {
  return r.outcome.status === 'error' || !r.oraclePassed || Object.values(r.scores).includes(false);
}

function explain(r: ScenarioResult): string {
  const bad = Object.entries(r.scores).filter(([, ok]) => ok === false).map(([d]) => d);
  return `${r.scenarioId} [${r.agent}]: status ${r.outcome.status}; failed ${[...bad, ...(r.oracleFailures ?? [])].join('; ')}`;
}

const domainOf = (s: Scenario) => s.id.split('/')[0]!;
const hasFault = (s: Scenario, test: (rule: Scenario['faults'][number]) => boolean) => s.faults.some(test);
const paramsOf = (rule: Scenario['faults'][number]) => (rule.params ?? {}) as Record<string, unknown>;
const NON_IDEMPOTENT_WRITES = ['create_order', 'send_message', 'create_event', 'create_refund'];

/**
 * A result as JSON, with the idempotency keys the runtime makes up for calls that bring none
 * (UUIDv7: time and randomness) masked; everything else must repeat exactly.
 */
function comparable(results: readonly ScenarioResult[]): string {
  return JSON.stringify(results, (key, value: unknown) =>
    key === 'idempotency_key' && typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/.test(value) ? '<runtime key>' : value,
  );
}

describe('the default suite covers the issue', () => {
  it('has at least 200 scenarios, in English and Chinese, over at least six tool domains', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(200);
    const languages = new Set(scenarios.map((s) => s.language));
    expect([...languages].sort()).toEqual(['en', 'zh']);
    expect(new Set(scenarios.map(domainOf)).size).toBeGreaterThanOrEqual(6);
    for (const language of ['en', 'zh'] as const) expect(scenarios.filter((s) => s.language === language).length).toBeGreaterThanOrEqual(100);
  });

  it('has at least 250 distinct tasks, each in both languages: no two alike in instruction, tools, faults and oracle', () => {
    const tasks = (language: Scenario['language']) => new Set(scenarios.filter((s) => s.language === language).map((s) => s.id.replace(/-(en|zh)$/, '')));
    expect(tasks('en')).toEqual(tasks('zh'));
    const english = scenarios.filter((s) => s.language === 'en');
    const distinct = new Set(english.map((s) => JSON.stringify([s.instruction, [...s.tools].sort(), s.faults, s.oracle])));
    expect(distinct.size).toBe(english.length);
    expect(distinct.size).toBeGreaterThanOrEqual(250);
  });

  it('injects every fault kind of the plan model, has at least 40 multi-fault tasks and the implicit faults', () => {
    const english = scenarios.filter((s) => s.language === 'en');
    const kinds = new Set(english.flatMap((s) => s.faults.map((r) => r.fault)));
    for (const kind of FAULT_KINDS) expect(kinds, kind).toContain(kind);
    expect(english.filter((s) => s.kind === 'cascade' || s.kind === 'mixed').length).toBeGreaterThanOrEqual(40);
    expect(english.filter((s) => s.faults.length >= 2).length).toBeGreaterThanOrEqual(30);
    // Where recovery drops most: a 200 that changed nothing, a page cut short without a word, stale data.
    expect(english.filter((s) => hasFault(s, (r) => r.fault === 'lost_write')).length).toBeGreaterThanOrEqual(10);
    expect(english.filter((s) => hasFault(s, (r) => r.fault === 'partial' && paramsOf(r)['silent'] === true)).length).toBeGreaterThanOrEqual(5);
    expect(english.filter((s) => hasFault(s, (r) => r.fault === 'stale')).length).toBeGreaterThanOrEqual(5);
  });

  it('covers every seed-000 subtype, every seed-001 category, the four kinds and the five dimensions', () => {
    expect(new Set(scenarios.map((s) => s.taxonomy.subtype))).toEqual(new Set(SEED_SUBTYPES));
    const categories = new Set(scenarios.flatMap((s) => [s.taxonomy.category, ...(s.oracle.diagnosis === undefined ? [] : [s.oracle.diagnosis.category])]));
    for (const category of DIAGNOSIS_CATEGORIES) expect(categories, category).toContain(category);
    expect(new Set(scenarios.map((s) => s.kind))).toEqual(new Set(['single_step', 'cascade', 'semantic', 'mixed']));
    expect(new Set(scenarios.flatMap((s) => s.dimensions))).toEqual(new Set(DIMENSIONS));
  });

  it('has the special cases: commit-then-drop on a non-idempotent write, a 429 worth waiting out, a 401 to escalate, a partial result to use', () => {
    const commitThenDrop = scenarios.filter((s) => hasFault(s, (r) => r.fault === 'commit_then_drop' && NON_IDEMPOTENT_WRITES.includes(r.tool)));
    expect(commitThenDrop.length).toBeGreaterThanOrEqual(4);
    for (const s of commitThenDrop) expect(s.dimensions).toContain('idempotency_safety');

    const waitOut = scenarios.filter((s) => s.recoverable && hasFault(s, (r) => r.fault === 'http_status' && paramsOf(r)['status'] === 429 && paramsOf(r)['retry_after'] !== undefined));
    expect(waitOut.length).toBeGreaterThanOrEqual(4);

    const escalate401 = scenarios.filter((s) => s.oracle.status.length === 1 && s.oracle.status[0] === 'escalated' && hasFault(s, (r) => (r.fault === 'http_status' && paramsOf(r)['status'] === 401) || r.fault === 'auth_expiry'));
    expect(escalate401.length).toBeGreaterThanOrEqual(4);

    const partial = scenarios.filter((s) => s.recoverable && hasFault(s, (r) => r.fault === 'partial') && (s.oracle.answer_contains ?? []).length > 0);
    expect(partial.length).toBeGreaterThanOrEqual(4);
    for (const s of partial) expect(s.oracle.status).toEqual(['completed']);
  });

  it('gives every scenario a discriminating oracle: an expected diagnosis, and a state or answer check or a final status to reach', () => {
    for (const s of scenarios) {
      expect(s.oracle.diagnosis, s.id).toBeDefined();
      const checks = (s.oracle.answer_contains?.length ?? 0) + (s.oracle.answer_excludes?.length ?? 0) + (s.oracle.state?.length ?? 0);
      expect(checks > 0 || !s.oracle.status.includes('completed'), s.id).toBe(true);
    }
  });
});

describe.each(['raw', 'assisted'] as const)('the robust agent (%s feedback)', (feedback) => {
  let results: ScenarioResult[];
  beforeAll(async () => {
    results = await runAll(createRobustAgent(), feedback);
  }, SLOW);

  it('scores at least 0.95 on every dimension', () => {
    const score = scoreAgent('robust', results);
    for (const dimension of DIMENSIONS) expect(score.dimensions[dimension].rate, dimension).toBeGreaterThanOrEqual(0.95);
    expect(score.retryAfter.rate).toBe(1);
    expect(score.errors).toBe(0);
  });

  it('passes every scenario', () => {
    expect(results.filter(failed).map(explain)).toEqual([]);
  });
});

describe.each(['raw', 'assisted'] as const)('the naive agent (%s feedback)', (feedback) => {
  it(
    'scores at most 0.5 on loop avoidance, idempotency safety and semantic verification',
    async () => {
      const score = scoreAgent('naive', await runAll(createNaiveAgent(), feedback));
      for (const dimension of ['loop_avoidance', 'idempotency_safety', 'semantic_verification'] as const) {
        expect(score.dimensions[dimension].n, dimension).toBeGreaterThan(10);
        expect(score.dimensions[dimension].rate, dimension).toBeLessThanOrEqual(0.5);
      }
    },
    SLOW,
  );
});

describe('reproducibility', () => {
  it(
    'gives the same results for the same seed',
    async () => {
      const sample = scenarios.filter((_, i) => i % 4 === 0);
      for (const agent of [createRobustAgent(), createNaiveAgent()]) {
        const first = await runAll(agent, 'assisted', sample);
        const second = await runAll(agent, 'assisted', sample);
        expect(comparable(second)).toEqual(comparable(first));
      }
    },
    SLOW,
  );
});
