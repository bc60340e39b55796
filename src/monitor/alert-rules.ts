/**
 * Alert rules over a Store (seed 001, section 4.4): success rate per tool and hour, P95 latency
 * against the tool's timeout, a jump in one failure type's share, retry rate, breaker trips,
 * parameter-validation failure rate, and failure signatures never seen before.
 *
 * Every rule reads the hourly rollups (or the signature table), never raw records, so evaluating
 * stays cheap at tens of millions of records.
 *
 * The seed aggregates success rate per tool and hour, but the failure type distribution and
 * breaker trips per day: those two rules look at the last `windowHours` (default 24) up to the
 * window's end, or at the whole window when it is longer.
 */
import { extname, resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { ConfigError } from '../core/errors.js';
import { readInputTextSync } from '../io/read-input-file.js';
import { parseJsonText, parseYamlText } from '../io/yaml-text.js';
import { HOUR_MS, hourStartMs } from '../store/rollup.js';
import type { FailureBreakdownRow, StatsFilter, StatsReader, TimeWindow, ToolStats } from '../core/store-types.js';
import { p95Trends, type P95TrendConfig } from './p95-trend.js';

export const ALERT_RULES = [
  'success_rate',
  'p95_latency',
  'failure_type_jump',
  'retry_rate',
  'breaker_trip',
  'param_validation_rate',
  'new_failure_signature',
  'loop_detected',
  'p95_trend',
] as const;

export type AlertRuleName = (typeof ALERT_RULES)[number];

/**
 * How each rule compares its value with its threshold to fire, for reports that print both:
 * `success_rate` fires below it, `failure_type_jump` at or above it, the others above it.
 */
export const ALERT_COMPARATORS: Readonly<Record<AlertRuleName, '<' | '>' | '>='>> = {
  success_rate: '<',
  p95_latency: '>',
  failure_type_jump: '>=',
  retry_rate: '>',
  breaker_trip: '>',
  param_validation_rate: '>',
  new_failure_signature: '>',
  loop_detected: '>',
  p95_trend: '>=',
};
export type AlertSeverity = 'warning' | 'critical';

/**
 * One firing alert. `value` and `threshold` are in the rule's unit: a fraction (0..1) for the rate
 * and share rules, milliseconds for `p95_latency`, a count for `breaker_trip` and
 * `new_failure_signature`.
 */
export interface Alert {
  rule: AlertRuleName;
  tool_name: string;
  severity: AlertSeverity;
  value: number;
  threshold: number;
  message: string;
  /** Start of the hour the alert is about (UTC ISO-8601), for the per-hour `success_rate` rule; otherwise null. */
  hour: string | null;
}

interface RuleSwitch {
  enabled?: boolean;
}

/** A rate rule: `warning` past `threshold`, `critical` past `critical`, only with `minCalls` calls. */
export interface RateRuleConfig extends RuleSwitch {
  threshold?: number;
  critical?: number;
  minCalls?: number;
}

export interface FailureTypeJumpConfig extends RuleSwitch {
  /** How many times its baseline share a type's share must reach. Default 2. */
  factor?: number;
  /** The smallest share of the tool's failures that can fire. Default 0.2. */
  minShare?: number;
  /** The fewest failures of the tool in the window for the rule to look at it. Default 5. */
  minFailures?: number;
  /**
   * The shares compared: the last this many hours up to the window's end (whole hours, plus the
   * current one), or the whole window when it is longer. Default 24, the seed's per-day view.
   */
  windowHours?: number;
  /** The baseline: this many hours before those. Default 168 (the 7 days before). */
  baselineHours?: number;
  severity?: AlertSeverity;
}

export interface BreakerTripConfig extends RuleSwitch {
  /** Trips tolerated before alerting. Default 0: any trip alerts. */
  threshold?: number;
  /**
   * Trips are counted over the last this many hours up to the window's end (whole hours, plus the
   * current one), or over the whole window when it is longer. Default 24, the seed's per-day count.
   */
  windowHours?: number;
  severity?: AlertSeverity;
}

export interface NewSignatureConfig extends RuleSwitch {
  severity?: AlertSeverity;
}

/** Calls the loop guard refused (`logic` failures: loop_detected, duplicate_write), per tool. */
export interface LoopDetectedConfig extends RuleSwitch {
  /** Refusals tolerated before alerting. Default 0: any refusal alerts. */
  threshold?: number;
  /** Counted over the last this many hours up to the window's end, or the whole window when longer. Default 24. */
  windowHours?: number;
  severity?: AlertSeverity;
}

/**
 * Alert settings, as written in an alerts file (YAML or JSON) or passed in code. Every field is
 * optional; {@link DEFAULT_ALERT_CONFIG} fills the rest.
 * @example
 * // alerts.yaml
 * // timeouts: { search_flights: 3000 }
 * // rules:
 * //   success_rate: { threshold: 0.99 }
 * //   new_failure_signature: { enabled: false }
 */
export interface AlertConfig {
  /** Calls a tool (or, for success_rate, a tool-hour) needs before rate and latency rules judge it. Default 20. */
  minCalls?: number;
  /** Timeout assumed for tools missing from `timeouts`, in ms. Default 10000, the runtime's default. */
  defaultTimeoutMs?: number;
  /** Per-tool timeouts in ms, as configured in the runtime. */
  timeouts?: Record<string, number>;
  rules?: {
    /** Fires when the success rate is below `threshold` (default 0.95); critical below `critical` (default 0.8). */
    success_rate?: RateRuleConfig;
    /** Fires when P95 exceeds `threshold` x the tool's timeout (default 0.8); critical above `critical` x (default 1). */
    p95_latency?: RateRuleConfig;
    failure_type_jump?: FailureTypeJumpConfig;
    /** Fires when the share of retried calls exceeds `threshold` (default 0.2); critical above `critical` (default 0.5). */
    retry_rate?: RateRuleConfig;
    breaker_trip?: BreakerTripConfig;
    /** Fires when the parameter-validation failure rate exceeds `threshold` (default 0.1); critical above `critical` (default 0.3). */
    param_validation_rate?: RateRuleConfig;
    new_failure_signature?: NewSignatureConfig;
    loop_detected?: LoopDetectedConfig;
    /** Fires when a tool's hourly P95 rose steadily for `hours` (6) hours to `minRise` (1.5) x, below the latency threshold or not. */
    p95_trend?: P95TrendConfig;
  };
}

type Full<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

/** An {@link AlertConfig} with every default applied. */
export interface ResolvedAlertConfig {
  minCalls: number;
  defaultTimeoutMs: number;
  timeouts: Record<string, number>;
  rules: {
    success_rate: Full<RateRuleConfig>;
    p95_latency: Full<RateRuleConfig>;
    failure_type_jump: Full<FailureTypeJumpConfig>;
    retry_rate: Full<RateRuleConfig>;
    breaker_trip: Full<BreakerTripConfig>;
    param_validation_rate: Full<RateRuleConfig>;
    new_failure_signature: Full<NewSignatureConfig>;
    loop_detected: Full<LoopDetectedConfig>;
    p95_trend: Full<P95TrendConfig>;
  };
}

/** Seed 001's thresholds; `minCalls` is faultline's guard against paging on a handful of calls. */
export const DEFAULT_ALERT_CONFIG: ResolvedAlertConfig = {
  minCalls: 20,
  defaultTimeoutMs: 10_000,
  timeouts: {},
  rules: {
    success_rate: { enabled: true, threshold: 0.95, critical: 0.8, minCalls: 20 },
    p95_latency: { enabled: true, threshold: 0.8, critical: 1, minCalls: 20 },
    failure_type_jump: { enabled: true, factor: 2, minShare: 0.2, minFailures: 5, windowHours: 24, baselineHours: 7 * 24, severity: 'warning' },
    retry_rate: { enabled: true, threshold: 0.2, critical: 0.5, minCalls: 20 },
    breaker_trip: { enabled: true, threshold: 0, windowHours: 24, severity: 'warning' },
    param_validation_rate: { enabled: true, threshold: 0.1, critical: 0.3, minCalls: 20 },
    new_failure_signature: { enabled: true, severity: 'warning' },
    loop_detected: { enabled: true, threshold: 0, windowHours: 24, severity: 'warning' },
    p95_trend: { enabled: true, hours: 6, minRise: 1.5, tolerance: 0.05, minCalls: 20, severity: 'warning' },
  },
};

// ---------------------------------------------------------------------------------------------
// Config: schema, validation, loading
// ---------------------------------------------------------------------------------------------

const fraction = { type: 'number', minimum: 0, maximum: 1 };
const positiveInteger = { type: 'integer', minimum: 1 };
const hours = { type: 'integer', minimum: 1, maximum: 24 * 90 };
const severity = { enum: ['warning', 'critical'] };
const enabled = { type: 'boolean' };
const rule = (properties: Record<string, object>) => ({ type: 'object', additionalProperties: false, properties: { enabled, ...properties } });
const fractionRule = rule({ threshold: fraction, critical: fraction, minCalls: positiveInteger });

const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    minCalls: positiveInteger,
    defaultTimeoutMs: { type: 'number', exclusiveMinimum: 0 },
    timeouts: {
      type: 'object',
      propertyNames: { minLength: 1 },
      additionalProperties: { type: 'number', exclusiveMinimum: 0 },
    },
    rules: {
      type: 'object',
      additionalProperties: false,
      properties: {
        success_rate: fractionRule,
        p95_latency: rule({
          threshold: { type: 'number', exclusiveMinimum: 0 },
          critical: { type: 'number', exclusiveMinimum: 0 },
          minCalls: positiveInteger,
        }),
        failure_type_jump: rule({
          factor: { type: 'number', minimum: 1 },
          minShare: fraction,
          minFailures: positiveInteger,
          windowHours: hours,
          baselineHours: hours,
          severity,
        }),
        retry_rate: fractionRule,
        breaker_trip: rule({ threshold: { type: 'integer', minimum: 0 }, windowHours: hours, severity }),
        param_validation_rate: fractionRule,
        new_failure_signature: rule({ severity }),
        loop_detected: rule({ threshold: { type: 'integer', minimum: 0 }, windowHours: hours, severity }),
        p95_trend: rule({ hours: { type: 'integer', minimum: 2, maximum: 24 * 7 }, minRise: { type: 'number', exclusiveMinimum: 1 }, tolerance: fraction, minCalls: positiveInteger, severity }),
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: false, strict: true });
// Compiled on first use, so that importing the CLI does not pay for it.
let compiledConfig: ValidateFunction | undefined;
const configValidator = (): ValidateFunction => (compiledConfig ??= ajv.compile(CONFIG_SCHEMA));

/** `/rules/success_rate/threshold` as `rules.success_rate.threshold`. */
function fieldOf(error: ErrorObject): string {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  return segments.join('.');
}

/** One line naming the field at fault, from Ajv's first error. */
function describeConfigError(error: ErrorObject): { field: string; text: string } {
  const field = fieldOf(error);
  const at = field === '' ? 'the config' : field;
  const params = error.params as Record<string, unknown>;
  // Errors about a key rather than a value (propertyNames) carry the key here.
  if (error.propertyName !== undefined) return { field, text: `${at} has an invalid key ${JSON.stringify(error.propertyName)}` };
  switch (error.keyword) {
    case 'type': {
      const type = String(params['type']);
      return { field, text: `${at} must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}` };
    }
    case 'additionalProperties': {
      const key = String(params['additionalProperty']);
      const full = field === '' ? key : `${field}.${key}`;
      return { field: full, text: `unknown key ${full}` };
    }
    case 'enum':
      return { field, text: `${at} must be one of ${(params['allowedValues'] as unknown[]).map(String).join(', ')}` };
    default:
      return { field, text: `${at} ${error.message ?? 'is invalid'}` };
  }
}

/**
 * Checks an alert config and applies the defaults.
 * @param source Names the config in error messages (a file name, or "alerts config").
 * @throws ConfigError with one line naming the offending field.
 */
export function resolveAlertConfig(input: unknown, source = 'alerts config'): ResolvedAlertConfig {
  // An empty YAML file parses to null: it means "all defaults", not a mistake.
  const value = input ?? {};
  const validateConfig = configValidator();
  if (!validateConfig(value)) {
    const first = validateConfig.errors?.[0];
    const { field, text } = first === undefined ? { field: '', text: 'is invalid' } : describeConfigError(first);
    throw new ConfigError(`${source}: ${text}`, field);
  }
  const config = value as AlertConfig;
  const minCalls = config.minCalls ?? DEFAULT_ALERT_CONFIG.minCalls;
  const d = DEFAULT_ALERT_CONFIG.rules;
  const r = config.rules ?? {};
  const rate = (name: 'success_rate' | 'p95_latency' | 'retry_rate' | 'param_validation_rate') => {
    const rule = { ...d[name], minCalls, ...r[name] };
    // A threshold moved past the default critical level takes that level along, unless the
    // config sets it too; only two explicit, contradictory levels are an error (below).
    if (r[name]?.critical === undefined) {
      rule.critical = name === 'success_rate' ? Math.min(rule.critical, rule.threshold) : Math.max(rule.critical, rule.threshold);
    }
    return rule;
  };
  const resolved: ResolvedAlertConfig = {
    minCalls,
    defaultTimeoutMs: config.defaultTimeoutMs ?? DEFAULT_ALERT_CONFIG.defaultTimeoutMs,
    timeouts: { ...config.timeouts },
    rules: {
      success_rate: rate('success_rate'),
      p95_latency: rate('p95_latency'),
      failure_type_jump: { ...d.failure_type_jump, ...r.failure_type_jump },
      retry_rate: rate('retry_rate'),
      breaker_trip: { ...d.breaker_trip, ...r.breaker_trip },
      param_validation_rate: rate('param_validation_rate'),
      new_failure_signature: { ...d.new_failure_signature, ...r.new_failure_signature },
      loop_detected: { ...d.loop_detected, ...r.loop_detected },
      p95_trend: { ...d.p95_trend, minCalls, ...r.p95_trend },
    },
  };
  // The critical level must be at least as bad as the warning level, or a rule could go
  // critical without ever warning. Success rate alerts below its thresholds, the others above.
  const { rules } = resolved;
  if (rules.success_rate.critical > rules.success_rate.threshold) {
    throw new ConfigError(`${source}: rules.success_rate.critical must be <= rules.success_rate.threshold`, 'rules.success_rate.critical');
  }
  for (const name of ['p95_latency', 'retry_rate', 'param_validation_rate'] as const) {
    if (rules[name].critical < rules[name].threshold) {
      throw new ConfigError(`${source}: rules.${name}.critical must be >= rules.${name}.threshold`, `rules.${name}.critical`);
    }
  }
  return resolved;
}

/**
 * Reads an alerts file: JSON when it ends in `.json`, YAML otherwise (YAML also reads JSON).
 * Messages name the path as given; a relative one is read from `cwd` (default the process's).
 * @throws ConfigError with one line when the file cannot be read, does not parse, or is invalid.
 */
export function loadAlertConfig(path: string, options: { cwd?: string } = {}): ResolvedAlertConfig {
  const read = readInputTextSync(resolve(options.cwd ?? process.cwd(), path));
  if (!read.ok) throw new ConfigError(`cannot read alerts config ${path}: ${read.reason}`, 'config', { cause: read.cause });
  const parsed = extname(path).toLowerCase() === '.json' ? parseJsonText(read.value) : parseYamlText(read.value);
  if (!parsed.ok) throw new ConfigError(`cannot parse alerts config ${path}: ${firstLine(parsed.problem)}`, 'config', { cause: parsed.cause });
  return resolveAlertConfig(parsed.value, path);
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  // YAML messages end their first line with a colon that introduces a code frame.
  return line.replace(/:\s*$/, '');
}

// ---------------------------------------------------------------------------------------------
// Evaluation
// ---------------------------------------------------------------------------------------------

/** The default alert window: the last complete UTC hour plus the current one, up to `nowMs`. */
export function defaultAlertWindow(nowMs: number): TimeWindow {
  return { since: hourStartMs(nowMs) - HOUR_MS, until: nowMs };
}

export interface EvaluateAlertsOptions {
  window: TimeWindow;
  /** Settings; defaults apply to whatever is missing. */
  config?: AlertConfig | ResolvedAlertConfig;
  /** Only evaluate this tool. */
  toolName?: string;
}

const SEVERITY_ORDER: Record<AlertSeverity, number> = { critical: 0, warning: 1 };

/**
 * Evaluates every enabled rule over `window` and returns the firing alerts, critical first, then
 * in rule order, by tool and by hour.
 * @example
 * const alerts = await evaluateAlerts(store, { window: defaultAlertWindow(Date.now()), config: { timeouts: { search: 3000 } } });
 */
export async function evaluateAlerts(store: StatsReader, options: EvaluateAlertsOptions): Promise<Alert[]> {
  const config = resolveAlertConfig(options.config ?? {});
  const { rules } = config;
  const filter: StatsFilter = { ...options.window, ...(options.toolName === undefined ? {} : { toolName: options.toolName }) };
  const needStats = rules.p95_latency.enabled || rules.retry_rate.enabled || rules.param_validation_rate.enabled;

  const alerts: Alert[] = [];
  if (rules.success_rate.enabled) alerts.push(...(await successRateAlerts(store, filter, rules.success_rate)));
  if (needStats) {
    const stats = await store.toolStats(filter);
    if (rules.p95_latency.enabled) alerts.push(...p95Alerts(stats, config));
    if (rules.retry_rate.enabled) alerts.push(...retryRateAlerts(stats, rules.retry_rate));
    if (rules.param_validation_rate.enabled) alerts.push(...paramValidationAlerts(stats, rules.param_validation_rate));
  }
  if (rules.breaker_trip.enabled) {
    const days = dailyFilter(filter, rules.breaker_trip.windowHours);
    alerts.push(...breakerAlerts(await store.toolStats(days), days, rules.breaker_trip));
  }
  if (rules.failure_type_jump.enabled) {
    alerts.push(...(await failureTypeJumpAlerts(store, dailyFilter(filter, rules.failure_type_jump.windowHours), rules.failure_type_jump)));
  }
  if (rules.new_failure_signature.enabled) alerts.push(...(await newSignatureAlerts(store, filter, rules.new_failure_signature)));
  if (rules.p95_trend.enabled) alerts.push(...(await p95TrendAlerts(store, filter, config)));
  if (rules.loop_detected.enabled) {
    const days = dailyFilter(filter, rules.loop_detected.windowHours);
    alerts.push(...loopAlerts(await store.failureBreakdown(days), days, rules.loop_detected));
  }

  const ruleOrder = (name: AlertRuleName) => ALERT_RULES.indexOf(name);
  return alerts.sort(
    (a, b) =>
      SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] ||
      ruleOrder(a.rule) - ruleOrder(b.rule) ||
      (a.tool_name < b.tool_name ? -1 : a.tool_name > b.tool_name ? 1 : 0) ||
      (a.hour ?? '').localeCompare(b.hour ?? '') ||
      a.message.localeCompare(b.message),
  );
}

