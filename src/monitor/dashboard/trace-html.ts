/**
 * The trace page: one agent run's calls in the order they ran, each linked to its record, and,
 * when the trace was stored as a trajectory (`faultline annotate`, FailBench), what the agent
 * decided after each call and the labels annotators put on it.
 */
import type { TrajectoryStep } from '../../trajectory/types.js';
import { formatMs } from '../format-figures.js';
import type { TraceView } from './dashboard-data.js';
import { TRACE_CALL_LIMIT } from './dashboard-data.js';
import { recordHref } from './dashboard-links.js';
import { clipMessage, failureShape, shortTime } from './record-html.js';
import { html, type SafeHtml } from './safe-html.js';

function decision(step: TrajectoryStep | undefined): SafeHtml {
  if (step === undefined) return html`<td></td>`;
  const correctness = step.decision_correctness;
  return html`<td>${step.agent_decision.action}${correctness === null ? '' : html` <small class="${correctness === 'incorrect' ? 'bad' : correctness === 'correct' ? 'ok' : ''}">(${correctness})</small>`}</td>`;
}

function labels(view: TraceView): SafeHtml {
  const list = view.trajectory?.labels ?? [];
  if (list.length === 0) return html``;
  const rows = list.map(
    (l) => html`<tr><td>${l.name}</td><td class="num">${l.step_index}</td><td class="num">${l.confidence.toFixed(2)}</td><td>${l.source ?? 'rules'}</td><td class="msg">${l.reason}</td></tr>`,
  );
  return html`<h2>Labels</h2><table id="labels"><thead><tr><th>label</th><th class="num">step</th><th class="num">confidence</th><th>by</th><th>reason</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** The trace page's `<main>` content. */
export function renderTrace(view: TraceView): SafeHtml {
  const t = view.trajectory;
  const steps = new Map((t?.steps ?? []).flatMap((s) => (s.source_ref === undefined ? [] : [[s.source_ref, s] as const])));
  const withDecisions = steps.size > 0;
  const rows = view.calls.map(
    (r, i) =>
      html`<tr data-id="${r.execution_id}"><td class="num">${i + 1}</td><td class="num">${r.step_index}</td><td class="time"><a href="${recordHref(r.execution_id)}" title="${r.created_at}">${shortTime(r.created_at)}</a></td><td>${r.tool_name}</td><td class="${r.status === 'success' ? 'ok' : 'bad'}">${r.status}</td><td>${failureShape(r)}</td><td>${r.error_code ?? ''}</td><td class="num">${formatMs(r.duration_ms)}</td><td class="num">${r.retry_count}</td><td>${r.feedback?.action ?? ''}</td><td class="msg">${clipMessage(r.error_message)}</td>${withDecisions ? decision(steps.get(r.execution_id)) : html``}</tr>`,
  );
  const failed = view.calls.filter((r) => r.status !== 'success').length;
  const about =
    t === null
      ? html``
      : html`<p class="sub">trajectory <code>${t.trajectory_id}</code>: ${t.task_description ?? '(no task description)'}; outcome ${t.final_outcome}</p>`;
  const table =
    view.calls.length === 0
      ? html`<p class="empty">no calls of this trace are stored (only its trajectory)</p>`
      : html`<div class="scroll"><table id="calls"><thead><tr><th class="num">#</th><th class="num">step</th><th>time</th><th>tool</th><th>status</th><th>stage/category/type</th><th>code</th><th class="num">duration</th><th class="num">retries</th><th>feedback</th><th>message</th>${withDecisions ? html`<th>agent's next move</th>` : html``}</tr></thead><tbody>${rows}</tbody></table></div>`;
  return html`<h1>Trace <code>${view.trace_id}</code></h1><p class="sub">${view.truncated ? `the first ${TRACE_CALL_LIMIT} calls (the trace has more)` : `${view.calls.length} calls`}, ${failed} failed, in the order they ran</p>${about}
${table}${labels(view)}`;
}
