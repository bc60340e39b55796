/**
 * report.md: the overall score first, the scores as Markdown tables, the costliest runs with why
 * and their calls, the rules with their failable coverage, the heatmap as counts, the run's
 * metadata last (the scenario catalogue is report.html's and results.json's). Recorded text
 * (answers, arguments, scenario titles) is escaped, since Markdown viewers render inline HTML.
 */
import { MEASURES } from '../score.js';
import { MEASURE_LABELS, OVERALL_RULE, SCORING_RULES } from '../scoring-rules.js';
import {
  clip,
  costliestRuns,
  coverageText,
  describeCall,
  describeEndpointFailure,
  endpointFailedRuns,
  heatmap,
  measureScore,
  OUTCOME_COLUMNS,
  percent,
  points,
  rateText,
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
  const agentHeaders = scores.map((s) => md(s.agent));
  const right = (from: number, count: number) => new Set(Array.from({ length: count }, (_, i) => from + i));
  lines.push(`# FailBench report`, '');

  lines.push('## Overall score', '');
  lines.push(
    ...table(
      ['agent', 'overall', ...MEASURES.map((x) => MEASURE_LABELS[x]), 'needless calls', 'invented diagnoses'],
      scores.map((s) => [
        md(s.agent),
        `**${percent(s.score)}**`,
        ...MEASURES.map((x) => {
          const r = measureScore(s, x);
          return r.n === 0 ? '0.0% (n=0)' : `${percent(r.rate)} n=${r.n}`;
        }),
        `${percent(s.needless.rate)} (${s.needless.needless}/${s.needless.calls})`,
        String(s.diagnoses.invented),
      ]),
      right(1, MEASURES.length + 3),
    ),
    '',
    md(OVERALL_RULE),
    '',
  );
  if (assisted) {
    lines.push("> Assisted mode: agents saw the runtime's classification and feedback, and the runtime retried on their behalf. Diagnoses were made with that help.", '');
  }

  lines.push('## Scores', '');
  const rows = [
    ...MEASURES.map((x) => [`${MEASURE_LABELS[x]}${assisted && x === 'identification' ? ' (assisted)' : ''}`, ...scores.map((s) => rateText(measureScore(s, x)))]),
    ['Retry-After waits honored', ...scores.map((s) => (s.retryAfter.due === 0 ? 'none due' : `${s.retryAfter.honored}/${s.retryAfter.due}`))],
    ['Needless calls', ...scores.map((s) => `${percent(s.needless.rate)} (${s.needless.needless}/${s.needless.calls} calls)`)],
    ['Diagnoses: correct / invented / wrong class', ...scores.map((s) => `${s.diagnoses.correct} / ${s.diagnoses.invented} / ${s.diagnoses.miscategorised}`)],
    ['Success claimed, not achieved (runs)', ...scores.map((s) => String(s.falseSuccess))],
    ['Duplicate-execution rate', ...scores.map((s) => `${percent(s.duplicateExecution.rate)} (${s.duplicateExecution.duplicates}/${s.duplicateExecution.writes} writes)`)],
    ...(m.repeat > 1 ? [['pass^k', ...scores.map((s) => s.passK.map((p, i) => `^${i + 1} ${percent(p)}`).join(', '))]] : [['pass^1', ...scores.map((s) => percent(s.passK[0] ?? 0))]]),
    ['Calls per run (mean)', ...scores.map((s) => s.meanCalls.toFixed(1))],
    ['Virtual time per run (mean)', ...scores.map((s) => `${(s.meanVirtualMs / 1000).toFixed(1)} s`)],
    ['Faults absorbed by the runtime', ...scores.map((s) => String(s.absorbedFailures))],
    ['Runs that crashed or overran', ...scores.map((s) => String(s.errors))],
    ...(scores.some((s) => s.endpointFailures > 0) ? [['Runs lost to the model endpoint (not scored)', ...scores.map((s) => String(s.endpointFailures))]] : []),
  ];
  lines.push(...table(['measure', ...agentHeaders], rows, right(1, scores.length)), '');
  lines.push('Rates are per scenario run, with 95% Wilson intervals; n counts the runs that scored the measure.', '');

  lines.push('## Where the points went', '');
  for (const s of scores) {
    lines.push(`### ${md(s.agent)}`, '');
    const runs = costliestRuns(s, suite.results);
    if (runs.length === 0) {
      lines.push('No run cost it anything.', '');
      continue;
    }
    for (const { result: r, cost, why } of runs) {
      lines.push(`#### ${md(r.scenarioId)} (repeat ${r.repeat + 1}): ${points(cost)}`, '');
      for (const line of why) lines.push(`- ${md(line)}`);
      lines.push(`- outcome: **${r.outcome.status}**; answer: ${md(clip(r.outcome.answer))}`);
      if (r.outcome.diagnoses.length > 0) {
        const tag = r.feedback === 'assisted' ? ' (assisted)' : '';
        lines.push(`- diagnoses${tag}: ${r.outcome.diagnoses.map((d) => md(`${d.tool}: ${d.category}${d.type === undefined ? '' : `/${d.type}`}`)).join('; ')}`);
      }
      for (const failure of r.oracleFailures ?? []) lines.push(`- oracle: ${md(failure)}`);
      if (r.budgetExhausted !== undefined) lines.push(`- budget exhausted (${r.budgetExhausted})`);
      lines.push('', 'Calls:', '');
      if (r.calls.length === 0) lines.push('(none)');
      for (const [i, call] of r.calls.entries()) lines.push(md(describeCall(call, i)));
      lines.push('');
    }
  }
  lines.push('Cost: the points of the overall score the run took away. At most ten runs per agent.', '');

  lines.push('## Scoring rules and failable coverage', '');
  lines.push(
    ...table(
      ['measure', 'weight', 'runs it counts', 'passes', 'fails', ...scores.map((s) => `failable / scored: ${md(s.agent)}`)],
      SCORING_RULES.map((rule) => [md(rule.label), md(rule.weight), md(rule.counts), md(rule.passes), md(rule.fails), ...scores.map((s) => (rule.measure === 'needless_calls' ? '' : coverageText(s.coverage[rule.measure])))]),
    ),
    '',
  );

  lines.push('## Fault kind by outcome', '');
  for (const s of scores) {
    const h = heatmap(s.agent, suite.results);
    lines.push(`### ${md(s.agent)}`, '');
    if (h.kinds.length === 0) {
      lines.push('No runs.', '');
      continue;
    }
    lines.push(...table(['fault kind', ...OUTCOME_COLUMNS], h.kinds.map((k) => [md(k), ...OUTCOME_COLUMNS.map((c) => String(h.counts[k]![c]))]), right(1, OUTCOME_COLUMNS.length)), '');
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

  lines.push('## Run', '');
  lines.push(
    ...table(
      ['run', 'faultline', 'seed', 'agents', 'transport', 'feedback', 'repeats', 'scenarios', 'started'],
      [[md(m.runId), md(m.version), String(m.seed), m.agents.map(md).join(', '), m.transport, m.feedback, String(m.repeat), String(suite.scenarios.length), m.startedAt]],
    ),
    '',
  );
  return `${lines.join('\n')}\n`;
}