/**
 * The window of a per-day rule: the last `hours` whole hours before the hour `filter` ends in, plus
 * that hour (as {@link defaultAlertWindow} does for one hour), or `filter` itself when it starts
 * earlier. It starts on the hour, as the rollups it is read from do.
 */
function dailyFilter(filter: StatsFilter, hours: number): StatsFilter {
  return { ...filter, since: hourStartMs(Math.min(filter.since, hourStartMs(filter.until) - hours * HOUR_MS)) };
}

const percent = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;
const iso = (ms: number): string => new Date(ms).toISOString();
/** `24 h`, `7 days`. */
const span = (hours: number): string => (hours % 24 === 0 && hours > 24 ? `${hours / 24} days` : `${hours} h`);
const seconds = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

async function successRateAlerts(store: StatsReader, filter: StatsFilter, rule: Full<RateRuleConfig>): Promise<Alert[]> {
  const alerts: Alert[] = [];
  for (const point of await store.hourly(filter)) {
    if (point.total < rule.minCalls) continue;
    const rate = (point.total - point.failures) / point.total;
    if (rate >= rule.threshold) continue;
    const critical = rate < rule.critical;
    alerts.push({
      rule: 'success_rate',
      tool_name: point.tool_name,
      severity: critical ? 'critical' : 'warning',
      value: rate,
      threshold: critical ? rule.critical : rule.threshold,
      message: `success rate ${percent(rate)} (${point.total - point.failures} of ${point.total} calls) in the hour from ${point.hour} is below ${percent(critical ? rule.critical : rule.threshold)}`,
      hour: point.hour,
    });
  }
  return alerts;
}

