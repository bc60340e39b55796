import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCard } from '../../predict/model-card.js';
import { parsePredictorModel } from '../../predict/predictor-model.js';
import { recordPredictorRuns, storeTrajectories } from '../../predict/predictor.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-predictor-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const db = join(dir, 'runs.db');
const recordsOnly = join(dir, 'records.db');
const text = (name: string): string => readFileSync(join(dir, name), 'utf8');

async function run(args: readonly string[]) {
  const r = await runCapture(args, dir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

beforeAll(async () => {
  await storeTrajectories(db, await recordPredictorRuns(db, 160));
  await recordPredictorRuns(recordsOnly, 160);
}, 120_000);

describe('faultline predictor train', () => {
  it('trains on exported rows, writes the model and its card, and prints the card with --json', async () => {
    await run(['export', '--format', 'predictor', '--db', db, '--out', 'rows.jsonl', '--val-fraction', '0']);
    const r = await run(['predictor', 'train', '--input', 'rows.jsonl', '--out', 'model.json', '--seed', '2', '--json']);
    const card = JSON.parse(r.stdout) as ModelCard;
    const model = parsePredictorModel(JSON.parse(text('model.json')));
    expect(model.card).toEqual(card);
    expect(card.seed).toBe(2);
    expect(card.rows.used).toBe(text('rows.jsonl').trim().split('\n').length);
    expect(card.test.auc).toBeGreaterThan(0.8);
    expect(card.test.f1).toBeGreaterThan(card.baseline.f1_flag_every_call);
    const md = text('model.json.card.md');
    expect(md).toContain(`| precision | ${card.test.precision.toFixed(3)} | ${card.base_rate.test.toFixed(3)} |`);
    expect(md).toContain(`| recall | ${card.test.recall.toFixed(3)} |`);
    expect(md).toContain(`| \`${card.top_features[0]!.feature}\` |`);
    expect(readdirSync(dir).filter((f) => f.includes('.partial-'))).toEqual([]);

    // The same seed and rows give the same file, from the store as from the export.
    const again = await run(['predictor', 'train', '--db', db, '--out', 'from-store.json', '--seed', '2']);
    expect(again.stdout).toMatch(/^faultline predictor train: \d+ calls \(\d+ from \d+ held-back trajectories\): precision 0\.\d\d, recall 0\.\d\d, F1 0\.\d\d, AUC 0\.\d\d \(base rate 0\.\d\d\) at threshold 0\.\d\d; model in from-store\.json, card in from-store\.json\.card\.md\n$/);
    expect(parsePredictorModel(JSON.parse(text('from-store.json'))).card.test).toEqual(card.test);
  }, 60_000);

  it('reads a store of records only (a runtime stores no trajectories) by trace', async () => {
    const r = await run(['predictor', 'train', '--db', recordsOnly, '--out', 'records.json', '--json']);
    const card = JSON.parse(r.stdout) as ModelCard;
    expect(card.trajectories.train + card.trajectories.test).toBe(160);
    expect(card.test.brier).toBeLessThan(card.baseline.brier);
  }, 60_000);

  it('refuses bad input with one line and exit 2, writing nothing', async () => {
    writeFileSync(join(dir, 'model-keep.json'), 'previous\n');
    writeFileSync(join(dir, 'bad.jsonl'), '{"trajectory_id":"t","tool":"x","failed":true}\n{not json\n');
    writeFileSync(join(dir, 'shape.jsonl'), '{"trajectory_id":"t","tool":"x","failed":"yes"}\n');
    const rows = text('rows.jsonl').trim().split('\n');
    writeFileSync(join(dir, 'few.jsonl'), `${rows.slice(0, 5).join('\n')}\n`);
    writeFileSync(join(dir, 'ok-only.jsonl'), `${rows.filter((l) => l.includes('"failed":false')).join('\n')}\n`);
    execFileSync('mkfifo', [join(dir, 'pipe.jsonl')]);
    const before = readdirSync(dir).sort();
    const cases: [string[], RegExp][] = [
      [['--input', 'missing.jsonl'], /cannot read predictor rows missing\.jsonl: /],
      [['--input', 'pipe.jsonl'], /FIFO/],
      [['--input', 'bad.jsonl'], /bad\.jsonl line 2: not JSON/],
      [['--input', 'shape.jsonl'], /shape\.jsonl line 1: not a predictor row/],
      [['--input', 'few.jsonl'], /5 usable rows: a predictor needs at least 20/],
      [['--input', 'ok-only.jsonl'], /all successes/],
      [['--db', join(dir, 'nowhere.db')], /nowhere\.db/],
      [['--input', 'rows.jsonl', '--db', db], /--input or --db, not both/],
      [['--input', 'rows.jsonl', '--test-fraction', '1'], /--test-fraction must be a number in \(0, 1\)/],
      [['--input', 'rows.jsonl', '--l2', '0'], /--l2 must be a positive number/],
      [['--input', 'rows.jsonl', '--seed', '-1'], /--seed must be a non-negative integer/],
    ];
    for (const [args, message] of cases) {
      const r = await runCapture(['predictor', 'train', ...args, '--out', 'model-keep.json'], dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0], args.join(' ')).toMatch(message);
    }
    expect(readdirSync(dir).sort()).toEqual(before);
    expect(text('model-keep.json')).toBe('previous\n');
  }, 60_000);
});
