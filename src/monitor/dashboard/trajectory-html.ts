/**
 * The trajectory pages: the list (source, outcome, labels, failed steps, with filters as a GET
 * form) and one trajectory (its steps with what the agent decided after each, its labels, and
 * the judges' verdicts with what a reviewer made of them). Every recorded value is interpolated
 * through `html`, so a tool name or an argument is text, never markup.
 */
import { LABEL_NAMES } from '../../annotate/label.js';
import { TRAJECTORY_SOURCES, type Trajectory, type TrajectoryLabel, type TrajectoryStep } from '../../core/trajectory-types.js';
import { hrefWith, traceHref, trajectoryHref } from './dashboard-links.js';
import { breakable, dataTable, type Column } from './data-table.js';
import { LABEL_COLUMNS, reviewText } from './label-columns.js';
import { clipMessage, shortTime } from './record-html.js';
import { html, type SafeHtml } from './safe-html.js';
import { ANY_LABEL, FINAL_OUTCOMES, isFailedStep, NO_LABEL, TRAJECTORY_SCAN_LIMIT, type TrajectoryFilter, type TrajectoryList, type TrajectorySummary } from './trajectory-data.js';

const ARGS_CHARS = 200;

/** A value as one clipped line of JSON (the step's arguments, a result). */
export function jsonLine(value: unknown, max = ARGS_CHARS): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const outcomeClass = (outcome: string): string => (outcome === 'success' ? 'ok' : outcome === 'failure' ? 'bad' : '');

export function trajectoriesHref(filter: Partial<TrajectoryFilter>): string {
  return hrefWith('/trajectories', {
    source: filter.source,
    outcome: filter.outcome,
    label: filter.label,
    failed: filter.failed === true ? 1 : null,
    after: filter.after,
  });
}

const LIST_COLUMNS: readonly Column<TrajectorySummary>[] = [
  { header: 'trajectory', kind: 'id', cell: (t) => html`<a href="${trajectoryHref(t.trajectory_id)}">${t.trajectory_id}</a>` },
  { header: 'source', cell: (t) => html`${t.source}${t.source_id === null ? '' : html` <small>${breakable(t.source_id)}</small>`}` },
  { header: 'created', kind: 'time', cell: (t) => shortTime(t.created_at) },
  { header: 'task', kind: 'msg', cell: (t) => clipMessage(t.task_description) },
  { header: 'outcome', cell: (t) => t.final_outcome, cellClass: (t) => outcomeClass(t.final_outcome) },
  { header: 'steps', kind: 'num', cell: (t) => t.steps },
  {
    header: 'failed steps',
    cell: (t) =>
      t.failed_steps.length === 0
        ? html`<span class="empty">none</span>`
        : html`${t.failed_steps.map((s, i) => html`${i === 0 ? '' : ', '}${s.step_index} ${breakable(s.tool_name)} <small>(${s.failure ?? s.status})</small>`)}`,
  },
  {
    header: 'labels',
    cell: (t) =>
      t.labels.length === 0
        ? html`<span class="empty">none</span>`
        : html`${t.labels.map((l, i) => html`${i === 0 ? '' : ', '}${breakable(l.name)}${l.count > 1 ? ` x${l.count}` : ''}`)}`,
  },
  { header: 'judge labels reviewed', kind: 'num', cell: (t) => (t.judge_labels === 0 ? '' : `${t.reviewed} / ${t.judge_labels}`) },
];

function select(name: string, label: string, value: string | null, choices: readonly [string, string][]): SafeHtml {
  const options = choices.map(([v, text]) => (v === (value ?? '') ? html`<option value="${v}" selected>${text}</option>` : html`<option value="${v}">${text}</option>`));
  return html`<label>${label} <select name="${name}">${options}</select></label>`;
}

function filterForm(f: TrajectoryFilter): SafeHtml {
  const labels: [string, string][] = [['', 'any or none'], [ANY_LABEL, 'labelled'], [NO_LABEL, 'not labelled'], ...LABEL_NAMES.map((n): [string, string] => [n, n])];
  // A label name from another annotator (rare-failure) is kept as a choice so the form shows it.
  if (f.label !== null && !labels.some(([v]) => v === f.label)) labels.push([f.label, f.label]);
  return html`<form method="get" action="/trajectories" id="trajectory-filters">
${select('source', 'source', f.source, [['', 'any'], ...TRAJECTORY_SOURCES.map((s): [string, string] => [s, s])])}
${select('outcome', 'outcome', f.outcome, [['', 'any'], ...FINAL_OUTCOMES.map((o): [string, string] => [o, o])])}
${select('label', 'label', f.label, labels)}
<label>failed steps <select name="failed">${f.failed ? html`<option value="">any</option><option value="1" selected>at least one</option>` : html`<option value="" selected>any</option><option value="1">at least one</option>`}</select></label>
<button type="submit">show</button></form>`;
}