/** The tool's configured timeout, or the default one. */
function timeoutOf(config: ResolvedAlertConfig, tool: string): number {
  return Object.hasOwn(config.timeouts, tool) ? config.timeouts[tool]! : config.defaultTimeoutMs;
}

function p95Alerts(stats: readonly ToolStats[], config: ResolvedAlertConfig): Alert[] {
  const rule = config.rules.p95_latency;
  const alerts: Alert[] = [];
  for (const s of stats) {
    if (s.total < rule.minCalls || s.p95_ms === null) continue;
    const timeout = timeoutOf(config, s.tool_name);
    const warnAt = rule.threshold * timeout;
    if (s.p95_ms <= warnAt) continue;
    const critical = s.p95_ms > rule.critical * timeout;
    const threshold = critical ? rule.critical * timeout : warnAt;
    alerts.push({
      rule: 'p95_latency',
      tool_name: s.tool_name,
      severity: critical ? 'critical' : 'warning',
      value: s.p95_ms,
      threshold,
      message: `p95 latency ${seconds(s.p95_ms)} over ${s.total} calls is above ${percent(critical ? rule.critical : rule.threshold)} of the ${seconds(timeout)} timeout (${seconds(threshold)})`,
      hour: null,
    });
  }
  return alerts;
}

/** Rules of the form "rate above threshold, critical above critical", per tool over the window. */
function rateAboveAlerts(
  stats: readonly ToolStats[],
  rule: Full<RateRuleConfig>,
  name: 'retry_rate' | 'param_validation_rate',
  measure: (s: ToolStats) => { rate: number; count: number },
  what: string,
): Alert[] {
  const alerts: Alert[] = [];
  for (const s of stats) {
    if (s.total < rule.minCalls) continue;
    const { rate, count } = measure(s);
    if (rate <= rule.threshold) continue;
    const critical = rate > rule.critical;
    const threshold = critical ? rule.critical : rule.threshold;
    alerts.push({
      rule: name,
      tool_name: s.tool_name,
      severity: critical ? 'critical' : 'warning',
      value: rate,
      threshold,
      message: `${percent(rate)} of calls ${what} (${count} of ${s.total}), above ${percent(threshold)}`,
      hour: null,
    });
  }
  return alerts;
}

