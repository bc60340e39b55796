/**
 * The review page: the judges' precision (the tables `faultline review --report` prints), then
 * the sampled judge labels, each with what the reviewer needs to decide (the task, the call, its
 * result, the judge's verdict and reason) and, when the dashboard takes decisions, the four
 * choices the command offers: accept, correct to another label, not a failure, skip. The buttons
 * are wired by the page's review script (dashboard-page.ts), which posts with the admin token.
 */
import { LABEL_NAMES } from '../../annotate/label.js';
import type { PrecisionRow } from '../../annotate/review.js';
import { formatPercent } from '../format-figures.js';
import { trajectoryHref } from './dashboard-links.js';
import { dataTable, type Column } from './data-table.js';
import { clipMessage } from './record-html.js';
import type { ReviewItem, ReviewView } from './review-data.js';
import { html, type SafeHtml } from './safe-html.js';
import { jsonLine } from './trajectory-html.js';

const percentOrDash = (p: number | null): string => (p === null ? '-' : formatPercent(p));

function precisionColumns(title: string): Column<PrecisionRow>[] {
  return [
    { header: title, cell: (r) => r.key, cellClass: (r) => (r.key === 'all' ? 'head' : '') },
    { header: 'reviewed', kind: 'num', cell: (r) => r.reviewed },
    { header: 'accepted', kind: 'num', cell: (r) => r.accepted },
    { header: 'corrected', kind: 'num', cell: (r) => r.corrected },
    { header: 'rejected', kind: 'num', cell: (r) => r.rejected },
    { header: 'precision', kind: 'num', cell: (r) => percentOrDash(r.precision) },
    { header: '95% CI (Wilson)', kind: 'num', cell: (r) => `${formatPercent(r.ci95[0])} - ${formatPercent(r.ci95[1])}` },
  ];
}

const rate = (n: number | null): string => (n === null ? 'n/a' : n.toFixed(2));

/** The judges' figures on the repository's labelled calls, as `review --report` prints them first. */
function measuredLines(v: ReviewView): SafeHtml {
  const lines = Object.entries(v.report.measured).map(([judge, s]) => {
    const sets = Object.entries(s.by_set).map(([set, c]) => `${set} ${rate(c.precision)} / ${rate(c.recall)} (${c.calls} calls)`).join('; ');
    return html`<li>${judge} on the labelled calls in the repository: precision ${rate(s.precision)}, recall ${rate(s.recall)} (${s.calls} calls, ${s.misses} misses; ${sets})</li>`;
  });
  return html`<ul class="sub" id="precision-measured">${lines}</ul><p class="sub">reviews give a judge's precision; recall needs the misses it did not flag, which only a labelled set has</p>`;
}

function precisionSection(v: ReviewView): SafeHtml {
  const r = v.report;
  const head = html`<h2>Judge precision</h2>${measuredLines(v)}<p class="sub" id="precision-summary">${r.reviewed} of ${r.judge_labels} judge labels reviewed (precision = accepted / reviewed; corrected and rejected count against), as <code>npx faultline review --report</code></p>`;
  if (r.reviewed === 0) return html`<section id="precision">${head}<p class="empty" id="precision-none">nothing reviewed yet</p></section>`;
  return html`<section id="precision">${head}${dataTable('precision-by-judge', precisionColumns('judge'), [...r.by_judge, r.overall])}${dataTable('precision-by-label', precisionColumns('label'), r.by_label)}</section>`;
}

function itemFacts(item: ReviewItem): SafeHtml {
  const { step, label, trajectory: t } = item;
  const call =
    step === null
      ? html`<dt>call</dt><dd class="empty">the trajectory has no step ${label.step_index}</dd>`
      : html`<dt>call</dt><dd><b>${step.tool_name}</b> <code>${jsonLine(step.input_params)}</code></dd>
<dt>status</dt><dd>${step.status ?? 'no result'}${step.failure_kind === null ? '' : ` (${step.failure_kind})`}</dd>
<dt>output</dt><dd>${clipMessage(jsonLine(step.response.body ?? step.response.message ?? null, 400))}</dd>`;
  return html`<dl class="facts"><dt>instruction</dt><dd>${t.task_description ?? '(none recorded)'}</dd>${call}
<dt>judge</dt><dd>${label.source ?? 'unknown'} says <b>${label.name}</b> (confidence ${label.confidence}${label.mismatch_kind === undefined ? '' : `, ${label.mismatch_kind}`})</dd>
<dt>reason</dt><dd>${label.reason}</dd></dl>`;
}

function choices(item: ReviewItem): SafeHtml {
  const others = LABEL_NAMES.filter((n) => n !== item.label.name);
  return html`<div class="choices"><button type="button" data-decision="accepted">accept</button>
<label>correct to <select class="correct-to" aria-label="correct the label to">${others.map((n) => html`<option value="${n}">${n}</option>`)}</select></label><button type="button" data-decision="corrected">correct</button>
<button type="button" data-decision="rejected">not a failure</button><button type="button" data-decision="skip">skip</button><span class="review-status" role="status"></span></div>`;
}

function itemHtml(item: ReviewItem, n: number, of: number, enabled: boolean): SafeHtml {
  const { ref, trajectory: t } = item;
  return html`<article class="review-item" data-trajectory="${ref.trajectory_id}" data-step="${ref.step_index}" data-name="${ref.name}" data-source="${ref.source}">
<h3>[${n}/${of}] <a href="${trajectoryHref(t.trajectory_id)}">${t.trajectory_id}</a>${t.source_id === null ? '' : html` <small>(${t.source} ${t.source_id})</small>`}, step ${ref.step_index} of ${t.steps}</h3>
${itemFacts(item)}${enabled ? choices(item) : html``}</article>`;
}

/** The review page's `<main>` content. */
export function renderReview(v: ReviewView): SafeHtml {
  const mode = v.enabled
    ? html`<div class="token"><label>admin token <input type="password" id="admin-token" autocomplete="off" spellcheck="false" placeholder="the token the dashboard printed"></label></div>
<p class="sub">each decision is saved onto its label as it is made, as <code>npx faultline review</code> saves it; a skip is not saved</p>`
    : html`<p class="sub" id="review-read-only">read-only: start the dashboard with <code>npx faultline dashboard --review</code> to decide here, or review in the terminal with <code>npx faultline review</code></p>`;
  const sample =
    v.judge_labels === 0
      ? html`<p class="empty" id="review-none">no judge labels in the store (npx faultline annotate)</p>`
      : v.sampled === 0
        ? html`<p class="empty" id="review-none">all ${v.judge_labels} judge labels are reviewed</p>`
        : html`<p class="sub" id="review-sample">${v.sampled} of ${v.unreviewed} unreviewed judge labels sampled (share ${v.share}, seed ${v.seed})${v.items.length < v.sampled ? `; the first ${v.items.length} shown` : ''}</p>
${v.items.map((item, i) => itemHtml(item, i + 1, v.sampled, v.enabled))}`;
  return html`<h1>Review the judges</h1>${mode}
${precisionSection(v)}
<section id="review" data-enabled="${v.enabled ? 'true' : 'false'}"><h2>Sampled judge labels</h2>${sample}</section>`;
}
