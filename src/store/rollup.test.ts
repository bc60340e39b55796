import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import { bucketOf } from './duration-sketch.js';
import {
  aggregateBatch,
  failureBreakdownFromRows,
  failureCell,
  hourlyFromRows,
  hourRange,
  HOUR_MS,
  parseIsoMs,
  signaturesFromRows,
  toolStatsFromRows,
} from './rollup.js';

const T0 = Date.UTC(2025, 2, 10, 8, 0, 0);
const at = (ms: number) => new Date(ms).toISOString();

describe('parseIsoMs', () => {
  it('agrees with Date.parse on toISOString output', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date(0), max: new Date(Date.UTC(9999, 11, 31)), noInvalidDate: true }), (d) => {
        const s = d.toISOString();
        expect(parseIsoMs(s)).toBe(Date.parse(s));
      }),
    );
  });

  it('falls back to Date.parse for other ISO forms and rejects garbage', () => {
    expect(parseIsoMs('2025-03-10T10:00:00+02:00')).toBe(T0);
    expect(parseIsoMs('2025-03-10T08:00:00Z')).toBe(T0);
    expect(parseIsoMs('2025-02-30T08:00:00.000Z')).toBeNaN();
    expect(parseIsoMs('2025-13-10T08:00:00.000Z')).toBeNaN();
    expect(parseIsoMs('2025-03-1xT08:00:00.000Z')).toBeNaN();
    expect(parseIsoMs('yesterday')).toBeNaN();
    expect(parseIsoMs('2024-02-29T23:59:59.999Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999));
  });
});

describe('hourRange', () => {
  it('widens a window to the whole hours it overlaps', () => {
    expect(hourRange({ since: T0 + 10, until: T0 + HOUR_MS + 1 })).toEqual({ fromHourMs: T0, untilHourMs: T0 + 2 * HOUR_MS });
    expect(hourRange({ since: T0, until: T0 + HOUR_MS })).toEqual({ fromHourMs: T0, untilHourMs: T0 + HOUR_MS });
  });
});

describe('failureCell', () => {
  it('keeps labels when present and falls back when missing', () => {
    expect(failureCell(makeFailureRecord({ failure_stage: 'param_validation', failure_category: 'parameter', failure_type: 'missing_required' }))).toEqual({
      failure_stage: 'param_validation',
      failure_category: 'parameter',
      failure_type: 'missing_required',
    });
    expect(failureCell({ status: 'failure', failure_stage: null, failure_category: null, failure_type: 'rate_limited' })).toEqual({
      failure_stage: 'execution',
      failure_category: 'rate_limit',
      failure_type: 'rate_limited',
    });
    expect(failureCell({ status: 'timeout', failure_stage: null, failure_category: null, failure_type: null })).toEqual({
      failure_stage: 'execution',
      failure_category: 'network',
      failure_type: 'timeout',
    });
    expect(failureCell({ status: 'failure', failure_stage: null, failure_category: null, failure_type: 'weird' }).failure_category).toBe('system');
  });
});

