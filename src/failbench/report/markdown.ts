/**
 * report.md: the run's scores as Markdown tables, the heatmap as counts, and the worst runs with
 * their calls. Recorded text (answers, arguments, scenario titles) is escaped, since Markdown
 * viewers render inline HTML.
 */
import { DIMENSIONS } from '../types.js';
import {
  ciText,
  clip,
  describeCall,
  describeEndpointFailure,
  DIMENSION_LABELS,
  endpointFailedRuns,
  failedDimensions,
  heatmap,
  OUTCOME_COLUMNS,
  percent,
  worstRuns,
  type ReportInput,
} from './report-data.js';

/** Escapes text for a Markdown table cell or paragraph: no HTML, no table breaks, no emphasis. */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_[\]|#])/g, '\\$1')
    .replace(/\r?\n/g, ' ');
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[], right: ReadonlySet<number> = new Set()): string[] {
  return [row(header), row(header.map((_, i) => (right.has(i) ? '---:' : '---'))), ...rows.map(row)];
}

export function renderMarkdown({ suite, scores }: ReportInput): string {
  const m = suite.meta;
  const md = (text: string) => escapeMarkdown(text);
  const lines: string[] = [];
  const assisted = m.feedback === 'assisted';
  lines.push(`# FailBench report`, '');
  lines.push(
    ...table(
      ['run', 'faultline', 'seed', 'agents', 'transport', 'feedback', 'repeats', 'scenarios', 'started'],
      [[md(m.runId), md(m.version), String(m.seed), m.agents.map(md).join(', '), m.transport, m.feedback, String(m.repeat), String(suite.scenarios.length), m.startedAt]],
    ),
    '',
  );
  if (assisted) {
    lines.push(
      '> Assisted mode: agents saw the runtime\'s classification and feedback, and the runtime retried on their behalf. Diagnoses were made with that help.',
      '',
    );
  }

  lines.push('## Scores', '');
  const agentHeaders = scores.map((s) => md(s.agent));
  const dimensionRows = DIMENSIONS.map((d) => [
    `${DIMENSION_LABELS[d]}${assisted && d === 'identification' ? ' (assisted)' : ''}`,
    ...scores.map((s) => {
      const x = s.dimensions[d];
      return x.n === 0 ? 'n/a' : `${percent(x.rate)} (${ciText(x.ci95)}, n=${x.n})`;
    }),
  ]);
  const extraRows = [
    ['Overall score', ...scores.map((s) => percent(s.score))],
    ['Retry-After compliance', ...scores.map((s) => (s.retryAfter.due === 0 ? 'n/a (none due)' : `${percent(s.retryAfter.rate)} (${s.retryAfter.honored}/${s.retryAfter.due})`))],
    ['Duplicate-execution rate', ...scores.map((s) => `${percent(s.duplicateExecution.rate)} (${s.duplicateExecution.duplicates}/${s.duplicateExecution.writes} writes)`)],
    ...(m.repeat > 1 ? [['pass^k', ...scores.map((s) => s.passK.map((p, i) => `^${i + 1} ${percent(p)}`).join(', '))]] : [['pass^1', ...scores.map((s) => percent(s.passK[0] ?? 0))]]),
    ['Calls per run (mean)', ...scores.map((s) => s.meanCalls.toFixed(1))],
    ['Virtual time per run (mean)', ...scores.map((s) => `${(s.meanVirtualMs / 1000).toFixed(1)} s`)],
    ['Faults absorbed by the runtime', ...scores.map((s) => String(s.absorbedFailures))],
    ['Runs that crashed or overran', ...scores.map((s) => String(s.errors))],
    ...(scores.some((s) => s.endpointFailures > 0) ? [['Runs lost to the model endpoint (not scored)', ...scores.map((s) => String(s.endpointFailures))]] : []),
  ];
  lines.push(...table(['dimension', ...agentHeaders], [...dimensionRows, ...extraRows], new Set(scores.map((_, i) => i + 1))), '');
  lines.push('Rates are per scenario run, with 95% Wilson intervals; a dimension counts only runs of scenarios that list it.', '');

  lines.push('## Fault kind by outcome', '');
  for (const s of scores) {
    const h = heatmap(s.agent, suite.results);
    lines.push(`### ${md(s.agent)}`, '');
    if (h.kinds.length === 0) {
      lines.push('No runs.', '');
      continue;
    }
    lines.push(...table(['fault kind', ...OUTCOME_COLUMNS], h.kinds.map((k) => [md(k), ...OUTCOME_COLUMNS.map((c) => String(h.counts[k]![c]))]), new Set(OUTCOME_COLUMNS.map((_, i) => i + 1))), '');
  }

  const lost = endpointFailedRuns(suite.results);
  if (lost.length > 0) {
    lines.push('## Runs lost to the model endpoint', '');
    lines.push('The model endpoint behind the agent failed these runs (after its retries); they are not scored.', '');
    for (const s of scores) {
      const mine = lost.filter((r) => r.agent === s.agent);
      if (mine.length === 0) continue;
      lines.push(`### ${md(s.agent)}`, '', ...mine.map((r) => `- ${md(clip(describeEndpointFailure(r)))}`), '');
    }
  }

  lines.push('## Worst runs', '');
  for (const s of scores) {
    const worst = worstRuns(s.agent, suite.results);
    lines.push(`### ${md(s.agent)}`, '');
    if (worst.length === 0) {
      lines.push('Every run passed.', '');
      continue;
    }
    for (const r of worst) {
      const failed = failedDimensions(r);
      lines.push(`#### ${md(r.scenarioId)} (repeat ${r.repeat + 1})`, '');
      lines.push(`- outcome: **${r.outcome.status}**; failed: ${failed.length === 0 ? 'the oracle' : failed.join(', ')}`);
      lines.push(`- answer: ${md(clip(r.outcome.answer))}`);
      if (r.outcome.diagnoses.length > 0) {
        const tag = r.feedback === 'assisted' ? ' (assisted)' : '';
        lines.push(`- diagnoses${tag}: ${r.outcome.diagnoses.map((d) => md(`${d.tool}: ${d.category}${d.type === undefined ? '' : `/${d.type}`}`)).join('; ')}`);
      }
      for (const failure of r.oracleFailures ?? []) lines.push(`- oracle: ${md(failure)}`);
      lines.push(`- longest identical failing streak: ${r.maxIdenticalFailures}; duplicate side effects: ${r.duplicateSideEffects}${r.budgetExhausted === undefined ? '' : `; budget exhausted (${r.budgetExhausted})`}`);
      lines.push('', 'Calls:', '');
      if (r.calls.length === 0) lines.push('(none)');
      for (const [i, call] of r.calls.entries()) lines.push(md(describeCall(call, i)));
      lines.push('');
    }
  }
  return `${lines.join('\n')}\n`;
}
