import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { weatherTrajectory } from '../../dataset/augment/augment.test-helpers.js';
import type { DatasetCard } from '../../dataset/dataset-card.js';
import { blindRetry, failedTask, recovered } from '../../dataset/dataset.test-helpers.js';
import type { FewShotRow } from '../../dataset/few-shot-exporter.js';
import { exportPredictor, PREDICTOR_FIXED_COLUMNS, PREDICTOR_PARAM_FEATURES, type PredictorRow } from '../../dataset/predictor-exporter.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { tauBenchAirlineFile } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-export-fsp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const db = join(dir, 'store.db');
const text = (name: string): string => readFileSync(join(dir, name), 'utf8');
const lines = (name: string): string[] => text(name).split('\n').filter((l) => l !== '');
const cardOf = (name: string): DatasetCard => JSON.parse(text(`${name}.card.json`)) as DatasetCard;
const trajectories = () => [weatherTrajectory('traj_w1'), weatherTrajectory('traj_w2'), blindRetry(), recovered(), failedTask()];

async function run(args: readonly string[]) {
  const r = await runCapture(args, dir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

beforeAll(async () => {
  const store = createSqliteStore({ path: db });
  await store.insertTrajectories(trajectories());
  await store.close();
});

describe('faultline export --format few-shot', () => {
  it('writes ranked snippets with their fixes as JSONL, and Markdown for .md', async () => {
    await run(['export', '--format', 'few-shot', '--db', db, '--out', 'fs.jsonl', '--val-fraction', '0']);
    const rows = lines('fs.jsonl').map((l) => JSON.parse(l) as FewShotRow);
    expect(rows.map((r) => `${r.tool}#${r.rank}:${r.kind}:${r.count}:${r.example.fix.action}`)).toEqual([
      'get_order#1:not_found:2:switch_tool',
      'get_weather#1:invalid_date:2:retry_with_params',
      // The timeouts were waited out too briefly or retried blindly: decisions judged incorrect are no example.
    ]);
    expect(rows[1]!.source_trajectory_ids).toEqual(['traj_w1', 'traj_w2']);
    expect(lines('fs.jsonl.val.jsonl')).toEqual([]);
    const card = cardOf('fs.jsonl');
    expect(card).toMatchObject({ format: 'few-shot', trajectories_read: 5, trajectories_exported: 5, splits: { train: { trajectories: 5, examples: 2 }, validation: { trajectories: 0, examples: 0 } } });
    expect(card.by_failure_category).toEqual({ business: 3, network: 3, parameter: 2 });

    await run(['export', '--format', 'few-shot', '--db', db, '--out', 'fs.md', '--val-fraction', '0', '--top', '1']);
    const md = text('fs.md');
    expect(md).toMatch(/^# Known tool failures and the fixes that worked\n/);
    expect(md).toContain('## get_weather\n\n### 1. invalid_date (2 failed calls in 2 trajectories)');
    expect(md).not.toContain('timeout (2 failed calls');
    expect(text('fs.md.val.md')).toContain('(no failure with an observed fix)');
    expect(cardOf('fs.md').files).toEqual({ train: 'fs.md', validation: 'fs.md.val.md' });
    expect(readdirSync(dir).filter((f) => f.includes('.partial-'))).toEqual([]);
  });
});

describe('faultline export --format predictor', () => {
  it('writes one row per call as JSONL, and CSV with every column for .csv', async () => {
    await run(['export', '--format', 'predictor', '--db', db, '--out', 'p.jsonl', '--val-fraction', '0.5', '--seed', '2']);
    const all = [...lines('p.jsonl'), ...lines('p.jsonl.val.jsonl')].map((l) => JSON.parse(l) as PredictorRow);
    const expected = trajectories().flatMap((t) => exportPredictor(t).examples);
    expect(all).toHaveLength(expected.length);
    const card = cardOf('p.jsonl');
    const failed = expected.filter((r) => r.failed).length;
    const classes = card.examples_by_class!;
    expect((classes.train['failed'] ?? 0) + (classes.validation['failed'] ?? 0)).toBe(failed);
    expect((classes.train['succeeded'] ?? 0) + (classes.validation['succeeded'] ?? 0)).toBe(expected.length - failed);
    // No trajectory on both sides.
    const ids = (name: string) => new Set(lines(name).map((l) => (JSON.parse(l) as PredictorRow).trajectory_id));
    const val = ids('p.jsonl.val.jsonl');
    expect([...ids('p.jsonl')].filter((id) => val.has(id))).toEqual([]);

    await run(['export', '--format', 'predictor', '--db', db, '--out', 'p.csv', '--val-fraction', '0']);
    const [header, ...rows] = text('p.csv').trimEnd().split('\n');
    const columns = header!.split(',');
    expect(columns.slice(0, PREDICTOR_FIXED_COLUMNS.length)).toEqual([...PREDICTOR_FIXED_COLUMNS]);
    const params = ['channel', 'city', 'customer', 'date', 'days', 'id', 'limit', 'month', 'ref', 'seat', 'text', 'unit'];
    expect(columns.slice(PREDICTOR_FIXED_COLUMNS.length)).toEqual(params.flatMap((p) => PREDICTOR_PARAM_FEATURES.map((f) => `p.${p}.${f}`)));
    expect(rows).toHaveLength(expected.length);
    expect(text('p.csv.val.csv')).toBe(`${header}\n`);
    // The first row is blindRetry's timeout (the store pages by id): failed, and `month` sent but not `city`.
    const cell = (row: string, column: string) => row.split(',')[columns.indexOf(column)];
    expect(cell(rows[0]!, 'trajectory_id')).toBe('traj_blind_retry');
    expect(cell(rows[0]!, 'failed')).toBe('true');
    expect(cell(rows[0]!, 'p.month.present')).toBe('true');
    expect(cell(rows[0]!, 'p.city.present')).toBe('false');
    expect(cell(rows[0]!, 'p.city.type')).toBe('');
  });

  it('rejects encodings and flags a format does not take, with one line and exit 2', async () => {
    const before = readdirSync(dir).sort();
    for (const args of [
      ['export', '--format', 'sft', '--db', db, '--out', 'x.csv'],
      ['export', '--format', 'predictor', '--db', db, '--out', 'x.md'],
      ['export', '--format', 'few-shot', '--db', db, '--out', 'x.jsonl', '--top', '0'],
      ['export', '--format', 'few-shot', '--db', db, '--out', 'x.jsonl', '--top', 'many'],
      ['export', '--format', 'kto', '--db', db, '--out', 'x.jsonl', '--top', '2'],
    ]) {
      const r = await runCapture(args, dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
    expect(readdirSync(dir).sort()).toEqual(before);
  });
});

const tau = tauBenchAirlineFile();
describe('on the real tau-bench airline file', () => {
  it('imports, annotates, augments, and exports few-shot and predictor without a trajectory on both sides', async () => {
    const tauDb = join(dir, 'tau.db');
    await run(['import', '--format', 'tau-bench', tau, '--db', tauDb]);
    await run(['annotate', '--db', tauDb]);
    expect((await run(['augment', '--db', tauDb])).stdout).toMatch(/^faultline augment: (\d+) failure trajectories of 200 read: \d+ variants .*, (\d+) stored, 0 already stored\n$/);

    await run(['export', '--format', 'few-shot', '--db', tauDb, '--out', 'tau-fs.jsonl', '--seed', '1', '--val-fraction', '0.3']);
    const train = lines('tau-fs.jsonl').map((l) => JSON.parse(l) as FewShotRow);
    const val = lines('tau-fs.jsonl.val.jsonl').map((l) => JSON.parse(l) as FewShotRow);
    expect(train.length).toBeGreaterThan(0);
    const card = cardOf('tau-fs.jsonl');
    expect(card.skipped['augmented (few-shot ranks observed failures)']).toBeGreaterThan(0);
    expect(card.by_source).toEqual({ 'tau-bench': card.trajectories_exported });
    for (const rows of [train, val]) {
      const perTool = new Map<string, number>();
      for (const r of rows) perTool.set(r.tool, (perTool.get(r.tool) ?? 0) + 1);
      expect(Math.max(0, ...perTool.values())).toBeLessThanOrEqual(3);
      for (const r of rows) expect(r.count).toBeGreaterThanOrEqual(r.trajectory_count);
    }
    const valIds = new Set(val.flatMap((r) => r.source_trajectory_ids));
    expect(train.flatMap((r) => r.source_trajectory_ids).filter((id) => valIds.has(id))).toEqual([]);

    await run(['export', '--format', 'predictor', '--db', tauDb, '--out', 'tau-p.jsonl', '--seed', '1']);
    const rows = [...lines('tau-p.jsonl'), ...lines('tau-p.jsonl.val.jsonl')].map((l) => JSON.parse(l) as PredictorRow);
    const pcard = cardOf('tau-p.jsonl');
    expect(rows).toHaveLength(pcard.splits.train.examples + pcard.splits.validation.examples);
    expect(pcard.by_source['augmented']).toBeGreaterThan(0);
    expect(rows.filter((r) => r.failed).length).toBe((pcard.examples_by_class!.train['failed'] ?? 0) + (pcard.examples_by_class!.validation['failed'] ?? 0));
    // A variant's rows sit on its source's side: no failure pattern is on both sides.
    const sideOf = new Map<string, string>();
    for (const [name, side] of [['tau-p.jsonl', 'train'], ['tau-p.jsonl.val.jsonl', 'validation']] as const) for (const l of lines(name)) sideOf.set((JSON.parse(l) as PredictorRow).trajectory_id, side);
    const stored = createSqliteStore({ path: tauDb });
    const variants = await stored.queryTrajectories({ source: 'augmented', limit: 10_000 });
    await stored.close();
    for (const v of variants) if (sideOf.has(v.trajectory_id)) expect(sideOf.get(v.trajectory_id)).toBe(sideOf.get(v.metadata.augmentation!.source_trajectory_id));
    // Every variant keeps its source's failure pattern; renamed and domain variants name none of its tools.
    const again = createSqliteStore({ path: tauDb });
    for (const v of variants) {
      const source = (await again.getTrajectory(v.metadata.augmentation!.source_trajectory_id))!;
      const pattern = (t: typeof v) => t.steps.map((s) => [s.status, s.failure_category, s.failure_kind, s.response.error_code, s.agent_decision.action, s.decision_correctness]);
      expect(pattern(v)).toEqual(pattern(source));
      expect(v.labels?.map((l) => l.name)).toEqual(source.labels?.map((l) => l.name));
      if (v.metadata.augmentation!.kind === 'perturb') continue;
      const text = JSON.stringify(v.steps.map((s) => [s.tool_name, s.input_params, s.response, s.agent_decision]));
      for (const tool of new Set(source.steps.map((s) => s.tool_name))) expect(text, `${v.metadata.augmentation!.kind} of ${source.trajectory_id}`).not.toMatch(new RegExp(`(?<![A-Za-z0-9_])${tool}(?![A-Za-z0-9_])`));
    }
    await again.close();
  }, 120_000);
});

