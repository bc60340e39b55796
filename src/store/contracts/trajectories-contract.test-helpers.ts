/**
 * The trajectories contract: whole trajectories round-trip key for key, are stored once by id
 * or by (source, source_id), replaced by id, paged by id and validated as a batch.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Trajectory } from '../../core/trajectory-types.js';
import type { Store } from '../../core/store-types.js';
import { hasTrajectoryStore } from '../trajectory-row.js';
import type { CapabilityContract } from './capabilities.test-helpers.js';
import { contractTrajectory } from './contract-data.test-helpers.js';

export const trajectoriesContract: CapabilityContract<Store> = {
  capability: 'trajectories',
  observes: [],
  register(current) {
    let store: Store;
    beforeEach(() => {
      store = current();
    });

    describe('trajectories', () => {
      const trajectoryStore = () => {
        if (!hasTrajectoryStore(store)) throw new Error(`${store.kind} store does not implement the trajectory methods`);
        return store;
      };
      const byTrajectoryId = (a: Trajectory, b: Trajectory) => (a.trajectory_id < b.trajectory_id ? -1 : 1);

      it('starts empty', async () => {
        const ts = trajectoryStore();
        expect(await ts.countTrajectories()).toBe(0);
        expect(await ts.getTrajectory('traj_missing')).toBeNull();
        expect(await ts.queryTrajectories()).toEqual([]);
        expect(await ts.insertTrajectories([])).toBe(0);
      });

      it('round-trips whole trajectories and counts by source', async () => {
        const ts = trajectoryStore();
        const batch = [contractTrajectory(1), contractTrajectory(2, 'tau-bench', '7:0'), contractTrajectory(3, 'step-log', null)];
        expect(await ts.insertTrajectories(batch)).toBe(3);
        for (const t of batch) expect(await ts.getTrajectory(t.trajectory_id)).toStrictEqual(t);
        expect(await ts.queryTrajectories()).toStrictEqual([...batch].sort(byTrajectoryId));
        expect(await ts.countTrajectories()).toBe(3);
        expect(await ts.countTrajectories({ source: 'tau-bench' })).toBe(1);
        expect(await ts.queryTrajectories({ source: 'step-log' })).toStrictEqual([batch[2]]);
      });

      it('gives trajectories back with the keys of every object in the order they were stored', async () => {
        const ts = trajectoryStore();
        const t = contractTrajectory(5);
        const [first] = t.steps;
        if (first === undefined) throw new Error('contractTrajectory has no steps');
        first.input_params = { zone: 'UTC+8', date: '2026-03-29', a: { z: 1, b: 2 } };
        await ts.insertTrajectories([t]);
        expect(JSON.stringify(await ts.getTrajectory(t.trajectory_id))).toBe(JSON.stringify(t));
        const updated = { ...t, steps: t.steps.map((step) => ({ ...step, input_params: { zz: 1, date: 'x', b: null } })) };
        await ts.updateTrajectories([updated]);
        expect(JSON.stringify((await ts.queryTrajectories())[0])).toBe(JSON.stringify(updated));
      });

      it('skips trajectories already stored by id or by (source, source_id), also within one batch', async () => {
        const ts = trajectoryStore();
        const first = contractTrajectory(1);
        expect(await ts.insertTrajectories([first, first])).toBe(1);
        expect(await ts.insertTrajectories([first])).toBe(0);
        // Same source and source id under another trajectory id: a re-import of changed content.
        const sameSource = { ...contractTrajectory(2), source_id: first.source_id, trajectory_id: 'traj_other' };
        expect(await ts.insertTrajectories([sameSource, contractTrajectory(4)])).toBe(1);
        expect(await ts.getTrajectory('traj_other')).toBeNull();
        expect(await ts.getTrajectory(first.trajectory_id)).toStrictEqual(first);
        // The same source id under another source is a different trajectory.
        expect(await ts.insertTrajectories([contractTrajectory(5, 'anthropic', first.source_id)])).toBe(1);
        expect(await ts.countTrajectories()).toBe(3);
      });

      it('replaces stored trajectories by id with updateTrajectories, ignoring unknown ids', async () => {
        const ts = trajectoryStore();
        const first = contractTrajectory(1);
        await ts.insertTrajectories([first, contractTrajectory(2)]);
        const annotated = { ...first, final_outcome: 'failure', metadata: { ...first.metadata, annotator: 'rules_v1' } } as Trajectory;
        expect(await ts.updateTrajectories([annotated, contractTrajectory(9)])).toBe(1);
        expect(await ts.getTrajectory(first.trajectory_id)).toStrictEqual(annotated);
        expect(await ts.getTrajectory(contractTrajectory(9).trajectory_id)).toBeNull();
        expect(await ts.countTrajectories()).toBe(2);
        expect(await ts.updateTrajectories([])).toBe(0);
      });

      it('pages by trajectory_id with afterId and limit, filtered by source', async () => {
        const ts = trajectoryStore();
        const all = Array.from({ length: 25 }, (_, i) => contractTrajectory(i, i % 5 === 0 ? 'otel' : 'openai'));
        expect(await ts.insertTrajectories(all)).toBe(25);
        const pages: Trajectory[][] = [];
        for (let afterId: string | undefined; ; ) {
          const page = await ts.queryTrajectories({ limit: 10, ...(afterId === undefined ? {} : { afterId }) });
          pages.push(page);
          if (page.length < 10) break;
          afterId = page[page.length - 1]!.trajectory_id;
        }
        expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
        expect(pages.flat()).toStrictEqual([...all].sort(byTrajectoryId));
        const otel = await ts.queryTrajectories({ source: 'otel', limit: 100 });
        expect(otel.map((t) => t.source_id)).toEqual(all.filter((t) => t.metadata.source === 'otel').sort(byTrajectoryId).map((t) => t.source_id));
        expect(await ts.queryTrajectories({ limit: 0 })).toEqual([]);
      });

      it('rejects a batch holding an invalid trajectory without storing any of it', async () => {
        const ts = trajectoryStore();
        const bad = { ...contractTrajectory(2), created_at: 'yesterday' };
        await expect(ts.insertTrajectories([contractTrajectory(1), bad])).rejects.toThrow(/invalid created_at/);
        expect(await ts.countTrajectories()).toBe(0);
      });
    });
  },
};
