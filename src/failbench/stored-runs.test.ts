import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BENCH_RUNS_DIR, listStoredRuns, loadStoredRun } from './stored-runs.js';
import { saveRun } from './stored-runs.test-helpers.js';

const cwd = mkdtempSync(join(tmpdir(), 'faultline-stored-runs-'));
const runs = join(cwd, BENCH_RUNS_DIR);
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('saved bench runs', () => {
  it('lists the run directories holding a results.json, newest first, and loads them by id or path', async () => {
    const older = await saveRun(runs, { runId: 'run-older' });
    await saveRun(runs, { runId: 'run-newer', feedback: 'assisted' });
    utimesSync(join(older, 'results.json'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    // Not runs: a directory without results, a file, a name with a space.
    mkdirSync(join(runs, 'interrupted'));
    writeFileSync(join(runs, 'notes.txt'), 'x');
    mkdirSync(join(runs, 'with space'));
    writeFileSync(join(runs, 'with space', 'results.json'), '{}');
    const listed = await listStoredRuns(runs);
    expect(listed.map((r) => r.id)).toStrictEqual(['run-newer', 'run-older']);
    expect(listed[1]).toMatchObject({ path: join(older, 'results.json') });
    expect(listed[1]!.size).toBeGreaterThan(100);
    expect((await loadStoredRun('run-newer', cwd)).suite.meta).toMatchObject({ runId: 'run-newer', feedback: 'assisted' });
    expect((await loadStoredRun(older, cwd)).suite.meta.runId).toBe('run-older');
    expect((await loadStoredRun(join(older, 'results.json'), '/')).scores.map((s) => s.agent)).toStrictEqual(['patient', 'hammer']);
  });

  it('a missing directory holds no runs; a missing run is one line', async () => {
    expect(await listStoredRuns(join(cwd, 'nowhere'))).toStrictEqual([]);
    await expect(loadStoredRun('nope', cwd)).rejects.toThrow('no FailBench run at nope (give a results.json, its directory, or a run id under .faultline/bench/)');
    await expect(loadStoredRun('../etc', cwd)).rejects.toThrow(/^no FailBench run at \.\.\/etc/);
  });
});
