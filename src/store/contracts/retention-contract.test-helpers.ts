/**
 * The retention contract: a prune deletes the records before its cutoff, oldest first within a
 * limit, and takes exactly their share out of the rollups.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type {
  CorrectionMemoryStore,
  RecordReader,
  RecordRetention,
  RecordWriter,
  StatsFilter,
  StatsReader,
  TrajectoryStore,
} from '../../core/store-types.js';
import { hasCorrectionMemory } from '../corrections.js';
import { createMemoryStore } from '../memory/memory-store.js';
import { hasTrajectoryStore } from '../trajectory-row.js';
import type { CapabilityContract } from './capabilities.test-helpers.js';
import { contractCorrection } from './corrections-contract.test-helpers.js';
import { CONTRACT_T0, CONTRACT_WINDOW, HOUR, contractDataset, contractTrajectory, createdMs, expectedToolStats, expectWithinSketchError } from './contract-data.test-helpers.js';

/** What a prune is checked through; trajectories and corrections, where the store has them, must survive it. */
type PrunableStore = RecordRetention & RecordWriter & RecordReader & StatsReader & Partial<TrajectoryStore> & Partial<CorrectionMemoryStore>;

export const retentionContract: CapabilityContract<PrunableStore> = {
  capability: 'retention',
  observes: ['writer', 'reader', 'stats'],
  register(current) {
    let store: PrunableStore;
    beforeEach(() => {
      store = current();
    });

    describe('prune', () => {
      /** Stats answers with avg_ms rounded: subtracting durations from a float sum leaves a residue of 1e-12. */
      const statsOf = async (s: StatsReader, filter: StatsFilter) => ({
        tools: (await s.toolStats(filter)).map((t) => ({ ...t, avg_ms: t.avg_ms === null ? null : Math.round(t.avg_ms * 1e6) / 1e6 })),
        breakdown: await s.failureBreakdown(filter),
        hourly: await s.hourly(filter),
        signatures: (await s.signatures(filter)).map(({ first_seen: _first, ...rest }) => rest),
      });
      /** The same answers from a store holding only `records`, computed afresh. */
      const recomputed = async (records: readonly ToolExecutionRecord[], filter: StatsFilter) => {
        const reference = createMemoryStore();
        await reference.insert(records);
        return statsOf(reference, filter);
      };
      const byCreated = (a: ToolExecutionRecord, b: ToolExecutionRecord) => createdMs(a) - createdMs(b);

      it('deletes the records before the cutoff and leaves stats equal to those of the records that remain', async () => {
        const data = contractDataset();
        await store.insert(data);
        const sigsBefore = await store.signatures(CONTRACT_WINDOW);
        // Mid-hour, so the hour it falls in keeps part of its records.
        const cutoff = CONTRACT_T0 + HOUR + 30 * 60_000;
        const kept = data.filter((r) => createdMs(r) >= cutoff);
        expect(await store.prune(cutoff)).toBe(data.length - kept.length);
        expect(await store.count()).toBe(kept.length);
        expect((await store.query({ limit: 10_000 })).map((r) => r.execution_id)).toEqual(kept.map((r) => r.execution_id).sort());

        expect(await statsOf(store, CONTRACT_WINDOW)).toEqual(await recomputed(kept, CONTRACT_WINDOW));
        const cutHour = { since: CONTRACT_T0 + HOUR, until: CONTRACT_T0 + 2 * HOUR };
        expect(await statsOf(store, cutHour)).toEqual(await recomputed(kept, cutHour));
        for (const t of await store.toolStats(CONTRACT_WINDOW)) {
          const exact = expectedToolStats(kept).find((e) => e.tool_name === t.tool_name)!;
          expect(t.total).toBe(exact.total);
          expectWithinSketchError(t.p95_ms, exact.p95_ms);
        }
        // Nothing is left of the hour before the cut.
        expect(await store.hourly({ since: CONTRACT_T0 - HOUR, until: CONTRACT_T0 + HOUR })).toEqual([]);
        // A signature that still has records keeps when it was first seen; the others are gone.
        for (const sig of await store.signatures(CONTRACT_WINDOW)) {
          expect(sig.first_seen).toBe(sigsBefore.find((b) => b.signature === sig.signature)!.first_seen);
        }
        const keptFailures = new Set((await recomputed(kept, CONTRACT_WINDOW)).signatures.map((g) => g.signature));
        expect((await store.signatures(CONTRACT_WINDOW)).map((g) => g.signature).sort()).toEqual([...keptFailures].sort());

        expect(await store.prune(cutoff)).toBe(0);
        expect(await statsOf(store, CONTRACT_WINDOW)).toEqual(await recomputed(kept, CONTRACT_WINDOW));
      });

      it('with a limit deletes the oldest first, and stats stay consistent after every step', async () => {
        const data = contractDataset(120);
        await store.insert(data);
        const cutoff = CONTRACT_T0 + 2 * HOUR + 10 * 60_000;
        const sorted = [...data].sort(byCreated);
        const doomed = sorted.filter((r) => createdMs(r) < cutoff).length;
        let pruned = 0;
        for (;;) {
          const n = await store.prune(cutoff, { limit: 25 });
          expect(n).toBe(Math.min(25, doomed - pruned));
          pruned += n;
          const left = sorted.slice(pruned);
          expect(await store.count()).toBe(left.length);
          expect(await statsOf(store, CONTRACT_WINDOW)).toEqual(await recomputed(left, CONTRACT_WINDOW));
          if (n < 25) break;
        }
        expect(pruned).toBe(doomed);
      });

      it('refuses a cutoff or limit that is not a number, and leaves trajectories and corrections alone', async () => {
        await expect(store.prune(Number.NaN)).rejects.toSatisfy(ConfigError.isInstance);
        await expect(store.prune(CONTRACT_T0, { limit: 0 })).rejects.toSatisfy(ConfigError.isInstance);
        expect(await store.prune(CONTRACT_T0)).toBe(0);
        const correction = contractCorrection(1, 'kept');
        if (hasTrajectoryStore(store)) await store.insertTrajectories([contractTrajectory(1)]);
        if (hasCorrectionMemory(store)) await store.pushCorrection(correction);
        await store.prune(CONTRACT_T0 + 365 * 24 * HOUR);
        if (hasTrajectoryStore(store)) expect(await store.countTrajectories()).toBe(1);
        if (hasCorrectionMemory(store)) expect(await store.latestCorrection(correction.signature)).toStrictEqual({ ...correction, uses: 1 });
      });
    });
  },
};
