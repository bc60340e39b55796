/**
 * report.html: one self-contained file (inline CSS and SVG; no scripts, fonts or requests) that
 * opens from disk anywhere: the overall score first, where the points went, the rules with their
 * failable coverage, then the run's metadata and the scenario catalogue (collapsed, a `<details>`
 * that needs no script). Everything recorded (scenario titles, answers, tool arguments, agent
 * names) passes through `escapeHtml`, and a Content-Security-Policy forbids scripts and fetches
 * as a second line of defence.
 */
import { escapeHtml } from '../../core/escape-html.js';
import { MEASURES } from '../score.js';
import { MEASURE_LABELS, OVERALL_RULE, SCORING_RULES } from '../scoring-rules.js';
import {
  ciText,
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

const PALETTE = ['#2563eb', '#d97706', '#059669', '#dc2626', '#7c3aed', '#0891b2'];

const CSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1f2937}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #e5e7eb;padding-bottom:.3rem}
table{border-collapse:collapse;margin:.5rem 0 1rem}th,td{border:1px solid #e5e7eb;padding:.3rem .55rem;text-align:left;vertical-align:top}
th{background:#f9fafb}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{background:#eff6ff;border-left:4px solid #2563eb;padding:.5rem .8rem}
.legend span{display:inline-block;margin-right:1rem}.swatch{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:middle}
.run{border:1px solid #e5e7eb;border-radius:6px;padding:.6rem .9rem;margin:.8rem 0}
.calls{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;white-space:pre-wrap;word-break:break-all;background:#f9fafb;padding:.5rem;margin:.4rem 0 0}
.fail{color:#b91c1c}.ok{color:#047857}
.overall td.total{font-weight:600;font-size:1.1em}
details>summary{cursor:pointer;color:#374151;margin:.4rem 0}
`;

function el(tag: string, content: string, attrs = ''): string {
  return `<${tag}${attrs === '' ? '' : ` ${attrs}`}>${content}</${tag}>`;
}

function dimensionBars({ scores }: ReportInput, assisted: boolean): string {
  const labelWidth = 230;
  const barWidth = 560;
  const rowHeight = 18;
  const groupGap = 14;
  const perGroup = scores.length * rowHeight + groupGap;
  const height = MEASURES.length * perGroup + 24;
  const parts: string[] = [];
  for (const [g, d] of MEASURES.entries()) {
    const top = g * perGroup;
    const label = `${MEASURE_LABELS[d]}${assisted && d === 'identification' ? ' (assisted)' : ''}`;
    parts.push(`<text x="0" y="${top + 13}" font-size="12">${escapeHtml(label)}</text>`);
    for (const [a, s] of scores.entries()) {
      const x = measureScore(s, d);
      const y = top + a * rowHeight;
      const color = PALETTE[a % PALETTE.length]!;
      parts.push(`<rect x="${labelWidth}" y="${y + 2}" width="${barWidth}" height="${rowHeight - 6}" fill="#f3f4f6"/>`);
      if (x.n > 0) {
        parts.push(`<rect x="${labelWidth}" y="${y + 2}" width="${(x.rate * barWidth).toFixed(1)}" height="${rowHeight - 6}" fill="${color}"><title>${escapeHtml(`${s.agent}: ${percent(x.rate)} (95% CI ${ciText(x.ci95)}, n=${x.n})`)}</title></rect>`);
        const lo = labelWidth + x.ci95[0] * barWidth;
        const hi = labelWidth + x.ci95[1] * barWidth;
        const mid = y + rowHeight / 2 - 1;
        parts.push(`<line x1="${lo.toFixed(1)}" x2="${hi.toFixed(1)}" y1="${mid}" y2="${mid}" stroke="#111827" stroke-width="1.5"/>`);
        parts.push(`<line x1="${lo.toFixed(1)}" x2="${lo.toFixed(1)}" y1="${mid - 4}" y2="${mid + 4}" stroke="#111827"/><line x1="${hi.toFixed(1)}" x2="${hi.toFixed(1)}" y1="${mid - 4}" y2="${mid + 4}" stroke="#111827"/>`);
      }
      const text = x.n === 0 ? '0.0%  n=0' : `${percent(x.rate)}  n=${x.n}`;
      parts.push(`<text x="${labelWidth + barWidth + 8}" y="${y + 13}" font-size="11">${escapeHtml(text)}</text>`);
    }
  }
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    const x = labelWidth + tick * barWidth;
    parts.push(`<text x="${x}" y="${height - 4}" font-size="10" text-anchor="middle" fill="#6b7280">${tick * 100}%</text>`);
  }
  const legend = scores
    .map((s, a) => `<span><i class="swatch" style="background:${PALETTE[a % PALETTE.length]!}"></i>${escapeHtml(s.agent)}</span>`)
    .join('');
  return `<p class="legend">${legend}</p><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="pass rate per measure and agent" width="${labelWidth + barWidth + 110}" height="${height}" font-family="system-ui,sans-serif">${parts.join('')}</svg><p>Bars are pass rates; whiskers are 95% Wilson intervals.</p>`;
}

/** The headline: each agent's overall score and its parts, first thing in the report. */
function overallTable({ scores }: ReportInput): string {
  const head = el('tr', ['agent', 'overall', ...MEASURES.map((m) => MEASURE_LABELS[m]), 'needless calls', 'invented diagnoses'].map((h) => el('th', escapeHtml(h))).join(''));
  const body = scores
    .map((s) =>
      el(
        'tr',
        el('th', escapeHtml(s.agent)) +
          el('td', percent(s.score), 'class="num total"') +
          MEASURES.map((m) => {
            const x = measureScore(s, m);
            return el('td', x.n === 0 ? '0.0% (n=0)' : `${percent(x.rate)} n=${x.n}`, 'class="num"');
          }).join('') +
          el('td', escapeHtml(`${percent(s.needless.rate)} (${s.needless.needless}/${s.needless.calls})`), 'class="num"') +
          el('td', String(s.diagnoses.invented), 'class="num"'),
      ),
    )
    .join('');
  return el('table', head + body, 'class="overall"') + el('p', escapeHtml(OVERALL_RULE));
}

function summaryTable({ scores }: ReportInput): string {
  const head = el('tr', el('th', 'measure') + scores.map((s) => el('th', escapeHtml(s.agent))).join(''));
  type Row = [string, (s: ReportInput['scores'][number]) => string];
  const rows: Row[] = [
    ['Overall score', (s) => percent(s.score)],
    ...MEASURES.map((m): Row => [MEASURE_LABELS[m], (s) => rateText(measureScore(s, m))]),
    ['Retry-After waits honored', (s) => (s.retryAfter.due === 0 ? 'none due' : `${s.retryAfter.honored}/${s.retryAfter.due}`)],
    ['Needless calls', (s) => `${percent(s.needless.rate)} (${s.needless.needless}/${s.needless.calls} calls)`],
    ['Diagnoses: correct / invented / wrong class', (s) => `${s.diagnoses.correct} / ${s.diagnoses.invented} / ${s.diagnoses.miscategorised}`],
    ['Success claimed, not achieved (runs)', (s) => String(s.falseSuccess)],
    ['Duplicate-execution rate', (s) => `${percent(s.duplicateExecution.rate)} (${s.duplicateExecution.duplicates}/${s.duplicateExecution.writes} writes)`],
    ['pass^k', (s) => s.passK.map((p, i) => `^${i + 1} ${percent(p)}`).join(', ')],
    ['Calls per run (mean)', (s) => s.meanCalls.toFixed(1)],
    ['Virtual time per run (mean)', (s) => `${(s.meanVirtualMs / 1000).toFixed(1)} s`],
    ['Faults absorbed by the runtime', (s) => String(s.absorbedFailures)],
    ['Runs that crashed or overran', (s) => String(s.errors)],
    ...(scores.some((s) => s.endpointFailures > 0) ? [['Runs lost to the model endpoint (not scored)', (s) => String(s.endpointFailures)] satisfies Row] : []),
  ];
  const body = rows.map(([label, value]) => el('tr', el('th', escapeHtml(label)) + scores.map((s) => el('td', escapeHtml(value(s)), 'class="num"')).join(''))).join('');
  return el('table', head + body);
}

/** The rules, with per agent how many of the runs that scored each measure could have failed it. */
function rulesTable({ scores }: ReportInput): string {
  const head = el('tr', ['measure', 'weight', 'runs it counts', 'passes', 'fails', ...scores.map((s) => `failable / scored: ${s.agent}`)].map((h) => el('th', escapeHtml(h))).join(''));
  const body = SCORING_RULES.map((rule) =>
    el(
      'tr',
      [rule.label, rule.weight, rule.counts, rule.passes, rule.fails].map((v) => el('td', escapeHtml(v))).join('') +
        scores.map((s) => el('td', escapeHtml(rule.measure === 'needless_calls' ? '' : coverageText(s.coverage[rule.measure])), 'class="num"')).join(''),
    ),
  ).join('');
  return el('table', head + body) + el('p', 'A run is failable on a measure when a minimal bad behaviour would fail it there (read from its scenario: an oracle that can fail, a fault that survives a re-send, a wrong 200 to trust, a write to repeat).');
}

function heatmaps({ suite, scores }: ReportInput): string {
  const out: string[] = [];
  for (const s of scores) {
    const h = heatmap(s.agent, suite.results);
    out.push(el('h3', escapeHtml(s.agent)));
    if (h.kinds.length === 0) {
      out.push(el('p', 'No runs.'));
      continue;
    }
    const head = el('tr', el('th', 'fault kind') + OUTCOME_COLUMNS.map((c) => el('th', escapeHtml(c))).join(''));
    const body = h.kinds
      .map((kind) => {
        const row = h.counts[kind]!;
        const total = OUTCOME_COLUMNS.reduce((n, c) => n + row[c], 0);
        const cells = OUTCOME_COLUMNS.map((c) => {
          const share = total === 0 ? 0 : row[c] / total;
          const hue = c.endsWith('/pass') ? '5,150,105' : '220,38,38';
          return el('td', String(row[c]), `class="num" style="background:rgba(${hue},${(share * 0.75).toFixed(3)})"`);
        }).join('');
        return el('tr', el('th', escapeHtml(kind)) + cells);
      })
      .join('');
    out.push(el('table', head + body));
  }
  out.push(el('p', 'Rows are the fault kinds injected during a run (ground truth); a run with several kinds counts in each row. Cell shade is the share of the row.'));
  return out.join('');
}

/** Per agent, the runs that cost it most, with why. */
function costliest({ suite, scores }: ReportInput): string {
  const out: string[] = [];
  for (const s of scores) {
    out.push(el('h3', escapeHtml(s.agent)));
    const runs = costliestRuns(s, suite.results);
    if (runs.length === 0) {
      out.push(el('p', 'No run cost it anything.'));
      continue;
    }
    for (const { result: r, cost, why } of runs) {
      const items: string[] = [
        ...why.map((line) => `<span class="fail">${escapeHtml(line)}</span>`),
        `outcome: <b>${escapeHtml(r.outcome.status)}</b>; answer: ${escapeHtml(clip(r.outcome.answer))}`,
      ];
      if (r.outcome.diagnoses.length > 0) {
        const tag = r.feedback === 'assisted' ? ' (assisted)' : '';
        items.push(`diagnoses${tag}: ${escapeHtml(r.outcome.diagnoses.map((d) => `${d.tool}: ${d.category}${d.type === undefined ? '' : `/${d.type}`}`).join('; '))}`);
      }
      for (const failure of r.oracleFailures ?? []) items.push(`oracle: ${escapeHtml(failure)}`);
      if (r.budgetExhausted !== undefined) items.push(escapeHtml(`budget exhausted (${r.budgetExhausted})`));
      const calls = r.calls.length === 0 ? '(no calls)' : r.calls.map((c, i) => escapeHtml(describeCall(c, i))).join('\n');
      out.push(
        el(
          'div',
          el('h4', `${escapeHtml(r.scenarioId)} <small>(repeat ${r.repeat + 1}) cost ${escapeHtml(points(cost))}</small>`) +
            el('ul', items.map((i) => el('li', i)).join('')) +
            el('details', el('summary', `${r.calls.length} ${r.calls.length === 1 ? 'call' : 'calls'}`) + el('pre', calls, 'class="calls"')),
          'class="run"',
        ),
      );
    }
  }
  out.push(el('p', 'Cost: the points of the overall score the run took away (its share of each measure it failed, at that weight, and of the needless calls). At most ten runs per agent.'));
  return out.join('');
}

/** The runs lost to the model endpoint, or nothing when there are none. */
function endpointFailures({ suite, scores }: ReportInput): string {
  const lost = endpointFailedRuns(suite.results);
  if (lost.length === 0) return '';
  const out: string[] = [el('h2', 'Runs lost to the model endpoint'), el('p', 'The model endpoint behind the agent failed these runs (after its retries); they are not scored.')];
  for (const s of scores) {
    const mine = lost.filter((r) => r.agent === s.agent);
    if (mine.length === 0) continue;
    out.push(el('h3', escapeHtml(s.agent)), el('ul', mine.map((r) => el('li', escapeHtml(clip(describeEndpointFailure(r))))).join('')));
  }
  return out.join('');
}

function metadata({ suite }: ReportInput): string {
  const m = suite.meta;
  const rows: [string, string][] = [
    ['run', m.runId],
    ['faultline', m.version],
    ['seed', String(m.seed)],
    ['agents', m.agents.join(', ')],
    ['transport', m.transport],
    ['feedback mode', m.feedback],
    ['repeats (k)', String(m.repeat)],
    ['concurrency', String(m.concurrency)],
    ['scenarios', String(suite.scenarios.length)],
    ['started', m.startedAt],
    ['finished', m.finishedAt],
  ];
  return el('table', rows.map(([k, v]) => el('tr', el('th', escapeHtml(k)) + el('td', escapeHtml(v)))).join(''));
}

function scenarioList({ suite }: ReportInput): string {
  const head = el('tr', ['id', 'title', 'kind', 'category / subtype', 'dimensions', 'recoverable', 'faults'].map((h) => el('th', h)).join(''));
  const body = suite.scenarios
    .map((s) =>
      el(
        'tr',
        [s.id, s.title, s.kind, `${s.taxonomy.category} / ${s.taxonomy.subtype}`, s.dimensions.join(', '), s.recoverable ? 'yes' : 'no', s.faultKinds.join(', ')]
          .map((v) => el('td', escapeHtml(v)))
          .join(''),
      ),
    )
    .join('');
  // Collapsed: on the default suite the catalogue is most of the page, and the scores come first.
  return el('details', el('summary', `Scenario catalogue (${suite.scenarios.length} scenarios)`) + el('table', head + body), 'id="catalogue"');
}

export function renderHtml(input: ReportInput): string {
  const assisted = input.suite.meta.feedback === 'assisted';
  const title = `FailBench report ${input.suite.meta.runId}`;
  const note = assisted
    ? el('p', 'Assisted mode: agents saw the runtime\u2019s classification and feedback, and the runtime retried on their behalf; diagnoses were made with that help.', 'class="note"')
    : el('p', 'Raw mode: agents saw what a real API client sees, and the runtime did not retry for them.', 'class="note"');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>FailBench report</h1>
<h2>Overall score</h2>
${overallTable(input)}
${note}
<h2>Measures</h2>
${dimensionBars(input, assisted)}
${summaryTable(input)}
<h2>Where the points went</h2>
${costliest(input)}
<h2>Scoring rules and failable coverage</h2>
${rulesTable(input)}
<h2>Fault kind by outcome</h2>
${heatmaps(input)}
${endpointFailures(input)}
<h2>Run</h2>
${metadata(input)}
<h2>Scenarios</h2>
${scenarioList(input)}
</body>
</html>
`;
}
