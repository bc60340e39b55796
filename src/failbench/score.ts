/**
 * FailBench's scores (seed 000 section 4.1): per run, pass or fail on each dimension the
 * scenario lists; per agent, the rate of each dimension with a Wilson interval, Retry-After
 * compliance, the duplicate-execution rate, pass^k over repeats (as in tau-bench), and the
 * overall score.
 */
import type { SuiteResult } from './runner.js';
import { DIMENSIONS, type AgentReport, type Dimension, type DimensionScore, type Scenario, type ScenarioResult } from './types.js';
import { wilson } from './wilson.js';

/** Identical failing calls allowed before it counts as a retry loop. */
export const LOOP_LIMIT = 3;

/** What one run did, as far as the per-run scores need to know. */
export interface RunFacts {
  outcome: ScenarioResult['outcome'];
  oraclePassed: boolean;
  /** The agent's diagnoses named the expected tool and category. */
  identified: boolean;
  maxIdenticalFailures: number;
  duplicateSideEffects: number;
}

/**
 * Pass or fail on each dimension the scenario lists; a dimension that does not apply to the
 * scenario (recovery on an unrecoverable one) is left out rather than failed.
 *
 * - identification: the diagnoses include the expected one (same tool, same category).
 * - recovery: the oracle passes; only on recoverable scenarios.
 * - loop_avoidance: at most {@link LOOP_LIMIT} identical failing calls; on an unrecoverable
 *   scenario the run must also end gave_up or escalated. On a recoverable scenario completing is
 *   the right ending, so only the loop limit applies.
 * - semantic_verification: the oracle passes (it encodes "re-queried or flagged the mismatch,
 *   did not answer with the wrong data").
 * - idempotency_safety: no duplicate side effects.
 */
export function scenarioScores(scenario: Pick<Scenario, 'dimensions' | 'recoverable'>, facts: RunFacts): Partial<Record<Dimension, boolean>> {
  const scores: Partial<Record<Dimension, boolean>> = {};
  const crashed = facts.outcome.status === 'error';
  for (const dimension of scenario.dimensions) {
    switch (dimension) {
      case 'identification':
        scores.identification = !crashed && facts.identified;
        break;
      case 'recovery':
        if (scenario.recoverable) scores.recovery = facts.oraclePassed;
        break;
      case 'loop_avoidance': {
        const noLoop = facts.maxIdenticalFailures <= LOOP_LIMIT;
        const stopped = facts.outcome.status === 'gave_up' || facts.outcome.status === 'escalated';
        scores.loop_avoidance = !crashed && noLoop && (scenario.recoverable || stopped);
        break;
      }
      case 'semantic_verification':
        scores.semantic_verification = facts.oraclePassed;
        break;
      case 'idempotency_safety':
        scores.idempotency_safety = !crashed && facts.duplicateSideEffects === 0;
        break;
    }
  }
  return scores;
}

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

/** Everything the report says about one agent. */
export interface AgentScore {
  agent: string;
  /** Distinct scenarios run (and scored: not lost to the model endpoint). */
  scenarios: number;
  /** Scenario runs (scenarios x repeats) scored. */
  runs: number;
  dimensions: Record<Dimension, DimensionScore>;
  /** Waits after a Retry-After that lasted long enough, of those that were due. 1 when none was due. */
  retryAfter: { honored: number; due: number; rate: number };
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
  /** The mean of the dimension rates, over the dimensions some scenario scored. */
  score: number;
}

/** Scores one agent's runs; those lost to its model endpoint are counted apart and nowhere else. */
export function scoreAgent(agent: string, results: readonly ScenarioResult[]): AgentScore {
  const all = results.filter((r) => r.agent === agent);
  const mine = all.filter((r) => r.modelEndpointFailure === undefined);
  const dimensions = {} as Record<Dimension, DimensionScore>;
  for (const dimension of DIMENSIONS) {
    let n = 0;
    let passed = 0;
    for (const r of mine) {
      const verdict = r.scores[dimension];
      if (verdict === undefined) continue;
      n++;
      if (verdict) passed++;
    }
    dimensions[dimension] = dimensionScore(passed, n);
  }
  const honored = mine.reduce((s, r) => s + r.retryAfter.honored, 0);
  const due = mine.reduce((s, r) => s + r.retryAfter.due, 0);
  const idempotencyRuns = mine.filter((r) => r.scores.idempotency_safety !== undefined);
  const duplicates = idempotencyRuns.reduce((s, r) => s + r.duplicateSideEffects, 0);
  const writes = idempotencyRuns.reduce((s, r) => s + (r.writes ?? r.duplicateSideEffects), 0);
  const scored = DIMENSIONS.filter((d) => dimensions[d].n > 0);
  return {
    agent,
    scenarios: new Set(mine.map((r) => r.scenarioId)).size,
    runs: mine.length,
    dimensions,
    retryAfter: { honored, due, rate: due === 0 ? 1 : honored / due },
    duplicateExecution: { duplicates, writes, rate: writes === 0 ? 0 : duplicates / writes },
    passK: passHatK(mine),
    meanCalls: mine.length === 0 ? 0 : mine.reduce((s, r) => s + r.calls.length, 0) / mine.length,
    meanVirtualMs: mine.length === 0 ? 0 : mine.reduce((s, r) => s + r.virtualMs, 0) / mine.length,
    absorbedFailures: mine.reduce((s, r) => s + (r.absorbedFailures ?? 0), 0),
    errors: mine.filter((r) => r.outcome.status === 'error').length,
    endpointFailures: all.length - mine.length,
    score: scored.length === 0 ? 0 : scored.reduce((s, d) => s + dimensions[d].rate, 0) / scored.length,
  };
}

/** Scores every agent of a suite, in the suite's agent order. */
export function scoreSuite(suite: SuiteResult): AgentScore[] {
  return suite.meta.agents.map((agent) => scoreAgent(agent, suite.results));
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
    score: round4(score.score),
  };
}
