/**
 * The correction memory contract: LIFO order per signature, moving a repeated recovery to the
 * top, idempotent pushes from the same trace, both caps, batches equal to one-by-one pushes, and
 * validation.
 */
import { describe, expect, it } from 'vitest';
import { hasCorrectionMemory } from '../corrections.js';
import type { CorrectionMemoryStore, NewCorrection, Store } from '../../core/store-types.js';
import type { CapabilityContract } from './capabilities.test-helpers.js';

const T0 = Date.UTC(2025, 2, 10, 8, 0, 0);

/** A correction for signature `sig<n>`; `fix` varies the recovery. */
export function contractCorrection(n: number, fix: string, overrides: Partial<NewCorrection> = {}): NewCorrection {
  return {
    signature: `sig${n}`.padEnd(16, '0'),
    tool_name: `tool_${n}`,
    failure_category: 'parameter',
    failure_type: 'enum_mismatch',
    error_code: 'INVALID_ARGUMENTS',
    recovery: { action: 'retry_with_fixed_params', params_delta: { unit: fix, nested: { keep: [1, 'two', null] } } },
    trace_id: `trace-${n}-${fix}`,
    recovered_at: new Date(T0 + n * 1000).toISOString(),
    ...overrides,
  };
}

const fixesOf = (entries: readonly { recovery: { params_delta?: Record<string, unknown> } }[]) => entries.map((e) => e.recovery.params_delta?.['unit']);

export const correctionsContract: CapabilityContract = {
  capability: 'corrections',
  observes: [],
  register: correctionMemoryContract,
};

