/**
 * What both report formats show, worked out once: the fault-kind-by-outcome heatmap, the worst
 * runs, and the labels. The renderers only lay it out (and escape it).
 */
import type { SuiteResult } from '../runner.js';
import type { AgentScore } from '../score.js';
import { DIMENSIONS, type Dimension, type ScenarioResult } from '../types.js';

export const DIMENSION_LABELS: Readonly<Record<Dimension, string>> = {
  identification: 'Failure identification',
  recovery: 'Recovery',
  loop_avoidance: 'Loop avoidance',
  semantic_verification: 'Semantic self-verification',
  idempotency_safety: 'Idempotency safety',
};

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

/** The dimensions a run failed, in dimension order. */
export function failedDimensions(result: ScenarioResult): Dimension[] {
  return DIMENSIONS.filter((d) => result.scores[d] === false);
}

/**
 * The runs that went worst for an agent: most failed dimensions, then the longest retry loop,
 * then the most duplicate side effects. Runs that failed nothing are left out.
 */
export function worstRuns(agent: string, results: readonly ScenarioResult[], limit = 5): ScenarioResult[] {
  return results
    .filter((r) => r.agent === agent && r.modelEndpointFailure === undefined && (failedDimensions(r).length > 0 || r.outcome.status === 'error' || !r.oraclePassed))
    .sort(
      (a, b) =>
        failedDimensions(b).length - failedDimensions(a).length ||
        Number(b.outcome.status === 'error') - Number(a.outcome.status === 'error') ||
        b.maxIdenticalFailures - a.maxIdenticalFailures ||
        b.duplicateSideEffects - a.duplicateSideEffects ||
        a.scenarioId.localeCompare(b.scenarioId) ||
        a.repeat - b.repeat,
    )
    .slice(0, limit);
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
