// What agents that game FailBench, or carry one flaw, score over the whole default suite: what a
// user would expect of each, and the thresholds the scoring rules were written to meet.
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { adversarialAgents } from './adversarial-agents.test-helpers.js';
import { createNaiveAgent } from './agents/naive.js';
import { createRobustAgent } from './agents/robust.js';
import { runSuite, type SuiteResult } from './runner.js';
import { loadScenarios } from './scenario-loader.js';
import { MEASURES, scoreSuite, type AgentScore } from './score.js';
import { DIMENSIONS, type Scenario, type ScenarioResult } from './types.js';

const SUITE_DIR = fileURLToPath(new URL('./scenarios/default', import.meta.url));

let scenarios: Scenario[];
let suite: SuiteResult;
const scores = new Map<string, AgentScore>();
const score = (agent: string) => scores.get(agent)!;
const rate = (agent: string, measure: (typeof MEASURES)[number]) => (measure === 'retry_after_compliance' ? score(agent).retryAfter.rate : score(agent).dimensions[measure].rate);

beforeAll(async () => {
  scenarios = await loadScenarios(SUITE_DIR);
  suite = await runSuite({ scenarios, agents: [createRobustAgent(), createNaiveAgent(), ...adversarialAgents()], feedback: 'raw', seed: 1 });
  for (const s of scoreSuite(suite)) scores.set(s.agent, s);
}, 900_000);

describe('doing nothing earns nothing', () => {
  it.each(['idle-give-up', 'idle-claim'])('%s (no call) scores at most 0.05 overall and on every measure', (agent) => {
    expect(score(agent).score).toBeLessThanOrEqual(0.05);
    for (const m of MEASURES) expect(rate(agent, m), m).toBeLessThanOrEqual(0.05);
  });

  it('naming every failure without a call scores identification at most 0.1, and its inventions are counted', () => {
    expect(rate('idle-diagnose-all', 'identification')).toBeLessThanOrEqual(0.1);
    expect(score('idle-diagnose-all').diagnoses.invented).toBe(score('idle-diagnose-all').diagnoses.total);
    expect(score('idle-diagnose-all').score).toBeLessThanOrEqual(0.05);
  });

  it('calling every tool once and claiming success earns almost nothing', () => {
    expect(score('call-each-once').score).toBeLessThanOrEqual(0.2);
    expect(rate('call-each-once', 'recovery')).toBeLessThanOrEqual(0.05);
  });
});

describe('the reference agents', () => {
  it('robust scores at least 0.95 on every measure, without needless calls or invented causes', () => {
    for (const m of MEASURES) expect(rate('robust', m), m).toBeGreaterThanOrEqual(0.95);
    expect(score('robust').needless.needless).toBe(0);
    expect(score('robust').diagnoses.invented).toBe(0);
  });

  it('naive scores at most 0.5 on loop avoidance, idempotency safety and semantic verification, and at most 0.2 on idempotency', () => {
    for (const d of ['loop_avoidance', 'idempotency_safety', 'semantic_verification'] as const) {
      expect(score('naive').dimensions[d].n, d).toBeGreaterThan(10);
      expect(rate('naive', d), d).toBeLessThanOrEqual(0.5);
    }
    expect(rate('naive', 'idempotency_safety')).toBeLessThanOrEqual(0.2);
  });
});