function correctionMemoryContract(current: () => Store): void {
  describe('correction memory', () => {
    const memory = (): Store & CorrectionMemoryStore => {
      const store = current();
      if (!hasCorrectionMemory(store)) throw new Error(`${store.kind} store does not implement the correction memory`);
      return store;
    };

    it('starts empty', async () => {
      const m = memory();
      expect(await m.latestCorrection('sig1')).toBeNull();
      expect(await m.listCorrections()).toEqual([]);
    });

    it('round-trips every field and answers newest first (LIFO) per signature', async () => {
      const m = memory();
      const first = contractCorrection(1, 'celsius');
      const stored = await m.pushCorrection(first);
      expect(stored).toStrictEqual({ ...first, uses: 1 });
      const second = contractCorrection(1, 'kelvin', {
        failure_category: null,
        error_code: null,
        trace_id: null,
        recovered_at: '2025-03-10T09:00:00+01:00',
        recovery: { action: 'wait_and_retry', wait_ms: 2500, note: 'waited for Retry-After' },
      });
      await m.pushCorrection(second);
      await m.pushCorrection(contractCorrection(2, 'other'));
      expect(await m.latestCorrection(first.signature)).toStrictEqual({ ...second, recovered_at: '2025-03-10T08:00:00.000Z', uses: 1 });
      const listed = await m.listCorrections({ signature: first.signature });
      expect(listed.map((e) => e.recovery.action)).toEqual(['wait_and_retry', 'retry_with_fixed_params']);
      expect(listed[1]).toStrictEqual({ ...first, uses: 1 });
      expect((await m.listCorrections()).map((e) => e.signature)).toEqual([contractCorrection(2, 'x').signature, first.signature, first.signature]);
      expect(await m.listCorrections({ limit: 1 })).toHaveLength(1);
      expect(await m.listCorrections({ limit: 0 })).toEqual([]);
    });

    it('moves a recovery that worked again (another trace) to the top with one more use; the same trace changes nothing', async () => {
      const m = memory();
      await m.pushCorrection(contractCorrection(1, 'celsius'));
      await m.pushCorrection(contractCorrection(1, 'kelvin'));
      const again = await m.pushCorrection(contractCorrection(1, 'celsius', { trace_id: 'another-trace', recovered_at: new Date(T0 + 60_000).toISOString() }));
      expect(again.uses).toBe(2);
      expect(fixesOf(await m.listCorrections({ signature: again.signature }))).toEqual(['celsius', 'kelvin']);
      expect(await m.latestCorrection(again.signature)).toMatchObject({ trace_id: 'another-trace', uses: 2 });
      // Pushing what is already stored from the same trace (re-deriving from the same data) is a no-op.
      await m.pushCorrection(contractCorrection(1, 'kelvin'));
      const replay = await m.pushCorrection(contractCorrection(1, 'celsius', { trace_id: 'another-trace' }));
      expect(replay.uses).toBe(2);
      const listed = await m.listCorrections({ signature: again.signature });
      expect(fixesOf(listed)).toEqual(['celsius', 'kelvin']);
      expect(listed.map((e) => e.uses)).toEqual([2, 1]);
    });

    it('evicts the oldest entries beyond the per-signature cap and beyond the global capacity', async () => {
      const m = memory();
      const limits = { capacity: 4, perSignature: 2 };
      for (const fix of ['a', 'b', 'c']) await m.pushCorrection(contractCorrection(1, fix), limits);
      expect(fixesOf(await m.listCorrections({ signature: contractCorrection(1, 'a').signature }))).toEqual(['c', 'b']);
      for (const n of [2, 3]) await m.pushCorrection(contractCorrection(n, 'x'), limits);
      expect((await m.listCorrections()).map((e) => `${e.tool_name}:${String(e.recovery.params_delta?.['unit'])}`)).toEqual([
        'tool_3:x',
        'tool_2:x',
        'tool_1:c',
        'tool_1:b',
      ]);
      await m.pushCorrection(contractCorrection(4, 'x'), limits);
      const all = await m.listCorrections();
      expect(all).toHaveLength(4);
      expect(all.map((e) => e.tool_name)).toEqual(['tool_4', 'tool_3', 'tool_2', 'tool_1']);
      expect(fixesOf(await m.listCorrections({ signature: contractCorrection(1, 'a').signature }))).toEqual(['c']);
    });

    it('trims to the capacity of the push, also what a push with a larger capacity kept', async () => {
      const m = memory();
      for (let n = 1; n <= 6; n++) await m.pushCorrection(contractCorrection(n, 'x'), { capacity: 10 });
      await m.pushCorrections([contractCorrection(7, 'x'), contractCorrection(8, 'x')], { capacity: 3 });
      expect((await m.listCorrections({ limit: Infinity })).map((e) => e.tool_name)).toEqual(['tool_8', 'tool_7', 'tool_6']);
      await m.pushCorrection(contractCorrection(9, 'x'), { capacity: 2 });
      expect((await m.listCorrections({ limit: Infinity })).map((e) => e.tool_name)).toEqual(['tool_9', 'tool_8']);
    });

    it('trims a signature to the cap of the push, also when the push moves a recovery it already kept', async () => {
      const m = memory();
      for (const fix of ['a', 'b', 'c', 'd']) await m.pushCorrection(contractCorrection(1, fix));
      // 'b' worked again (another trace): moved to the top under a cap of 2, twice in one batch.
      await m.pushCorrections(
        [contractCorrection(1, 'b', { trace_id: 'again' }), contractCorrection(1, 'd', { trace_id: 'again' }), contractCorrection(1, 'b', { trace_id: 'third' })],
        { perSignature: 2 },
      );
      const kept = await m.listCorrections({ signature: contractCorrection(1, 'a').signature });
      expect(fixesOf(kept)).toEqual(['b', 'd']);
      expect(kept.map((e) => e.uses)).toEqual([3, 2]);
    });

    it('stores a batch (pushCorrections) exactly as pushing its corrections one by one in order', async () => {
      const m = memory();
      const limits = { capacity: 6, perSignature: 2 };
      // [signature, fix, trace]: repeats from other traces (uses + 1), a repeat from the same trace
      // (no-op), a fix pushed out by the per-signature cap and pushed again, and the global cap.
      const steps: [number, string, string][] = [
        [1, 'a', 't1'], [1, 'b', 't2'], [1, 'a', 't3'], [1, 'a', 't3'], [2, 'x', 't4'], [1, 'c', 't5'],
        [3, 'x', 't6'], [4, 'x', 't7'], [2, 'x', 't8'], [5, 'x', 't9'], [6, 'x', 't10'], [1, 'b', 't11'],
        [7, 'x', 't12'], [2, 'x', 't13'], [2, 'x', 't13'], [1, 'c', 't14'],
      ];
      const sequence = (space: string) =>
        steps.map(([n, fix, trace], i) =>
          contractCorrection(n, fix, { signature: `${space}${n}`.padEnd(16, '0'), trace_id: trace, recovered_at: new Date(T0 + i * 1000).toISOString() }),
        );
      // One by one, in an empty store...
      for (const c of sequence('a')) await m.pushCorrection(c, limits);
      const oneByOne = await m.listCorrections({ limit: Infinity });
      expect(oneByOne).toHaveLength(limits.capacity);
      expect(oneByOne.some((e) => e.uses > 1)).toBe(true);
      // ...then the same corrections under other signatures as one batch: the older entries are
      // the first evicted, so the batch's entries must come out exactly as the one-by-one run's.
      await m.pushCorrections(sequence('b'), limits);
      const batched = (await m.listCorrections({ limit: Infinity })).filter((e) => e.signature.startsWith('b'));
      expect(batched.map((e) => ({ ...e, signature: `a${e.signature.slice(1)}` }))).toStrictEqual(oneByOne);
      await m.pushCorrections([], limits);
      expect(await m.listCorrections({ limit: Infinity })).toHaveLength(limits.capacity);
    });

    it('stores nothing of a batch with an invalid correction or limit', async () => {
      const m = memory();
      await m.pushCorrection(contractCorrection(1, 'kept'));
      await expect(m.pushCorrections([contractCorrection(2, 'a'), contractCorrection(3, 'b', { recovered_at: 'later' })])).rejects.toThrow(/invalid recovered_at/);
      await expect(m.pushCorrections([contractCorrection(2, 'a')], { perSignature: 0 })).rejects.toThrow(/perSignature/);
      expect(fixesOf(await m.listCorrections())).toEqual(['kept']);
    });

    it('rejects an invalid correction or limit without storing anything', async () => {
      const m = memory();
      await expect(m.pushCorrection(contractCorrection(1, 'a', { signature: '' }))).rejects.toThrow(/signature/);
      await expect(m.pushCorrection(contractCorrection(1, 'a', { recovered_at: 'yesterday' }))).rejects.toThrow(/invalid recovered_at/);
      await expect(m.pushCorrection(contractCorrection(1, 'a'), { capacity: 0 })).rejects.toThrow(/capacity/);
      expect(await m.listCorrections()).toEqual([]);
    });
  });
}