function retryRateAlerts(stats: readonly ToolStats[], rule: Full<RateRuleConfig>): Alert[] {
  return rateAboveAlerts(stats, rule, 'retry_rate', (s) => ({ rate: s.retry_rate, count: s.retried_calls }), 'were retried');
}

function paramValidationAlerts(stats: readonly ToolStats[], rule: Full<RateRuleConfig>): Alert[] {
  return rateAboveAlerts(
    stats,
    rule,
    'param_validation_rate',
    (s) => ({ rate: s.param_validation_failure_rate, count: s.param_validation_failures }),
    'failed parameter validation',
  );
}

function breakerAlerts(stats: readonly ToolStats[], window: StatsFilter, rule: Full<BreakerTripConfig>): Alert[] {
  return stats
    .filter((s) => s.breaker_trips > rule.threshold)
    .map((s) => ({
      rule: 'breaker_trip' as const,
      tool_name: s.tool_name,
      severity: rule.severity,
      value: s.breaker_trips,
      threshold: rule.threshold,
      message: `circuit breaker tripped ${s.breaker_trips} time${s.breaker_trips === 1 ? '' : 's'} since ${iso(window.since)}`,
      hour: null,
    }));
}

/** Failures per tool and per (tool, type), summed over stages and categories. */
function failuresByType(rows: readonly FailureBreakdownRow[]): Map<string, { total: number; types: Map<string, number> }> {
  const byTool = new Map<string, { total: number; types: Map<string, number> }>();
  for (const row of rows) {
    let tool = byTool.get(row.tool_name);
    if (tool === undefined) byTool.set(row.tool_name, (tool = { total: 0, types: new Map() }));
    tool.total += row.count;
    tool.types.set(row.failure_type, (tool.types.get(row.failure_type) ?? 0) + row.count);
  }
  return byTool;
}

