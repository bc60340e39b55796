/**
 * The overview page: the alerts firing now, per-tool figures (as `faultline stats` prints them),
 * hourly calls and failures per tool, failures by stage x category, the newest failed calls and
 * the failure signatures seen in the window. Rendered from a {@link DashboardSnapshot}, the same
 * object `/api/dashboard` returns.
 */
import type { Alert, AlertRuleName, ResolvedAlertConfig } from '../alert-rules.js';
import { ALERT_COMPARATORS, ALERT_RULES } from '../alert-rules.js';
import { formatMs, formatPercent } from '../format-figures.js';
import type { StageCategoryCell, StatsReport, TopFailureType } from '../stats-report.js';
import { FAILURE_CATEGORIES, FAILURE_STAGES, type FailureCategory, type FailureStage } from '../../core/taxonomy.js';
import type { DashboardSnapshot, FailuresView, HourlyView, SignatureView, SignaturesView, ViewParams } from './dashboard-data.js';
import { breakable, dataTable, type Column } from './data-table.js';
import { overviewHref } from './dashboard-links.js';
import { RECORD_COLUMNS, recordRowAttributes, shortTime } from './record-html.js';
import { renderHourlyChart } from './hourly-chart.js';
import { html, type SafeHtml } from './safe-html.js';

const empty = (text: string): SafeHtml => html`<p class="empty">${text}</p>`;

// ---------------------------------------------------------------------------------------------
// Alerts
// ---------------------------------------------------------------------------------------------

/** A rule's value or threshold in its unit: a share, milliseconds, or a count. */
function alertFigure(rule: AlertRuleName, n: number): string {
  if (rule === 'p95_latency') return formatMs(n);
  if (rule === 'breaker_trip' || rule === 'new_failure_signature') return String(n);
  return formatPercent(n);
}

const ALERT_COLUMNS: readonly Column<Alert>[] = [
  { header: 'severity', cell: (a) => a.severity, cellClass: (a) => a.severity },
  { header: 'rule', cell: (a) => a.rule },
  { header: 'tool', cell: (a) => a.tool_name },
  { header: 'value', kind: 'num', cell: (a) => alertFigure(a.rule, a.value) },
  // The comparator the rule fires on: a share that fires at its threshold reads ">= 20.0%".
  { header: 'threshold', kind: 'num', cell: (a) => `${ALERT_COMPARATORS[a.rule]} ${alertFigure(a.rule, a.threshold)}` },
  { header: 'message', kind: 'msg', cell: (a) => a.message },
];

