/**
 * FailBench's scores per agent (seed 000 section 4.1): the rate of each dimension with a Wilson
 * interval, Retry-After compliance, the needless calls, the diagnoses against what happened, the
 * duplicate-execution rate, pass^k over repeats (as in tau-bench), the failable coverage, and the
 * overall score with its weights. Each run is scored in run-verdict.ts; the rules and the weights
 * are the table in DESIGN.md ("FailBench scoring rules").
 */
import type { ScenarioSummary, SuiteResult } from './runner.js';
import type { Measure } from './run-verdict.js';
import { DIMENSIONS, type AgentReport, type Dimension, type DimensionScore, type ScenarioResult } from './types.js';
import { wilson } from '../stats/wilson.js';

/** Every measure the overall score weighs, in report order. */
export const MEASURES: readonly Measure[] = [...DIMENSIONS, 'retry_after_compliance'];

/**
 * The overall score's weights. Recovery, the task done despite the failures, weighs twice any
 * other dimension: the other four say how an agent handles a failure, recovery whether the user
 * got what they asked for, and an agent that stops at the first sign of trouble is safe on the
 * four but useless. Retry-After compliance weighs less (it is scored on fewer runs, and a rate
 * limit ignored also costs recovery). Measures the suite cannot score (no scenario offers them)
 * drop out and the rest are scaled to sum to 1.
 */
export const SCORE_WEIGHTS: Readonly<Record<Measure, number>> = {
  identification: 0.15,
  recovery: 0.3,
  loop_avoidance: 0.15,
  semantic_verification: 0.15,
  idempotency_safety: 0.15,
  retry_after_compliance: 0.1,
};

/** What the overall score loses for needless calls: this times their share of all the agent's calls. */
export const NEEDLESS_CALL_COST = 0.25;

export function dimensionScore(passed: number, n: number): DimensionScore {
  return { rate: n === 0 ? 0 : passed / n, n, ci95: wilson(passed, n) };
}

function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return c;
}

/**
 * pass^1 .. pass^k (tau-bench): the chance that j runs of a scenario, drawn from its repeats,
 * all pass, averaged over scenarios; pass^k counts a scenario only if all k repeats passed.
 * k is the fewest repeats any scenario has.
 */
export function passHatK(results: readonly ScenarioResult[]): number[] {
  const byScenario = new Map<string, { n: number; passed: number }>();
  for (const r of results) {
    const s = byScenario.get(r.scenarioId) ?? { n: 0, passed: 0 };
    s.n++;
    if (r.oraclePassed) s.passed++;
    byScenario.set(r.scenarioId, s);
  }
  if (byScenario.size === 0) return [];
  const k = Math.min(...[...byScenario.values()].map((s) => s.n));
  const out: number[] = [];
  for (let j = 1; j <= k; j++) {
    let sum = 0;
    for (const s of byScenario.values()) sum += choose(s.passed, j) / choose(s.n, j);
    out.push(sum / byScenario.size);
  }
  return out;
}

/** Of the runs that scored a measure, those whose scenario lets a minimal bad behaviour fail it (failability.ts). */
export interface Coverage {
  failable: number;
  scored: number;
}

