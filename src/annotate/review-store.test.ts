import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../store/memory/memory-store.js';
import type { TrajectoryLabel } from '../core/trajectory-types.js';
import { labelRef } from './review.js';
import { readJudgeLabels, saveLabelReview } from './review-store.js';
import { trajectory } from './trajectory.test-helpers.js';

const judge = (step_index: number, name = 'semantic_error'): TrajectoryLabel => ({ name, step_index, confidence: 0.8, reason: 'the result does not answer the task', source: 'judge:heuristic' });

describe('reviews in the store', () => {
  it('reads every judge label across pages, and writes a decision onto the one it names', async () => {
    const store = createMemoryStore();
    // More trajectories than one page of the store holds.
    const stored = Array.from({ length: 620 }, (_, i) => ({
      ...trajectory([{ tool: 'search' }, { tool: 'book' }]),
      trajectory_id: `traj_${String(i).padStart(4, '0')}`,
      source_id: `log:${i}`,
      labels: i % 2 === 0 ? [judge(1), { name: 'ignored_error', step_index: 2, confidence: 1, reason: 'rule' }] : [],
    }));
    await store.insertTrajectories(stored);
    const all = await readJudgeLabels(store);
    expect(all).toHaveLength(310);
    expect(all.every((a) => a.label.source === 'judge:heuristic')).toBe(true);
    expect(all[0]!.ref).toStrictEqual({ trajectory_id: 'traj_0000', name: 'semantic_error', step_index: 1, source: 'judge:heuristic' });

    const review = { decision: 'corrected' as const, corrected_to: 'wrong_tool', reviewed_at: '2026-03-29T15:00:00.000Z' };
    expect(await saveLabelReview(store, all[1]!.ref, review)).toBe(true);
    const back = await store.getTrajectory('traj_0002');
    expect(back!.labels).toStrictEqual([{ ...judge(1), review }, { name: 'ignored_error', step_index: 2, confidence: 1, reason: 'rule' }]);
    // A label or trajectory that is not there: nothing written.
    expect(await saveLabelReview(store, labelRef('traj_0002', judge(2)), review)).toBe(false);
    expect(await saveLabelReview(store, labelRef('traj_9999', judge(1)), review)).toBe(false);
    expect((await readJudgeLabels(store)).filter((a) => a.label.review !== undefined)).toHaveLength(1);
  });
});
