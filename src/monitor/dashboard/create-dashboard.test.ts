import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCapture, writeStoreFile } from '../../cli/run-cli.test-helpers.js';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import { createMemoryStore } from '../../store/memory/memory-store.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { openStore } from '../../store/open-store.js';
import { createPostgresStore } from '../../store/postgres/postgres-store.js';
import { describePostgres, PG_URL, useTestSchema } from '../../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { Store } from '../../core/store-types.js';
import { trajectoryFromRecords } from '../../trajectory/from-records.js';
import { MONITOR_ALERT_CONFIG, MONITOR_EXPECTED_ALERTS, MONITOR_NOW, monitorDataset } from '../monitor-dataset.test-helpers.js';
import { buildStatsReport } from '../stats-report.js';
import type { AlertsView, DashboardSnapshot, FailuresView, HourlyView, SignaturesView, TraceView } from './dashboard-data.js';
import { scopedStore } from './scoped-store.js';
import { hostileRecord, recordSession, SECRET, startDashboard, XSS_CODE, XSS_MESSAGE, XSS_TOOL, XSS_TRACE } from './dashboard.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-dashboard-'));
const db = join(dir, 'agents.db');
const NOW_ISO = new Date(MONITOR_NOW).toISOString();
const DAY = 86_400_000;
const SESSION_TRACE = 'trace-session';
const hostile = hostileRecord(MONITOR_NOW - 20 * 60_000);
let reader: Store;
let dashboard: Awaited<ReturnType<typeof startDashboard>>;

