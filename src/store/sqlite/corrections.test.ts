/**
 * The SQLite correction memory's two ways of storing a batch, against the in-process buffer the
 * memory store uses: a batch replayed in memory (a table of at most a thousand rows) and one pushed
 * statement by statement (a larger table) must leave exactly what pushing one by one leaves. Random
 * sequences of repeats, same-trace repeats and both caps, in batches of random sizes.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../core/seeded-random.js';
import { CorrectionBuffer, normalizedCorrection } from '../corrections.js';
import type { CorrectionLimits, NewCorrection } from '../../core/store-types.js';
import { migrate, SQLITE_MIGRATIONS } from './migrations.js';
import { sqliteCorrections } from './corrections.js';

const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

function randomCorrections(seed: number, count: number, signatures: number): NewCorrection[] {
  const random = seededRandom(seed);
  const pick = (n: number) => Math.floor(random() * n);
  const out: NewCorrection[] = [];
  for (let i = 0; i < count; i++) {
    const sig = pick(signatures);
    out.push({
      signature: `sig${sig}`.padEnd(16, '0'),
      tool_name: `tool_${sig % 7}`,
      failure_category: 'parameter',
      failure_type: 'enum_mismatch',
      error_code: pick(3) === 0 ? null : 'E_ARG',
      // Few distinct recoveries, so repeats (uses + 1) and same-trace no-ops are common.
      recovery: pick(4) === 0 ? { action: 'wait_and_retry', wait_ms: 1000 * (1 + pick(3)) } : { action: 'retry_with_fixed_params', params_delta: { unit: `u${pick(3)}` } },
      trace_id: pick(5) === 0 ? null : `trace-${pick(6)}`,
      // Not canonical on purpose (no milliseconds): both adapters store the canonical form.
      recovered_at: new Date(T0 + i * 1000).toISOString().replace('.000Z', 'Z'),
    });
  }
  return out;
}

function sqliteMemory() {
  const db = new Database(':memory:');
  migrate(db, ':memory:', SQLITE_MIGRATIONS);
  return { db, corrections: sqliteCorrections(db) };
}

describe('sqlite correction memory batches', () => {
  const cases: { name: string; limits: CorrectionLimits; prefill: number; pushes: number; signatures: number }[] = [
    { name: 'a small table, replayed in memory', limits: { capacity: 40, perSignature: 3 }, prefill: 0, pushes: 3000, signatures: 30 },
    { name: 'the default limits', limits: { capacity: 100, perSignature: 5 }, prefill: 0, pushes: 3000, signatures: 60 },
    { name: 'a table too large to replay, pushed statement by statement', limits: { capacity: 5000, perSignature: 4 }, prefill: 1500, pushes: 1500, signatures: 900 },
  ];
  for (const c of cases) {
    it(`stores random batches exactly as one-by-one pushes: ${c.name}`, () => {
      const { db, corrections } = sqliteMemory();
      const reference = new CorrectionBuffer(c.limits);
      const all = randomCorrections(c.prefill + c.pushes, c.prefill + c.pushes, c.signatures);
      // The reference gets the corrections as the memory store does: recovered_at in canonical form.
      const canonical = normalizedCorrection;
      if (c.prefill > 0) corrections.pushMany(all.slice(0, c.prefill), c.limits);
      for (const x of all.slice(0, c.prefill)) reference.add(canonical(x), c.limits);
      if (c.prefill > 0) expect((db.prepare('SELECT count(*) FROM corrections').pluck().get() as number) > 1000).toBe(true);
      const random = seededRandom(7);
      let at = c.prefill;
      let batches = 0;
      while (at < all.length) {
        const size = 1 + Math.floor(random() * 300);
        const batch = all.slice(at, at + size);
        corrections.pushMany(batch, c.limits);
        for (const x of batch) reference.add(canonical(x), c.limits);
        at += size;
        batches += 1;
        if (batches % 4 === 0) expect(corrections.list({ limit: Infinity })).toStrictEqual(reference.list({ limit: Infinity }));
      }
      const stored = corrections.list({ limit: Infinity });
      expect(stored).toStrictEqual(reference.list({ limit: Infinity }));
      expect(stored.some((e) => e.uses > 2)).toBe(true);
      // The push order survives too: single pushes after the batches land where they would.
      const next = randomCorrections(99, 50, c.signatures);
      for (const x of next) {
        expect(corrections.push(x, c.limits)).toStrictEqual(reference.push(canonical(x), c.limits));
      }
      expect(corrections.list({ limit: Infinity })).toStrictEqual(reference.list({ limit: Infinity }));
      db.close();
    });
  }

  it('a batch with an invalid correction stores nothing, on either path', () => {
    const { db, corrections } = sqliteMemory();
    const good = randomCorrections(3, 20, 5);
    corrections.pushMany(good, { capacity: 100, perSignature: 5 });
    const before = corrections.list({ limit: Infinity });
    const bad = [...randomCorrections(4, 10, 5), { ...good[0]!, recovered_at: 'not a time' }];
    expect(() => corrections.pushMany(bad)).toThrow(/invalid recovered_at/);
    expect(corrections.list({ limit: Infinity })).toStrictEqual(before);
    db.close();
  });
});
