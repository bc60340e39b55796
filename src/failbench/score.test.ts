import { describe, expect, it } from 'vitest';
import type { CatalogSnapshot } from '../tools/index.js';
import { agentReport, NEEDLESS_CALL_COST, passHatK, runCost, SCORE_WEIGHTS, scoreAgent, weightsOver } from './score.js';
import type { ScenarioSummary } from './runner.js';
import type { ScenarioResult } from './types.js';
import { wilson } from '../stats/wilson.js';

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
    result({ scenarioId: 'a1', scores: { identification: true, recovery: true }, retryAfter: { honored: 1, due: 1 }, retryAfterCompliant: true, calls: [{ tool: 't', args: {}, ok: true, virtualMs: 0 }], virtualMs: 1000 }),
    result({ scenarioId: 'a2', scores: { identification: false, idempotency_safety: false }, duplicateSideEffects: 1, writes: 2, retryAfter: { honored: 0, due: 1 }, retryAfterCompliant: false, virtualMs: 3000 }),
    result({ scenarioId: 'a3', scores: { idempotency_safety: true }, writes: 1, absorbedFailures: 2 }),
    result({ scenarioId: 'a4', outcome: { status: 'error', answer: 'x', diagnoses: [] }, oraclePassed: false, scores: { loop_avoidance: false } }),
    result({ scenarioId: 'a1', agent: 'someone-else', scores: { identification: false } }),
  ];

  it('aggregates per measure with Wilson intervals, only over runs that scored it', () => {
    const s = scoreAgent('a', runs);
    expect(s.runs).toBe(4);
    expect(s.scenarios).toBe(4);
    expect(s.dimensions.identification).toEqual({ rate: 0.5, n: 2, ci95: wilson(1, 2) });
    expect(s.dimensions.recovery).toEqual({ rate: 1, n: 1, ci95: wilson(1, 1) });
    expect(s.dimensions.loop_avoidance).toEqual({ rate: 0, n: 1, ci95: wilson(0, 1) });
    expect(s.dimensions.semantic_verification).toEqual({ rate: 0, n: 0, ci95: [0, 1] });
    expect(s.dimensions.idempotency_safety).toEqual({ rate: 0.5, n: 2, ci95: wilson(1, 2) });
    expect(s.retryAfter).toEqual({ rate: 0.5, n: 2, ci95: wilson(1, 2), honored: 1, due: 2 });
  });

  it('weighs the measures the suite offers, scaled to sum to 1', () => {
    const s = scoreAgent('a', runs);
    // Without summaries, the measures some run scored: all but semantic verification.
    const w = weightsOver(['identification', 'recovery', 'loop_avoidance', 'idempotency_safety', 'retry_after_compliance']);
    expect(s.weights).toEqual(w);
    expect(Object.values(w).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(w.recovery! / w.identification!).toBeCloseTo(SCORE_WEIGHTS.recovery / SCORE_WEIGHTS.identification, 12);
    expect(s.score).toBeCloseTo(0.5 * w.identification! + 1 * w.recovery! + 0 * w.loop_avoidance! + 0.5 * w.idempotency_safety! + 0.5 * w.retry_after_compliance!, 12);
  });

  it('a measure the suite offers and the agent never earned counts 0, not "n/a"', () => {
    const summaries = [{ id: 'a1', failability: { semantic_verification: { failable: true, why: '' } } }] as unknown as ScenarioSummary[];
    const s = scoreAgent('a', runs, summaries);
    expect(s.weights).toEqual(weightsOver(['semantic_verification']));
    expect(s.score).toBe(0);
  });

  it('needless calls cost their share of all calls', () => {
    const call = { tool: 't', args: {}, ok: false, virtualMs: 0 };
    const clean = result({ scenarioId: 'n1', scores: { recovery: true }, calls: [call, call, call, call] });
    const wasteful = { ...clean, needlessCalls: 2 };
    expect(scoreAgent('a', [clean]).score).toBe(1);
    expect(scoreAgent('a', [wasteful]).needless).toEqual({ needless: 2, calls: 4, rate: 0.5 });
    expect(scoreAgent('a', [wasteful]).score).toBeCloseTo(1 - NEEDLESS_CALL_COST * 0.5, 12);
  });

  it('counts coverage, invented diagnoses and false successes', () => {
    const summaries = [
      { id: 'c1', failability: { recovery: { failable: true, why: '' } } },
      { id: 'c2', failability: { recovery: { failable: false, why: '' } } },
    ] as unknown as ScenarioSummary[];
    const s = scoreAgent(
      'a',
      [
        result({ scenarioId: 'c1', scores: { recovery: true }, diagnosisAudit: { correct: 1, invented: 2, miscategorised: 0 } }),
        result({ scenarioId: 'c2', scores: { recovery: false }, oraclePassed: false, diagnosisAudit: { correct: 0, invented: 0, miscategorised: 1 } }),
      ],
      summaries,
    );
    expect(s.coverage.recovery).toEqual({ failable: 1, scored: 2 });
    expect(s.diagnoses).toEqual({ total: 4, correct: 1, invented: 2, miscategorised: 1, runsWithInvented: 1 });
    expect(s.falseSuccess).toBe(1);
  });

  it('ranks a run by what it cost the overall score', () => {
    const s = scoreAgent('a', runs);
    const [a1, a2, a3] = runs;
    expect(runCost(a1!, s)).toBe(0);
    expect(runCost(a2!, s)).toBeCloseTo(s.weights.identification! / 2 + s.weights.idempotency_safety! / 2 + s.weights.retry_after_compliance! / 2, 12);
    expect(runCost(a3!, s)).toBe(0);
  });

  it('reports the duplicate-execution rate, pass^1, costs, absorbed faults and crashes', () => {
    const s = scoreAgent('a', runs);
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

  it('Retry-After compliance is 0 over no run, not 1: never waiting earns nothing', () => {
    expect(scoreAgent('a', [result({ scenarioId: 'x', scores: {} })]).retryAfter.rate).toBe(0);
  });

  it('agentReport is exactly the --json shape, rounded', () => {
    const s = scoreAgent('a', runs);
    const report = agentReport('run-1', s);
    expect(Object.keys(report)).toEqual(['run_id', 'agent', 'scenarios', 'dimensions', 'retry_after_compliance', 'needless_call_rate', 'invented_diagnoses', 'score']);
    expect(Object.keys(report.dimensions)).toEqual(['identification', 'recovery', 'loop_avoidance', 'semantic_verification', 'idempotency_safety']);
    expect(report.dimensions.identification).toEqual({ rate: 0.5, n: 2, ci95: [0.0945, 0.9055] });
    expect(report).toMatchObject({ run_id: 'run-1', agent: 'a', scenarios: 4, retry_after_compliance: 0.5, needless_call_rate: 0, invented_diagnoses: 0, score: Math.round(s.score * 10_000) / 10_000 });
  });
});
