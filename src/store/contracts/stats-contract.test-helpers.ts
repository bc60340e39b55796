/**
 * The stats contract: every rollup read (tool stats, failure breakdown, hourly points, failure
 * signatures) equals what the raw records give, over hour-granular windows.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import type { RecordWriter, StatsFilter, StatsReader, ToolStats } from '../../core/store-types.js';
import { exactPercentile } from '../duration-sketch.js';
import type { CapabilityContract } from './capabilities.test-helpers.js';
import {
  CONTRACT_T0,
  CONTRACT_WINDOW,
  HOUR,
  contractDataset,
  createdMs,
  expectedBreakdown,
  expectedToolStats,
  expectWithinSketchError,
  iso,
} from './contract-data.test-helpers.js';

export const statsContract: CapabilityContract<RecordWriter & StatsReader> = {
  capability: 'stats',
  observes: [],
  register(current) {
    let store: RecordWriter & StatsReader;
    beforeEach(() => {
      store = current();
    });

  describe('empty store', () => {
      it('returns empty results everywhere', async () => {
        expect(await store.toolStats(CONTRACT_WINDOW)).toEqual([]);
        expect(await store.failureBreakdown(CONTRACT_WINDOW)).toEqual([]);
        expect(await store.hourly(CONTRACT_WINDOW)).toEqual([]);
        expect(await store.signatures(CONTRACT_WINDOW)).toEqual([]);
      });

      it('refuses a window bound that is not epoch ms, naming the field', async () => {
        const now = new Date(CONTRACT_T0);
        const bad = { since: now, until: CONTRACT_T0 } as unknown as StatsFilter;
        for (const read of [
          () => store.toolStats(bad),
          () => store.failureBreakdown(bad),
          () => store.hourly(bad),
          () => store.signatures(bad),
        ]) {
          await expect(read()).rejects.toMatchObject({ name: 'ConfigError', field: 'since', message: expect.stringMatching(/since must be epoch milliseconds .*a Date .*getTime/) });
        }
        await expect(store.toolStats({ since: CONTRACT_T0 } as StatsFilter)).rejects.toMatchObject({ field: 'until', message: expect.stringContaining('got undefined') });
        // Numbers still work, and an empty window is an empty answer, not an error.
        expect(await store.toolStats({ since: CONTRACT_T0, until: CONTRACT_T0 })).toEqual([]);
      });
    });

    describe('toolStats', () => {
      it('matches totals, rates and percentiles computed from the raw records', async () => {
        const data = contractDataset();
        await store.insert(data);
        const stats = await store.toolStats(CONTRACT_WINDOW);
        const expected = expectedToolStats(data);
        expect(stats.map((s) => s.tool_name)).toEqual(expected.map((s) => s.tool_name));
        for (const [i, exp] of expected.entries()) {
          const got = stats[i]!;
          expect(got).toMatchObject({
            tool_name: exp.tool_name,
            total: exp.total,
            success: exp.success,
            failure: exp.failure,
            timeout: exp.timeout,
            rejected: exp.rejected,
            retried_calls: exp.retried_calls,
            retries: exp.retries,
            breaker_trips: exp.breaker_trips,
            param_validation_failures: exp.param_validation_failures,
          });
          expect(got.failure_rate).toBeCloseTo(exp.failure_rate, 12);
          expect(got.retry_rate).toBeCloseTo(exp.retry_rate, 12);
          expect(got.param_validation_failure_rate).toBeCloseTo(exp.param_validation_failure_rate, 12);
          expect(got.avg_ms).toBeCloseTo(exp.avg_ms!, 9);
          expectWithinSketchError(got.p50_ms, exp.p50_ms);
          expectWithinSketchError(got.p95_ms, exp.p95_ms);
        }
        // The dataset must exercise every counter, or the checks above prove little.
        const sum = (k: keyof ToolStats) => stats.reduce((s, t) => s + Number(t[k]), 0);
        for (const k of ['failure', 'timeout', 'rejected', 'retried_calls', 'breaker_trips', 'param_validation_failures'] as const) {
          expect(sum(k)).toBeGreaterThan(0);
        }
      });

      it('filters by tool', async () => {
        const data = contractDataset();
        await store.insert(data);
        const stats = await store.toolStats({ ...CONTRACT_WINDOW, toolName: 'search_orders' });
        expect(stats).toHaveLength(1);
        expect(stats[0]!.total).toBe(data.filter((r) => r.tool_name === 'search_orders').length);
        expect(await store.toolStats({ ...CONTRACT_WINDOW, toolName: 'nope' })).toEqual([]);
      });

      it('computes percentiles of a known distribution within the sketch error', async () => {
        const durations = [5, 7, 12.5, 12, 13, 20, 40, 41, 90, 120, 250, 800, 1500, 2100, 9000, 12, 13, 14.25, 15, 16];
        await store.insert(
          durations.map((d, i) => makeRecord({ tool_name: 'known', duration_ms: d, created_at: iso(CONTRACT_T0 + i * 1000) })),
        );
        const [stats] = await store.toolStats(CONTRACT_WINDOW);
        expectWithinSketchError(stats!.p50_ms, exactPercentile(durations, 0.5));
        expectWithinSketchError(stats!.p95_ms, exactPercentile(durations, 0.95));
        expect(stats!.avg_ms).toBeCloseTo(durations.reduce((a, b) => a + b, 0) / durations.length, 9);
        expect(stats).toMatchObject({ total: 20, success: 20, failure_rate: 0, retry_rate: 0, breaker_trips: 0 });
      });
    });

    describe('failureBreakdown', () => {
      it('counts failures per tool, stage, category and type, largest first', async () => {
        const data = contractDataset();
        await store.insert(data);
        const expected = expectedBreakdown(data);
        expect(expected.length).toBeGreaterThan(5);
        expect(await store.failureBreakdown(CONTRACT_WINDOW)).toEqual(expected);
        expect(await store.failureBreakdown({ ...CONTRACT_WINDOW, toolName: 'send_email' })).toEqual(
          expected.filter((r) => r.tool_name === 'send_email'),
        );
      });
    });

    describe('hourly', () => {
      it('returns one point per tool and hour, in hour order', async () => {
        const data = contractDataset();
        await store.insert(data);
        const points = await store.hourly(CONTRACT_WINDOW);
        const hours = new Set(points.map((p) => p.hour));
        expect(hours).toEqual(new Set([0, 1, 2, 5].map((h) => iso(CONTRACT_T0 + h * HOUR))));
        const keys = points.map((p) => `${p.hour} ${p.tool_name}`);
        expect(keys).toEqual([...keys].sort());
        for (const p of points) {
          const start = Date.parse(p.hour);
          const rs = data.filter((r) => r.tool_name === p.tool_name && createdMs(r) >= start && createdMs(r) < start + HOUR);
          expect(p).toMatchObject({
            total: rs.length,
            failures: rs.filter((r) => r.status !== 'success').length,
            retried_calls: rs.filter((r) => r.retry_count > 0).length,
            breaker_trips: rs.filter((r) => r.breaker_state === 'open' && r.status !== 'rejected').length,
          });
          expectWithinSketchError(p.p95_ms, exactPercentile(rs.map((r) => r.duration_ms), 0.95));
        }
        expect(points.reduce((s, p) => s + p.total, 0)).toBe(data.length);
      });
    });

    describe('windows', () => {
      it('exclude data outside them, at hour granularity', async () => {
        const data = contractDataset();
        await store.insert(data);
        const hour1 = { since: CONTRACT_T0 + HOUR, until: CONTRACT_T0 + 2 * HOUR };
        const inHour1 = data.filter((r) => createdMs(r) >= hour1.since && createdMs(r) < hour1.until);
        expect(inHour1.length).toBeGreaterThan(0);
        expect(inHour1.length).toBeLessThan(data.length);

        const stats = await store.toolStats(hour1);
        expect(stats.map((s) => [s.tool_name, s.total, s.failure, s.retries])).toEqual(
          expectedToolStats(inHour1).map((s) => [s.tool_name, s.total, s.failure, s.retries]),
        );
        expect(await store.failureBreakdown(hour1)).toEqual(expectedBreakdown(inHour1));
        const points = await store.hourly(hour1);
        expect(new Set(points.map((p) => p.hour))).toEqual(new Set([iso(hour1.since)]));

        // A window that is not hour-aligned covers every hour it overlaps.
        const ragged = { since: CONTRACT_T0 + HOUR + 20 * 60_000, until: CONTRACT_T0 + HOUR + 40 * 60_000 };
        expect((await store.toolStats(ragged)).reduce((s, t) => s + t.total, 0)).toBe(inHour1.length);

        const nothing = { since: CONTRACT_T0 + 10 * HOUR, until: CONTRACT_T0 + 20 * HOUR };
        expect(await store.toolStats(nothing)).toEqual([]);
        expect(await store.failureBreakdown(nothing)).toEqual([]);
        expect(await store.hourly(nothing)).toEqual([]);
        expect(await store.signatures(nothing)).toEqual([]);
        const before = { since: CONTRACT_T0 - 5 * HOUR, until: CONTRACT_T0 };
        expect(await store.toolStats(before)).toEqual([]);
      });
    });

    describe('signatures', () => {
      const notFound = (minute: number, orderId: number, code = 'HTTP_404') =>
        makeFailureRecord({
          created_at: iso(CONTRACT_T0 + minute * 60_000),
          tool_name: 'lookup_order',
          failure_stage: 'execution',
          failure_category: 'business',
          failure_type: 'not_found',
          error_code: code,
          error_message: `order ${orderId} not found`,
        });

      it('merges messages that differ only in ids and keeps first_seen across batches', async () => {
        const first = notFound(10, 123);
        await store.insert([first, notFound(12, 456)]);
        await store.insert([notFound(50, 789), notFound(30, 1011)]);
        await store.insert([notFound(20, 77, 'HTTP_410')]);

        const sigs = await store.signatures(CONTRACT_WINDOW);
        expect(sigs).toHaveLength(2);
        const [main, other] = sigs;
        expect(main).toMatchObject({
          tool_name: 'lookup_order',
          failure_stage: 'execution',
          failure_type: 'not_found',
          error_code: 'HTTP_404',
          normalized_message: 'order <n> not found',
          first_seen: first.created_at,
          last_seen: iso(CONTRACT_T0 + 50 * 60_000),
          count: 4,
        });
        expect(main!.signature).toMatch(/^[0-9a-f]{8,64}$/);
        expect(other).toMatchObject({ error_code: 'HTTP_410', count: 1, normalized_message: 'order <n> not found' });
        expect(other!.signature).not.toBe(main!.signature);

        // A later batch with an earlier record moves first_seen back; it never moves forward.
        await store.insert([notFound(5, 1)]);
        const [updated] = await store.signatures(CONTRACT_WINDOW);
        expect(updated).toMatchObject({ first_seen: iso(CONTRACT_T0 + 5 * 60_000), count: 5, signature: main!.signature });
      });

      it('returns signatures last seen in the window, with all-time first_seen and count', async () => {
        await store.insert([notFound(10, 1), notFound(70, 2), notFound(130, 3)]);
        const lastHour = { since: CONTRACT_T0 + 2 * HOUR, until: CONTRACT_T0 + 3 * HOUR };
        const [sig] = await store.signatures(lastHour);
        expect(sig).toMatchObject({ first_seen: iso(CONTRACT_T0 + 10 * 60_000), last_seen: iso(CONTRACT_T0 + 130 * 60_000), count: 3 });
        expect(await store.signatures({ since: CONTRACT_T0, until: CONTRACT_T0 + 2 * HOUR })).toEqual([]);
        expect(await store.signatures({ ...CONTRACT_WINDOW, toolName: 'other_tool' })).toEqual([]);
      });

      it('groups the varied dataset by shape, most frequent first', async () => {
        const data = contractDataset();
        await store.insert(data);
        const sigs = await store.signatures(CONTRACT_WINDOW);
        const failures = data.filter((r) => r.status !== 'success');
        expect(sigs.reduce((s, g) => s + g.count, 0)).toBe(failures.length);
        // Far fewer shapes than failures: ids, numbers, URLs and emails were normalized away.
        expect(sigs.length).toBeLessThan(failures.length / 4);
        expect(sigs.map((s) => s.count)).toEqual([...sigs.map((s) => s.count)].sort((a, b) => b - a));
        for (const s of sigs) {
          const members = failures.filter(
            (r) => r.tool_name === s.tool_name && r.failure_type === s.failure_type && r.error_code === s.error_code && r.failure_stage === s.failure_stage,
          );
          expect(members.length).toBeGreaterThanOrEqual(s.count);
          expect(s.normalized_message).not.toMatch(/\d/);
        }
        expect((await store.signatures({ ...CONTRACT_WINDOW, toolName: 'send_email' })).every((s) => s.tool_name === 'send_email')).toBe(true);
      });
    });
  },
};
