import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCapture } from '../cli/run-cli.test-helpers.js';
import { ConfigError } from '../core/errors.js';
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { bucketOf, bucketValueMs } from '../store/duration-sketch.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import type { Store } from '../core/store-types.js';
import {
  DEFAULT_ALERT_CONFIG,
  defaultAlertWindow,
  evaluateAlerts,
  loadAlertConfig,
  resolveAlertConfig,
  type Alert,
  type AlertConfig,
} from './alert-rules.js';
import { MONITOR_ALERT_CONFIG, MONITOR_EXPECTED_ALERTS, MONITOR_NOW, monitorDataset } from './monitor-dataset.test-helpers.js';

const HOUR = 3_600_000;
const WINDOW = defaultAlertWindow(MONITOR_NOW);
const P95_TIMEOUTS = bucketValueMs(bucketOf(7900));

let store: Store;
beforeAll(async () => {
  store = createMemoryStore();
  await store.insert(monitorDataset());
});

const brief = (alerts: readonly Alert[]) => alerts.map((a) => [a.severity, a.rule, a.tool_name]);

describe('defaultAlertWindow', () => {
  it('is the last complete hour plus the current one', () => {
    expect(defaultAlertWindow(MONITOR_NOW)).toStrictEqual({ since: Date.UTC(2026, 2, 29, 13), until: MONITOR_NOW });
    const onTheHour = Date.UTC(2026, 2, 29, 14);
    expect(defaultAlertWindow(onTheHour)).toStrictEqual({ since: Date.UTC(2026, 2, 29, 13), until: onTheHour });
  });
});

