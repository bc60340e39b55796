/**
 * What both report formats show, worked out once: the fault-kind-by-outcome heatmap, the worst
 * runs, and the labels. The renderers only lay it out (and escape it).
 */
import type { SuiteResult } from '../runner.js';
import { MEASURES, measureVerdict, runCost, type AgentScore } from '../score.js';
import { MEASURE_LABELS } from '../scoring-rules.js';
import type { Measure } from '../run-verdict.js';
import type { Dimension, ScenarioResult } from '../types.js';

export const DIMENSION_LABELS: Readonly<Record<Dimension, string>> = MEASURE_LABELS;

/** The heatmap's columns: how a run ended, and whether it met its oracle. */
export const OUTCOME_COLUMNS = ['completed/pass', 'completed/fail', 'gave_up/pass', 'gave_up/fail', 'escalated/pass', 'escalated/fail', 'error'] as const;
export type OutcomeColumn = (typeof OUTCOME_COLUMNS)[number];

export function outcomeColumn(result: ScenarioResult): OutcomeColumn {
  if (result.outcome.status === 'error') return 'error';
  return `${result.outcome.status}/${result.oraclePassed ? 'pass' : 'fail'}`;
}

/** Rows are fault kinds actually injected during a run (ground truth); a run counts once per kind. */
export interface Heatmap {
  agent: string;
  kinds: string[];
  counts: Record<string, Record<OutcomeColumn, number>>;
}

export const NO_FAULT = '(no fault injected)';

function emptyRow(): Record<OutcomeColumn, number> {
  return Object.fromEntries(OUTCOME_COLUMNS.map((c) => [c, 0])) as Record<OutcomeColumn, number>;
}

export function heatmap(agent: string, results: readonly ScenarioResult[]): Heatmap {
  const counts: Record<string, Record<OutcomeColumn, number>> = {};
  for (const r of results) {
    // A run lost to the model endpoint says nothing about the agent (see endpointFailedRuns).
    if (r.agent !== agent || r.modelEndpointFailure !== undefined) continue;
    const kinds = [...new Set(r.calls.flatMap((c) => (c.fault === undefined ? [] : [c.fault])))];
    const column = outcomeColumn(r);
    for (const kind of kinds.length === 0 ? [NO_FAULT] : kinds) (counts[kind] ??= emptyRow())[column]++;
  }
  const kinds = Object.keys(counts).sort((a, b) => (a === NO_FAULT ? 1 : b === NO_FAULT ? -1 : a.localeCompare(b)));
  return { agent, kinds, counts };
}

/** The measures a run failed, in report order. */
export function failedMeasures(result: ScenarioResult): Measure[] {
  return MEASURES.filter((m) => measureVerdict(result, m) === false);
}

/** What a run lost points on, one line each: the measures it failed and why, and its needless calls. */
export function whyCostly(result: ScenarioResult): string[] {
  const lines = failedMeasures(result).map((m) => `${MEASURE_LABELS[m]}: ${result.reasons?.[m] ?? 'failed'}`);
  const needless = result.needlessCalls ?? 0;
  if (needless > 0) lines.push(`${needless} needless ${needless === 1 ? 'call' : 'calls'} (identical re-sends that could not be answered otherwise)`);
  return lines;
}

export interface CostlyRun {
  result: ScenarioResult;
  /** Points of the overall score this run cost (0-1). */
  cost: number;
  why: string[];
}

/**
 * The runs that cost an agent most of its overall score (see runCost), most first; runs that
 * cost nothing are left out.
 */
export function costliestRuns(score: AgentScore, results: readonly ScenarioResult[], limit = 10): CostlyRun[] {
  return results
    .filter((r) => r.agent === score.agent && r.modelEndpointFailure === undefined)
    .map((result) => ({ result, cost: runCost(result, score), why: whyCostly(result) }))
    .filter((r) => r.cost > 0)
    .sort((a, b) => b.cost - a.cost || a.result.scenarioId.localeCompare(b.result.scenarioId) || a.result.repeat - b.result.repeat)
    .slice(0, limit);
}

/** Points as the report prints them: `4.2 pp`. */
export function points(cost: number): string {
  return `${(cost * 100).toFixed(2)} pp`;
}

/** Failable runs of those scored, as the report prints them: `52/52 (100%)`. */
export function coverageText(c: { failable: number; scored: number }): string {
  return c.scored === 0 ? 'n/a (none scored)' : `${c.failable}/${c.scored} (${percent(c.failable / c.scored)})`;
}

/** A rate as the report prints it; n = 0 is 0 (nothing earned), said as such. */
export function rateText(x: { rate: number; n: number; ci95: readonly [number, number] }, withCi = true): string {
  if (x.n === 0) return '0.0% (n=0: never earned)';
  return withCi ? `${percent(x.rate)} (${ciText(x.ci95)}, n=${x.n})` : `${percent(x.rate)} n=${x.n}`;
}

/** An agent's rate on a measure. */
export function measureScore(score: AgentScore, measure: Measure): AgentScore['retryAfter'] | AgentScore['dimensions'][Dimension] {
  return measure === 'retry_after_compliance' ? score.retryAfter : score.dimensions[measure];
}

/**
 * The runs lost to the model endpoint behind the agent, in suite order. Not scored, so they are
 * left out of the heatmap and the worst runs and listed on their own, with what the endpoint said.
 */
export function endpointFailedRuns(results: readonly ScenarioResult[]): ScenarioResult[] {
  return results.filter((r) => r.modelEndpointFailure !== undefined);
}

/** How a run lost to the model endpoint is listed: `weather/outage (repeat 1): openai, HTTP 503: ... (4 attempts)`. */
export function describeEndpointFailure(result: ScenarioResult): string {
  const f = result.modelEndpointFailure!;
  return `${result.scenarioId} (repeat ${result.repeat + 1}): ${f.provider}, ${f.message} (${f.attempts} ${f.attempts === 1 ? 'attempt' : 'attempts'})`;
}

/** One call as a line of text (the renderers escape it). */
export function describeCall(call: ScenarioResult['calls'][number], index: number): string {
  const args = JSON.stringify(call.args) ?? '';
  const shown = args.length > 160 ? `${args.slice(0, 159)}…` : args;
  const result = call.ok ? 'ok' : (call.code ?? 'failed');
  const fault = call.fault === undefined ? '' : ` [injected: ${call.fault}]`;
  return `${index + 1}. +${(call.virtualMs / 1000).toFixed(1)}s ${call.tool}(${shown}) → ${result}${fault}`;
}

export function percent(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

/** A difference of rates in percentage points, signed: `+5.8 pp`, `-0.3 pp` (what `bench compare` prints). */
export function signedPoints(x: number): string {
  const pp = x * 100;
  return `${pp >= 0 ? '+' : ''}${pp.toFixed(1)} pp`;
}

export function ciText(ci: readonly [number, number]): string {
  return `${(ci[0] * 100).toFixed(1)}-${(ci[1] * 100).toFixed(1)}%`;
}

/** Cuts long recorded text for the report; the full text stays in results.json. */
export function clip(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface ReportInput {
  suite: SuiteResult;
  scores: AgentScore[];
}