async function failureTypeJumpAlerts(store: StatsReader, filter: StatsFilter, rule: Full<FailureTypeJumpConfig>): Promise<Alert[]> {
  // Rollups are hour-granular, so the baseline ends where the window's first hour starts; it
  // would otherwise share that hour with the window and dilute the jump. (dailyFilter starts
  // the window on the hour.)
  const baselineUntil = filter.since;
  const baselineFilter: StatsFilter = { ...filter, since: baselineUntil - rule.baselineHours * HOUR_MS, until: baselineUntil };
  const current = failuresByType(await store.failureBreakdown(filter));
  const baseline = failuresByType(await store.failureBreakdown(baselineFilter));
  const alerts: Alert[] = [];
  for (const [tool, { total, types }] of current) {
    if (total < rule.minFailures) continue;
    const base = baseline.get(tool);
    for (const [type, count] of types) {
      const share = count / total;
      const baseCount = base?.types.get(type) ?? 0;
      const baseShare = base === undefined || base.total === 0 ? 0 : baseCount / base.total;
      const threshold = Math.max(rule.minShare, rule.factor * baseShare);
      if (share < threshold) continue;
      const before =
        base === undefined || base.total === 0
          ? `no failures in the ${span(rule.baselineHours)} before`
          : `${percent(baseShare)} (${baseCount} of ${base.total}) in the ${span(rule.baselineHours)} before`;
      alerts.push({
        rule: 'failure_type_jump',
        tool_name: tool,
        severity: rule.severity,
        value: share,
        threshold,
        message: `${type} is ${percent(share)} of failures (${count} of ${total}) since ${iso(filter.since)}, up from ${before}`,
        hour: null,
      });
    }
  }
  return alerts;
}