describe('evaluateAlerts', () => {
  it('fires exactly the rules the dataset breaks, critical first', async () => {
    const alerts = await evaluateAlerts(store, { window: WINDOW, config: MONITOR_ALERT_CONFIG });
    expect(brief(alerts)).toStrictEqual(MONITOR_EXPECTED_ALERTS);
    const byKey = new Map(alerts.map((a) => [`${a.rule}/${a.tool_name}`, a]));
    expect(byKey.get('p95_latency/search_flights')).toMatchObject({ value: P95_TIMEOUTS, threshold: 2500, hour: null });
    expect(byKey.get('success_rate/search_flights')).toMatchObject({ value: 35 / 40, threshold: 0.95, hour: '2026-03-29T13:00:00.000Z' });
    expect(byKey.get('success_rate/search_flights')!.message).toBe(
      'success rate 87.5% (35 of 40 calls) in the hour from 2026-03-29T13:00:00.000Z is below 95.0%',
    );
    expect(byKey.get('success_rate/create_order')).toMatchObject({ value: 0.8, threshold: 0.95 });
    // Per day: the 24 hours before 14:00 and the current hour hold every failure of search_flights
    // (17), and the 7 days before hold none of them.
    expect(alerts.filter((a) => a.rule === 'failure_type_jump').map((a) => [a.tool_name, a.value, a.threshold, a.message])).toStrictEqual([
      ['create_order', 1, 0.2, 'missing_required is 100.0% of failures (5 of 5) since 2026-03-28T14:00:00.000Z, up from no failures in the 7 days before'],
      ['search_flights', 10 / 17, 0.2, 'rate_limited is 58.8% of failures (10 of 17) since 2026-03-28T14:00:00.000Z, up from no failures in the 7 days before'],
      ['search_flights', 4 / 17, 0.2, 'timeout is 23.5% of failures (4 of 17) since 2026-03-28T14:00:00.000Z, up from no failures in the 7 days before'],
    ]);
    expect(byKey.get('retry_rate/search_flights')).toMatchObject({ value: 12 / 50, threshold: 0.2 });
    // The trips at 12:00 and at 13:00: the day's.
    expect(byKey.get('breaker_trip/search_flights')).toMatchObject({ value: 2, threshold: 0, message: 'circuit breaker tripped 2 times since 2026-03-28T14:00:00.000Z' });
    expect(byKey.get('param_validation_rate/create_order')).toMatchObject({ value: 0.2, threshold: 0.1 });
    const newSignatures = alerts.filter((a) => a.rule === 'new_failure_signature');
    expect(newSignatures.map((a) => a.message)).toStrictEqual([
      `new failure param_validation/missing_required "must have required property <str>" first seen 2026-03-29T13:02:00.000Z, 5 times (signature ${newSignatures[0]!.message.match(/signature ([0-9a-f]{16})/)![1]})`,
      expect.stringMatching(/^new failure param_validation\/schema_mismatch "date must match format <str>" first seen 2026-03-29T13:37:30\.000Z, 1 time /),
    ]);
  });

  it('judges p95 against the default 10 s timeout when a tool has none configured', async () => {
    // The sketch reads the 7.9 s timeouts as ~8.15 s: above 80% of 10 s, not above 10 s.
    const alerts = await evaluateAlerts(store, { window: WINDOW });
    expect(alerts.filter((a) => a.rule === 'p95_latency')).toMatchObject([
      { tool_name: 'search_flights', severity: 'warning', value: P95_TIMEOUTS, threshold: 8000 },
    ]);
    const relaxed = await evaluateAlerts(store, { window: WINDOW, config: { defaultTimeoutMs: 12_000 } });
    expect(relaxed.filter((a) => a.rule === 'p95_latency')).toStrictEqual([]);
  });

  it('does not judge tool-hours with fewer than minCalls calls', async () => {
    // send_email: 1 failure in 3 calls at 14:00.
    const base = await evaluateAlerts(store, { window: WINDOW, config: MONITOR_ALERT_CONFIG });
    expect(base.some((a) => a.tool_name === 'send_email')).toBe(false);
    const eager = await evaluateAlerts(store, { window: WINDOW, config: { ...MONITOR_ALERT_CONFIG, minCalls: 3 } });
    expect(eager.filter((a) => a.tool_name === 'send_email')).toMatchObject([
      { rule: 'success_rate', severity: 'critical', value: 2 / 3, threshold: 0.8, hour: '2026-03-29T14:00:00.000Z' },
    ]);
  });

  it('treats thresholds as strict: exactly 95% success is fine, 96% required is not', async () => {
    // get_weather at 14:00: 19 of 20.
    const at95 = await evaluateAlerts(store, { window: WINDOW, toolName: 'get_weather' });
    expect(at95).toStrictEqual([]);
    const at96 = await evaluateAlerts(store, { window: WINDOW, toolName: 'get_weather', config: { rules: { success_rate: { threshold: 0.96 } } } });
    expect(at96).toMatchObject([{ rule: 'success_rate', tool_name: 'get_weather', value: 0.95, threshold: 0.96 }]);
  });

  it('compares the last hour with the day before when configured so', async () => {
    const hourly = { windowHours: 1, baselineHours: 24 };
    const alerts = await evaluateAlerts(store, { window: WINDOW, toolName: 'search_flights', config: { rules: { failure_type_jump: hourly } } });
    // 3 of 6 failures against 1 of 11 in the baseline: 2 x 9.1% is under the 20% floor.
    expect(alerts.filter((a) => a.rule === 'failure_type_jump').map((a) => [a.value, a.threshold, a.message])).toStrictEqual([
      [0.5, 0.2, 'timeout is 50.0% of failures (3 of 6) since 2026-03-29T13:00:00.000Z, up from 9.1% (1 of 11) in the 24 h before'],
    ]);
  });

  it('needs the jump factor over the baseline share, not only the floor', async () => {
    const config: AlertConfig = { rules: { failure_type_jump: { factor: 6, windowHours: 1, baselineHours: 24 } } };
    const alerts = await evaluateAlerts(store, { window: WINDOW, toolName: 'search_flights', config });
    // 6 x 1/11 = 54.5% > 50%: the timeout jump no longer counts.
    expect(alerts.filter((a) => a.rule === 'failure_type_jump')).toStrictEqual([]);
    const fewer = await evaluateAlerts(store, { window: WINDOW, toolName: 'create_order', config: { rules: { failure_type_jump: { minFailures: 6 } } } });
    expect(fewer.filter((a) => a.rule === 'failure_type_jump')).toStrictEqual([]);
  });

  it('calls a signature new only when first seen inside the window', async () => {
    // From 12:00 the window also holds hour 12's first timeout and circuit rejection.
    const alerts = await evaluateAlerts(store, {
      window: { since: Date.UTC(2026, 2, 29, 12), until: MONITOR_NOW },
      toolName: 'search_flights',
      config: { rules: { new_failure_signature: { severity: 'critical' } } },
    });
    const fresh = alerts.filter((a) => a.rule === 'new_failure_signature');
    expect(fresh.map((a) => a.message.split(' ')[2])).toStrictEqual(['execution/circuit_open', 'execution/timeout', 'param_validation/schema_mismatch']);
    expect(fresh.every((a) => a.severity === 'critical')).toBe(true);
  });

  it('honours enabled: false and the per-rule severities and critical levels', async () => {
    const config: AlertConfig = {
      ...MONITOR_ALERT_CONFIG,
      rules: Object.fromEntries(Object.keys(DEFAULT_ALERT_CONFIG.rules).map((name) => [name, { enabled: name === 'breaker_trip' || name === 'retry_rate' }])),
    };
    config.rules!.breaker_trip = { severity: 'critical' };
    config.rules!.retry_rate = { critical: 0.22 };
    const alerts = await evaluateAlerts(store, { window: WINDOW, config });
    expect(brief(alerts)).toStrictEqual([
      ['critical', 'retry_rate', 'search_flights'],
      ['critical', 'breaker_trip', 'search_flights'],
    ]);
    expect(alerts[0]!.threshold).toBe(0.22);
    const tolerant = await evaluateAlerts(store, { window: WINDOW, config: { rules: { ...config.rules, breaker_trip: { threshold: 2 } } } });
    expect(tolerant.some((a) => a.rule === 'breaker_trip')).toBe(false);
  });

  it('finds nothing in a quiet window', async () => {
    const quiet = { since: Date.UTC(2026, 2, 20), until: Date.UTC(2026, 2, 21) };
    expect(await evaluateAlerts(store, { window: quiet })).toStrictEqual([]);
    expect(await evaluateAlerts(createMemoryStore(), { window: WINDOW })).toStrictEqual([]);
  });

  it('reads the baseline from the hours before the window', async () => {
    // Everything of the window moved 48 h later: the baseline is then empty, so only the floor counts.
    const later = monitorDataset()
      .filter((r) => Date.parse(r.created_at) >= WINDOW.since)
      .map((r, i) => ({ ...r, execution_id: `ffff${i.toString(16).padStart(4, '0')}-0000-7000-8000-000000000000`, created_at: new Date(Date.parse(r.created_at) + 48 * HOUR).toISOString() }));
    const shifted = createMemoryStore();
    await shifted.insert(later);
    const hourly: AlertConfig = { rules: { failure_type_jump: { windowHours: 1, baselineHours: 24 } } };
    const alerts = await evaluateAlerts(shifted, { window: defaultAlertWindow(MONITOR_NOW + 48 * HOUR), toolName: 'search_flights', config: hourly });
    const jumps = alerts.filter((a) => a.rule === 'failure_type_jump');
    expect(jumps.map((a) => a.message)).toStrictEqual(['timeout is 50.0% of failures (3 of 6) since 2026-03-31T13:00:00.000Z, up from no failures in the 24 h before']);
  });
});

