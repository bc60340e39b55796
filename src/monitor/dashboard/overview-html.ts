/**
 * The overview page: the alerts firing now, per-tool figures (as `faultline stats` prints them),
 * hourly calls and failures per tool, failures by stage x category, the newest failed calls and
 * the failure signatures seen in the window. Rendered from a {@link DashboardSnapshot}, the same
 * object `/api/dashboard` returns.
 */
import type { Alert, AlertRuleName, ResolvedAlertConfig } from '../alert-rules.js';
import { ALERT_RULES } from '../alert-rules.js';
import { formatMs, formatPercent } from '../format-figures.js';
import type { StageCategoryCell, StatsReport, TopFailureType } from '../stats-report.js';
import { FAILURE_CATEGORIES, FAILURE_STAGES, type FailureCategory, type FailureStage } from '../../taxonomy.js';
import type { DashboardSnapshot, FailuresView, HourlyView, SignaturesView } from './dashboard-data.js';
import { overviewHref } from './dashboard-links.js';
import { recordRow, RECORD_ROW_HEADERS, shortTime } from './record-html.js';
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

function alertsTable(alerts: readonly Alert[]): SafeHtml {
  const rows = alerts.map(
    (a) => html`<tr><td class="${a.severity}">${a.severity}</td><td>${a.rule}</td><td>${a.tool_name}</td><td class="num">${alertFigure(a.rule, a.value)}</td><td class="num">${a.rule === 'success_rate' ? '< ' : '> '}${alertFigure(a.rule, a.threshold)}</td><td class="msg">${a.message}</td></tr>`,
  );
  return html`<table id="alerts"><thead><tr><th>severity</th><th>rule</th><th>tool</th><th class="num">value</th><th class="num">threshold</th><th>message</th></tr></thead><tbody>${rows}</tbody></table>`;
}

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
  };
}

function rulesTable(config: ResolvedAlertConfig): SafeHtml {
  const rows = ruleRows(config);
  const body = ALERT_RULES.map((name) => {
    const [enabled, warning, critical] = rows[name];
    return html`<tr><td>${name}</td><td>${enabled ? 'on' : 'off'}</td><td>${warning}</td><td>${critical}</td></tr>`;
  });
  return html`<details><summary>rules and thresholds</summary><table id="alert-rules"><thead><tr><th>rule</th><th>enabled</th><th>fires when</th><th>critical / severity</th></tr></thead><tbody>${body}</tbody></table></details>`;
}

function alertsSection(s: DashboardSnapshot): SafeHtml {
  const { alerts } = s;
  const window = html`${shortTime(alerts.window.since)} .. ${shortTime(alerts.window.until)}`;
  const summary =
    alerts.firing === 0
      ? html`<p class="sub ok" id="alerts-none">none firing, ${window} (the last complete hour and the current one, as <code>faultline alerts</code>)</p>`
      : html`<p class="sub"><span class="bad">${alerts.firing} firing</span>, ${window} (the last complete hour and the current one, as <code>faultline alerts</code>)</p>`;
  return html`<section><h2>Alerts</h2>${summary}${alerts.firing === 0 ? html`` : alertsTable(alerts.alerts)}${rulesTable(alerts.config)}</section>`;
}

// ---------------------------------------------------------------------------------------------
// Tools, stage x category
// ---------------------------------------------------------------------------------------------

function topTypes(types: readonly TopFailureType[]): SafeHtml {
  if (types.length === 0) return html`<span class="empty">-</span>`;
  return html`${types.map((t, i) => html`${i === 0 ? '' : ', '}${t.failure_type} <small>(${t.failure_category}, ${formatPercent(t.share)})</small>`)}`;
}