/** Everything the report says about one agent. */
export interface AgentScore {
  agent: string;
  /** Distinct scenarios run (and scored: not lost to the model endpoint). */
  scenarios: number;
  /** Scenario runs (scenarios x repeats) scored. */
  runs: number;
  dimensions: Record<Dimension, DimensionScore>;
  /**
   * Runs that called a tool again after it asked to wait, and whether all those calls waited
   * (`rate` over such runs, 0 when there were none); `honored` / `due` count the waits themselves.
   */
  retryAfter: DimensionScore & { honored: number; due: number };
  /** Calls whose answer could not have differed from one the agent had (run-verdict.ts), of all calls. */
  needless: { needless: number; calls: number; rate: number };
  /** The agent's diagnoses against the failures it met: invented ones name a failure that did not happen. */
  diagnoses: { total: number; correct: number; invented: number; miscategorised: number; runsWithInvented: number };
  /** Runs that ended `completed` although the oracle failed: success claimed, not achieved. */
  falseSuccess: number;
  /** Per measure, how many of the runs scoring it could have failed it. */
  coverage: Record<Measure, Coverage>;
  /** The weights the overall score used: {@link SCORE_WEIGHTS} over the measures the suite offers, summing to 1. */
  weights: Partial<Record<Measure, number>>;
  /** Duplicate side effects per entity written, over the runs that score idempotency safety. */
  duplicateExecution: { duplicates: number; writes: number; rate: number };
  /** pass^1 .. pass^k of the oracle. */
  passK: number[];
  meanCalls: number;
  meanVirtualMs: number;
  /** Failed attempts the runtime handled before the agent saw a result (assisted mode). */
  absorbedFailures: number;
  /** Runs in which the agent threw or overran its budget. */
  errors: number;
  /**
   * Runs lost to the model endpoint behind the agent (`ScenarioResult.modelEndpointFailure`).
   * They say nothing about the agent, so no other figure counts them: not the rates, pass^k, the
   * means nor `errors`.
   */
  endpointFailures: number;
  /**
   * The weighted mean of the measure rates (a measure the agent never earned, n = 0, counts 0),
   * less {@link NEEDLESS_CALL_COST} times the share of needless calls; between 0 and 1.
   */
  score: number;
}

/** The measures a suite can score: those some scenario's failability lists, or, without it, some run scored. */
export function offeredMeasures(results: readonly ScenarioResult[], scenarios?: readonly ScenarioSummary[]): Measure[] {
  const known = scenarios?.filter((s) => s.failability !== undefined);
  if (known !== undefined && known.length > 0) return MEASURES.filter((m) => known.some((s) => s.failability![m] !== undefined));
  return MEASURES.filter((m) => results.some((r) => (m === 'retry_after_compliance' ? r.retryAfterCompliant !== undefined : r.scores[m] !== undefined)));
}

/** The weights over the offered measures, scaled to sum to 1. */
export function weightsOver(measures: readonly Measure[]): Partial<Record<Measure, number>> {
  const total = measures.reduce((sum, m) => sum + SCORE_WEIGHTS[m], 0);
  return Object.fromEntries(measures.map((m) => [m, total === 0 ? 0 : SCORE_WEIGHTS[m] / total]));
}

/** A run's verdict on a measure: passed, failed, or not scored. */
export function measureVerdict(result: ScenarioResult, measure: Measure): boolean | undefined {
  return measure === 'retry_after_compliance' ? result.retryAfterCompliant : result.scores[measure];
}

/**
 * Scores one agent's runs; those lost to its model endpoint are counted apart and nowhere else.
 * `scenarios` (the suite's summaries) say which measures the suite offers and which runs could
 * fail them; without them, the offered measures are those some run scored.
 */