describe('the per-day rules (seed 001 section 4.4: failure types and breaker trips by day)', () => {
  // Now is 2026-04-10T09:20Z: the default alert window is 08:00-09:20, the day 2026-04-09T09:00 on.
  const now = Date.UTC(2026, 3, 10, 9, 20);
  const window = defaultAlertWindow(now);
  let seq = 0;
  const id = (ms: number): string => {
    const time = ms.toString(16).padStart(12, '0');
    seq += 1;
    return `${time.slice(0, 8)}-${time.slice(8)}-7000-8000-${seq.toString(16).padStart(12, '0')}`;
  };
  const failed = (tool: string, ms: number, type: 'timeout' | 'server_error', tripped = false): ToolExecutionRecord =>
    makeFailureRecord({
      execution_id: id(ms),
      tool_name: tool,
      status: type === 'timeout' ? 'timeout' : 'failure',
      failure_stage: 'execution',
      failure_category: type === 'timeout' ? 'network' : 'system',
      failure_type: type,
      breaker_state: tripped ? 'open' : 'closed',
      created_at: new Date(ms).toISOString(),
    });
  const hoursAgo = (h: number): number => now - h * HOUR;

  it('counts the breaker trips of the last 24 hours, though none was in the last hour', async () => {
    const day = createMemoryStore();
    await day.insert([
      // 26 h before now: the day before, not counted.
      failed('payments', hoursAgo(26), 'server_error', true),
      failed('payments', hoursAgo(23.5), 'server_error', true),
      failed('payments', hoursAgo(7), 'timeout', true),
      failed('payments', hoursAgo(3), 'server_error'),
      makeRecord({ execution_id: id(hoursAgo(0.5)), tool_name: 'payments', created_at: new Date(hoursAgo(0.5)).toISOString() }),
    ]);
    const only = { rules: Object.fromEntries(Object.keys(DEFAULT_ALERT_CONFIG.rules).map((name) => [name, { enabled: name === 'breaker_trip' }])) };
    expect(await evaluateAlerts(day, { window, config: only })).toStrictEqual([
      { rule: 'breaker_trip', tool_name: 'payments', severity: 'warning', value: 2, threshold: 0, message: 'circuit breaker tripped 2 times since 2026-04-09T09:00:00.000Z', hour: null },
    ]);
    // A longer window than a day is read whole.
    const week = await evaluateAlerts(day, { window: { since: now - 7 * 24 * HOUR, until: now }, config: only });
    expect(week.map((a) => a.value)).toStrictEqual([3]);
    // Configured back to the alert window: nothing tripped there.
    const hourly = { rules: { ...only.rules, breaker_trip: { windowHours: 1 } } };
    expect(await evaluateAlerts(day, { window, config: hourly })).toStrictEqual([]);
    const twoDays = { rules: { ...only.rules, breaker_trip: { windowHours: 48 } } };
    expect((await evaluateAlerts(day, { window, config: twoDays })).map((a) => a.message)).toStrictEqual(['circuit breaker tripped 3 times since 2026-04-08T09:00:00.000Z']);
  });

  it('compares the failure types of the last day with the 7 days before', async () => {
    const records: ToolExecutionRecord[] = [];
    // The 7 days before: each day 9 server errors and 1 timeout, spread over its hours.
    for (let d = 1; d <= 7; d++) {
      for (let i = 0; i < 10; i++) records.push(failed('search', hoursAgo(24 * d + 2 + i * 2), i === 0 ? 'timeout' : 'server_error'));
    }
    // 9 days before: outside the baseline, so its timeouts do not lift it.
    for (let i = 0; i < 20; i++) records.push(failed('search', hoursAgo(24 * 9 + i), 'timeout'));
    // The last day: 5 timeouts in 10 failures, every two hours, none in the last hour.
    for (let i = 0; i < 10; i++) records.push(failed('search', hoursAgo(2 + i * 2), i % 2 === 0 ? 'timeout' : 'server_error'));
    const days = createMemoryStore();
    await days.insert(records);
    const only = { rules: Object.fromEntries(Object.keys(DEFAULT_ALERT_CONFIG.rules).map((name) => [name, { enabled: name === 'failure_type_jump' }])) };

    expect(await evaluateAlerts(days, { window, config: only })).toStrictEqual([
      {
        rule: 'failure_type_jump',
        tool_name: 'search',
        severity: 'warning',
        value: 0.5,
        threshold: 0.2,
        message: 'timeout is 50.0% of failures (5 of 10) since 2026-04-09T09:00:00.000Z, up from 10.0% (7 of 70) in the 7 days before',
        hour: null,
      },
    ]);
    // Over the alert window alone there are no failures to compare.
    expect(await evaluateAlerts(days, { window, config: { rules: { ...only.rules, failure_type_jump: { windowHours: 1 } } } })).toStrictEqual([]);
    // A baseline reaching back 9 days takes in the old timeouts: 2 x 27/90 = 60% > 50%.
    const longBaseline = { rules: { ...only.rules, failure_type_jump: { baselineHours: 9 * 24 } } };
    expect(await evaluateAlerts(days, { window, config: longBaseline })).toStrictEqual([]);
  });
});