function toolsSection(stats: StatsReport, since: string): SafeHtml {
  if (stats.tools.length === 0) return html`<section><h2>Tools</h2>${empty('no calls recorded in this window')}</section>`;
  const rows = stats.tools.map((t) => {
    const types = stats.top_failure_types.filter((x) => x.tool_name === t.tool_name);
    return html`<tr data-tool="${t.tool_name}"><td><a href="${overviewHref(since, t.tool_name)}">${t.tool_name}</a></td><td class="num">${t.total}</td><td class="num${t.failure_rate > 0 ? ' bad' : ''}">${formatPercent(t.failure_rate)}</td><td class="num">${formatPercent(t.retry_rate)}</td><td class="num">${formatMs(t.p50_ms)}</td><td class="num">${formatMs(t.p95_ms)}</td><td class="num">${t.breaker_trips}</td><td class="num">${formatPercent(t.param_validation_failure_rate)}</td><td>${topTypes(types)}</td></tr>`;
  });
  const calls = stats.tools.reduce((n, t) => n + t.total, 0);
  return html`<section><h2>Tools</h2><p class="sub">${stats.tools.length} tool${stats.tools.length === 1 ? '' : 's'}, ${calls} calls (every UTC hour the window touches, from the hourly rollups)</p>
<table id="tools"><thead><tr><th>tool</th><th class="num">calls</th><th class="num">failed</th><th class="num">retried</th><th class="num">p50</th><th class="num">p95</th><th class="num">breaker trips</th><th class="num">param invalid</th><th>top failure types</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

function heatClass(count: number, max: number): string {
  if (count === 0) return 'num';
  return `num heat${Math.min(4, 1 + Math.floor((count / max) * 3.999))}`;
}

function stageCategorySection(cells: readonly StageCategoryCell[]): SafeHtml {
  if (cells.length === 0) return html`<section><h2>Failures by stage and category</h2>${empty('no failures in this window')}</section>`;
  const categories = FAILURE_CATEGORIES.filter((c) => cells.some((cell) => cell.failure_category === c));
  const stages = FAILURE_STAGES.filter((s) => cells.some((cell) => cell.failure_stage === s));
  const count = (stage: FailureStage, category: FailureCategory) => cells.find((c) => c.failure_stage === stage && c.failure_category === category)?.count ?? 0;
  const max = Math.max(...cells.map((c) => c.count));
  const rows = stages.map(
    (stage) =>
      html`<tr><th>${stage}</th>${categories.map((c) => html`<td class="${heatClass(count(stage, c), max)}">${count(stage, c)}</td>`)}<td class="num">${categories.reduce((n, c) => n + count(stage, c), 0)}</td></tr>`,
  );
  const totals = html`<tr><th>total</th>${categories.map((c) => html`<td class="num">${stages.reduce((n, s) => n + count(s, c), 0)}</td>`)}<td class="num">${cells.reduce((n, c) => n + c.count, 0)}</td></tr>`;
  return html`<section><h2>Failures by stage and category</h2><table id="stage-category"><thead><tr><th>stage \\ category</th>${categories.map((c) => html`<th class="num">${c}</th>`)}<th class="num">total</th></tr></thead><tbody>${rows}${totals}</tbody></table></section>`;
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
<div class="scroll"><table id="failures"><thead><tr>${RECORD_ROW_HEADERS}</tr></thead><tbody>${failures.records.map((r) => recordRow(r))}</tbody></table></div></section>`;
}

function signaturesSection(view: SignaturesView): SafeHtml {
  const title = html`<h2>Failure signatures</h2>`;
  if (view.signatures.length === 0) return html`<section>${title}${empty('no failures in this window')}</section>`;
  const rows = view.signatures.map(
    (s) =>
      html`<tr><td class="time">${shortTime(s.first_seen)}${s.first_seen_in_window ? html` <span class="badge">new</span>` : html``}</td><td class="time">${shortTime(s.last_seen)}</td><td class="num">${s.count}</td><td>${s.tool_name}</td><td>${s.failure_stage}/${s.failure_type}</td><td>${s.error_code ?? ''}</td><td class="msg">${s.normalized_message}</td><td class="id">${s.signature}</td></tr>`,
  );
  return html`<section>${title}<p class="sub">tool + stage + type + code + normalized message, last seen in the window; ${view.first_seen_in_window} first seen in it (what the <code>new_failure_signature</code> alert fires on)</p>
<div class="scroll"><table id="signatures"><thead><tr><th>first seen</th><th>last seen</th><th class="num">count</th><th>tool</th><th>stage/type</th><th>code</th><th>normalized message</th><th>signature</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

/** The overview's `<main>` content. */
export function renderOverview(s: DashboardSnapshot): SafeHtml {
  const scope =
    s.tool === null
      ? html`all tools`
      : html`tool <b>${s.tool}</b> (<a href="${overviewHref(s.since, null)}">all tools</a>)`;
  return html`<h1>faultline dashboard</h1><p class="sub" id="window">${scope}, ${shortTime(s.window.since)} .. ${shortTime(s.window.until)} (${s.since})</p>
${alertsSection(s)}
${toolsSection(s.stats, s.since)}
${hourlySection(s.hourly, s.stats.tools.map((t) => t.tool_name))}
${stageCategorySection(s.stats.stage_category)}
${failuresSection(s.failures)}
${signaturesSection(s.signatures)}`;
}
