/**
 * `faultline export` when writing fails for real: the kernel refuses the write (/dev/full answers
 * every write with ENOSPC, as a full disk does) or the open (a directory where the file goes).
 * The temporary names carry a random UUID; it is fixed here so that the test can put /dev/full
 * (by a symlink) or a directory exactly where the command is about to write.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { weatherTrajectory } from '../../dataset/augment/augment.test-helpers.js';
import { blindRetry, failedTask, recovered } from '../../dataset/dataset.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCapture } from '../run-cli.test-helpers.js';

const FIXED_UUID = '00000000-0000-4000-8000-000000000000';
const uuid = vi.hoisted(() => ({ fixed: undefined as string | undefined }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, randomUUID: () => uuid.fixed ?? actual.randomUUID() };
});

const dir = mkdtempSync(join(tmpdir(), 'faultline-export-errors-'));
const db = join(dir, 'store.db');
const out = join(dir, 'out');
const OLD = { '': 'old train\n', '.val': 'old validation\n', '.card.json': '{"old":true}\n', '.card.md': '# old card\n' } as const;
const hasDevFull = process.platform === 'linux' && existsSync('/dev/full');

beforeAll(async () => {
  const store = createSqliteStore({ path: db });
  await store.insertTrajectories([weatherTrajectory('traj_w1'), weatherTrajectory('traj_w2'), blindRetry(), recovered(), failedTask()]);
  await store.close();
});
afterAll(() => {
  uuid.fixed = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** An output directory holding a previous export of `name` (extension `ext`), which a failed export must leave as it was. */
function previousExport(name: string, ext: string): Record<string, string> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out);
  const files: Record<string, string> = {};
  for (const [suffix, text] of Object.entries(OLD)) {
    const file = suffix === '.val' ? `${name}.val.${ext}` : `${name}${suffix}`;
    writeFileSync(join(out, file), text);
    files[file] = text;
  }
  return files;
}

/** Runs the export and checks the one line, exit 2, nothing temporary left and the previous files untouched. */
async function expectFailedExport(args: string[], previous: Record<string, string>, message: string): Promise<void> {
  const r = await runCapture(['export', '--db', db, ...args], out);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toBe(`faultline: ${message}\n`);
  expect(readdirSync(out).sort()).toEqual(Object.keys(previous).sort());
  for (const [file, text] of Object.entries(previous)) expect(readFileSync(join(out, file), 'utf8'), file).toBe(text);
}

beforeEach(() => {
  uuid.fixed = FIXED_UUID;
});

describe('faultline export: a write that fails', () => {
  it.skipIf(!hasDevFull)('the training split on a full disk (ENOSPC): one line, exit 2, no temporary file, the previous export intact', async () => {
    const previous = previousExport('train.jsonl', 'jsonl');
    symlinkSync('/dev/full', join(out, `train.jsonl.partial-${FIXED_UUID}`));
    await expectFailedExport(['--format', 'trajectories', '--out', 'train.jsonl', '--val-fraction', '0'], previous, 'cannot write train.jsonl: no space left on the device');
    // Only the link was removed.
    expect(statSync('/dev/full').isCharacterDevice()).toBe(true);
  });

  it.skipIf(!hasDevFull)('the CSV transcoded from the rows on a full disk: the same, the intermediate rows file removed too', async () => {
    const previous = previousExport('rows.csv', 'csv');
    symlinkSync('/dev/full', join(out, `rows.csv.partial-${FIXED_UUID}`));
    await expectFailedExport(['--format', 'predictor', '--out', 'rows.csv', '--val-fraction', '0'], previous, 'cannot write rows.csv: no space left on the device');
  });

  it.skipIf(!hasDevFull)('the dataset card on a full disk: one line naming it, not an internal error', async () => {
    const previous = previousExport('carded.jsonl', 'jsonl');
    symlinkSync('/dev/full', join(out, `carded.jsonl.card.json.partial-${FIXED_UUID}`));
    await expectFailedExport(['--format', 'sft', '--out', 'carded.jsonl'], previous, 'cannot write carded.jsonl.card.json: no space left on the device');
  });

  it('a temporary file that cannot be opened (a directory in its place): one line, exit 2, nothing left', async () => {
    const previous = previousExport('blocked.jsonl', 'jsonl');
    const blocker = join(out, `blocked.jsonl.val.jsonl.partial-${FIXED_UUID}`);
    mkdirSync(blocker);
    const r = await runCapture(['export', '--db', db, '--format', 'kto', '--out', 'blocked.jsonl'], out);
    expect(r).toEqual({ code: 2, stdout: '', stderr: 'faultline: cannot write blocked.jsonl.val.jsonl: is a directory\n' });
    // The directory was the test's, and stays; every file the export made is gone.
    expect(lstatSync(blocker).isDirectory()).toBe(true);
    rmSync(blocker, { recursive: true });
    expect(readdirSync(out).sort()).toEqual(Object.keys(previous).sort());
    for (const [file, text] of Object.entries(previous)) expect(readFileSync(join(out, file), 'utf8'), file).toBe(text);
  });

  it('with the same store and names, the export succeeds once nothing is in the way', async () => {
    previousExport('fine.jsonl', 'jsonl');
    const r = await runCapture(['export', '--db', db, '--format', 'trajectories', '--out', 'fine.jsonl', '--val-fraction', '0'], out);
    expect(r.code).toBe(0);
    expect(readFileSync(join(out, 'fine.jsonl'), 'utf8').split('\n').filter((l) => l !== '')).toHaveLength(5);
    expect(readdirSync(out).filter((f) => f.includes('.partial-'))).toEqual([]);
  });
});
