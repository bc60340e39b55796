import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../monitor/alert-rules.js';
import { MONITOR_EXPECTED_ALERTS, monitorDataset } from '../../monitor/monitor-dataset.test-helpers.js';
import { createPostgresStore } from '../../store/postgres/postgres-store.js';
import pg from 'pg';
import { describePostgres, PG_URL, useTestSchema } from '../../store/postgres/test-server.test-helpers.js';
import { runCapture, writeStoreFile } from '../run-cli.test-helpers.js';
import type { AlertsReport } from './alerts.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-alerts-'));
const records = monitorDataset();
let db: string;
beforeAll(async () => {
  db = await writeStoreFile(join(dir, 'agents.db'), records);
  writeFileSync(join(dir, 'alerts.yaml'), '# search_flights runs with a 2.5 s timeout\ntimeouts:\n  search_flights: 2500\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const AT_1430 = ['--until', '2026-03-29T14:30Z'];
const EXPECTED = MONITOR_EXPECTED_ALERTS;
const brief = (alerts: readonly Alert[]) => alerts.map((a) => [a.severity, a.rule, a.tool_name]);

describe('faultline alerts', () => {
  it('prints the firing alerts as JSON and exits 1', async () => {
    const run = await runCapture(['alerts', '--db', db, '--config', 'alerts.yaml', '--json', ...AT_1430], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as AlertsReport;
    expect(report.window).toStrictEqual({ since: '2026-03-29T13:00:00.000Z', until: '2026-03-29T14:30:00.000Z' });
    expect(report.firing).toBe(EXPECTED.length);
    expect(brief(report.alerts)).toStrictEqual(EXPECTED);
    for (const alert of report.alerts) {
      expect(Object.keys(alert).sort()).toStrictEqual(['hour', 'message', 'rule', 'severity', 'threshold', 'tool_name', 'value']);
    }
    expect(report.alerts[0]).toMatchObject({ rule: 'p95_latency', threshold: 2500 });
    expect(report.alerts.find((a) => a.rule === 'retry_rate')).toMatchObject({ value: 0.24, threshold: 0.2 });
  });

  it('prints a table, one alert per row', async () => {
    const run = await runCapture(['alerts', '--db', db, '--config', join(dir, 'alerts.yaml'), ...AT_1430], dir);
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`faultline alerts: ${EXPECTED.length} firing, 2026-03-29T13:00:00.000Z .. 2026-03-29T14:30:00.000Z`);
    expect(lines[2]!.split(/\s{2,}/)).toStrictEqual(['severity', 'rule', 'tool', 'message']);
    const rows = lines.slice(4).map((l) => l.split(/\s{2,}/));
    expect(rows.map((r) => r.slice(0, 3))).toStrictEqual(EXPECTED);
    expect(rows[2]![3]).toBe('success rate 87.5% (35 of 40 calls) in the hour from 2026-03-29T13:00:00.000Z is below 95.0%');
  });

  it('says in --help which rules read a day and how to change it', async () => {
    const help = await runCapture(['alerts', '--help'], dir);
    expect(help.code).toBe(0);
    // Commander wraps the description to the terminal width.
    const text = help.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('(failure types and breaker trips: the last day)');
    expect(text).toContain('rules.breaker_trip.windowHours (default: 24)');
    expect(text).toContain('baselineHours (the hours before; default: 168)');
    // The demo's tools fail on 2 calls each: the rate rules need more before they judge.
    expect(text).toContain('each only with at least 20 calls there (minCalls in the --config file, per rule or for all)');
  });

  it('exits 0 when nothing fires', async () => {
    const quiet = await runCapture(['alerts', '--db', db, '--since', '2026-03-21', '--until', '2026-03-22'], dir);
    expect(quiet).toStrictEqual({ code: 0, stdout: 'faultline alerts: none firing, 2026-03-21T00:00:00.000Z .. 2026-03-22T00:00:00.000Z\n', stderr: '' });
    const healthy = await runCapture(['alerts', '--db', db, '--tool', 'get_weather', '--json', ...AT_1430], dir);
    expect(healthy.code).toBe(0);
    expect(JSON.parse(healthy.stdout)).toMatchObject({ firing: 0, alerts: [] });
  });

  it('takes --since as the window start', async () => {
    // From 12:00 the first timeout and the first circuit rejection are new too, and hour 12 has enough calls to judge.
    const run = await runCapture(['alerts', '--db', db, '--since', '150m', '--tool', 'search_flights', '--json', ...AT_1430], dir);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as AlertsReport;
    expect(report.window.since).toBe('2026-03-29T12:00:00.000Z');
    expect(report.alerts.filter((a) => a.rule === 'new_failure_signature')).toHaveLength(3);
  });

  it.each([
    ['missing.yaml', undefined, 'faultline: cannot read alerts config missing.yaml: no such file or directory'],
    ['broken.yaml', 'rules: [1,\n x', /^faultline: cannot parse alerts config broken\.yaml: invalid YAML at line \d+, column \d+: .+$/],
    ['typo.yaml', 'rules:\n  succes_rate: { threshold: 0.9 }\n', 'faultline: typo.yaml: unknown key rules.succes_rate'],
    ['range.json', '{"rules": {"retry_rate": {"threshold": 20}}}', 'faultline: range.json: rules.retry_rate.threshold must be <= 1'],
  ])('refuses config %s with one line and exit 2', async (name, text, message) => {
    if (text !== undefined) writeFileSync(join(dir, name), text);
    const run = await runCapture(['alerts', '--db', db, '--config', name], dir);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const line = run.stderr.replace(/\n$/, '');
    expect(line).not.toContain('\n');
    if (typeof message === 'string') expect(line).toBe(message);
    else expect(line).toMatch(message);
  });

  it('reads a config file saved with a UTF-8 byte order mark, JSON or YAML', async () => {
    writeFileSync(join(dir, 'bom.json'), '\uFEFF{"timeouts": {"search_flights": 2500}}');
    writeFileSync(join(dir, 'bom.yaml'), '\uFEFFtimeouts:\n  search_flights: 2500\n');
    const reference = await runCapture(['alerts', '--db', db, '--config', 'alerts.yaml', '--json', ...AT_1430], dir);
    for (const name of ['bom.json', 'bom.yaml']) {
      const run = await runCapture(['alerts', '--db', db, '--config', name, '--json', ...AT_1430], dir);
      expect(run.stderr).toBe('');
      expect(run).toStrictEqual(reference);
    }
  });

  it('refuses bad windows and missing stores with exit 2', async () => {
    expect(await runCapture(['alerts', '--db', db, '--since', 'last week'], dir)).toStrictEqual({
      code: 2,
      stdout: '',
      stderr: 'faultline: invalid --since "last week": expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z\n',
    });
    const missing = await runCapture(['alerts', '--db', join(dir, 'nope.db')], dir);
    expect(missing).toStrictEqual({
      code: 2,
      stdout: '',
      stderr: `faultline: no faultline store at ${join(dir, 'nope.db')} (run \`npx faultline demo\` or point --db at one)\n`,
    });
    const down = await runCapture(['alerts', '--db', 'postgres://postgres@127.0.0.1:1/x'], dir);
    expect(down).toStrictEqual({ code: 2, stdout: '', stderr: 'faultline: could not connect to PostgreSQL at 127.0.0.1:1: ECONNREFUSED\n' });
  });
});

const describePg = await describePostgres('the PostgreSQL alerts test');

describePg('faultline alerts on PostgreSQL', () => {
  const { schema, url } = useTestSchema('faultline_alerts_test');

  it('fires the same alerts from a store chosen with ?schema=', async () => {
    const store = await createPostgresStore({ url: PG_URL, schema });
    await store.insert(records);
    await store.close();
    const run = await runCapture(['alerts', '--db', url, '--config', 'alerts.yaml', '--json', ...AT_1430], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as AlertsReport;
    expect(brief(report.alerts)).toStrictEqual(EXPECTED);
    const sqlite = JSON.parse((await runCapture(['alerts', '--db', db, '--config', 'alerts.yaml', '--json', ...AT_1430], dir)).stdout) as AlertsReport;
    expect(report).toStrictEqual(sqlite);
  });

  it('reports a schema that holds no store instead of creating it and passing the gate', async () => {
    const typo = `${schema}_typo`;
    const typoUrl = `${PG_URL}?schema=${typo}`;
    const server = new URL(PG_URL);
    const at = `${server.hostname || 'localhost'}:${server.port || '5432'}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      for (const argv of [['alerts'], ['stats'], ['tail', '--once']]) {
        const run = await runCapture([...argv, '--db', typoUrl], dir);
        expect(run).toStrictEqual({ code: 2, stdout: '', stderr: `faultline: no faultline store in PostgreSQL schema "${typo}" at ${at} (check ?schema=, or point --db at one)\n` });
      }
      const found = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [typo]);
      expect(found.rowCount).toBe(0);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${typo}" CASCADE`);
      await admin.end();
    }
  });
});
