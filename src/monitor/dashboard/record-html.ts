/**
 * Records on the dashboard: one line of a list (the recent failures), and the drill-down page
 * of one record: the facts a person reads first, then the whole stored record as JSON. The record
 * is shown as stored, already redacted by the runtime; nothing here reverses or adds to that.
 */
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { ViewParams } from './dashboard-data.js';
import { formatMs } from '../format-figures.js';
import { overviewHref, recordHref, runHref, traceHref } from './dashboard-links.js';
import type { Column } from './data-table.js';
import { html, type SafeHtml } from './safe-html.js';

/** `2026-03-29T14:27:03.123Z` as `2026-03-29 14:27:03Z`: the instant to the second, in UTC. */
export function shortTime(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z`;
}

const MESSAGE_CHARS = 300;

/** An error message on one line, clipped for a table cell (the record page has all of it). */
export function clipMessage(message: string | null): string {
  if (message === null) return '';
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > MESSAGE_CHARS ? `${line.slice(0, MESSAGE_CHARS - 1)}…` : line;
}

/** Where and why the call failed: `stage/category/type`, empty for a success. */
export function failureShape(r: ToolExecutionRecord): string {
  if (r.status === 'success') return '';
  return `${r.failure_stage ?? '?'}/${r.failure_category ?? '?'}/${r.failure_type ?? '?'}`;
}

/** A list of records (the recent failures): one row each, linked to its record and its trace. */
export const RECORD_COLUMNS: readonly Column<ToolExecutionRecord>[] = [
  { header: 'time', kind: 'time', cell: (r) => html`<a href="${recordHref(r.execution_id)}" title="${r.created_at}">${shortTime(r.created_at)}</a>` },
  { header: 'tool', cell: (r) => r.tool_name },
  { header: 'status', cell: (r) => r.status, cellClass: (r) => (r.status === 'success' ? 'ok' : 'bad') },
  { header: 'stage/category/type', cell: failureShape },
  { header: 'code', kind: 'code', cell: (r) => r.error_code ?? '' },
  { header: 'message', kind: 'msg', cell: (r) => clipMessage(r.error_message) },
  { header: 'feedback', cell: (r) => r.feedback?.action ?? '' },
  { header: 'trace', kind: 'id', cell: (r) => html`<a href="${traceHref(r.trace_id)}">${r.trace_id}</a>` },
];

export const recordRowAttributes = (r: ToolExecutionRecord): Record<string, string> => ({ 'data-id': r.execution_id });

function fact(name: string, value: SafeHtml | string | number): SafeHtml {
  return html`<dt>${name}</dt><dd>${value}</dd>`;
}

/** The agent and the FailBench run the call was made for, when its context names them: links to their views. */
function scopeFacts(r: ToolExecutionRecord, view: ViewParams): SafeHtml[] {
  const context = r.context_snapshot as Record<string, unknown> | null;
  const agent = context?.['agent'];
  const run = context?.['failbench_run_id'];
  return [
    typeof agent === 'string' && agent !== '' ? fact('agent', html`<a href="${overviewHref(view, { agent, since: r.created_at.slice(0, 10), until: null })}" title="this agent's calls since that day">${agent}</a>`) : html``,
    typeof run === 'string' && run !== '' ? fact('FailBench run', html`<a href="${runHref(run)}">${run}</a>`) : html``,
  ];
}

/** The record page's `<main>` content. */
export function renderRecord(r: ToolExecutionRecord, view: ViewParams): SafeHtml {
  const feedback = r.feedback;
  const facts = [
    fact('execution id', html`<code>${r.execution_id}</code>`),
    fact('time', r.created_at),
    fact('tool', html`<a href="${overviewHref(view, { tool: r.tool_name })}">${r.tool_name}</a>`),
    fact('status', html`<span class="${r.status === 'success' ? 'ok' : 'bad'}">${r.status}</span>`),
    r.status === 'success' ? html`` : fact('stage/category/type', failureShape(r)),
    r.error_code === null ? html`` : fact('error code', r.error_code),
    r.error_message === null ? html`` : fact('message', r.error_message),
    fact('duration', formatMs(r.duration_ms)),
    fact('retries', r.retry_count),
    fact('breaker', r.breaker_state),
    fact('recovery', r.recovery),
    feedback === null ? html`` : fact('feedback', html`<b>${feedback.action}</b>: ${feedback.hint}`),
    r.fault === null ? html`` : fact('injected fault', r.fault.kind),
    fact('trace', html`<a class="id" href="${traceHref(r.trace_id)}">${r.trace_id}</a> step ${r.step_index}`),
    ...scopeFacts(r, view),
  ];
  return html`<h1>Record <code>${r.execution_id}</code></h1><p class="sub">${r.tool_name}, ${r.status}, ${shortTime(r.created_at)}</p>
<dl class="facts" id="facts">${facts}</dl>
<h2>Stored record</h2><pre class="json" id="record-json">${JSON.stringify(r, null, 2)}</pre>`;
}
