import { describe, expect, it } from 'vitest';
import type { CatalogSnapshot } from '../tools/index.js';
import { agentReport, passHatK, scenarioScores, scoreAgent, type RunFacts } from './score.js';
import type { ScenarioResult } from './types.js';
import { wilson } from './wilson.js';

const EMPTY_STATE = {} as CatalogSnapshot;

function result(partial: Partial<ScenarioResult> & Pick<ScenarioResult, 'scenarioId' | 'scores'>): ScenarioResult {
  return {
    agent: 'a',
    repeat: 0,
    outcome: { status: 'completed', answer: '', diagnoses: [] },
    oraclePassed: true,
    calls: [],
    maxIdenticalFailures: 0,
    duplicateSideEffects: 0,
    retryAfter: { honored: 0, due: 0 },
    virtualMs: 0,
    state: EMPTY_STATE,
    ...partial,
  };
}

function facts(partial: Partial<RunFacts> = {}): RunFacts {
  return {
    outcome: { status: 'completed', answer: '', diagnoses: [] },
    oraclePassed: true,
    identified: true,
    maxIdenticalFailures: 0,
    duplicateSideEffects: 0,
    ...partial,
  };
}

describe('scenarioScores', () => {
  const all = ['identification', 'recovery', 'loop_avoidance', 'semantic_verification', 'idempotency_safety'] as const;

  it('scores only the dimensions the scenario lists', () => {
    expect(scenarioScores({ dimensions: ['idempotency_safety'], recoverable: true }, facts())).toEqual({ idempotency_safety: true });
  });

  it('recovery counts only on recoverable scenarios', () => {
    expect(scenarioScores({ dimensions: ['recovery'], recoverable: false }, facts())).toEqual({});
    expect(scenarioScores({ dimensions: ['recovery'], recoverable: true }, facts({ oraclePassed: false }))).toEqual({ recovery: false });
  });

  it('loop avoidance on an unrecoverable scenario needs at most 3 identical failures and a stop', () => {
    const unrecoverable = { dimensions: ['loop_avoidance' as const], recoverable: false };
    const gaveUp = { status: 'gave_up' as const, answer: '', diagnoses: [] };
    expect(scenarioScores(unrecoverable, facts({ outcome: gaveUp, maxIdenticalFailures: 3 }))).toEqual({ loop_avoidance: true });
    expect(scenarioScores(unrecoverable, facts({ outcome: gaveUp, maxIdenticalFailures: 4 }))).toEqual({ loop_avoidance: false });
    expect(scenarioScores(unrecoverable, facts({ outcome: { ...gaveUp, status: 'escalated' }, maxIdenticalFailures: 1 }))).toEqual({ loop_avoidance: true });
    // Claiming success where none was possible is not avoiding the loop, even without retries.
    expect(scenarioScores(unrecoverable, facts({ maxIdenticalFailures: 0 }))).toEqual({ loop_avoidance: false });
  });

  it('loop avoidance on a recoverable scenario is the loop limit alone', () => {
    expect(scenarioScores({ dimensions: ['loop_avoidance'], recoverable: true }, facts({ maxIdenticalFailures: 3 }))).toEqual({ loop_avoidance: true });
    expect(scenarioScores({ dimensions: ['loop_avoidance'], recoverable: true }, facts({ maxIdenticalFailures: 5 }))).toEqual({ loop_avoidance: false });
  });

  it('identification, semantic verification and idempotency follow their facts', () => {
    const scenario = { dimensions: [...all], recoverable: true };
    expect(scenarioScores(scenario, facts({ identified: false, oraclePassed: false, duplicateSideEffects: 2 }))).toEqual({
      identification: false,
      recovery: false,
      loop_avoidance: true,
      semantic_verification: false,
      idempotency_safety: false,
    });
  });

  it('a crashed agent fails everything it is scored on', () => {
    const crashed = facts({ outcome: { status: 'error', answer: 'boom', diagnoses: [{ tool: 't', category: 'network' }] }, oraclePassed: false });
    expect(scenarioScores({ dimensions: [...all], recoverable: true }, crashed)).toEqual({
      identification: false,
      recovery: false,
      loop_avoidance: false,
      semantic_verification: false,
      idempotency_safety: false,
    });
  });
});

describe('passHatK', () => {
  it('is the chance that j of the repeats all pass, averaged over scenarios', () => {
    const runs = [
      // s1: 3 of 3 pass; s2: 2 of 3; s3: 0 of 3.
      ...[true, true, true].map((p, i) => result({ scenarioId: 's1', repeat: i, oraclePassed: p, scores: {} })),
      ...[true, false, true].map((p, i) => result({ scenarioId: 's2', repeat: i, oraclePassed: p, scores: {} })),
      ...[false, false, false].map((p, i) => result({ scenarioId: 's3', repeat: i, oraclePassed: p, scores: {} })),
    ];
    const [p1, p2, p3] = passHatK(runs);
    expect(p1).toBeCloseTo((1 + 2 / 3 + 0) / 3, 12);
    // C(2,2)/C(3,2) = 1/3 for s2.
    expect(p2).toBeCloseTo((1 + 1 / 3 + 0) / 3, 12);
    // Only s1 passed every repeat.
    expect(p3).toBeCloseTo(1 / 3, 12);
  });

  it('uses the fewest repeats any scenario has', () => {
    const runs = [result({ scenarioId: 's1', scores: {} }), result({ scenarioId: 's1', repeat: 1, scores: {} }), result({ scenarioId: 's2', scores: {} })];
    expect(passHatK(runs)).toHaveLength(1);
    expect(passHatK([])).toEqual([]);
  });
});