describe('resolveAlertConfig', () => {
  it('fills defaults, applying minCalls to every rate rule unless a rule overrides it', () => {
    const config = resolveAlertConfig({ minCalls: 50, rules: { retry_rate: { minCalls: 5 } } });
    expect(config.rules.success_rate.minCalls).toBe(50);
    expect(config.rules.p95_latency.minCalls).toBe(50);
    expect(config.rules.retry_rate).toStrictEqual({ enabled: true, threshold: 0.2, critical: 0.5, minCalls: 5 });
    expect(config.defaultTimeoutMs).toBe(10_000);
    expect(resolveAlertConfig(null)).toStrictEqual(DEFAULT_ALERT_CONFIG);
  });

  it('moves a default critical level along with a threshold set past it', () => {
    const config = resolveAlertConfig({ rules: { retry_rate: { threshold: 0.6 }, success_rate: { threshold: 0.7 }, p95_latency: { threshold: 0.5 } } });
    expect(config.rules.retry_rate).toMatchObject({ threshold: 0.6, critical: 0.6 });
    expect(config.rules.success_rate).toMatchObject({ threshold: 0.7, critical: 0.7 });
    expect(config.rules.p95_latency).toMatchObject({ threshold: 0.5, critical: 1 });
  });

  it.each([
    [{ minCalls: 0 }, 'x.yaml: minCalls must be >= 1', 'minCalls'],
    [{ minCalls: 2.5 }, 'x.yaml: minCalls must be an integer', 'minCalls'],
    [{ thresholds: {} }, 'x.yaml: unknown key thresholds', 'thresholds'],
    [{ rules: { success_rate: { treshold: 0.9 } } }, 'x.yaml: unknown key rules.success_rate.treshold', 'rules.success_rate.treshold'],
    [{ rules: { latency: {} } }, 'x.yaml: unknown key rules.latency', 'rules.latency'],
    [{ rules: { success_rate: { threshold: 95 } } }, 'x.yaml: rules.success_rate.threshold must be <= 1', 'rules.success_rate.threshold'],
    [{ rules: { breaker_trip: { severity: 'page' } } }, 'x.yaml: rules.breaker_trip.severity must be one of warning, critical', 'rules.breaker_trip.severity'],
    [{ rules: { breaker_trip: { windowHours: 0 } } }, 'x.yaml: rules.breaker_trip.windowHours must be >= 1', 'rules.breaker_trip.windowHours'],
    [{ rules: { failure_type_jump: { windowHours: 1.5 } } }, 'x.yaml: rules.failure_type_jump.windowHours must be an integer', 'rules.failure_type_jump.windowHours'],
    [{ rules: { retry_rate: { enabled: 'yes' } } }, 'x.yaml: rules.retry_rate.enabled must be a boolean', 'rules.retry_rate.enabled'],
    [{ timeouts: { search: 0 } }, 'x.yaml: timeouts.search must be > 0', 'timeouts.search'],
    [{ timeouts: { search: '3s' } }, 'x.yaml: timeouts.search must be a number', 'timeouts.search'],
    [{ timeouts: { '': 10 } }, 'x.yaml: timeouts has an invalid key ""', 'timeouts'],
    [{ rules: { success_rate: { threshold: 0.9, critical: 0.95 } } }, 'x.yaml: rules.success_rate.critical must be <= rules.success_rate.threshold', 'rules.success_rate.critical'],
    [{ rules: { p95_latency: { threshold: 1.5, critical: 1.2 } } }, 'x.yaml: rules.p95_latency.critical must be >= rules.p95_latency.threshold', 'rules.p95_latency.critical'],
    [[1, 2], 'x.yaml: the config must be an object', ''],
  ])('rejects %j with one line naming the field', (input, message, field) => {
    let error: unknown;
    try {
      resolveAlertConfig(input, 'x.yaml');
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).message).toBe(message);
    expect((error as ConfigError).field).toBe(field);
  });
});

