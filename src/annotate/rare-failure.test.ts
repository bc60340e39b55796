import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCapture } from '../cli/run-cli.test-helpers.js';
import { makeFailureRecord } from '../record/fixture.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Trajectory } from '../core/trajectory-types.js';
import { RareFailureIndex, stepSignature } from './rare-failure.js';
import { trajectory, type StepSpec } from './trajectory.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-rare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const notFound = (order: number): StepSpec => ({ tool: 'get_order', params: { id: order }, fail: { category: 'business', kind: 'not_found' } });
/** A trajectory whose failed steps carry `message`, all at `at`. */
function traj(id: string, at: string, specs: StepSpec[], message = 'order 123 not found'): Trajectory {
  const t = trajectory(specs.map((s) => ({ ...s, at })));
  for (const step of t.steps) if (step.status !== 'success') step.response.message = message;
  return { ...t, trajectory_id: id, source_id: id, created_at: at };
}
const names = (labels: { name: string; step_index: number }[]) => labels.map((l) => `${l.name}@${l.step_index}`);

describe('RareFailureIndex', () => {
  it('labels only the earliest occurrence of a signature across trajectories, once per trajectory', () => {
    const early = traj('t-b', '2026-03-01T00:00:00Z', [{ tool: 'list_orders' }, notFound(1), notFound(1)]);
    // Same shape: the ids in the message are normalized away.
    const late = traj('t-a', '2026-03-02T00:00:00Z', [notFound(2)], 'order 456 not found');
    const other = traj('t-c', '2026-03-03T00:00:00Z', [{ tool: 'get_order', fail: { category: 'auth', kind: 'unauthorized' } }], 'token expired');
    expect(stepSignature(early.steps[1]!)!.signature).toBe(stepSignature(late.steps[0]!)!.signature);
    expect(stepSignature(early.steps[0]!)).toBeNull();
    const index = new RareFailureIndex();
    // Observed out of time order (store order is by id): the time decides, not the reading order.
    for (const t of [late, early, other]) index.observe(t);
    expect(index.size).toBe(2);
    expect(names(index.labelsFor(late))).toEqual([]);
    const labels = index.labelsFor(early);
    expect(names(labels)).toEqual(['rare_failure@2']);
    expect(labels[0]).toMatchObject({ confidence: 1, source: 'rare-failure' });
    expect(labels[0]!.reason).toContain('get_order execution/not_found not_found: "order <n> not found"');
    expect(names(index.labelsFor(other))).toEqual(['rare_failure@1']);
  });

  it('labels in stream order when trajectories are only asked about, and defers to earlier recorded calls', () => {
    const index = new RareFailureIndex();
    const first = traj('t-1', '2026-03-05T00:00:00Z', [notFound(1)]);
    expect(names(index.labelsFor(first))).toEqual(['rare_failure@1']);
    expect(names(index.labelsFor(traj('t-2', '2026-03-06T00:00:00Z', [notFound(2)])))).toEqual([]);

    const signature = stepSignature(first.steps[0]!)!;
    const recorded = { ...signature, first_seen: '2026-03-04T00:00:00.000Z', last_seen: '2026-03-04T00:00:00.000Z', count: 3 };
    const seenBefore = new RareFailureIndex();
    seenBefore.observeRecordSignatures([recorded]);
    expect(seenBefore.labelsFor(first)).toEqual([]);
    const seenAfter = new RareFailureIndex();
    seenAfter.observeRecordSignatures([{ ...recorded, first_seen: '2026-03-05T00:00:00.000Z' }]);
    expect(names(seenAfter.labelsFor(first))).toEqual(['rare_failure@1']);
  });
});

describe('faultline annotate: rare_failure on a fixture store', () => {
  it('flags first-seen signatures against the stored trajectories and records, and exports keep them', async () => {
    const db = join(dir, 'rare.db');
    const store = createSqliteStore({ path: db });
    await store.insertTrajectories([
      traj('t-old', '2026-03-01T00:00:00Z', [notFound(1)]),
      traj('t-new', '2026-03-02T00:00:00Z', [notFound(7), { tool: 'pay', fail: { category: 'system', kind: 'server_error' } }, { tool: 'ship', fail: { category: 'network', kind: 'timeout', status: 'timeout' } }], 'order 7 not found'),
    ]);
    // A recorded call already failed like `ship` did, a day earlier: not new.
    await store.insert([makeFailureRecord({ tool_name: 'ship', status: 'timeout', failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', error_code: 'timeout', error_message: 'order 9 not found', created_at: '2026-03-01T00:00:00.000Z' })]);
    await store.close();

    const r = await runCapture(['annotate', '--db', db, '--json'], dir);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { trajectory_id: string; labels: { name: string; step_index: number }[] });
    const rareOf = (id: string) => names(lines.find((l) => l.trajectory_id === id)!.labels.filter((l) => l.name === 'rare_failure'));
    expect(rareOf('t-old')).toEqual(['rare_failure@1']);
    expect(rareOf('t-new')).toEqual(['rare_failure@2']);

    // Only `--source` trajectories are labelled, but all of them count as "seen before".
    const again = await runCapture(['annotate', '--db', db, '--json', '--source', 'step-log'], dir);
    expect(names(JSON.parse(again.stdout.trim().split('\n').find((l) => l.includes('t-new'))!).labels as never)).toContain('rare_failure@2');

    const exported = await runCapture(['export', '--db', db, '--format', 'trajectories', '--out', 'rare.jsonl', '--val-fraction', '0'], dir);
    expect(exported.code).toBe(0);
    const rows = readFileSync(join(dir, 'rare.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Trajectory);
    expect(rows.map((t) => t.trajectory_id).sort()).toEqual(['t-new', 't-old']);
    expect(rows.find((t) => t.trajectory_id === 't-new')!.labels!.some((l) => l.name === 'rare_failure')).toBe(true);
  });
});