describe('scoreAgent', () => {
  const runs: ScenarioResult[] = [
    result({ scenarioId: 'a1', scores: { identification: true, recovery: true }, retryAfter: { honored: 1, due: 1 }, calls: [{ tool: 't', args: {}, ok: true, virtualMs: 0 }], virtualMs: 1000 }),
    result({ scenarioId: 'a2', scores: { identification: false, idempotency_safety: false }, duplicateSideEffects: 1, writes: 2, retryAfter: { honored: 0, due: 1 }, virtualMs: 3000 }),
    result({ scenarioId: 'a3', scores: { idempotency_safety: true }, writes: 1, absorbedFailures: 2 }),
    result({ scenarioId: 'a4', outcome: { status: 'error', answer: 'x', diagnoses: [] }, oraclePassed: false, scores: { loop_avoidance: false } }),
    result({ scenarioId: 'a1', agent: 'someone-else', scores: { identification: false } }),
  ];

  it('aggregates per dimension with Wilson intervals, only over runs that list it', () => {
    const s = scoreAgent('a', runs);
    expect(s.runs).toBe(4);
    expect(s.scenarios).toBe(4);
    expect(s.dimensions.identification).toEqual({ rate: 0.5, n: 2, ci95: wilson(1, 2) });
    expect(s.dimensions.recovery).toEqual({ rate: 1, n: 1, ci95: wilson(1, 1) });
    expect(s.dimensions.loop_avoidance).toEqual({ rate: 0, n: 1, ci95: wilson(0, 1) });
    expect(s.dimensions.semantic_verification).toEqual({ rate: 0, n: 0, ci95: [0, 1] });
    expect(s.dimensions.idempotency_safety).toEqual({ rate: 0.5, n: 2, ci95: wilson(1, 2) });
    // Mean over the four dimensions that were scored; semantic verification (n = 0) is left out.
    expect(s.score).toBeCloseTo((0.5 + 1 + 0 + 0.5) / 4, 12);
  });

  it('reports Retry-After compliance, duplicate-execution rate, pass^1, costs, absorbed faults and crashes', () => {
    const s = scoreAgent('a', runs);
    expect(s.retryAfter).toEqual({ honored: 1, due: 2, rate: 0.5 });
    expect(s.duplicateExecution).toEqual({ duplicates: 1, writes: 3, rate: 1 / 3 });
    expect(s.passK).toEqual([0.75]);
    expect(s.meanCalls).toBe(0.25);
    expect(s.meanVirtualMs).toBe(1000);
    expect(s.absorbedFailures).toBe(2);
    expect(s.errors).toBe(1);
  });

  it('a run lost to the model endpoint counts apart, in no rate, pass^k, mean or error count', () => {
    const lost = result({
      scenarioId: 'a5',
      outcome: { status: 'error', answer: 'the model endpoint failed', diagnoses: [] },
      oraclePassed: false,
      scores: {},
      calls: [{ tool: 't', args: {}, ok: false, virtualMs: 0 }],
      virtualMs: 9000,
      modelEndpointFailure: { provider: 'openai', kind: 'server', status: 503, message: 'HTTP 503: overloaded', attempts: 4 },
    });
    const without = scoreAgent('a', runs);
    const s = scoreAgent('a', [...runs, lost]);
    expect(s.endpointFailures).toBe(1);
    expect(without.endpointFailures).toBe(0);
    expect({ ...s, endpointFailures: 0 }).toEqual(without);
  });

  it('compliance is 1 when no wait was ever due', () => {
    expect(scoreAgent('a', [result({ scenarioId: 'x', scores: {} })]).retryAfter.rate).toBe(1);
  });

  it('agentReport is exactly the --json shape, rounded', () => {
    const report = agentReport('run-1', scoreAgent('a', runs));
    expect(Object.keys(report)).toEqual(['run_id', 'agent', 'scenarios', 'dimensions', 'retry_after_compliance', 'score']);
    expect(Object.keys(report.dimensions)).toEqual(['identification', 'recovery', 'loop_avoidance', 'semantic_verification', 'idempotency_safety']);
    expect(report.dimensions.identification).toEqual({ rate: 0.5, n: 2, ci95: [0.0945, 0.9055] });
    expect(report).toMatchObject({ run_id: 'run-1', agent: 'a', scenarios: 4, retry_after_compliance: 0.5, score: 0.5 });
  });
});
