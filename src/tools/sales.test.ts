import { describe, expect, it } from 'vitest';
import { harness } from './catalog.test-helpers.js';
import { SALES_REGIONS } from './sales.js';

describe('query_sales_data', () => {
  it('returns one row per day of a past month, summing to the totals', async () => {
    const r = await harness().ok('query_sales_data', { month: '2026-02', region: 'south', granularity: 'daily' });
    expect(r).toMatchObject({ month: '2026-02', region: 'south', granularity: 'daily', currency: 'CNY', complete: true, through: '2026-02-28', records: 28 });
    expect(r.data[0].period).toBe('2026-02-01');
    const sum = r.data.reduce((s: number, d: { revenue: number }) => s + d.revenue, 0);
    expect(sum).toBeCloseTo(r.totals.revenue, 1);
    expect(r.data.reduce((s: number, d: { orders: number }) => s + d.orders, 0)).toBe(r.totals.orders);
  });

  it('rolls days up into Monday-based weeks and whole months consistently', async () => {
    const h = harness();
    const daily = await h.ok('query_sales_data', { month: '2026-02', region: 'east' });
    const weekly = await h.ok('query_sales_data', { month: '2026-02', region: 'east', granularity: 'weekly' });
    const monthly = await h.ok('query_sales_data', { month: '2026-02', region: 'east', granularity: 'monthly' });
    // 2026-02-01 is a Sunday: a one-day first week, then Mondays.
    expect(weekly.data.map((w: { period: string }) => w.period)).toEqual(['2026-02-01', '2026-02-02', '2026-02-09', '2026-02-16', '2026-02-23']);
    expect(weekly.data.map((w: { days: number }) => w.days)).toEqual([1, 7, 7, 7, 6]);
    expect(monthly.records).toBe(1);
    expect(monthly.totals).toEqual(daily.totals);
    expect(weekly.totals).toEqual(daily.totals);
    expect(monthly.data[0].revenue).toBeCloseTo(daily.totals.revenue, 1);
  });

  it('makes "all" the sum of the regions', async () => {
    const h = harness();
    const all = await h.ok('query_sales_data', { month: '2026-01', region: 'all', granularity: 'monthly' });
    let orders = 0;
    let revenue = 0;
    for (const region of SALES_REGIONS) {
      const r = await h.ok('query_sales_data', { month: '2026-01', region, granularity: 'monthly' });
      orders += r.totals.orders;
      revenue += r.totals.revenue;
    }
    expect(all.totals.orders).toBe(orders);
    expect(all.totals.revenue).toBeCloseTo(revenue, 1);
  });

  it('serves the current month only through yesterday, marked incomplete', async () => {
    const r = await harness().ok('query_sales_data', { month: '2026-03', region: 'north' });
    expect(r).toMatchObject({ complete: false, through: '2026-03-28', records: 28 });
  });

  it('maps region synonyms (华南 is south)', async () => {
    const h = harness();
    const zh = await h.ok('query_sales_data', { month: '2026-03', region: '华南', granularity: 'daily' });
    const en = await h.ok('query_sales_data', { month: '2026-03', region: 'south', granularity: 'daily' });
    expect(zh.region).toBe('south');
    expect(zh.data).toEqual(en.data);
  });

  it('rejects future months and months beyond the history as boundary violations', async () => {
    const h = harness();
    const future = await h.fail('query_sales_data', { month: '2026-04' });
    expect(future).toMatchObject({ category: 'parameter', type: 'boundary_violation', code: 'MONTH_OUT_OF_RANGE' });
    expect(future.body).toMatchObject({ min: '2024-03', max: '2026-03' });
    await h.ok('query_sales_data', { month: '2024-03', granularity: 'monthly' });
    expect((await h.fail('query_sales_data', { month: '2024-02' })).type).toBe('boundary_violation');
  });

  it('rejects malformed months and unknown regions at validation', async () => {
    const h = harness();
    expect((await h.fail('query_sales_data', { month: '2026-13' })).stage).toBe('param_validation');
    const region = await h.fail('query_sales_data', { month: '2026-02', region: 'mars' });
    expect(region.type).toBe('enum_mismatch');
  });

  it('gives the same figures for the same seed and different ones for another', async () => {
    const a = await harness({ seed: 5 }).ok('query_sales_data', { month: '2026-02', region: 'west' });
    const b = await harness({ seed: 5 }).ok('query_sales_data', { month: '2026-02', region: 'west' });
    const c = await harness({ seed: 6 }).ok('query_sales_data', { month: '2026-02', region: 'west' });
    expect(b).toEqual(a);
    expect(c.totals.revenue).not.toBe(a.totals.revenue);
  });
});