describe('aggregateBatch', () => {
  const records = [
    makeRecord({ tool_name: 'a', created_at: at(T0 + 1), duration_ms: 10 }),
    makeRecord({ tool_name: 'a', created_at: at(T0 + 2), duration_ms: 10, retry_count: 2 }),
    makeFailureRecord({
      tool_name: 'a',
      created_at: at(T0 + 3),
      duration_ms: 500,
      failure_stage: 'execution',
      failure_category: 'system',
      failure_type: 'server_error',
      breaker_state: 'open',
      error_message: 'job 17 failed',
    }),
    makeFailureRecord({
      tool_name: 'a',
      created_at: at(T0 + 4),
      status: 'rejected',
      duration_ms: 0,
      failure_stage: 'execution',
      failure_category: 'system',
      failure_type: 'circuit_open',
      breaker_state: 'open',
      error_message: 'circuit open',
    }),
    makeFailureRecord({
      tool_name: 'a',
      created_at: at(T0 + HOUR_MS + 5),
      status: 'rejected',
      duration_ms: 1,
      failure_stage: 'param_validation',
      failure_category: 'parameter',
      failure_type: 'missing_required',
      error_message: 'x',
    }),
    makeFailureRecord({
      tool_name: 'b',
      created_at: at(T0 + 6),
      failure_stage: 'execution',
      failure_category: 'system',
      failure_type: 'server_error',
      error_message: 'job 99 failed',
    }),
    makeFailureRecord({
      tool_name: 'a',
      created_at: at(T0 + 7),
      duration_ms: 480,
      failure_stage: 'execution',
      failure_category: 'system',
      failure_type: 'server_error',
      error_message: 'job 18 failed',
    }),
  ];

  it('counts per tool and hour', () => {
    const delta = aggregateBatch(records);
    const byKey = new Map(delta.hourly.map((h) => [`${h.tool_name}@${h.hour_ms}`, h]));
    expect(byKey.get(`a@${T0}`)).toEqual({
      tool_name: 'a',
      hour_ms: T0,
      total: 5,
      success: 2,
      failure: 2,
      timeout: 0,
      rejected: 1,
      retried_calls: 1,
      retries: 2,
      breaker_trips: 1,
      param_validation_failures: 0,
      duration_sum: 10 + 10 + 500 + 0 + 480,
    });
    expect(byKey.get(`a@${T0 + HOUR_MS}`)).toMatchObject({ total: 1, rejected: 1, param_validation_failures: 1 });
    expect(byKey.get(`b@${T0}`)).toMatchObject({ total: 1, failure: 1 });
    expect(delta.hourly).toHaveLength(3);
  });

  it('counts durations per bucket', () => {
    const delta = aggregateBatch(records);
    const aHour0 = delta.durations.filter((d) => d.tool_name === 'a' && d.hour_ms === T0);
    expect(new Map(aHour0.map((d) => [d.bucket, d.count]))).toEqual(
      new Map([
        [bucketOf(10), 2],
        [bucketOf(500), 1],
        [bucketOf(480), 1],
        [0, 1],
      ]),
    );
  });

  it('groups failure cells and signatures', () => {
    const delta = aggregateBatch(records);
    expect(delta.failures).toContainEqual({
      tool_name: 'a',
      hour_ms: T0,
      failure_stage: 'execution',
      failure_category: 'system',
      failure_type: 'server_error',
      count: 2,
    });
    expect(delta.failures).toHaveLength(4);
    const jobA = delta.signatures.find((s) => s.tool_name === 'a' && s.normalized_message === 'job <n> failed');
    expect(jobA).toMatchObject({ count: 2, first_seen_ms: T0 + 3, last_seen_ms: T0 + 7 });
    expect(delta.signatures).toHaveLength(4);
  });

  it('holds one row per key in every array, even when labels are missing on some records', () => {
    const labelled = makeFailureRecord({
      tool_name: 'c',
      created_at: at(T0 + 1),
      status: 'timeout',
      failure_stage: 'execution',
      failure_category: 'network',
      failure_type: 'timeout',
      error_code: null,
      error_message: null,
    });
    const unlabelled = makeRecord({ tool_name: 'c', created_at: at(T0 + 2), status: 'timeout', error_message: null });
    const delta = aggregateBatch([labelled, unlabelled, ...records]);
    expect(delta.failures.filter((f) => f.tool_name === 'c')).toEqual([
      { tool_name: 'c', hour_ms: T0, failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', count: 2 },
    ]);
    expect(delta.signatures.filter((s) => s.tool_name === 'c')).toHaveLength(1);
    const keys = (rows: object[], fields: string[]) => rows.map((r) => JSON.stringify(fields.map((k) => (r as Record<string, unknown>)[k])));
    const unique = (xs: string[]) => new Set(xs).size === xs.length;
    expect(unique(keys(delta.hourly, ['tool_name', 'hour_ms']))).toBe(true);
    expect(unique(keys(delta.durations, ['tool_name', 'hour_ms', 'bucket']))).toBe(true);
    expect(unique(keys(delta.failures, ['tool_name', 'hour_ms', 'failure_stage', 'failure_category', 'failure_type']))).toBe(true);
    expect(unique(keys(delta.signatures, ['signature']))).toBe(true);
  });

  it('uses the supplied created times instead of parsing', () => {
    const delta = aggregateBatch([records[0]!], [T0 + 5 * HOUR_MS]);
    expect(delta.hourly[0]!.hour_ms).toBe(T0 + 5 * HOUR_MS);
  });

  it('rejects a record whose created_at is not a date', () => {
    expect(() => aggregateBatch([{ ...records[0]!, created_at: 'nope' }])).toThrow(ConfigError);
  });

  it('is additive: aggregating parts and summing equals aggregating the whole', () => {
    const whole = toolStatsFromRows(aggregateBatch(records).hourly, aggregateBatch(records).durations);
    const p1 = aggregateBatch(records.slice(0, 3));
    const p2 = aggregateBatch(records.slice(3));
    expect(toolStatsFromRows([...p1.hourly, ...p2.hourly], [...p1.durations, ...p2.durations])).toEqual(whole);
  });
});

describe('read helpers', () => {
  it('accept driver-typed numbers (bigint, numeric strings)', () => {
    const stats = toolStatsFromRows(
      [
        {
          tool_name: 'x',
          total: '4',
          success: 2n,
          failure: '1',
          timeout: 1,
          rejected: 0,
          retried_calls: '1',
          retries: '3',
          breaker_trips: 0,
          param_validation_failures: 0,
          duration_sum: '410.5',
        },
      ],
      [
        { tool_name: 'x', bucket: String(bucketOf(100)), count: 3n },
        { tool_name: 'x', bucket: bucketOf(100), count: '1' },
      ],
    );
    expect(stats).toHaveLength(1);
    expect(stats[0]).toMatchObject({ total: 4, failure_rate: 0.5, retry_rate: 0.25, retries: 3, avg_ms: 410.5 / 4 });
    expect(stats[0]!.p50_ms).toBeCloseTo(100, -1);
  });

  it('sort tool stats by name, hourly by hour then tool, breakdown by count', () => {
    const delta = aggregateBatch([
      makeRecord({ tool_name: 'zeta', created_at: at(T0) }),
      makeRecord({ tool_name: 'alpha', created_at: at(T0 + HOUR_MS) }),
      makeRecord({ tool_name: 'beta', created_at: at(T0 + HOUR_MS) }),
    ]);
    expect(toolStatsFromRows(delta.hourly, delta.durations).map((s) => s.tool_name)).toEqual(['alpha', 'beta', 'zeta']);
    expect(hourlyFromRows(delta.hourly, delta.durations).map((p) => `${p.hour} ${p.tool_name}`)).toEqual([
      `${at(T0)} zeta`,
      `${at(T0 + HOUR_MS)} alpha`,
      `${at(T0 + HOUR_MS)} beta`,
    ]);
    const rows = failureBreakdownFromRows([
      { tool_name: 'a', failure_stage: 'execution', failure_category: 'system', failure_type: 'x', count: '1' },
      { tool_name: 'b', failure_stage: 'execution', failure_category: 'system', failure_type: 'x', count: 2 },
      { tool_name: 'a', failure_stage: 'execution', failure_category: 'system', failure_type: 'x', count: 2n },
    ]);
    expect(rows.map((r) => [r.tool_name, r.count])).toEqual([
      ['a', 3],
      ['b', 2],
    ]);
  });

  it('turn signature rows into ISO times, most frequent first', () => {
    const base = { tool_name: 't', failure_stage: 'execution' as const, failure_type: 'x', error_code: null, normalized_message: 'm' };
    const sigs = signaturesFromRows([
      { ...base, signature: 's1', first_seen_ms: String(T0), last_seen_ms: T0 + 10, count: 1 },
      { ...base, signature: 's2', first_seen_ms: T0, last_seen_ms: '' + (T0 + 5), count: '7' },
    ]);
    expect(sigs.map((s) => s.signature)).toEqual(['s2', 's1']);
    expect(sigs[0]).toEqual({ ...base, signature: 's2', first_seen: at(T0), last_seen: at(T0 + 5), count: 7 });
  });
});
