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
