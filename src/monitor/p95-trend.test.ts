import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../core/record-types.js';
import type { Store } from '../core/store-types.js';
import { makeRecord } from '../record/fixture.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { describePostgres, PG_URL, useTestSchema } from '../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { evaluateAlerts, resolveAlertConfig } from './alert-rules.js';

const HOUR = 3_600_000;
/** The evaluation time: 10 minutes into an hour. */
const NOW = Date.UTC(2026, 4, 12, 15, 10);
const FIRST_HOUR = Date.UTC(2026, 4, 12, 10);

/** 30 calls an hour for six hours, the hour's durations around `base(h)` ms. */
function series(tool: string, base: (hour: number) => number): ToolExecutionRecord[] {
  const records: ToolExecutionRecord[] = [];
  for (let h = 0; h < 6; h++) {
    for (let i = 0; i < 30; i++) {
      const at = FIRST_HOUR + h * HOUR + i * 60_000;
      // Spread from 0.5x to 1x of the hour's base, so P95 sits near the base.
      const duration = Math.round(base(h) * (0.5 + (0.5 * i) / 29));
      records.push(makeRecord({ tool_name: tool, created_at: new Date(Math.min(at, NOW - 1000)).toISOString(), duration_ms: duration }));
    }
  }
  return records;
}

const RISING = series('search_flights', (h) => 200 * 1.3 ** h); // 200 ms to about 740 ms, far below 80% of 10 s
const FLAT = series('get_weather', () => 300);
const DIPPING = series('lookup_order', (h) => (h === 3 ? 150 : 200 * 1.4 ** h));

async function checkTrends(store: Store): Promise<void> {
  await store.insert([...RISING, ...FLAT, ...DIPPING]);
  const alerts = await evaluateAlerts(store, { window: { since: NOW - 2 * HOUR, until: NOW } });
  const trends = alerts.filter((a) => a.rule === 'p95_trend');
  expect(trends).toHaveLength(1);
  expect(trends[0]).toMatchObject({ tool_name: 'search_flights', severity: 'warning', threshold: 1.5, hour: '2026-05-12T15:00:00.000Z' });
  expect(trends[0]!.value).toBeGreaterThan(3);
  expect(trends[0]!.message).toMatch(/^p95 latency rose steadily from \d+ ms to \d+ ms \(\d\.\d\dx\) over the last 6 h, now \d\.\d% of the 10\.00 s timeout$/);
  // The threshold rule does not fire: the trend speaks first.
  expect(alerts.filter((a) => a.rule === 'p95_latency')).toEqual([]);
  // Five hours of rise are not six.
  const short = await evaluateAlerts(store, { window: { since: NOW - HOUR, until: NOW }, config: { rules: { p95_trend: { hours: 7 } } } });
  expect(short.filter((a) => a.rule === 'p95_trend')).toEqual([]);
  const lenient = await evaluateAlerts(store, { window: { since: NOW - HOUR, until: NOW }, config: { rules: { p95_trend: { tolerance: 0.7 } } } });
  expect(lenient.filter((a) => a.rule === 'p95_trend').map((a) => a.tool_name).sort()).toEqual(['lookup_order', 'search_flights']);
}

describe('p95_trend alert rule', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('fires on a steadily rising hourly P95 recorded in SQLite, not on a flat one or one that dipped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-trend-'));
    dirs.push(dir);
    const store = createSqliteStore({ path: join(dir, 'f.db') });
    try {
      await checkTrends(store);
    } finally {
      await store.close();
    }
  });

  it('refuses a config that cannot describe a trend, naming the field', () => {
    expect(() => resolveAlertConfig({ rules: { p95_trend: { hours: 1 } } })).toThrow(/rules\.p95_trend\.hours/);
    expect(() => resolveAlertConfig({ rules: { p95_trend: { minRise: 1 } } })).toThrow(/rules\.p95_trend\.minRise/);
  });
});

const describePg = await describePostgres('the p95_trend rule on PostgreSQL');
describePg('p95_trend alert rule on PostgreSQL', () => {
  const { schema } = useTestSchema('trend');
  it('fires on the same recorded series', async () => {
    const store = await createPostgresStore({ url: PG_URL, schema });
    try {
      await checkTrends(store);
    } finally {
      await store.close();
    }
  });
});
