// Every measure is failable on every run it scores: over the whole default suite (whatever
// scenarios it holds), the scorer's reading of each scenario says each measure it scores can fail,
// a minimal flaw on that measure does fail it there, and the robust agent passes it there (so the
// failure is the flaw's doing, not the scenario's). A scenario added where a measure cannot fail
// fails this test, naming the scenario, the measure and why.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRobustAgent } from './agents/robust.js';
import { failability, unfailableMeasures } from './failability.js';
import { FLAWS_BY_MEASURE, knownBadAgent, type KnownBadName } from './known-bad-agents.test-helpers.js';
import { runScenario, summarizeScenario } from './runner.js';
import type { Measure } from './run-verdict.js';
import { loadScenarios } from './scenario-loader.js';
import { MEASURES, measureVerdict, scoreAgent } from './score.js';
import type { Agent, Scenario, ScenarioResult } from './types.js';

const SUITE_DIR = fileURLToPath(new URL('./scenarios/default', import.meta.url));
const SEED = 7;
const SLOW = 600_000;

let scenarios: Scenario[];
/** Per agent, per scenario id: its run. */
const runs = new Map<string, Map<string, ScenarioResult>>();

async function runAll(agent: Agent): Promise<void> {
  const byScenario = new Map<string, ScenarioResult>();
  for (const scenario of scenarios) byScenario.set(scenario.id, await runScenario(scenario, agent, { feedback: 'raw', seed: SEED, runId: 'failability-test' }));
  runs.set(agent.name, byScenario);
}

beforeAll(async () => {
  scenarios = await loadScenarios(SUITE_DIR);
  const flaws = [...new Set(Object.values(FLAWS_BY_MEASURE).flat())] as KnownBadName[];
  for (const agent of [createRobustAgent(), ...flaws.map(knownBadAgent)]) await runAll(agent);
}, SLOW);

const measuresOf = (s: Scenario) => Object.keys(failability(s)) as Measure[];

describe('failability over the default suite', () => {
  it('reads every measure of every scenario as failable', () => {
    const unfailable = scenarios.flatMap((s) => unfailableMeasures(s).map((u) => `${s.id}: ${u.measure}: ${u.why}`));
    expect(unfailable).toEqual([]);
  });

  it('the robust agent scores, and passes, every measure every scenario offers', () => {
    const robust = runs.get('robust')!;
    const problems = scenarios.flatMap((s) =>
      measuresOf(s).flatMap((m) => {
        const r = robust.get(s.id)!;
        const verdict = measureVerdict(r, m);
        return verdict === true ? [] : [`${s.id}: ${m}: ${verdict === undefined ? 'not scored' : (r.reasons?.[m] ?? 'failed')}`];
      }),
    );
    expect(problems).toEqual([]);
  });

  it.each(MEASURES)('%s: a minimal flaw on it fails it on every scenario that scores it', (measure) => {
    const flaws = FLAWS_BY_MEASURE[measure];
    const offering = scenarios.filter((s) => measuresOf(s).includes(measure));
    expect(offering.length, 'scenarios offering it').toBeGreaterThan(0);
    const unfailed = offering.filter((s) => !flaws.some((flaw) => measureVerdict(runs.get(flaw)!.get(s.id)!, measure) === false)).map((s) => s.id);
    expect(unfailed, `no run of ${flaws.join(', ')} failed ${measure} there`).toEqual([]);
  });

  it('the report counts every scored run as failable (100% coverage)', () => {
    const summaries = scenarios.map(summarizeScenario);
    for (const name of runs.keys()) {
      const score = scoreAgent(name, [...runs.get(name)!.values()], summaries);
      for (const m of MEASURES) expect(score.coverage[m].failable, `${name} ${m}`).toBe(score.coverage[m].scored);
    }
  });
});

