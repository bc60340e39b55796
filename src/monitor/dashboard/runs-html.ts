/**
 * The FailBench run pages: the saved runs (newest first) with a form that picks two to compare,
 * one run's scores per agent and dimension with their 95% Wilson intervals, and two runs side by
 * side as `faultline bench compare` prints them (the same figures, the same wording).
 */
import { ciText, DIMENSION_LABELS, percent, signedPoints } from '../../failbench/report/report-data.js';
import { MEASURES, type AgentScore } from '../../failbench/score.js';
import { MEASURE_LABELS } from '../../failbench/scoring-rules.js';
import { DIMENSIONS, type Dimension } from '../../failbench/types.js';
import type { RunComparison, DimensionDelta } from '../../failbench/compare.js';
import { DEFAULT_CATALOG_NOW } from '../../tools/catalog.js';
import { compareHref, hrefWith, runHref } from './dashboard-links.js';
import { breakable, dataTable, type Column } from './data-table.js';
import { shortTime } from './record-html.js';
import type { RunsComparison, RunsList, RunSummary } from './runs-data.js';
import { html, type SafeHtml } from './safe-html.js';

type ListedRun = RunsList['runs'][number];

const scoresText = (scores: ListedRun['scores']): SafeHtml =>
  html`${scores.map((s, i) => html`${i === 0 ? '' : html`<br>`}${breakable(s.agent)} <b>${percent(s.score)}</b>`)}`;

function runChoice(name: 'a' | 'b', label: string, runs: readonly ListedRun[], selected: string | undefined): SafeHtml {
  const options = runs.map((r) => html`<option value="${r.id}"${r.id === selected ? html` selected` : html``}>${r.id} (${r.meta.agents.join(', ')})</option>`);
  return html`<label>${label} <select name="${name}">${options}</select></label>`;
}

/** The runs page's `<main>` content. */
export function renderRunsList(list: RunsList): SafeHtml {
  const columns: Column<ListedRun>[] = [
    { header: 'run', kind: 'id', cell: (r) => html`<a href="${runHref(r.id)}">${r.id}</a>` },
    { header: 'started', kind: 'time', cell: (r) => shortTime(r.meta.startedAt) },
    { header: 'scenarios', kind: 'num', cell: (r) => r.scenarios },
    { header: 'repeat', kind: 'num', cell: (r) => r.meta.repeat },
    { header: 'feedback / transport', cell: (r) => `${r.meta.feedback} / ${r.meta.transport}` },
    { header: 'seed', kind: 'num', cell: (r) => r.meta.seed },
    { header: 'score per agent', cell: (r) => scoresText(r.scores) },
  ];
  const unreadable =
    list.unreadable.length === 0
      ? html``
      : html`<h2>Not readable</h2><ul id="runs-unreadable">${list.unreadable.map((u) => html`<li><code>${u.id}</code>: ${u.error}</li>`)}</ul>`;
  if (list.runs.length === 0) {
    return html`<h1>FailBench runs</h1><p class="empty" id="runs-none">no saved runs in ${list.dir} (run one: npx faultline bench)</p>${unreadable}`;
  }
  const [newest, previous] = [list.runs[0]!, list.runs[1] ?? list.runs[0]!];
  const form = html`<form method="get" action="/runs/compare" id="compare-form">${runChoice('a', 'run A', list.runs, previous.id)}${runChoice('b', 'run B', list.runs, newest.id)}<button type="submit">compare</button></form>`;
  return html`<h1>FailBench runs</h1><p class="sub">${list.runs.length} saved in <code>${list.dir}</code>, newest first; compare two as <code>npx faultline bench compare A B</code> does</p>
${form}${dataTable('runs', columns, list.runs, { rowAttributes: (r) => ({ 'data-id': r.id }) })}${unreadable}`;
}

/** An overview of the run's own calls: they are dated on the scenarios' virtual clock, so the window starts there. */
function recordsHref(run: RunSummary): string {
  const since = Math.min(DEFAULT_CATALOG_NOW, Date.parse(run.suite.meta.startedAt)) - 86_400_000;
  return hrefWith('/', { since: new Date(since).toISOString(), run: run.suite.meta.runId });
}