/** The list page's `<main>` content; `stored` is how many trajectories the store holds. */
export function renderTrajectoryList(list: TrajectoryList, stored: number): SafeHtml {
  const f = list.filter;
  const filtered = f.source !== null || f.outcome !== null || f.label !== null || f.failed;
  const more =
    list.next_after === null
      ? html``
      : html`<p id="next-page"><a href="${trajectoriesHref({ ...f, after: list.next_after })}">next page</a>${list.scanned === TRAJECTORY_SCAN_LIMIT && list.trajectories.length < f.limit ? ` (this page read ${TRAJECTORY_SCAN_LIMIT} trajectories and stopped)` : ''}</p>`;
  const body =
    list.trajectories.length === 0
      ? html`<p class="empty" id="trajectories-none">${stored === 0 ? 'no trajectories stored: import logs (npx faultline import) or run FailBench (npx faultline bench), then annotate them (npx faultline annotate)' : 'no trajectory matches these filters'}</p>`
      : dataTable('trajectories', LIST_COLUMNS, list.trajectories, { rowAttributes: (t) => ({ 'data-id': t.trajectory_id }) });
  const from = f.after === null ? '' : `, after ${f.after}`;
  return html`<h1>Trajectories</h1><p class="sub" id="trajectories-count">${list.trajectories.length} shown of ${stored} stored${filtered ? ' (filtered)' : ''}${from}, in id order${filtered ? html`; <a href="/trajectories">all trajectories</a>` : ''}</p>
${filterForm(f)}${body}${more}`;
}

function decisionCell(s: TrajectoryStep): SafeHtml {
  const d = s.agent_decision;
  const extra = [
    d.next_tool === undefined ? '' : `to ${d.next_tool}`,
    d.wait_seconds === undefined ? '' : `after ${d.wait_seconds} s`,
    d.params_delta === undefined ? '' : `changed ${jsonLine(d.params_delta, 120)}`,
  ].filter((x) => x !== '');
  const reasoning = d.reasoning === undefined ? html`` : html`<br><small>${d.reasoning}</small>`;
  return html`<b>${breakable(d.action)}</b>${extra.length === 0 ? '' : html` <small>${extra.join('; ')}</small>`}${reasoning}`;
}

function correctnessCell(s: TrajectoryStep): SafeHtml {
  if (s.decision_correctness === null) return html`<span class="empty">not judged</span>`;
  const cls = s.decision_correctness === 'correct' ? 'ok' : s.decision_correctness === 'incorrect' ? 'bad' : 'warning';
  const should = s.correct_action === null ? html`` : html`<br><small>should have: ${s.correct_action.action}${s.correct_action.reasoning === undefined ? '' : ` (${s.correct_action.reasoning})`}</small>`;
  return html`<span class="${cls}">${s.decision_correctness}</span>${s.correctness_reason === null ? '' : html` <small>${s.correctness_reason}</small>`}${should}`;
}

function resultCell(s: TrajectoryStep): SafeHtml {
  const r = s.response;
  const head = [r.status_code === undefined ? '' : String(r.status_code), r.error_code ?? ''].filter((x) => x !== '').join(' ');
  const text = r.message ?? (r.body === undefined ? r.text : jsonLine(r.body));
  return html`${head === '' ? '' : html`<code>${head}</code> `}${text === undefined ? '' : clipMessage(text)}`;
}

function stepColumns(labelsByStep: Map<number, TrajectoryLabel[]>): Column<TrajectoryStep>[] {
  return [
    { header: 'step', kind: 'num', cell: (s) => s.step_index },
    { header: 'tool', cell: (s) => s.tool_name },
    { header: 'arguments', kind: 'msg', cell: (s) => jsonLine(s.input_params) },
    { header: 'status', cell: (s) => s.status ?? 'no result', cellClass: (s) => (s.status === 'success' ? 'ok' : isFailedStep(s) ? 'bad' : '') },
    { header: 'failure', cell: (s) => (isFailedStep(s) ? [s.failure_stage, s.failure_category, s.failure_kind].map((x) => x ?? '?').join('/') : '') },
    { header: 'result', kind: 'msg', cell: resultCell },
    { header: 'decision after', cell: decisionCell },
    { header: 'decision judged', cell: correctnessCell },
    { header: 'labels', cell: (s) => html`${(labelsByStep.get(s.step_index) ?? []).map((l, i) => html`${i === 0 ? '' : ', '}${breakable(l.name)}`)}` },
  ];
}