/** When each rule warns and goes critical, with the settings in force (defaults or `--config`). */
function ruleRows(config: ResolvedAlertConfig): Record<AlertRuleName, [boolean, string, string]> {
  const r = config.rules;
  const pct = formatPercent;
  const timeouts = Object.entries(config.timeouts).map(([tool, ms]) => `${tool} ${formatMs(ms)}`);
  const timeoutText = `timeout ${formatMs(config.defaultTimeoutMs)}${timeouts.length === 0 ? '' : ` (${timeouts.join(', ')})`}`;
  return {
    success_rate: [r.success_rate.enabled, `success rate < ${pct(r.success_rate.threshold)} in a tool-hour`, `< ${pct(r.success_rate.critical)}; at least ${r.success_rate.minCalls} calls in the hour`],
    p95_latency: [r.p95_latency.enabled, `p95 > ${pct(r.p95_latency.threshold)} of the ${timeoutText}`, `> ${pct(r.p95_latency.critical)} of it; at least ${r.p95_latency.minCalls} calls`],
    failure_type_jump: [
      r.failure_type_jump.enabled,
      `a type's share of failures in the last ${r.failure_type_jump.windowHours} h >= max(${pct(r.failure_type_jump.minShare)}, ${r.failure_type_jump.factor} x its share in the ${r.failure_type_jump.baselineHours} h before)`,
      `${r.failure_type_jump.severity}; at least ${r.failure_type_jump.minFailures} failures`,
    ],
    retry_rate: [r.retry_rate.enabled, `retried calls > ${pct(r.retry_rate.threshold)}`, `> ${pct(r.retry_rate.critical)}; at least ${r.retry_rate.minCalls} calls`],
    breaker_trip: [r.breaker_trip.enabled, `breaker trips in the last ${r.breaker_trip.windowHours} h > ${r.breaker_trip.threshold}`, r.breaker_trip.severity],
    param_validation_rate: [
      r.param_validation_rate.enabled,
      `parameter-validation failures > ${pct(r.param_validation_rate.threshold)}`,
      `> ${pct(r.param_validation_rate.critical)}; at least ${r.param_validation_rate.minCalls} calls`,
    ],
    new_failure_signature: [r.new_failure_signature.enabled, 'a failure signature first seen in the window', r.new_failure_signature.severity],
    p95_trend: [r.p95_trend.enabled, `hourly p95 rising for ${r.p95_trend.hours} h to ${r.p95_trend.minRise} x (dips up to ${pct(r.p95_trend.tolerance)})`, `${r.p95_trend.severity}; at least ${r.p95_trend.minCalls} calls each hour`],
    loop_detected: [r.loop_detected.enabled, `calls the loop guard refused in the last ${r.loop_detected.windowHours} h > ${r.loop_detected.threshold}`, r.loop_detected.severity],
  };
}

function rulesTable(config: ResolvedAlertConfig): SafeHtml {
  const rows = ruleRows(config);
  const columns: Column<AlertRuleName>[] = [
    { header: 'rule', cell: (name) => name },
    { header: 'enabled', cell: (name) => (rows[name][0] ? 'on' : 'off') },
    { header: 'fires when', cell: (name) => rows[name][1] },
    { header: 'critical / severity', cell: (name) => rows[name][2] },
  ];
  return html`<details><summary>rules and thresholds</summary>${dataTable('alert-rules', columns, ALERT_RULES)}</details>`;
}

function alertsSection(s: DashboardSnapshot): SafeHtml {
  const { alerts } = s;
  const window = html`${shortTime(alerts.window.since)} .. ${shortTime(alerts.window.until)}`;
  const which = s.until === null ? 'the last complete hour and the current one' : `the hour before ${s.until} and the one it falls in`;
  const over = s.agent === null && s.run === null ? '' : ", over the filtered calls";
  const about = html`${window} (${which}, as <code>faultline alerts</code>${over})`;
  const summary =
    alerts.firing === 0
      ? html`<p class="sub ok" id="alerts-none">none firing, ${about}</p>`
      : html`<p class="sub"><span class="bad">${alerts.firing} firing</span>, ${about}</p>`;
  return html`<section><h2>Alerts</h2>${summary}${alerts.firing === 0 ? html`` : dataTable('alerts', ALERT_COLUMNS, alerts.alerts)}${rulesTable(alerts.config)}</section>`;
}

// ---------------------------------------------------------------------------------------------
// Tools, stage x category
// ---------------------------------------------------------------------------------------------

function topTypes(types: readonly TopFailureType[]): SafeHtml {
  if (types.length === 0) return html`<span class="empty">-</span>`;
  return html`${types.map((t, i) => html`${i === 0 ? '' : ', '}${breakable(t.failure_type)} <small>(${t.failure_category}, ${formatPercent(t.share)})</small>`)}`;
}