/** One run's page: per agent, each measure's rate, n and 95% Wilson interval, and the score. */
export function renderRun(id: string, run: RunSummary): SafeHtml {
  const m = run.suite.meta;
  const columns: Column<AgentScore>[] = [
    { header: 'agent', cell: (s) => s.agent },
    ...MEASURES.map((measure): Column<AgentScore> => ({
      header: MEASURE_LABELS[measure],
      kind: 'num',
      cell: (s) => {
        const d = measure === 'retry_after_compliance' ? s.retryAfter : s.dimensions[measure as Dimension];
        return d.n === 0 ? 'n/a' : html`${percent(d.rate)} <small>n=${d.n}<br>${ciText(d.ci95)}</small>`;
      },
    })),
    { header: 'score', kind: 'num', cell: (s) => html`<b>${percent(s.score)}</b>` },
  ];
  const others = `compare with another run on the runs page`;
  return html`<h1>FailBench run <code>${id}</code></h1><p class="sub">${m.agents.length} agent(s), ${run.suite.scenarios.length} scenarios x ${m.repeat} repeat(s), feedback ${m.feedback}, transport ${m.transport}, seed ${m.seed}; started ${shortTime(m.startedAt)}, faultline ${m.version}</p>
<p class="sub"><a href="${recordsHref(run)}">this run's recorded calls</a> (dated on the scenarios' virtual clock); <a href="/runs">${others}</a></p>
<h2>Scores</h2><p class="sub">rates per scenario run with 95% Wilson intervals; n counts the runs that scored the measure</p>${dataTable('scores', columns, run.scores, { rowAttributes: (s) => ({ 'data-agent': s.agent }) })}
<h2>Scenarios</h2>${dataTable(
    'scenarios',
    [
      { header: 'scenario', cell: (s: RunSummary['suite']['scenarios'][number]) => s.id },
      { header: 'title', kind: 'msg', cell: (s: RunSummary['suite']['scenarios'][number]) => s.title },
      { header: 'kind', cell: (s: RunSummary['suite']['scenarios'][number]) => s.kind },
      { header: 'dimensions', cell: (s: RunSummary['suite']['scenarios'][number]) => s.dimensions.join(', ') },
      { header: 'faults', cell: (s: RunSummary['suite']['scenarios'][number]) => s.faultKinds.join(', ') },
    ],
    run.suite.scenarios,
  )}`;
}

const both = (x: DimensionDelta): boolean => x.a.n !== 0 && x.b.n !== 0;

/** The columns `bench compare` prints, with its cell texts. */
const COMPARE_COLUMNS: readonly Column<{ d: Dimension; x: DimensionDelta }>[] = [
  { header: 'dimension', cell: ({ d }) => DIMENSION_LABELS[d] },
  { header: 'A', kind: 'num', cell: ({ x }) => (x.a.n === 0 ? 'n/a' : `${percent(x.a.rate)} n=${x.a.n}`) },
  { header: 'B', kind: 'num', cell: ({ x }) => (x.b.n === 0 ? 'n/a' : `${percent(x.b.rate)} n=${x.b.n}`) },
  { header: 'B - A', kind: 'num', cell: ({ x }) => (both(x) ? signedPoints(x.delta) : 'n/a'), cellClass: ({ x }) => (both(x) && (x.ci95[0] > 0 ? 'ok' : x.ci95[1] < 0 ? 'bad' : '')) || '' },
  { header: '95% CI', kind: 'num', cell: ({ x }) => (both(x) ? `[${signedPoints(x.ci95[0])}, ${signedPoints(x.ci95[1])}]` : '') },
];

function comparisonSection(c: RunComparison, i: number): SafeHtml {
  const rows = DIMENSIONS.map((d) => ({ d, x: c.dimensions[d] }));
  return html`<section class="comparison" data-agents="${c.agent_a} ${c.agent_b}"><h2>A: ${c.agent_a} (run ${breakable(c.run_a)}) → B: ${c.agent_b} (run ${breakable(c.run_b)})</h2>
${dataTable(`compare-${i}`, COMPARE_COLUMNS, rows, { rowAttributes: ({ d }) => ({ 'data-dimension': d }) })}
<p class="score">Score: ${percent(c.score.a)} → ${percent(c.score.b)} (${signedPoints(c.score.delta)})</p></section>`;
}

/** The comparison page's `<main>` content. */
export function renderComparison(view: RunsComparison): SafeHtml {
  const note =
    view.differences.length === 0
      ? html``
      : html`<p class="warning" id="differences">Note: the runs differ in ${view.differences.join(', ')}: a change may come from that, not from the agent.</p>`;
  return html`<h1>FailBench runs compared</h1><p class="sub">A <a href="${runHref(view.a)}"><code>${view.a}</code></a>, B <a href="${runHref(view.b)}"><code>${view.b}</code></a>; as <code>npx faultline bench compare ${view.a} ${view.b}</code> prints it (<a href="${compareHref(view.b, view.a)}">swap A and B</a>)</p>
${note}${view.comparisons.map(comparisonSection)}
<p class="sub">Intervals are Newcombe's hybrid score intervals for a difference of proportions; one that spans 0 is not a clear change.</p>`;
}