beforeAll(async () => {
  await writeStoreFile(db, [...monitorDataset(), hostile]);
  await recordSession(db, join(dir, 'spool.jsonl'), MONITOR_NOW - 10 * 60_000, SESSION_TRACE);
  writeFileSync(join(dir, 'alerts.yaml'), 'timeouts: { search_flights: 2500 }\n');
  // The dashboard reads through its own read-only store; the test checks against another.
  reader = createSqliteStore({ path: db, readonly: true });
  dashboard = await startDashboard({ store: await openStore(db, { readonly: true }), alerts: MONITOR_ALERT_CONFIG, now: () => MONITOR_NOW });
});
afterAll(async () => {
  await dashboard?.close();
  await reader?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string, init?: RequestInit): Promise<Response> {
  return fetch(`${dashboard.url}${path}`, init);
}

async function json<T>(path: string): Promise<T> {
  const res = await get(path);
  expect(res.status, `${path}: ${res.status}`).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  return (await res.json()) as T;
}

/** What the store says, through JSON (as an endpoint would send it). */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const FAILED = ['failure', 'timeout', 'rejected'] as const;

describe('dashboard JSON endpoints', () => {
  it('/api/stats is `faultline stats --json` for the same window', async () => {
    const api = await json<unknown>('/api/stats?since=24h');
    const cli = await runCapture(['stats', '--db', db, '--json', '--since', '24h', '--until', NOW_ISO], dir);
    expect(cli.code).toBe(0);
    expect(api).toStrictEqual(JSON.parse(cli.stdout));
    expect(api).toStrictEqual(asJson(await buildStatsReport(reader, { since: MONITOR_NOW - DAY, until: MONITOR_NOW }, 3)));
    // The default window is 24h; another window and a tool filter change what is read.
    expect(await json('/api/stats')).toStrictEqual(api);
    const week = await json<{ tools: { tool_name: string; total: number }[] }>('/api/stats?since=7d&tool=get_weather');
    expect(week.tools).toHaveLength(1);
    expect(week.tools[0]!.total).toBe((await reader.toolStats({ since: MONITOR_NOW - 7 * DAY, until: MONITOR_NOW, toolName: 'get_weather' }))[0]!.total);
  });

  it('/api/alerts is what `faultline alerts` evaluates now, with the thresholds in force', async () => {
    const api = await json<AlertsView>('/api/alerts');
    const cli = await runCapture(['alerts', '--db', db, '--json', '--config', 'alerts.yaml', '--until', NOW_ISO], dir);
    expect(cli.code).toBe(1);
    const report = JSON.parse(cli.stdout) as { window: unknown; firing: number; alerts: unknown[] };
    expect({ window: api.window, firing: api.firing, alerts: api.alerts }).toStrictEqual(report);
    // The seeded dataset's alerts, plus the session's 401 (a signature never seen before).
    const fired = api.alerts.map((a) => [a.severity, a.rule, a.tool_name]);
    for (const expected of MONITOR_EXPECTED_ALERTS) expect(fired).toContainEqual(expected);
    expect(fired).toContainEqual(['warning', 'new_failure_signature', 'lookup_order']);
    expect(api.config.timeouts).toStrictEqual({ search_flights: 2500 });
    expect(api.config.rules.success_rate).toMatchObject({ threshold: 0.95, critical: 0.8 });
    // With `since`, as `faultline alerts --since`.
    const wide = await json<AlertsView>('/api/alerts?since=7d&tool=create_order');
    const wideCli = await runCapture(['alerts', '--db', db, '--json', '--config', 'alerts.yaml', '--since', '7d', '--until', NOW_ISO, '--tool', 'create_order'], dir);
    expect({ window: wide.window, firing: wide.firing, alerts: wide.alerts }).toStrictEqual(JSON.parse(wideCli.stdout));
  });

  it('/api/failures lists the newest failed calls as stored, filtered and limited', async () => {
    const api = await json<FailuresView>('/api/failures?since=24h');
    const stored = await reader.query({ statuses: FAILED, since: MONITOR_NOW - DAY, order: 'desc', limit: 50 });
    expect(api.records).toStrictEqual(asJson(stored));
    expect(api.records.length).toBeGreaterThan(20);
    expect(api.records.every((r) => r.status !== 'success')).toBe(true);
    expect((await json<FailuresView>('/api/failures?since=24h&limit=5')).records).toStrictEqual(api.records.slice(0, 5));
    const few = await json<FailuresView>('/api/failures?since=1h&limit=3&tool=lookup_order');
    expect(few.tool).toBe('lookup_order');
    expect(few.records.map((r) => [r.tool_name, r.status, r.error_code])).toStrictEqual([['lookup_order', 'failure', 'HTTP_401']]);
    expect((await json<FailuresView>('/api/failures?since=7d&limit=1000')).records).toHaveLength(
      await reader.count({ statuses: FAILED, since: MONITOR_NOW - 7 * DAY }),
    );
  });

  it('/api/hourly and /api/signatures are the store\'s hourly points and signatures', async () => {
    const hourly = await json<HourlyView>('/api/hourly?since=24h');
    expect(hourly.points).toStrictEqual(asJson(await reader.hourly({ since: MONITOR_NOW - DAY, until: MONITOR_NOW })));
    // 14:30 the day before .. 14:30 touches 25 UTC hours.
    expect(hourly.hours).toHaveLength(25);
    expect([hourly.hours[0], hourly.hours.at(-1)]).toStrictEqual(['2026-03-28T14:00:00.000Z', '2026-03-29T14:00:00.000Z']);

    const sigs = await json<SignaturesView>('/api/signatures?since=1h');
    const stored = await reader.signatures({ since: MONITOR_NOW - 3_600_000, until: MONITOR_NOW });
    expect(sigs.signatures.map(({ first_seen_in_window: _, ...s }) => s).sort((a, b) => a.signature.localeCompare(b.signature))).toStrictEqual(
      asJson(stored).sort((a, b) => a.signature.localeCompare(b.signature)),
    );
    const fresh = sigs.signatures.filter((s) => s.first_seen_in_window);
    expect(sigs.first_seen_in_window).toBe(fresh.length);
    const since = MONITOR_NOW - 3_600_000;
    expect(fresh.map((s) => s.signature).sort()).toStrictEqual(
      stored.filter((s) => Date.parse(s.first_seen) >= since).map((s) => s.signature).sort(),
    );
    expect(fresh.map((s) => s.tool_name)).toEqual(expect.arrayContaining([XSS_TOOL, 'lookup_order']));
    expect(sigs.signatures.length).toBeGreaterThan(fresh.length);
    // Newest first-seen first.
    expect(sigs.signatures.map((s) => s.first_seen)).toStrictEqual(sigs.signatures.map((s) => s.first_seen).sort().reverse());
  });

  it('/api/dashboard holds exactly what the other endpoints return', async () => {
    const snapshot = await json<DashboardSnapshot>('/api/dashboard?since=7d');
    expect(snapshot.generated_at).toBe(NOW_ISO);
    expect(snapshot.since).toBe('7d');
    expect(snapshot.stats).toStrictEqual(await json('/api/stats?since=7d'));
    expect(snapshot.alerts).toStrictEqual(await json('/api/alerts'));
    expect(snapshot.failures).toStrictEqual(await json('/api/failures?since=7d'));
    expect(snapshot.hourly).toStrictEqual(await json('/api/hourly?since=7d'));
    expect(snapshot.signatures).toStrictEqual(await json('/api/signatures?since=7d'));
  });

  it('/api/records/<id> is the stored record, redacted as the runtime stored it', async () => {
    const [failed] = await reader.query({ traceId: SESSION_TRACE, statuses: ['failure'] });
    const api = await json<ToolExecutionRecord>(`/api/records/${failed!.execution_id}`);
    expect(api).toStrictEqual(asJson(await reader.get(failed!.execution_id)));
    expect(api.error_message).not.toContain(SECRET);
    expect(api.error_message).toMatch(/REDACTED/);
    expect(await json(`/api/records/${encodeURIComponent(hostile.execution_id)}`)).toStrictEqual(asJson(hostile));
  });

  it('/api/traces/<id> lists the calls in order, with the stored trajectory when there is one', async () => {
    const api = await json<TraceView>(`/api/traces/${SESSION_TRACE}`);
    expect(api.calls).toStrictEqual(asJson(await reader.query({ traceId: SESSION_TRACE, order: 'asc' })));
    expect(api.calls.map((c) => [c.step_index, c.status])).toStrictEqual([
      [0, 'success'],
      [1, 'failure'],
      [2, 'success'],
    ]);
    expect(api).toMatchObject({ trace_id: SESSION_TRACE, truncated: false, trajectory: null });
    expect((await json<TraceView>(`/api/traces/${encodeURIComponent(XSS_TRACE)}`)).calls.map((c) => c.execution_id)).toStrictEqual([hostile.execution_id]);

    // Annotated and stored as a trajectory: the trace shows it.
    const writer = createSqliteStore({ path: db });
    const trajectory = trajectoryFromRecords(await writer.query({ traceId: SESSION_TRACE }));
    trajectory.labels = [{ name: 'ignored_error', step_index: 2, confidence: 0.9, reason: `went on after a 401 ${XSS_MESSAGE}` }];
    await writer.insertTrajectories([trajectory]);
    await writer.close();
    const annotated = await json<TraceView>(`/api/traces/${SESSION_TRACE}`);
    expect(annotated.trajectory).toStrictEqual(asJson(await reader.getTrajectory!(trajectory.trajectory_id)));
    const page = await (await get(`/traces/${SESSION_TRACE}`)).text();
    expect(page).toContain('<table id="labels" class="cards">');
    expect(page).toContain('went on after a 401 &lt;script&gt;');
  });
});

describe('dashboard HTTP behaviour', () => {
  it('lists the first 1000 calls of a longer trace, and says so', async () => {
    const writer = createSqliteStore({ path: db });
    const start = MONITOR_NOW - 3 * 3_600_000;
    await writer.insert(Array.from({ length: 1001 }, (_, i) => makeRecord({ trace_id: 'trace-long', step_index: i, created_at: new Date(start + i * 1000).toISOString() })));
    await writer.close();
    const trace = await json<TraceView>('/api/traces/trace-long');
    expect(trace.truncated).toBe(true);
    expect(trace.calls.map((c) => c.step_index)).toStrictEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(await (await get('/traces/trace-long')).text()).toContain('the first 1000 calls (the trace has more), 0 failed');
  });

  it('answers 503 with one line, and tells onError, when the store cannot be read', async () => {
    const broken = createSqliteStore({ path: db, readonly: true });
    await broken.close();
    const errors: string[] = [];
    const down = await startDashboard({ store: broken, now: () => MONITOR_NOW, onError: (error, path) => errors.push(`${path}: ${(error as Error).message}`) });
    try {
      const api = await fetch(`${down.url}/api/stats`);
      expect(api.status).toBe(503);
      expect(((await api.json()) as { error: string }).error).toMatch(/^the store could not be read: /);
      const page = await fetch(`${down.url}/`);
      expect(page.status).toBe(503);
      expect(await page.text()).toContain('Store unavailable');
      expect(errors).toHaveLength(2);
      expect(errors[0]).toMatch(/^\/api\/stats: /);
    } finally {
      await down.close();
    }
  });

  it('answers unknown paths, records and traces with 404, in JSON under /api', async () => {
    for (const path of ['/api/nope', '/api/records/0000', '/api/traces/no-such-trace', '/api', '/api/records/']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Object.keys((await res.json()) as object)).toStrictEqual(['error']);
    }
    for (const path of ['/nope', '/records/0000', '/traces/no-such-trace', '/records/a/b']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'sha256-/);
    }
  });

  it('is read-only: other methods than GET and HEAD get 405, and nothing is written', async () => {
    const before = await reader.count();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const path of ['/', '/api/stats', `/api/records/${hostile.execution_id}`]) {
        const res = await get(path, { method, body: '{}' });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get('allow')).toBe('GET, HEAD');
      }
    }
    const head = await get('/api/stats', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(await reader.count()).toBe(before);
  });

  it('answers bad query values with 400 and one line', async () => {
    const res = await get('/api/stats?since=yesterday');
    expect(res.status).toBe(400);
    expect(await res.json()).toStrictEqual({
      error: 'invalid since "yesterday": expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z',
    });
    expect((await get('/api/failures?limit=0')).status).toBe(400);
    expect((await get('/api/failures?limit=5000')).status).toBe(400);
    expect((await get('/?since=0h')).status).toBe(400);
    expect((await get('/records/%E0%A4%A')).status).toBe(400);
  });

  it('serves pages under a strict Content-Security-Policy that admits only its own script and stylesheet', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    const body = await res.text();
    const script = /<script>([\s\S]*?)<\/script>/.exec(body)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(body)![1]!;
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    expect(csp).toBe(
      `default-src 'none'; script-src ${hash(script)}; style-src ${hash(style)}; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    );
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect((await get('/api/stats')).headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it('refuses requests for another host name (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: dashboard.port, path: '/api/stats', headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on('error', reject).end();
      });
    expect(await status('attacker.example:80')).toBe(403);
    expect(await status(`evil.127.0.0.1.nip.io:${dashboard.port}`)).toBe(403);
    expect(await status(`localhost:${dashboard.port}`)).toBe(200);
    expect(await status(`127.0.0.1:${dashboard.port}`)).toBe(200);
    expect(await status(`[::1]:${dashboard.port}`)).toBe(200);
  });

  it('renders every recorded string as text, on the overview, the record and the trace page', async () => {
    const pages = await Promise.all(
      ['/?since=24h', `/records/${encodeURIComponent(hostile.execution_id)}`, `/traces/${encodeURIComponent(XSS_TRACE)}`].map(async (path) => (await get(path)).text()),
    );
    for (const page of pages) {
      // The page's own script is the only one, and no payload became an element or attribute.
      expect(page.match(/<script/g)).toHaveLength(1);
      expect(page).not.toContain('<img');
      expect(page).not.toContain('<svg onload');
      expect(page).not.toContain('<b>not bold');
      expect(page).toContain('&lt;script&gt;window.__pwned=2&lt;/script&gt; &amp; &quot;quoted&quot;');
    }
    const [overview, record] = pages as [string, string];
    expect(overview).toContain('&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;');
    expect(overview).toContain(`href="/traces/${encodeURIComponent(XSS_TRACE)}"`);
    expect(overview).toContain(XSS_CODE.replace('<', '&lt;').replace('>', '&gt;'));
    // The record page holds the whole record, pretty-printed, escaped.
    const pre = /<pre class="json" id="record-json">([\s\S]*?)<\/pre>/.exec(record)![1]!;
    const unescaped = pre.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
    expect(JSON.parse(unescaped)).toStrictEqual(asJson(hostile));
    expect(unescaped).toBe(JSON.stringify(hostile, null, 2));
  });
});

const describePg = await describePostgres('the PostgreSQL dashboard test');

describePg('dashboard over PostgreSQL', () => {
  const { schema, url } = useTestSchema('faultline_dashboard_test');

  it('serves the same data from the same records', async () => {
    const writer = await createPostgresStore({ url: PG_URL, schema });
    await writer.insert(await reader.query({ limit: 100_000 }));
    await writer.close();
    const store = await openStore(url, { readonly: true });
    const onPg = await startDashboard({ store, alerts: MONITOR_ALERT_CONFIG, now: () => MONITOR_NOW });
    try {
      for (const path of ['/api/dashboard?since=24h', '/api/dashboard?since=7d&tool=search_flights', `/api/traces/${SESSION_TRACE}`]) {
        const fromPg = (await (await fetch(`${onPg.url}${path}`)).json()) as { trajectory?: unknown };
        const fromSqlite = await json<{ trajectory?: unknown }>(path);
        // Trajectories were stored in the SQLite file only.
        if ('trajectory' in fromSqlite) fromSqlite.trajectory = null;
        expect(fromPg, path).toStrictEqual(fromSqlite);
      }
    } finally {
      await onPg.close();
      await store.close();
    }
  });
});

describe('dashboard windows and filters', () => {
  const HOUR = 3_600_000;
  // Two agents of one FailBench run, another run, and a runtime session, over a few hours.
  const scoped = [
    ...Array.from({ length: 6 }, (_, i) =>
      makeRecord({ tool_name: 'search', trace_id: `failbench:run-a:robust:s${i}:0`, context_snapshot: { failbench_run_id: 'run-a', agent: 'robust' }, created_at: new Date(MONITOR_NOW - 3 * HOUR + i * 60_000).toISOString() }),
    ),
    ...Array.from({ length: 4 }, (_, i) =>
      makeFailureRecord({ tool_name: 'search', failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', status: 'timeout', trace_id: `failbench:run-a:naive:s${i}:0`, context_snapshot: { failbench_run_id: 'run-a', agent: 'naive' }, created_at: new Date(MONITOR_NOW - 2 * HOUR + i * 60_000).toISOString() }),
    ),
    ...Array.from({ length: 3 }, (_, i) =>
      makeFailureRecord({ tool_name: 'book', failure_stage: 'execution', failure_category: 'business', failure_type: 'conflict', trace_id: `failbench:run-b:naive:s${i}:0`, context_snapshot: { failbench_run_id: 'run-b', agent: 'naive' }, created_at: new Date(MONITOR_NOW - HOUR + i * 60_000).toISOString() }),
    ),
    makeRecord({ tool_name: 'search', trace_id: 'session-1', context_snapshot: { agent: 'robust' }, created_at: new Date(MONITOR_NOW - 30 * 60_000).toISOString() }),
  ];
  let server: Awaited<ReturnType<typeof startDashboard>>;
  const memory = createMemoryStore();
  beforeAll(async () => {
    await memory.insert(scoped);
    server = await startDashboard({ store: memory, now: () => MONITOR_NOW });
  });
  afterAll(async () => server?.close());
  const at = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${server.url}${path}`);
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };
  /** What the same reads give over a store holding only `records`. */
  const only = async (records: readonly ToolExecutionRecord[]) => {
    const store = createMemoryStore();
    await store.insert(records);
    return store;
  };

  it('agent= and run= show only those calls, with the figures of a store holding only them', async () => {
    const window = { since: MONITOR_NOW - DAY, until: MONITOR_NOW };
    const naive = scoped.filter((r) => (r.context_snapshot as { agent?: string }).agent === 'naive');
    expect(await at('/api/stats?agent=naive')).toStrictEqual(asJson(await buildStatsReport(await only(naive), window, 3)));
    const runA = scoped.filter((r) => r.trace_id.startsWith('failbench:run-a:'));
    expect(await at('/api/stats?run=run-a')).toStrictEqual(asJson(await buildStatsReport(await only(runA), window, 3)));
    const both = runA.filter((r) => (r.context_snapshot as { agent?: string }).agent === 'naive');
    const snapshot = await at<DashboardSnapshot>('/api/dashboard?run=run-a&agent=naive');
    expect(snapshot.failures.records.map((r) => r.execution_id).sort()).toStrictEqual(both.map((r) => r.execution_id).sort());
    expect(snapshot.stats.tools.map((t) => [t.tool_name, t.total])).toStrictEqual([['search', 4]]);
    expect(snapshot).toMatchObject({ agent: 'naive', run: 'run-a', tool: null });
    // The page says what it is filtered to, with links that lift each filter.
    const page = await (await fetch(`${server.url}/?run=run-a&agent=naive`)).text();
    expect(page).toContain('agent <b>naive</b> (<a href="/?since=24h&amp;run=run-a">any agent</a>)');
    expect(page).toContain('run <b>run-a</b> (<a href="/?since=24h&amp;agent=naive">any run</a>)');
    // A run with no calls in the window is an empty view, not an error.
    expect((await at<DashboardSnapshot>('/api/dashboard?run=nope')).stats.tools).toStrictEqual([]);
  });

  it('until= ends the window as `stats --until` does, and a form\'s blank fields are no filter', async () => {
    const until = new Date(MONITOR_NOW - 90 * 60_000).toISOString();
    const window = { since: MONITOR_NOW - 90 * 60_000 - 2 * HOUR, until: MONITOR_NOW - 90 * 60_000 };
    const api = await at<unknown>(`/api/stats?since=2h&until=${until}`);
    expect(api).toStrictEqual(asJson(await buildStatsReport(memory, window, 3)));
    const failures = await at<FailuresView>(`/api/failures?since=2h&until=${until}`);
    expect(failures.records.every((r) => Date.parse(r.created_at) < window.until)).toBe(true);
    expect(failures.records).toHaveLength(4);
    expect(await at(`/api/stats?since=2h&until=${until}&tool=&agent=&run=`)).toStrictEqual(api);
    const bad = await fetch(`${server.url}/api/stats?until=tomorrow`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toStrictEqual({ error: 'invalid until "tomorrow": expected an ISO date like 2026-03-29T14:00Z' });
  });

  it('charts span the data\'s own hours when the window reaches far beyond them', async () => {
    // A window from eight months before the data: the axis starts at the first hour with calls.
    const wide = await at<HourlyView>('/api/hourly?since=2025-07-01');
    expect([wide.hours[0], wide.hours.at(-1)]).toStrictEqual(['2026-03-29T11:00:00.000Z', '2026-03-29T14:00:00.000Z']);
    // One that ends months after them ends at the last hour with calls; a start a few hours
    // before the first call is kept.
    const later = await at<HourlyView>('/api/hourly?since=2026-03-29T06:00Z&until=2026-12-01T00:00Z');
    expect([later.hours[0], later.hours.at(-1), later.hours.length]).toStrictEqual(['2026-03-29T06:00:00.000Z', '2026-03-29T14:00:00.000Z', 9]);
    // A day of window is kept as it is: an hour without calls is news.
    const day = await at<HourlyView>('/api/hourly?since=24h');
    expect(day.hours).toHaveLength(25);
    expect((await at<HourlyView>('/api/hourly?since=24h&run=nope')).hours).toStrictEqual([]);
  });

  it('refuses an agent or run view over more records than it reads, with one line', async () => {
    await expect(scopedStore(memory, { since: MONITOR_NOW - DAY, until: MONITOR_NOW }, { agent: 'naive', run: null }, 10)).rejects.toThrow(
      'the agent and run filters read the window\'s records one by one, and this window holds 14 (more than 10): narrow it with since and until',
    );
    const small = await scopedStore(memory, { since: MONITOR_NOW - DAY, until: MONITOR_NOW }, { agent: 'naive', run: 'run-b' }, 14);
    expect(await small.count()).toBe(3);
  });
});
