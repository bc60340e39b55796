/**
 * The trace page: one agent run's calls in the order they ran, each linked to its record, and,
 * when the trace was stored as a trajectory (`faultline annotate`, FailBench), what the agent
 * decided after each call and the labels annotators put on it.
 */
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { TrajectoryStep } from '../../core/trajectory-types.js';
import { formatMs } from '../format-figures.js';
import type { TraceView } from './dashboard-data.js';
import { TRACE_CALL_LIMIT } from './dashboard-data.js';
import { recordHref, trajectoryHref } from './dashboard-links.js';
import { dataTable, type Column } from './data-table.js';
import { LABEL_COLUMNS } from './label-columns.js';
import { clipMessage, failureShape, shortTime } from './record-html.js';
import { html, type SafeHtml } from './safe-html.js';

function decision(step: TrajectoryStep | undefined): SafeHtml {
  if (step === undefined) return html``;
  const correctness = step.decision_correctness;
  return html`${step.agent_decision.action}${correctness === null ? '' : html` <small class="${correctness === 'incorrect' ? 'bad' : correctness === 'correct' ? 'ok' : ''}">(${correctness})</small>`}`;
}

function labels(view: TraceView): SafeHtml {
  const list = view.trajectory?.labels ?? [];
  if (list.length === 0) return html``;
  return html`<h2>Labels</h2>${dataTable('labels', LABEL_COLUMNS, list)}`;
}

/** The trace page's `<main>` content. */
export function renderTrace(view: TraceView): SafeHtml {
  const t = view.trajectory;
  const steps = new Map((t?.steps ?? []).flatMap((s) => (s.source_ref === undefined ? [] : [[s.source_ref, s] as const])));
  const columns: Column<{ r: ToolExecutionRecord; i: number }>[] = [
    { header: '#', kind: 'num', cell: ({ i }) => i + 1 },
    { header: 'step', kind: 'num', cell: ({ r }) => r.step_index },
    { header: 'time', kind: 'time', cell: ({ r }) => html`<a href="${recordHref(r.execution_id)}" title="${r.created_at}">${shortTime(r.created_at)}</a>` },
    { header: 'tool', cell: ({ r }) => r.tool_name },
    { header: 'status', cell: ({ r }) => r.status, cellClass: ({ r }) => (r.status === 'success' ? 'ok' : 'bad') },
    { header: 'stage/category/type', cell: ({ r }) => failureShape(r) },
    { header: 'code', kind: 'code', cell: ({ r }) => r.error_code ?? '' },
    { header: 'duration', kind: 'num', cell: ({ r }) => formatMs(r.duration_ms) },
    { header: 'retries', kind: 'num', cell: ({ r }) => r.retry_count },
    { header: 'feedback', cell: ({ r }) => r.feedback?.action ?? '' },
    { header: 'message', kind: 'msg', cell: ({ r }) => clipMessage(r.error_message) },
    ...(steps.size > 0 ? [{ header: "agent's next move", cell: ({ r }: { r: ToolExecutionRecord }) => decision(steps.get(r.execution_id)) }] : []),
  ];
  const failed = view.calls.filter((r) => r.status !== 'success').length;
  const about =
    t === null
      ? html``
      : html`<p class="sub">trajectory <a class="id" href="${trajectoryHref(t.trajectory_id)}">${t.trajectory_id}</a>: ${t.task_description ?? '(no task description)'}; outcome ${t.final_outcome}</p>`;
  const table =
    view.calls.length === 0
      ? html`<p class="empty">no calls of this trace are stored (only its trajectory)</p>`
      : dataTable(
          'calls',
          columns,
          view.calls.map((r, i) => ({ r, i })),
          { rowAttributes: ({ r }) => ({ 'data-id': r.execution_id }) },
        );
  return html`<h1>Trace <code>${view.trace_id}</code></h1><p class="sub">${view.truncated ? `the first ${TRACE_CALL_LIMIT} calls (the trace has more)` : `${view.calls.length} calls`}, ${failed} failed, in the order they ran</p>${about}
${table}${labels(view)}`;
}