const JUDGE_COLUMNS: readonly Column<TrajectoryLabel>[] = [
  { header: 'judge', cell: (l) => l.source ?? '' },
  { header: 'step', kind: 'num', cell: (l) => l.step_index },
  { header: 'verdict', cell: (l) => l.name },
  { header: 'confidence', kind: 'num', cell: (l) => l.confidence.toFixed(2) },
  { header: 'mismatch', cell: (l) => l.mismatch_kind ?? '' },
  { header: 'reason', kind: 'msg', cell: (l) => l.reason },
  { header: 'review', cell: (l) => html`${reviewText(l.review)}${l.review === undefined ? '' : html` <small>${l.review.reviewed_at.slice(0, 10)}</small>`}` },
];

function fact(name: string, value: SafeHtml | string | number): SafeHtml {
  return html`<dt>${name}</dt><dd>${value}</dd>`;
}

/** One trajectory's page: `<main>` content. */
export function renderTrajectory(t: Trajectory): SafeHtml {
  const labels = [...(t.labels ?? [])].sort((a, b) => a.step_index - b.step_index || a.name.localeCompare(b.name));
  const byStep = new Map<number, TrajectoryLabel[]>();
  for (const l of labels) byStep.set(l.step_index, [...(byStep.get(l.step_index) ?? []), l]);
  const judged = labels.filter((l) => l.source?.startsWith('judge:') === true);
  const basis = t.outcome_basis;
  const summary = t.failure_summary;
  const facts = [
    fact('trajectory id', html`<code>${t.trajectory_id}</code>`),
    fact('source', html`${t.metadata.source}${t.source_id === null ? '' : html` <code>${t.source_id}</code>`}`),
    t.metadata.source === 'faultline' && t.source_id !== null ? fact('trace', html`<a href="${traceHref(t.source_id)}">the recorded calls of this trace</a>`) : html``,
    fact('created', t.created_at),
    fact('task', t.task_description ?? '(none recorded)'),
    fact('outcome', html`<span class="${outcomeClass(t.final_outcome)}">${t.final_outcome}</span>${basis === undefined ? '' : html` <small>(${basis.source}${basis.by === undefined ? '' : ` by ${basis.by}`}${basis.evidence === null ? '' : `: ${basis.evidence}`})</small>`}`),
    fact('failures', `${summary.total_failures}${summary.recovery_pattern === null ? '' : `; first answered by ${summary.recovery_pattern}, ${summary.recovery_success === true ? 'recovered' : 'not recovered'}`}`),
    t.metadata.domain === null ? html`` : fact('domain', t.metadata.domain),
    fact('decisions annotated by', t.metadata.annotator ?? 'nobody yet'),
  ];
  const steps = t.steps.length === 0 ? html`<p class="empty">no steps</p>` : dataTable('steps', stepColumns(byStep), t.steps, { rowAttributes: (s) => ({ 'data-step': String(s.step_index) }) });
  const labelsSection = labels.length === 0 ? html`<p class="empty" id="labels-none">not annotated (npx faultline annotate)</p>` : dataTable('labels', LABEL_COLUMNS, labels);
  const judgeSection =
    judged.length === 0
      ? html`<p class="empty" id="verdicts-none">no judge verdicts on this trajectory</p>`
      : html`<p class="sub">${judged.filter((l) => l.review !== undefined).length} of ${judged.length} reviewed; the <a href="/review">review page</a> samples unreviewed ones</p>${dataTable('verdicts', JUDGE_COLUMNS, judged)}`;
  return html`<h1>Trajectory <code>${t.trajectory_id}</code></h1><p class="sub">${t.steps.length} steps, ${t.steps.filter(isFailedStep).length} failed, outcome ${t.final_outcome}; <a href="/trajectories">all trajectories</a></p>
<dl class="facts" id="facts">${facts}</dl>
<h2>Steps</h2>${steps}
<h2>Labels</h2>${labelsSection}
<h2>Judge verdicts</h2>${judgeSection}`;
}