export function scoreAgent(agent: string, results: readonly ScenarioResult[], scenarios?: readonly ScenarioSummary[]): AgentScore {
  const all = results.filter((r) => r.agent === agent);
  const mine = all.filter((r) => r.modelEndpointFailure === undefined);
  const failabilityOf = new Map((scenarios ?? []).map((s) => [s.id, s.failability]));
  const rates = {} as Record<Measure, DimensionScore>;
  const coverage = {} as Record<Measure, Coverage>;
  for (const measure of MEASURES) {
    let passed = 0;
    const c: Coverage = { failable: 0, scored: 0 };
    for (const r of mine) {
      const verdict = measureVerdict(r, measure);
      if (verdict === undefined) continue;
      c.scored++;
      if (verdict) passed++;
      if (failabilityOf.get(r.scenarioId)?.[measure]?.failable === true) c.failable++;
    }
    rates[measure] = dimensionScore(passed, c.scored);
    coverage[measure] = c;
  }
  const dimensions = Object.fromEntries(DIMENSIONS.map((d) => [d, rates[d]])) as Record<Dimension, DimensionScore>;
  const honored = mine.reduce((s, r) => s + r.retryAfter.honored, 0);
  const due = mine.reduce((s, r) => s + r.retryAfter.due, 0);
  const idempotencyRuns = mine.filter((r) => r.scores.idempotency_safety !== undefined);
  const duplicates = idempotencyRuns.reduce((s, r) => s + r.duplicateSideEffects, 0);
  const writes = idempotencyRuns.reduce((s, r) => s + (r.writes ?? r.duplicateSideEffects), 0);
  const calls = mine.reduce((s, r) => s + r.calls.length, 0);
  const needless = mine.reduce((s, r) => s + (r.needlessCalls ?? 0), 0);
  const audits = mine.map((r) => r.diagnosisAudit ?? { correct: 0, invented: 0, miscategorised: 0 });
  const weights = weightsOver(offeredMeasures(results, scenarios));
  const weighted = MEASURES.reduce((sum, m) => sum + (weights[m] ?? 0) * rates[m].rate, 0);
  const needlessRate = calls === 0 ? 0 : needless / calls;
  return {
    agent,
    scenarios: new Set(mine.map((r) => r.scenarioId)).size,
    runs: mine.length,
    dimensions,
    retryAfter: { ...rates.retry_after_compliance, honored, due },
    needless: { needless, calls, rate: needlessRate },
    diagnoses: {
      total: audits.reduce((s, a) => s + a.correct + a.invented + a.miscategorised, 0),
      correct: audits.reduce((s, a) => s + a.correct, 0),
      invented: audits.reduce((s, a) => s + a.invented, 0),
      miscategorised: audits.reduce((s, a) => s + a.miscategorised, 0),
      runsWithInvented: audits.filter((a) => a.invented > 0).length,
    },
    falseSuccess: mine.filter((r) => r.outcome.status === 'completed' && !r.oraclePassed).length,
    coverage,
    weights,
    duplicateExecution: { duplicates, writes, rate: writes === 0 ? 0 : duplicates / writes },
    passK: passHatK(mine),
    meanCalls: mine.length === 0 ? 0 : calls / mine.length,
    meanVirtualMs: mine.length === 0 ? 0 : mine.reduce((s, r) => s + r.virtualMs, 0) / mine.length,
    absorbedFailures: mine.reduce((s, r) => s + (r.absorbedFailures ?? 0), 0),
    errors: mine.filter((r) => r.outcome.status === 'error').length,
    endpointFailures: all.length - mine.length,
    score: Math.max(0, Math.min(1, weighted - NEEDLESS_CALL_COST * needlessRate)),
  };
}

/**
 * How much one run lowered its agent's overall score: its share of each measure it failed, at
 * that measure's weight, and its needless calls at their cost. What the report ranks runs by.
 */
export function runCost(result: ScenarioResult, score: AgentScore): number {
  let cost = 0;
  for (const measure of MEASURES) {
    const n = measure === 'retry_after_compliance' ? score.retryAfter.n : score.dimensions[measure].n;
    if (measureVerdict(result, measure) === false && n > 0) cost += (score.weights[measure] ?? 0) / n;
  }
  if (score.needless.calls > 0) cost += (NEEDLESS_CALL_COST * (result.needlessCalls ?? 0)) / score.needless.calls;
  return cost;
}

/** Scores every agent of a suite, in the suite's agent order. */
export function scoreSuite(suite: SuiteResult): AgentScore[] {
  return suite.meta.agents.map((agent) => scoreAgent(agent, suite.results, suite.scenarios));
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/** The `--json` shape for one agent, rates rounded to 4 decimals. */
export function agentReport(runId: string, score: AgentScore): AgentReport {
  const dimensions = {} as Record<Dimension, DimensionScore>;
  for (const d of DIMENSIONS) {
    const s = score.dimensions[d];
    dimensions[d] = { rate: round4(s.rate), n: s.n, ci95: [round4(s.ci95[0]), round4(s.ci95[1])] };
  }
  return {
    run_id: runId,
    agent: score.agent,
    scenarios: score.scenarios,
    dimensions,
    retry_after_compliance: round4(score.retryAfter.rate),
    needless_call_rate: round4(score.needless.rate),
    invented_diagnoses: score.diagnoses.invented,
    score: round4(score.score),
  };
}