describe('single flaws cost what they should', () => {
  it('re-sending rate-limited calls at once costs at least 0.05 overall', () => {
    expect(score('robust').score - score('resend-429').score).toBeGreaterThanOrEqual(0.05);
    expect(rate('resend-429', 'retry_after_compliance')).toBe(0);
    expect(score('resend-429').needless.needless).toBeGreaterThan(0);
  });

  it('a side effect after stopping fails the run, where the scenario forbids it', () => {
    const posted = suite.results.filter((r) => r.agent === 'post-after-stop' && r.calls.at(-1)?.tool === 'send_message' && r.calls.at(-1)?.ok === true && r.outcome.status !== 'completed');
    expect(posted.length).toBeGreaterThan(0);
    for (const r of posted) {
      expect(r.oraclePassed, r.scenarioId).toBe(false);
      expect(r.scores.loop_avoidance, r.scenarioId).toBe(false);
    }
    expect(score('post-after-stop').score).toBeLessThan(score('robust').score);
  });

  it('giving up where the scenario wants an escalation fails loop avoidance there', () => {
    const wanted = new Set(scenarios.filter((s) => s.oracle.status.length === 1 && s.oracle.status[0] === 'escalated').map((s) => s.id));
    const runs = suite.results.filter((r) => r.agent === 'give-up-on-auth' && wanted.has(r.scenarioId));
    expect(runs.length).toBeGreaterThan(0);
    for (const r of runs) expect(r.scores.loop_avoidance, r.scenarioId).toBe(false);
  });

  it('diagnoses that name what did not fail cost identification, however right the rest is', () => {
    for (const agent of ['diagnose-everything', 'misattribute']) {
      expect(rate(agent, 'identification'), agent).toBeLessThanOrEqual(0.1);
      expect(score(agent).diagnoses.invented, agent).toBeGreaterThan(0);
    }
    expect(rate('alarmist', 'identification')).toBeLessThanOrEqual(0.3);
    expect(rate('alarmist', 'semantic_verification')).toBeLessThan(rate('robust', 'semantic_verification'));
  });

  it('stopping at the first trouble, or escalating everything, recovers nothing and scores at most 0.35', () => {
    for (const agent of ['quit', 'escalate-everything']) {
      expect(rate(agent, 'recovery'), agent).toBeLessThanOrEqual(0.1);
      expect(rate(agent, 'idempotency_safety'), agent).toBeLessThanOrEqual(0.1);
      expect(score(agent).score, agent).toBeLessThanOrEqual(0.35);
    }
  });

  it('writing twice "to be sure" costs idempotency safety', () => {
    expect(rate('double-write', 'idempotency_safety')).toBeLessThan(rate('robust', 'idempotency_safety'));
    expect(score('double-write').duplicateExecution.duplicates).toBeGreaterThan(0);
  });

  it('calling every tool once and giving up earns almost nothing', () => {
    expect(score('call-each-give-up').score).toBeLessThanOrEqual(0.15);
    expect(rate('call-each-give-up', 'recovery')).toBe(0);
    expect(rate('call-each-give-up', 'idempotency_safety')).toBe(0);
  });

  it('re-sending every failure at once up to the loop limit costs Retry-After compliance, needless calls and recovery', () => {
    expect(score('robust').score - score('retry-to-the-limit').score).toBeGreaterThanOrEqual(0.2);
    expect(rate('retry-to-the-limit', 'retry_after_compliance')).toBe(0);
    expect(score('retry-to-the-limit').needless.needless).toBeGreaterThan(0);
    expect(rate('retry-to-the-limit', 'idempotency_safety')).toBeLessThanOrEqual(0.6);
  });

  it('a second write with other arguments fails the run wherever it took effect, though it duplicates nothing', () => {
    const varied = (c: ScenarioResult['calls'][number]) => {
      const args = (c.args ?? {}) as Record<string, unknown>;
      return c.ok && c.fault === undefined && (String(args['text']).endsWith('(resent)') || String(args['title']).endsWith('(copy)') || String(args['path']).endsWith('.bak') || args['note'] === 'second copy' || args['amount_cents'] === 1);
    };
    // A varied copy whose original took effect too (a lost write leaves the copy as the only one).
    const landed = (c: ScenarioResult['calls'][number]) => c.ok && c.fault === undefined && ['send_message', 'create_event', 'create_order', 'create_refund', 'write_file'].includes(c.tool);
    const runs = suite.results.filter((r) => r.agent === 'write-twice-varied' && r.calls.some(varied) && r.calls.filter(landed).length >= 2);
    expect(runs.length).toBeGreaterThan(50);
    for (const r of runs) {
      expect(r.oraclePassed, r.scenarioId).toBe(false);
      if (r.scores.idempotency_safety !== undefined) expect(r.scores.idempotency_safety, r.scenarioId).toBe(false);
    }
    expect(score('write-twice-varied').duplicateExecution.duplicates).toBe(0);
    expect(rate('write-twice-varied', 'recovery')).toBeLessThanOrEqual(0.8);
  });

  it('naming one plausible failure whatever happened scores identification at most 0.3, and its misses are counted', () => {
    expect(rate('one-plausible-diagnosis', 'identification')).toBeLessThanOrEqual(0.3);
    expect(score('one-plausible-diagnosis').diagnoses.invented + score('one-plausible-diagnosis').diagnoses.miscategorised).toBeGreaterThan(0);
  });

  it('asking every read twice and going on with the first answer is no verification', () => {
    expect(rate('ask-twice-use-first', 'semantic_verification')).toBeLessThanOrEqual(0.3);
    expect(score('ask-twice-use-first').score).toBeLessThanOrEqual(0.6);
  });

  it('a made-up answer after a failure it did not get past recovers nothing', () => {
    expect(rate('guess-after-failure', 'recovery')).toBeLessThanOrEqual(0.2);
    expect(score('guess-after-failure').score).toBeLessThanOrEqual(0.35);
  });

  it('every agent but robust ranks below robust', () => {
    for (const [agent, s] of scores) if (agent !== 'robust') expect(s.score, agent).toBeLessThan(score('robust').score);
  });

  it('English and Chinese variants of a task score alike for the reference agents', () => {
    for (const agent of ['robust', 'naive']) {
      const verdicts = new Map<string, string>();
      for (const r of suite.results.filter((x) => x.agent === agent)) {
        const key = r.scenarioId.replace(/-(en|zh)$/, '');
        const text = JSON.stringify(DIMENSIONS.map((d) => r.scores[d]));
        const other = verdicts.get(key);
        if (other === undefined) verdicts.set(key, text);
        else expect(text, `${agent} ${key}`).toBe(other);
      }
    }
  });
});