async function newSignatureAlerts(store: StatsReader, filter: StatsFilter, rule: Full<NewSignatureConfig>): Promise<Alert[]> {
  const alerts: Alert[] = [];
  for (const sig of await store.signatures(filter)) {
    const firstSeen = Date.parse(sig.first_seen);
    if (firstSeen < filter.since || firstSeen >= filter.until) continue;
    const code = sig.error_code === null ? '' : ` ${sig.error_code}`;
    alerts.push({
      rule: 'new_failure_signature',
      tool_name: sig.tool_name,
      severity: rule.severity,
      value: sig.count,
      threshold: 0,
      message: `new failure ${sig.failure_stage}/${sig.failure_type}${code} ${JSON.stringify(sig.normalized_message)} first seen ${sig.first_seen}, ${sig.count} time${sig.count === 1 ? '' : 's'} (signature ${sig.signature})`,
      hour: null,
    });
  }
  return alerts;
}

function loopAlerts(rows: readonly FailureBreakdownRow[], window: StatsFilter, rule: Full<LoopDetectedConfig>): Alert[] {
  const byTool = new Map<string, { loops: number; duplicates: number }>();
  for (const row of rows) {
    if (row.failure_category !== 'logic') continue;
    const counts = byTool.get(row.tool_name) ?? { loops: 0, duplicates: 0 };
    if (row.failure_type === 'duplicate_write') counts.duplicates += row.count;
    else counts.loops += row.count;
    byTool.set(row.tool_name, counts);
  }
  const alerts: Alert[] = [];
  for (const [tool, { loops, duplicates }] of byTool) {
    const total = loops + duplicates;
    if (total <= rule.threshold) continue;
    const parts = [loops > 0 ? `${loops} identical failing call${loops === 1 ? '' : 's'}` : '', duplicates > 0 ? `${duplicates} repeated write${duplicates === 1 ? '' : 's'}` : ''].filter((p) => p !== '');
    alerts.push({
      rule: 'loop_detected',
      tool_name: tool,
      severity: rule.severity,
      value: total,
      threshold: rule.threshold,
      message: `the loop guard refused ${parts.join(' and ')} since ${iso(window.since)}`,
      hour: null,
    });
  }
  return alerts;
}

async function p95TrendAlerts(store: StatsReader, filter: StatsFilter, config: ResolvedAlertConfig): Promise<Alert[]> {
  const rule = config.rules.p95_trend;
  const trends = await p95Trends(store, filter, rule);
  return trends.map((t) => {
    const timeout = timeoutOf(config, t.tool_name);
    return {
      rule: 'p95_trend' as const,
      tool_name: t.tool_name,
      severity: rule.severity,
      value: t.rise,
      threshold: rule.minRise,
      message:
        `p95 latency rose steadily from ${seconds(t.first_ms)} to ${seconds(t.last_ms)} (${t.rise.toFixed(2)}x) over the last ${t.hours} h, ` +
        `now ${percent(t.last_ms / timeout)} of the ${seconds(timeout)} timeout`,
      hour: t.hour,
    };
  });
}
