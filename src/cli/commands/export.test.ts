import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { DatasetCard } from '../../dataset/dataset-card.js';
import { blindRetry, failedTask, recovered } from '../../dataset/dataset.test-helpers.js';
import { exportDpoOpenAi } from '../../dataset/dpo-openai-exporter.js';
import { exportSft } from '../../dataset/sft-exporter.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { tauBenchAirlineFile } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FORMATS = ['trajectories', 'sft', 'dpo-openai', 'dpo-trl', 'kto'] as const;
const read = (name: string): string[] => readFileSync(join(dir, name), 'utf8').split('\n').filter((l) => l !== '');
const cardOf = (name: string): DatasetCard => JSON.parse(readFileSync(join(dir, `${name}.card.json`), 'utf8')) as DatasetCard;

async function run(args: readonly string[]) {
  const r = await runCapture(args, dir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

describe('faultline export', () => {
  const db = join(dir, 'hand.db');

  it('writes each format, the validation file and the card from a store', async () => {
    const store = createSqliteStore({ path: db });
    await store.insertTrajectories([blindRetry(), recovered(), failedTask()]);
    await store.close();

    const text = (await run(['export', '--format', 'sft', '--db', db, '--out', 'sft.jsonl', '--val-fraction', '0'])).stdout;
    expect(text).toBe(
      'faultline export: sft, 2 of 3 trajectories: 2 train examples in sft.jsonl, 0 validation examples in sft.jsonl.val.jsonl\nskipped: outcome is failure 1\ncard: sft.jsonl.card.json, sft.jsonl.card.md\n',
    );
    // The store pages by trajectory_id: traj_blind_retry, traj_failed, traj_recovered.
    expect(read('sft.jsonl')).toEqual([...exportSft(blindRetry()).examples, ...exportSft(recovered()).examples].map((e) => JSON.stringify(e)));
    expect(read('sft.jsonl.val.jsonl')).toEqual([]);
    expect(readFileSync(join(dir, 'sft.jsonl.card.md'), 'utf8')).toContain('# Dataset card: sft');

    await run(['export', '--format', 'dpo-openai', '--db', db, '--out', 'dpo.jsonl', '--val-fraction', '0', '--source', 'openai']);
    expect(read('dpo.jsonl')).toEqual(exportDpoOpenAi(recovered()).examples.map((e) => JSON.stringify(e)));
    expect(cardOf('dpo.jsonl').by_source).toEqual({ openai: 1 });

    const json = JSON.parse((await run(['export', '--format', 'kto', '--db', db, '--out', 'kto.jsonl', '--json', '--val-fraction', '0.5', '--seed', '3'])).stdout) as DatasetCard;
    expect(json).toEqual(cardOf('kto.jsonl'));
    expect(read('kto.jsonl').length + read('kto.jsonl.val.jsonl').length).toBe(5);
    expect(json.splits.train.examples + json.splits.validation.examples).toBe(5);
    expect(readdirSync(dir).filter((f) => f.includes('.partial-'))).toEqual([]);
  });

  it('rejects bad flags with one line, exit 2, and writes nothing', async () => {
    const before = readdirSync(dir).sort();
    for (const args of [
      ['export', '--format', 'csv', '--out', 'x.jsonl', '--db', db],
      ['export', '--format', 'sft', '--db', db],
      ['export', '--format', 'sft', '--out', 'x.jsonl', '--db', db, '--val-fraction', '1'],
      ['export', '--format', 'sft', '--out', 'x.jsonl', '--db', db, '--val-fraction', 'abc'],
      ['export', '--format', 'sft', '--out', 'x.jsonl', '--db', db, '--seed', '-1'],
      ['export', '--format', 'sft', '--out', 'x.jsonl', '--db', db, '--source', 'nope'],
      ['export', '--format', 'sft', '--out', 'missing/x.jsonl', '--db', db],
    ]) {
      const r = await runCapture(args, dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(/^faultline: /);
    }
    expect(readdirSync(dir).sort()).toEqual(before);
  });

  it('an output path that cannot be written: one line, exit 2, and none of the four files replaced', async () => {
    const clashDb = join(dir, 'clash.db');
    const store = createSqliteStore({ path: clashDb });
    await store.insertTrajectories([blindRetry(), recovered()]);
    await store.close();
    const clash = join(dir, 'clash');
    mkdirSync(join(clash, 'e2.jsonl.card.json'), { recursive: true });
    mkdirSync(join(clash, 'a-dir'));
    writeFileSync(join(clash, 'e2.jsonl'), 'old train\n');
    writeFileSync(join(clash, 'e2.jsonl.val.jsonl'), 'old validation\n');
    for (const [out, message] of [
      ['e2.jsonl', 'cannot write e2.jsonl.card.json: is a directory'],
      ['a-dir', 'cannot write a-dir: is a directory'],
      ['e2.jsonl/x.jsonl', 'cannot write e2.jsonl/x.jsonl: e2.jsonl is not a directory'],
    ] as const) {
      const r = await runCapture(['export', '--format', 'trajectories', '--db', clashDb, '--out', out], clash);
      expect(r.code, out).toBe(2);
      expect(r.stdout, out).toBe('');
      expect(r.stderr, out).toBe(`faultline: ${message}\n`);
    }
    expect(readFileSync(join(clash, 'e2.jsonl'), 'utf8')).toBe('old train\n');
    expect(readFileSync(join(clash, 'e2.jsonl.val.jsonl'), 'utf8')).toBe('old validation\n');
    expect(readdirSync(clash).sort()).toEqual(['a-dir', 'e2.jsonl', 'e2.jsonl.card.json', 'e2.jsonl.val.jsonl']);
    expect(readdirSync(join(clash, 'a-dir'))).toEqual([]);
  });

  const tau = tauBenchAirlineFile();
  it('imports, annotates and exports the real tau-bench airline file in every format', async () => {
    const tauDb = join(dir, 'tau.db');
    await run(['import', '--format', 'tau-bench', tau, '--db', tauDb]);
    await run(['annotate', '--db', tauDb]);
    for (const format of FORMATS) {
      const out = `tau-${format}.jsonl`;
      await run(['export', '--format', format, '--db', tauDb, '--out', out, '--seed', '1']);
      const card = cardOf(out);
      const train = read(out);
      const val = read(`${out}.val.jsonl`);
      expect(card.trajectories_read).toBe(200);
      expect(train).toHaveLength(card.splits.train.examples);
      expect(val).toHaveLength(card.splits.validation.examples);
      expect(card.splits.validation.examples).toBeGreaterThan(0);
      expect(existsSync(join(dir, `${out}.card.md`))).toBe(true);
      const first = JSON.parse(train[0]!) as Record<string, unknown>;
      if (format === 'trajectories') {
        expect(card.trajectories_exported).toBe(200);
        const ids = (lines: string[]) => lines.map((l) => (JSON.parse(l) as { trajectory_id: string }).trajectory_id);
        expect(ids(train).filter((id) => ids(val).includes(id))).toEqual([]);
      }
      if (format === 'sft') {
        expect(card.trajectories_exported).toBe(84);
        expect(card.skipped).toEqual({ 'outcome is failure': 116 });
        expect(Object.keys(first)).toEqual(['messages', 'tools']);
      }
      if (format === 'dpo-openai') expect(Object.keys(first)).toEqual(['input', 'preferred_output', 'non_preferred_output']);
      if (format === 'dpo-trl') expect(Object.keys(first)).toEqual(['prompt', 'chosen', 'rejected']);
      if (format === 'kto') expect(Object.keys(first)).toEqual(['prompt', 'completion', 'label']);
      if (format !== 'trajectories' && format !== 'sft') {
        expect(card.trajectories_exported).toBeGreaterThan(0);
        expect(card.by_source).toEqual({ 'tau-bench': card.trajectories_exported });
        expect(Object.keys(card.by_failure_category)).toEqual(['business']);
      }
    }
    // The same seed gives the same files.
    await run(['export', '--format', 'kto', '--db', tauDb, '--out', 'again.jsonl', '--seed', '1']);
    expect(read('again.jsonl')).toEqual(read('tau-kto.jsonl'));
  }, 120_000);

  it('a store of records only says where trajectories come from, after writing the empty dataset', async () => {
    const db = join(dir, 'records-only.db');
    expect((await runCapture(['demo', '--db', db], dir)).code).toBe(0);
    const run = await runCapture(['export', '--format', 'sft', '--out', 'empty-sft.jsonl', '--db', db], dir);
    // Nothing to train on: exit 3, and stderr says why and what to do.
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/^faultline export: sft, 0 of 0 trajectories: /);
    expect(run.stderr).toBe('faultline export: no sft examples written:\n  no trajectories in the store: `npx faultline import` a log or run `npx faultline bench --fission K` to store some\n');
    expect(readFileSync(join(dir, 'empty-sft.jsonl'), 'utf8')).toBe('');
  });
});