describe('loadAlertConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-alert-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return name;
  };
  const failure = (fn: () => unknown): string => {
    try {
      fn();
    } catch (error) {
      expect(ConfigError.isInstance(error)).toBe(true);
      return (error as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it('reads YAML and JSON, relative to cwd', () => {
    const yaml = file('alerts.yaml', 'timeouts:\n  search_flights: 2500\nrules:\n  success_rate: { threshold: 0.99 }\n');
    const config = loadAlertConfig(yaml, { cwd: dir });
    expect(config.timeouts).toStrictEqual({ search_flights: 2500 });
    expect(config.rules.success_rate.threshold).toBe(0.99);
    const json = file('alerts.json', JSON.stringify({ rules: { new_failure_signature: { enabled: false } } }));
    expect(loadAlertConfig(join(dir, json)).rules.new_failure_signature.enabled).toBe(false);
    // An empty file is refused like every empty input (README, "Bad input"); no --config means the defaults.
    expect(failure(() => loadAlertConfig(file('empty.yaml', ''), { cwd: dir }))).toBe('cannot read alerts config empty.yaml: the file is empty');
  });

  it('reads the per-day rules\' windows, and files written before them', () => {
    const days = loadAlertConfig(file('days.yaml', 'rules:\n  breaker_trip: { windowHours: 12 }\n  failure_type_jump: { windowHours: 48, baselineHours: 336 }\n'), { cwd: dir });
    expect(days.rules.breaker_trip).toStrictEqual({ enabled: true, threshold: 0, windowHours: 12, severity: 'warning' });
    expect(days.rules.failure_type_jump).toMatchObject({ windowHours: 48, baselineHours: 336 });
    const old = loadAlertConfig(file('old.yaml', 'rules:\n  failure_type_jump: { baselineHours: 24, factor: 3 }\n  breaker_trip: { threshold: 1 }\n'), { cwd: dir });
    expect(old.rules.failure_type_jump).toStrictEqual({ enabled: true, factor: 3, minShare: 0.2, minFailures: 5, windowHours: 24, baselineHours: 24, severity: 'warning' });
    expect(old.rules.breaker_trip).toStrictEqual({ enabled: true, threshold: 1, windowHours: 24, severity: 'warning' });
  });

  it('reports a missing file, malformed YAML or JSON, and invalid content in one line', () => {
    expect(failure(() => loadAlertConfig('nope.yaml', { cwd: dir }))).toBe('cannot read alerts config nope.yaml: no such file or directory');
    const broken = file('broken.yaml', 'rules:\n  success_rate: [1,\n bad');
    const message = failure(() => loadAlertConfig(broken, { cwd: dir }));
    expect(message).toMatch(/^cannot parse alerts config broken\.yaml: invalid YAML at line \d+, column \d+: .+$/);
    expect(message).not.toContain('\n');
    expect(failure(() => loadAlertConfig(file('dup.yaml', 'minCalls: 1\nminCalls: 2\n'), { cwd: dir }))).toMatch(
      /^cannot parse alerts config dup\.yaml: invalid YAML at line 2, column 1: Map keys must be unique$/,
    );
    expect(failure(() => loadAlertConfig(file('bad.json', '{"minCalls": 1,}'), { cwd: dir }))).toMatch(/^cannot parse alerts config bad\.json: /);
    expect(failure(() => loadAlertConfig(file('typo.yaml', 'min_calls: 10\n'), { cwd: dir }))).toBe('typo.yaml: unknown key min_calls');
    expect(failure(() => loadAlertConfig('.', { cwd: dir }))).toBe('cannot read alerts config .: is a directory');
  });

  it('faultline alerts --config that cannot be read: one line in the words the rest of the CLI uses, exit 2', async () => {
    mkdirSync(join(dir, 'a-dir'), { recursive: true });
    file('a-file', 'not a directory\n');
    const cases: [string, string][] = [
      ['a-dir', 'is a directory'],
      ['a-file/alerts.yaml', 'a parent is not a directory'],
      ['missing.yaml', 'no such file or directory'],
    ];
    for (const [config, reason] of cases) {
      const run = await runCapture(['alerts', '--db', join(dir, 'none.db'), '--config', config], dir);
      expect(run).toEqual({ code: 2, stdout: '', stderr: `faultline: cannot read alerts config ${config}: ${reason}\n` });
    }
  });
});