describe('failability of hand-made scenarios', () => {
  const base: Scenario = {
    id: 't/x',
    title: 'x',
    language: 'en',
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: '5xx' },
    dimensions: ['identification', 'recovery', 'loop_avoidance'],
    recoverable: true,
    instruction: 'What is the weather in Paris tomorrow?',
    tools: ['get_weather'],
    faults: [{ tool: 'get_weather', trigger: 'always', fault: 'http_status', params: { status: 503 } }],
    oracle: { status: ['completed'], answer_contains: ['Paris'], diagnosis: { tool: 'get_weather', category: 'system' } },
  };
  const loop = (faults: Scenario['faults'], extra: Partial<Scenario> = {}) => failability({ ...base, faults, ...extra }).loop_avoidance;
  const rule = (trigger: Scenario['faults'][number]['trigger'], params: Record<string, unknown> = { status: 503 }) =>
    ({ tool: 'get_weather', trigger, fault: 'http_status', params }) as unknown as Scenario['faults'][number];

  it('a loop can form only where the failure survives 4 identical calls at once', () => {
    expect(loop([rule('always')])!.failable).toBe(true);
    expect(loop([rule({ after: 2 })])!.failable).toBe(true);
    expect(loop([rule({ nth: [2, 3, 4, 5] })])!.failable).toBe(true);
    expect(loop([rule('first_call_only')])).toEqual({ failable: false, why: expect.stringMatching(/first call only.*no loop can form/) });
    expect(loop([rule({ nth: [1, 2, 3] })])!.failable).toBe(false);
    expect(loop([rule({ one_of: [1, 2, 3] })])!.failable).toBe(false);
    expect(loop([{ ...rule('always'), max_injections: 3 }])!.failable).toBe(false);
    expect(loop([{ tool: 'get_weather', trigger: 'always', fault: 'semantic_drift', params: { shift_date: 1 } }])!.failable).toBe(false);
    // The tool's own refusal (no fault planned on it) repeats for the same request.
    expect(loop([])!.failable).toBe(true);
  });

  it('a window must outlast 3 failing calls of its own length', () => {
    expect(loop([rule({ window: { until: 2000 } })])!.failable).toBe(true);
    const timeout = (until: number, jitter?: number) => ({ tool: 'get_weather', trigger: { window: { until, ...(jitter === undefined ? {} : { jitter_ms: jitter }) } }, fault: 'timeout', params: { delay_ms: 1000 } }) as Scenario['faults'][number];
    expect(loop([timeout(5000)])!.failable).toBe(true);
    expect(loop([timeout(2500)])!.failable).toBe(false);
    // Jitter only ever lengthens the window: the shortest repeat decides.
    expect(loop([timeout(2500, 5000)])!.failable).toBe(false);
    expect(loop([{ tool: 'get_weather', trigger: { window: { until: 25_000 } }, fault: 'hang' }])!.failable).toBe(false);
  });

  it('an unrecoverable scenario can always fail by claiming success, unless its oracle accepts that', () => {
    const stop = { recoverable: false, dimensions: ['identification', 'loop_avoidance'] as Scenario['dimensions'] };
    expect(loop([rule('first_call_only')], { ...stop, oracle: { ...base.oracle, status: ['gave_up'] } })!.failable).toBe(true);
    expect(loop([rule('first_call_only')], { ...stop, oracle: { ...base.oracle, status: ['gave_up', 'completed'] } })!.failable).toBe(false);
  });

  it('semantic verification needs a wrong 200, idempotency safety a write the oracle counts, Retry-After a wait to ask for', () => {
    expect(failability({ ...base, dimensions: ['semantic_verification'] }).semantic_verification!.failable).toBe(false);
    const write = { ...base, tools: ['send_message'], dimensions: ['idempotency_safety'] as Scenario['dimensions'], faults: [] };
    expect(failability({ ...write, oracle: { status: ['completed'], state: [{ collection: 'messages', count: 1 }] } }).idempotency_safety!.failable).toBe(true);
    expect(failability({ ...write, oracle: { status: ['completed'] } }).idempotency_safety!.failable).toBe(false);
    expect(failability(base).retry_after_compliance).toBeUndefined();
    expect(failability({ ...base, faults: [rule('always', { status: 429 })] }).retry_after_compliance!.failable).toBe(true);
    expect(failability({ ...base, faults: [rule('always', { status: 429, retry_after: null })] }).retry_after_compliance).toBeUndefined();
  });
});