function toolsSection(stats: StatsReport, view: ViewParams): SafeHtml {
  if (stats.tools.length === 0) return html`<section><h2>Tools</h2>${empty('no calls recorded in this window')}</section>`;
  type Tool = StatsReport['tools'][number];
  const columns: Column<Tool>[] = [
    { header: 'tool', cell: (t) => html`<a href="${overviewHref(view, { tool: t.tool_name })}">${breakable(t.tool_name)}</a>` },
    { header: 'calls', kind: 'num', cell: (t) => t.total },
    { header: 'failed', kind: 'num', cell: (t) => formatPercent(t.failure_rate), cellClass: (t) => (t.failure_rate > 0 ? 'bad' : '') },
    { header: 'retried', kind: 'num', cell: (t) => formatPercent(t.retry_rate) },
    { header: 'p50', kind: 'num', cell: (t) => formatMs(t.p50_ms) },
    { header: 'p95', kind: 'num', cell: (t) => formatMs(t.p95_ms) },
    { header: 'breaker trips', kind: 'num', cell: (t) => t.breaker_trips },
    { header: 'param invalid', kind: 'num', cell: (t) => formatPercent(t.param_validation_failure_rate) },
    { header: 'top failure types', cell: (t) => topTypes(stats.top_failure_types.filter((x) => x.tool_name === t.tool_name)) },
  ];
  const calls = stats.tools.reduce((n, t) => n + t.total, 0);
  return html`<section><h2>Tools</h2><p class="sub">${stats.tools.length} tool${stats.tools.length === 1 ? '' : 's'}, ${calls} calls (every UTC hour the window touches, from the hourly rollups)</p>
${dataTable('tools', columns, stats.tools, { rowAttributes: (t) => ({ 'data-tool': t.tool_name }) })}</section>`;
}

function heatClass(count: number, max: number): string {
  return count === 0 ? '' : `heat${Math.min(4, 1 + Math.floor((count / max) * 3.999))}`;
}

function stageCategorySection(cells: readonly StageCategoryCell[]): SafeHtml {
  if (cells.length === 0) return html`<section><h2>Failures by stage and category</h2>${empty('no failures in this window')}</section>`;
  const categories = FAILURE_CATEGORIES.filter((c) => cells.some((cell) => cell.failure_category === c));
  const stages = FAILURE_STAGES.filter((s) => cells.some((cell) => cell.failure_stage === s));
  const count = (stage: FailureStage, category: FailureCategory) => cells.find((c) => c.failure_stage === stage && c.failure_category === category)?.count ?? 0;
  const max = Math.max(...cells.map((c) => c.count));
  const columns: Column<FailureStage>[] = [
    { header: 'stage \\ category', kind: 'head', cell: (stage) => stage },
    ...categories.map((c): Column<FailureStage> => ({ header: c, kind: 'num', cell: (stage) => count(stage, c), cellClass: (stage) => heatClass(count(stage, c), max) })),
    { header: 'total', kind: 'num', cell: (stage) => categories.reduce((n, c) => n + count(stage, c), 0) },
  ];
  const footer = ['total', ...categories.map((c) => stages.reduce((n, s) => n + count(s, c), 0)), cells.reduce((n, c) => n + c.count, 0)];
  return html`<section><h2>Failures by stage and category</h2>${dataTable('stage-category', columns, stages, { footer })}</section>`;
}

// ---------------------------------------------------------------------------------------------
// Hourly, failures, signatures
// ---------------------------------------------------------------------------------------------

function hourlySection(hourly: HourlyView, tools: readonly string[]): SafeHtml {
  if (tools.length === 0) return html`<section><h2>Calls and failures per hour</h2>${empty('no calls recorded in this window')}</section>`;
  const charts = tools.map((tool) => renderHourlyChart(tool, hourly.hours, hourly.points.filter((p) => p.tool_name === tool)));
  return html`<section><h2>Calls and failures per hour</h2><p class="sub legend"><i class="calls"></i>calls<i class="failures"></i>failed</p><div class="charts" id="hourly">${charts}</div></section>`;
}

function failuresSection(failures: FailuresView): SafeHtml {
  const title = html`<h2>Recent failures</h2>`;
  if (failures.records.length === 0) return html`<section>${title}${empty('no failed calls in this window')}</section>`;
  return html`<section>${title}<p class="sub">the newest ${failures.records.length} failed, timed-out or rejected calls since the window's start; a time opens the record, a trace id the trace</p>
${dataTable('failures', RECORD_COLUMNS, failures.records, { rowAttributes: recordRowAttributes })}</section>`;
}

