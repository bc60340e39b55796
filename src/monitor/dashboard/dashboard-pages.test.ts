/**
 * The trajectory, review and FailBench run pages over a real SQLite file and real saved runs,
 * through a dashboard on a loopback socket: what they list and filter, that they say what the
 * commands say (`bench compare --json`, `review --json`, `review`'s sample and its saved
 * decisions), that recorded text stays text, and who may save a review decision.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo, runCapture } from '../../cli/run-cli.test-helpers.js';
import { runCli } from '../../cli/run-cli.js';
import { saveRun } from '../../failbench/stored-runs.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { LabelReview, Trajectory, TrajectoryLabel } from '../../core/trajectory-types.js';
import type { ReviewView } from './review-data.js';
import type { RunsComparison, RunsList } from './runs-data.js';
import type { TrajectoryList } from './trajectory-data.js';
import { dashboardTrajectories, startDashboard, XSS_MESSAGE, XSS_REASON, XSS_TASK, XSS_TOOL } from './dashboard.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-dashboard-pages-'));
const runsDir = join(dir, '.faultline', 'bench');
const db = join(dir, 'read.db');
const TOKEN = 'review-token-for-tests';
const NOW = Date.UTC(2026, 2, 29, 15, 0, 0);
let readOnly: Awaited<ReturnType<typeof startDashboard>>;

async function writeTrajectories(path: string, trajectories: readonly Trajectory[]): Promise<void> {
  const store = createSqliteStore({ path });
  await store.insertTrajectories(trajectories);
  await store.close();
}

beforeAll(async () => {
  await writeTrajectories(db, dashboardTrajectories());
  await saveRun(runsDir, { runId: 'run-a', feedback: 'raw' });
  await saveRun(runsDir, { runId: 'run-b', feedback: 'assisted' });
  readOnly = await startDashboard({ store: createSqliteStore({ path: db, readonly: true }), runsDir, now: () => NOW });
}, 60_000);
afterAll(async () => {
  await readOnly?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function getJson<T>(base: string, path: string): Promise<T> {
  const res = await fetch(`${base}${path}`);
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

async function getHtml(base: string, path: string): Promise<string> {
  const res = await fetch(`${base}${path}`);
  expect(res.status, path).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  // Without the line-break hints table cells put after separators, so names read whole.
  return (await res.text()).replaceAll('<wbr>', '');
}

const ids = (list: TrajectoryList) => list.trajectories.map((t) => t.trajectory_id);
const range = (pick: (i: number) => boolean) => Array.from({ length: 40 }, (_, i) => i).filter(pick).map((i) => `traj-${String(i).padStart(2, '0')}`);

describe('trajectory pages', () => {
  it('lists trajectories with source, outcome, labels and failed steps, filtered and paged', async () => {
    const all = await getJson<TrajectoryList>(readOnly.url, '/api/trajectories');
    expect(ids(all)).toStrictEqual(range(() => true));
    expect(all.next_after).toBeNull();
    const first = all.trajectories[4]!;
    expect(first).toMatchObject({ source: 'step-log', source_id: 'log:4', final_outcome: 'failure', steps: 2, judge_labels: 1, reviewed: 0 });
    expect(first.failed_steps).toStrictEqual([{ step_index: 1, tool_name: 'search_flights', status: 'timeout', failure: 'timeout' }]);
    expect(first.labels).toStrictEqual([{ name: 'ignored_error', count: 1 }, { name: 'semantic_error', count: 1 }]);

    expect(ids(await getJson(readOnly.url, '/api/trajectories?outcome=failure'))).toStrictEqual(range((i) => i % 4 === 0));
    expect(ids(await getJson(readOnly.url, '/api/trajectories?failed=1'))).toStrictEqual(range((i) => i % 4 === 0));
    expect(ids(await getJson(readOnly.url, '/api/trajectories?label=none'))).toStrictEqual(range((i) => i % 10 === 9));
    expect(ids(await getJson(readOnly.url, '/api/trajectories?label=ignored_error&outcome=failure'))).toStrictEqual(range((i) => i % 4 === 0 && i % 10 !== 9));
    expect(ids(await getJson(readOnly.url, '/api/trajectories?source=openai'))).toStrictEqual([]);
    const page = await getJson<TrajectoryList>(readOnly.url, '/api/trajectories?limit=15');
    expect(ids(page)).toStrictEqual(range((i) => i < 15));
    expect(ids(await getJson(readOnly.url, `/api/trajectories?limit=15&after=${page.next_after}`))).toStrictEqual(range((i) => i >= 15 && i < 30));

    const bad = await fetch(`${readOnly.url}/api/trajectories?outcome=meh`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toStrictEqual({ error: 'invalid outcome "meh": expected one of success, failure, partial, unknown' });

    const html = await getHtml(readOnly.url, '/trajectories?outcome=failure&label=ignored_error');
    expect(html).toContain('<table id="trajectories"');
    expect(html.match(/<tr data-id="traj-/g)).toHaveLength(range((i) => i % 4 === 0 && i % 10 !== 9).length);
    expect(html).toContain('<option value="failure" selected>');
  });

  it('shows a trajectory: steps with decisions, labels, and the judge verdicts with their reviews', async () => {
    const html = await getHtml(readOnly.url, '/trajectories/traj-04');
    expect(html).toContain('<table id="steps"');
    expect(html.match(/<tr data-step="/g)).toHaveLength(2);
    expect(html).toContain('<table id="labels"');
    expect(html).toContain('<table id="verdicts"');
    expect(html).toContain('judge:llm:test-model');
    expect(html).toContain('claims_success');
    expect(html).toContain('0 of 1 reviewed');
    const stored = await getJson<Trajectory>(readOnly.url, '/api/trajectories/traj-04');
    expect(stored.trajectory_id).toBe('traj-04');
    expect((await fetch(`${readOnly.url}/trajectories/traj-99`)).status).toBe(404);
  });

  it('escapes every recorded string on the list, the trajectory and the review page', async () => {
    for (const path of ['/trajectories', '/trajectories/traj-00', '/review']) {
      const html = await getHtml(readOnly.url, path);
      for (const raw of [XSS_TOOL, XSS_MESSAGE, XSS_TASK, XSS_REASON, '<script>window', '<img src=x', '<svg onload']) expect(html, `${path}: ${raw}`).not.toContain(raw);
    }
    const page = await getHtml(readOnly.url, '/trajectories/traj-00');
    expect(page).toContain('&lt;img src=x onerror=&quot;window.__pwned=6&quot;&gt;book a flight &amp; &quot;confirm&quot;');
    expect(page).toContain('&lt;script&gt;window.__pwned=7&lt;/script&gt;');
  });
});

describe('FailBench run pages', () => {
  it('lists the saved runs, newest first, and shows one run per agent and dimension', async () => {
    const list = await getJson<RunsList>(readOnly.url, '/api/runs');
    expect(list.runs.map((r) => r.id).sort()).toStrictEqual(['run-a', 'run-b']);
    expect(list.runs[0]!.scores.map((s) => s.agent)).toStrictEqual(['patient', 'hammer']);
    const html = await getHtml(readOnly.url, '/runs');
    expect(html).toContain('<table id="runs"');
    expect(html).toContain('<form method="get" action="/runs/compare" id="compare-form">');
    const run = await getHtml(readOnly.url, '/runs/run-a');
    expect(run).toContain('<table id="scores"');
    expect(run).toContain('<tr data-agent="patient">');
    expect(run).toContain('Retry-After compliance');
    expect(run).toContain('run=run-a');
    expect((await fetch(`${readOnly.url}/runs/run-z`)).status).toBe(404);
    expect((await fetch(`${readOnly.url}/runs/a%2Fb`)).status).toBe(404);
  });

  it('compares two runs as `bench compare` does, per dimension with intervals', async () => {
    const api = await getJson<RunsComparison>(readOnly.url, '/api/runs/compare?a=run-a&b=run-b');
    const cli = await runCapture(['bench', 'compare', 'run-a', 'run-b', '--json'], dir);
    expect(cli.code).toBe(0);
    expect(api.comparisons).toStrictEqual(JSON.parse(cli.stdout));
    expect(api.differences).toStrictEqual(['feedback (A raw, B assisted)']);

    const text = (await runCapture(['bench', 'compare', 'run-a', 'run-b'], dir)).stdout;
    const html = await getHtml(readOnly.url, '/runs/compare?a=run-a&b=run-b');
    // Every figure the command prints is on the page: rates with n, differences, intervals, scores.
    const figures = [...new Set(text.match(/[+-]?\d+\.\d%(?: n=\d+)?|[+-]\d+\.\d pp/g) ?? [])];
    expect(figures.length).toBeGreaterThan(10);
    for (const f of figures) expect(html, f).toContain(f);
    expect(html).toContain('<tr data-dimension="recovery">');
    expect(html).toContain('Note: the runs differ in feedback (A raw, B assisted)');
    expect((await fetch(`${readOnly.url}/runs/compare?a=run-a`)).status).toBe(400);
    expect((await fetch(`${readOnly.url}/api/runs/compare?a=run-a&b=nope`)).status).toBe(404);
  });
});

/** A POST naming another host (fetch sets Host itself). */
function statusWithHost(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/review/decisions', headers: { host, authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end('{}');
  });
}

