import { HEURISTIC_JUDGE_QUALITY } from '../../annotate/judge/heuristic-judge-quality.js';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { PrecisionReport } from '../../annotate/review.js';
import { trajectory } from '../../annotate/trajectory.test-helpers.js';
import { wilson } from '../../stats/wilson.js';
import { createPostgresStore } from '../../store/postgres/postgres-store.js';
import { describePostgres, PG_URL, useTestSchema } from '../../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { LabelReview, Trajectory, TrajectoryLabel } from '../../core/trajectory-types.js';
import { runCli } from '../run-cli.js';
import { captureIo, runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 40 trajectories, each with a rule label and one judge label (llm on even ids, heuristic on odd). */
function fixture(reviews: Partial<Record<string, LabelReview>> = {}): Trajectory[] {
  return Array.from({ length: 40 }, (_, i) => {
    const id = `t-${String(i).padStart(2, '0')}`;
    const base = trajectory([{ tool: 'get_weather', params: { city: 'Shanghai', date: '2026-03-29' }, body: { temp: 18 } }], { task: `上海明天的天气 #${i}` });
    const judge: TrajectoryLabel = { name: 'semantic_error', step_index: 1, confidence: 0.7, reason: `judged ${id}`, source: i % 2 === 0 ? 'judge:llm:m' : 'judge:heuristic' };
    const review = reviews[id];
    if (review !== undefined) judge.review = review;
    return { ...base, trajectory_id: id, source_id: id, labels: [{ name: 'loop_failure', step_index: 1, confidence: 0.9, reason: 'a rule' }, judge] };
  });
}

async function fixtureStore(name: string, reviews: Partial<Record<string, LabelReview>> = {}): Promise<string> {
  const path = join(dir, name);
  const store = createSqliteStore({ path });
  await store.insertTrajectories(fixture(reviews));
  await store.close();
  return path;
}

async function review(args: readonly string[], answers?: string) {
  const captured = captureIo(dir);
  if (answers !== undefined) captured.io.stdin = Readable.from([answers]);
  const code = await runCli(['review', ...args], captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

const shown = (stdout: string): string[] => [...stdout.matchAll(/\] trajectory (t-\d+)/g)].map((m) => m[1]!);

async function judgeLabelsOf(db: string): Promise<Map<string, TrajectoryLabel>> {
  const store = createSqliteStore({ path: db, readonly: true });
  const all = await store.queryTrajectories({});
  await store.close();
  return new Map(all.map((t) => [t.trajectory_id, t.labels!.find((l) => l.source !== undefined)!]));
}

describe('faultline review', () => {
  it('samples the share (at least one) deterministically by seed, and shows each label', async () => {
    const db = await fixtureStore('sample.db');
    const skipAll = 's\n'.repeat(10);
    const first = await review(['--db', db, '--share', '0.1', '--seed', '7'], skipAll);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('reviewing 4 of 40 unreviewed judge labels (share 0.1, seed 7)');
    const ids = shown(first.stdout);
    expect(ids).toHaveLength(4);
    expect([...ids].sort()).toEqual(ids);
    expect(first.stdout).toContain('instruction: 上海明天的天气');
    expect(first.stdout).toContain('call:        get_weather {"city":"Shanghai","date":"2026-03-29"}');
    expect(first.stdout).toContain('output:      {"temp":18}');
    expect(first.stdout).toMatch(/judge:       judge:(llm:m|heuristic) says semantic_error \(confidence 0\.7\)/);
    expect(first.stdout).toContain('reviewed 0: 0 accepted, 0 corrected, 0 not a failure, 4 skipped');
    expect(shown((await review(['--db', db, '--share', '0.1', '--seed', '7'], skipAll)).stdout)).toEqual(ids);
    expect(shown((await review(['--db', db, '--share', '0.1', '--seed', '8'], skipAll)).stdout)).not.toEqual(ids);
    expect(shown((await review(['--db', db, '--share', '0.001'], skipAll)).stdout)).toHaveLength(1);
    // The default share is 5 %: 2 of 40.
    expect(shown((await review(['--db', db], skipAll)).stdout)).toHaveLength(2);
  });

  it('stores accept / not a failure / correct decisions on the labels at once, and never samples them again', async () => {
    const db = await fixtureStore('decide.db');
    // An unknown answer is asked again; `c` then `2` corrects to the second label offered; `q` stops.
    const r = await review(['--db', db, '--share', '0.1', '--seed', '3'], 'a\nx\nn\nc\n9x\n2\nq\n');
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('reviewed 3: 1 accepted, 1 corrected, 1 not a failure, 0 skipped');
    expect(r.stdout).toContain('judge precision so far: 33.3% of 3 reviewed');
    const ids = shown(r.stdout);
    expect(ids).toHaveLength(4);
    const labels = await judgeLabelsOf(db);
    expect(labels.get(ids[0]!)!.review).toMatchObject({ decision: 'accepted' });
    expect(labels.get(ids[1]!)!.review).toMatchObject({ decision: 'rejected' });
    expect(labels.get(ids[2]!)!.review).toMatchObject({ decision: 'corrected', corrected_to: 'idempotency_risk' });
    expect(labels.get(ids[3]!)!.review).toBeUndefined();
    expect(Date.parse(labels.get(ids[0]!)!.review!.reviewed_at)).not.toBeNaN();
    expect([...labels.values()].filter((l) => l.review !== undefined)).toHaveLength(3);

    // Input that ends early ends the session like `q`.
    const next = await review(['--db', db, '--share', '0.1', '--seed', '3'], 'a\n');
    expect(next.stdout).toContain('reviewing 4 of 37 unreviewed judge labels');
    expect(shown(next.stdout).filter((id) => ids.slice(0, 3).includes(id))).toEqual([]);
    expect(next.stdout).toContain('input ended: 3 sampled labels left unreviewed');
    expect(next.stdout).toContain('reviewed 1: 1 accepted');
    expect([...(await judgeLabelsOf(db)).values()].filter((l) => l.review !== undefined)).toHaveLength(4);
  });

  it('says what an unknown answer takes; in the correction menu Enter goes back and q quits', async () => {
    const db = await fixtureStore('menu.db');
    // x: unknown; c then Enter: back; a: accepted. c, 99: unknown pick, then q: quit without a decision.
    const r = await review(['--db', db, '--share', '0.1', '--seed', '3'], 'x\nc\n\na\nc\n99\nq\n');
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('please answer a, c, n, s or q: ');
    expect(r.stdout).toMatch(/please answer 1-\d+, or Enter to go back: /);
    expect(r.stdout).toContain('reviewed 1: 1 accepted, 0 corrected, 0 not a failure, 0 skipped');
    const ids = shown(r.stdout);
    expect(ids).toHaveLength(2);
    const labels = await judgeLabelsOf(db);
    expect(labels.get(ids[0]!)!.review).toMatchObject({ decision: 'accepted' });
    expect(labels.get(ids[1]!)!.review).toBeUndefined();
  });

  it('reports precision per judge and per label from a known set of decisions, as text and --json', async () => {
    const at = '2026-03-29T00:00:00.000Z';
    const accepted: LabelReview = { decision: 'accepted', reviewed_at: at };
    const rejected: LabelReview = { decision: 'rejected', reviewed_at: at };
    // llm (even ids): 3 accepted, 1 rejected. heuristic (odd ids): 1 accepted, 1 corrected, 2 rejected.
    const db = await fixtureStore('report.db', {
      't-00': accepted, 't-02': accepted, 't-04': accepted, 't-06': rejected,
      't-01': accepted, 't-03': { decision: 'corrected', corrected_to: 'ignored_error', reviewed_at: at }, 't-05': rejected, 't-07': rejected,
    });
    const json = await review(['--db', db, '--json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as PrecisionReport;
    expect(report.judge_labels).toBe(40);
    expect(report.reviewed).toBe(8);
    expect(report.overall).toEqual({ key: 'all', reviewed: 8, accepted: 4, corrected: 1, rejected: 3, precision: 0.5, ci95: wilson(4, 8) });
    expect(report.by_judge).toEqual([
      { key: 'judge:heuristic', reviewed: 4, accepted: 1, corrected: 1, rejected: 2, precision: 0.25, ci95: wilson(1, 4) },
      { key: 'judge:llm:m', reviewed: 4, accepted: 3, corrected: 0, rejected: 1, precision: 0.75, ci95: wilson(3, 4) },
    ]);
    expect(report.by_label).toEqual([{ ...report.overall, key: 'semantic_error' }]);
    expect((JSON.parse(json.stdout) as { measured: Record<string, unknown> }).measured).toEqual({ 'judge:heuristic': HEURISTIC_JUDGE_QUALITY.semantic_error });
    const text = (await review(['--db', db, '--report'])).stdout;
    // The labelled set's figures first: recall is what reviews of given labels cannot measure.
    const { precision, recall, calls } = HEURISTIC_JUDGE_QUALITY.semantic_error;
    expect(text.split('\n')[0]).toMatch(new RegExp(`^judge:heuristic on the labelled calls in the repository: precision ${precision!.toFixed(2)}, recall ${recall!.toFixed(2)} \\(${calls} calls, `));
    expect(text).toContain('8 of 40 judge labels reviewed');
    expect(text).toMatch(/judge:llm:m\s+4\s+3\s+0\s+1\s+75\.0%/);
    expect(text).toMatch(/all\s+8\s+4\s+1\s+3\s+50\.0%\s+21\.5% - 78\.5%/);
  });

  it('says so when there is nothing to review, and rejects bad flags and a missing stdin with exit 2', async () => {
    const empty = join(dir, 'empty.db');
    await createSqliteStore({ path: empty }).close();
    expect((await review(['--db', empty], '')).stdout).toContain('nothing to review: no judge labels in the store');
    expect((await review(['--db', empty, '--report'])).stdout).toContain('0 of 0 judge labels reviewed');
    const at = '2026-03-29T00:00:00.000Z';
    const reviews = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`t-${String(i).padStart(2, '0')}`, { decision: 'accepted', reviewed_at: at } as LabelReview]));
    expect((await review(['--db', await fixtureStore('done.db', reviews)], '')).stdout).toContain('nothing to review: all 40 judge labels are reviewed');

    const db = await fixtureStore('flags.db');
    expect((await review(['--db', db], '')).stdout).toContain('stdin is not a terminal and gave no answers: nothing reviewed');
    const noStdin = await review(['--db', db]);
    expect(noStdin.code).toBe(2);
    expect(noStdin.stderr).toContain('review needs answers on stdin');
    for (const args of [['--share', '0'], ['--share', '1.5'], ['--share', 'half'], ['--seed', '-1'], ['--seed', 'x'], ['--bogus']]) {
      const bad = await review(['--db', db, ...args], 'a\n');
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect([...(await judgeLabelsOf(db)).values()].filter((l) => l.review !== undefined)).toEqual([]);
  });

  it('refuses a --db that names no store, creating nothing, for reviewing and for --report', async () => {
    const missing = join(dir, 'typo', 'faultline.db');
    for (const args of [['--db', missing], ['--db', missing, '--report']]) {
      const run = await review(args, 'a\n');
      expect(run).toMatchObject({ code: 2, stdout: '' });
      expect(run.stderr).toBe(`faultline: no faultline store at ${missing} (${args.includes('--report') ? 'run `npx faultline demo` or point --db at one' : 'import or record something first, or point --db at one'})\n`);
    }
    expect(existsSync(join(dir, 'typo'))).toBe(false);
  });

  it('keeps decisions through re-annotation, and exports drop the labels a reviewer rejected', async () => {
    const line = (trace: string, params: unknown, extra: Record<string, unknown> = {}) =>
      JSON.stringify({ trace_id: trace, step_index: 1, timestamp: '2026-03-29T14:23:11Z', tool_name: 'get_weather', input_params: params, raw_response: { status_code: 200, body: { temp: 18 } }, ...extra });
    writeFileSync(join(dir, 'weather.jsonl'), `${line('w1', { city: 'Shanghai', date: '2026-03-29' }, { intent: '上海明天的天气', final_outcome: 'success' })}\n`);
    const db = join(dir, 'roundtrip.db');
    expect((await runCapture(['import', '--format', 'step-log', 'weather.jsonl', '--db', db], dir)).code).toBe(0);
    expect((await runCapture(['annotate', '--db', db], dir)).code).toBe(0);
    const r = await review(['--db', db], 'n\n');
    expect(r.stdout).toContain('judge:       judge:heuristic says semantic_error (confidence 0.75)');
    expect(r.stdout).toContain('1 not a failure');
    expect((await runCapture(['annotate', '--db', db], dir)).code).toBe(0);
    const [label] = [...(await judgeLabelsOf(db)).values()];
    expect(label).toMatchObject({ name: 'semantic_error', source: 'judge:heuristic', review: { decision: 'rejected' } });
    expect((await review(['--db', db], '')).stdout).toContain('nothing to review: all 1 judge labels are reviewed');

    expect((await runCapture(['export', '--db', db, '--format', 'trajectories', '--out', 'rt.jsonl', '--val-fraction', '0'], dir)).code).toBe(0);
    const [exported] = readFileSync(join(dir, 'rt.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Trajectory);
    expect(exported!.labels).toEqual([]);
  });
});

const describePg = await describePostgres('the PostgreSQL review test');

describePg('faultline review on PostgreSQL', () => {
  const { schema, url } = useTestSchema('faultline_review_test');

  it('samples the same labels as SQLite and stores the decisions', async () => {
    const store = await createPostgresStore({ url: PG_URL, schema });
    await store.insertTrajectories(fixture());
    await store.close();
    const onPg = await review(['--db', url, '--share', '0.1', '--seed', '7'], 'a\nn\ns\nq\n');
    expect(onPg.stderr).toBe('');
    const onSqlite = await review(['--db', await fixtureStore('pg-twin.db'), '--share', '0.1', '--seed', '7'], 's\n'.repeat(4));
    expect(shown(onPg.stdout)).toEqual(shown(onSqlite.stdout));
    expect(shown(onPg.stdout)).toHaveLength(4);
    const report = JSON.parse((await review(['--db', url, '--json'])).stdout) as PrecisionReport;
    expect(report.overall).toMatchObject({ reviewed: 2, accepted: 1, rejected: 1, precision: 0.5 });
  });

  it('refuses a schema that holds no store, and does not create it', async () => {
    const typo = `${schema}_typo`;
    for (const args of [['--db', `${url}_typo`], ['--db', `${url}_typo`, '--report']]) {
      const run = await review(args, 'a\n');
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const found = await admin.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [typo]);
    await admin.end();
    expect(found.rowCount).toBe(0);
  });
});