const SIGNATURE_COLUMNS: readonly Column<SignatureView>[] = [
  { header: 'first seen', kind: 'time', cell: (s) => html`${shortTime(s.first_seen)}${s.first_seen_in_window ? html` <span class="badge">new</span>` : html``}` },
  { header: 'last seen', kind: 'time', cell: (s) => shortTime(s.last_seen) },
  { header: 'count', kind: 'num', cell: (s) => s.count },
  { header: 'tool', cell: (s) => s.tool_name },
  { header: 'stage/type', cell: (s) => `${s.failure_stage}/${s.failure_type}` },
  { header: 'code', kind: 'code', cell: (s) => s.error_code ?? '' },
  { header: 'normalized message', kind: 'msg', cell: (s) => s.normalized_message },
  { header: 'signature', kind: 'id', cell: (s) => s.signature },
];

function signaturesSection(view: SignaturesView): SafeHtml {
  const title = html`<h2>Failure signatures</h2>`;
  if (view.signatures.length === 0) return html`<section>${title}${empty('no failures in this window')}</section>`;
  return html`<section>${title}<p class="sub">tool + stage + type + code + normalized message, last seen in the window; ${view.first_seen_in_window} first seen in it (what the <code>new_failure_signature</code> alert fires on)</p>
${dataTable('signatures', SIGNATURE_COLUMNS, view.signatures)}</section>`;
}

/** What the view is filtered to, each filter with a link that removes it. */
function scopeLine(s: DashboardSnapshot): SafeHtml {
  const filters = (
    [
      ['tool', s.tool],
      ['agent', s.agent],
      ['run', s.run],
    ] as const
  ).flatMap(([name, value]) => (value === null ? [] : [html`${name} <b>${value}</b> (<a href="${overviewHref(s, { [name]: null })}">any ${name}</a>)`]));
  const scope = filters.length === 0 ? html`all calls` : html`${filters.map((f, i) => html`${i === 0 ? '' : ', '}${f}`)}`;
  const until = s.until === null ? '' : ` until ${s.until}`;
  return html`<p class="sub" id="window">${scope}; ${shortTime(s.window.since)} .. ${shortTime(s.window.until)} (${s.since}${until})</p>`;
}

/**
 * The view's settings as a form: a GET back to the overview, so the result is a link like any
 * other. Empty fields mean "no filter" (the command's defaults for the window).
 */
function filterForm(s: ViewParams): SafeHtml {
  const field = (name: string, label: string, value: string | null, placeholder: string) =>
    html`<label>${label} <input name="${name}" value="${value ?? ''}" placeholder="${placeholder}" size="14"></label>`;
  return html`<details class="filters"${s.until !== null || s.agent !== null || s.run !== null ? html` open` : html``}><summary>window and filters</summary><form method="get" action="/" id="filters">
${field('since', 'since', s.since, '24h or an ISO date')}${field('until', 'until', s.until, 'an ISO date (now)')}${field('tool', 'tool', s.tool, 'any')}${field('agent', 'agent', s.agent, 'any')}${field('run', 'FailBench run', s.run, 'any')}<button type="submit">show</button></form></details>`;
}

/** The overview's `<main>` content. */
export function renderOverview(s: DashboardSnapshot): SafeHtml {
  return html`<h1>faultline dashboard</h1>${scopeLine(s)}${filterForm(s)}
${alertsSection(s)}
${toolsSection(s.stats, s)}
${hourlySection(s.hourly, s.stats.tools.map((t) => t.tool_name))}
${stageCategorySection(s.stats.stage_category)}
${failuresSection(s.failures)}
${signaturesSection(s.signatures)}`;
}