async function cliReview(path: string, args: readonly string[], answers?: string) {
  const captured = captureIo(dir);
  if (answers !== undefined) captured.io.stdin = Readable.from([answers]);
  const code = await runCli(['review', '--db', path, ...args], captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

async function judgeLabels(path: string): Promise<Map<string, TrajectoryLabel>> {
  const store = createSqliteStore({ path, readonly: true });
  const all = await store.queryTrajectories({});
  await store.close();
  return new Map(all.flatMap((t) => (t.labels ?? []).filter((l) => l.source?.startsWith('judge:')).map((l) => [t.trajectory_id, l] as const)));
}

describe('review in the browser', () => {
  it('is read-only without a token: the page says so and a decision is refused', async () => {
    const html = await getHtml(readOnly.url, '/review');
    expect(html).toContain('id="review-read-only"');
    expect(html).not.toContain('data-decision=');
    const res = await fetch(`${readOnly.url}/api/review/decisions`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
  });

  it("samples what `faultline review` samples, saves decisions as it saves them, and reports the same precision", async () => {
    const webDb = join(dir, 'web.db');
    const cliDb = join(dir, 'cli.db');
    await writeTrajectories(webDb, dashboardTrajectories());
    copyFileSync(webDb, cliDb);
    const web = await startDashboard({ store: createSqliteStore({ path: webDb }), runsDir, now: () => NOW, reviewToken: TOKEN });
    try {
      const view = await getJson<ReviewView>(web.url, '/api/review');
      expect(view).toMatchObject({ enabled: true, share: 0.05, seed: 1, judge_labels: 36, unreviewed: 36, sampled: 2 });
      // The command, with its defaults, puts the same labels to the reviewer: accept, then correct to the 2nd label offered.
      const cli = await cliReview(cliDb, [], 'a\nc\n2\n');
      expect(cli.stdout).toContain('reviewing 2 of 36 unreviewed judge labels (share 0.05, seed 1)');
      expect([...cli.stdout.matchAll(/\] trajectory (traj-\d+)/g)].map((m) => m[1])).toStrictEqual(view.items.map((i) => i.ref.trajectory_id));

      const post = (body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${web.url}/api/review/decisions`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      const [first, second] = view.items;
      expect((await post({ ...first!.ref, decision: 'accepted' })).status).toBe(200);
      const corrected = await post({ ...second!.ref, decision: 'corrected', corrected_to: 'idempotency_risk' });
      expect(corrected.status).toBe(200);
      expect(((await corrected.json()) as { review: LabelReview }).review).toStrictEqual({ decision: 'corrected', corrected_to: 'idempotency_risk', reviewed_at: new Date(NOW).toISOString() });
      // Decided once: a second decision on the same label is refused, and the first stays.
      const again = await post({ ...first!.ref, decision: 'rejected' });
      expect(again.status).toBe(409);

      const [webLabels, cliLabels] = [await judgeLabels(webDb), await judgeLabels(cliDb)];
      const withoutTime = (l: TrajectoryLabel | undefined) => (l?.review === undefined ? l : { ...l, review: { ...l.review, reviewed_at: 'T' } });
      for (const id of webLabels.keys()) expect(withoutTime(webLabels.get(id)), id).toStrictEqual(withoutTime(cliLabels.get(id)));
      expect([...webLabels.values()].filter((l) => l.review !== undefined)).toHaveLength(2);

      const report = JSON.parse((await cliReview(webDb, ['--json'])).stdout) as unknown;
      expect((await getJson<ReviewView>(web.url, '/api/review')).report).toStrictEqual(report);
      // The page's policy admits its two scripts, by hash, and nothing else.
      const res = await fetch(`${web.url}/review`);
      const scripts = [...(await res.text()).matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
      expect(scripts).toHaveLength(2);
      expect(res.headers.get('content-security-policy')).toContain(`script-src ${scripts.join(' ')};`);
      const page = await getHtml(web.url, '/review');
      expect(page).toContain('<table id="precision-by-judge"');
      expect(page).toContain('2 of 36 judge labels reviewed');
    } finally {
      await web.close();
    }
  });

  it('saves a decision only with the admin token, from its own origin, as JSON, for a judge label', async () => {
    const path = join(dir, 'guarded.db');
    await writeTrajectories(path, dashboardTrajectories());
    const web = await startDashboard({ store: createSqliteStore({ path }), runsDir, now: () => NOW, reviewToken: TOKEN });
    const ref = { trajectory_id: 'traj-01', step_index: 2, name: 'semantic_error', source: 'judge:heuristic' };
    const post = (headers: Record<string, string>, body: unknown = { ...ref, decision: 'accepted' }, method = 'POST') =>
      fetch(`${web.url}/api/review/decisions`, { method, headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const bearer = { authorization: `Bearer ${TOKEN}` };
    try {
      const none = await post({});
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="faultline"');
      expect((await post({ authorization: 'Bearer not-the-token' })).status).toBe(401);
      expect((await post({ ...bearer, origin: 'http://evil.example' })).status).toBe(403);
      expect((await post({ ...bearer, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
      expect(await statusWithHost(web.port, 'evil.example')).toBe(403);
      expect((await post({ ...bearer, 'content-type': 'text/plain' })).status).toBe(415);
      expect((await post(bearer, '{not json')).status).toBe(400);
      const bad = await post(bearer, { ...ref, decision: 'corrected', corrected_to: 'semantic_error' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toMatch(/^invalid corrected_to "semantic_error": expected a label other than semantic_error/);
      // A rule's label is not the judges' to review.
      expect((await post(bearer, { ...ref, step_index: 1, name: 'blind_retry', source: '', decision: 'accepted' })).status).toBe(400);
      expect((await post(bearer, { ...ref, step_index: 1, name: 'blind_retry', source: 'judge:heuristic', decision: 'accepted' })).status).toBe(404);
      expect((await post(bearer, { ...ref, decision: 'accepted' }, 'PUT')).status).toBe(405);
      expect([...(await judgeLabels(path)).values()].filter((l) => l.review !== undefined)).toHaveLength(0);
      const ok = await post({ ...bearer, origin: web.url });
      expect(ok.status).toBe(200);
      expect((await judgeLabels(path)).get('traj-01')!.review).toStrictEqual({ decision: 'accepted', reviewed_at: new Date(NOW).toISOString() });
    } finally {
      await web.close();
    }
  });
});
