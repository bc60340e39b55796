/**
 * `query_sales_data`: revenue, orders and units per region and day, rolled up by day, week or
 * month. Daily figures are seeded per (seed, region, day); "all" is the sum of the regions and
 * weeks/months are sums of days, so every figure can be cross-checked against the others.
 */
import type { ToolSpec } from '../runtime/define-tool.js';
import { ParameterError } from '../runtime/tool-errors.js';
import { keyedRandom, noise, roundTo } from './seeded-random.js';
import { addDays, formatIsoDate, parseIsoDate } from './zoned-time.js';

export const SALES_REGIONS = ['north', 'south', 'east', 'west', 'central'] as const;
export type SalesRegion = (typeof SALES_REGIONS)[number];

/** Average daily revenue per region, CNY. */
const REGION_BASE: Record<SalesRegion, number> = { north: 182_000, south: 236_000, east: 268_000, west: 97_000, central: 121_000 };
/** Retail seasonality by month (Chinese New Year dip, 618 and Singles' Day peaks). */
const SEASON = [0.92, 0.78, 0.97, 0.98, 1.02, 1.18, 0.96, 0.97, 1.0, 1.04, 1.32, 1.12];
/** Monday..Sunday. */
const WEEKDAY = [0.94, 0.95, 0.97, 0.99, 1.05, 1.1, 1.0];

/** Months of history kept before the current month. */
export const SALES_HISTORY_MONTHS = 24;

export interface SalesFigures {
  revenue: number;
  orders: number;
  units: number;
}

/** One region's seeded figures for one UTC day. */
export function dailySales(seed: number, region: SalesRegion, date: string): SalesFigures {
  const random = keyedRandom(seed, 'sales', region, date);
  const ms = parseIsoDate(date)!;
  const d = new Date(ms);
  const weekday = (d.getUTCDay() + 6) % 7;
  const revenue = REGION_BASE[region] * (SEASON[d.getUTCMonth()] ?? 1) * (WEEKDAY[weekday] ?? 1) * (1 + noise(random, 0.12));
  const ticket = 180 + random() * 90;
  const orders = Math.max(1, Math.round(revenue / ticket));
  return { revenue: roundTo(revenue, 2), orders, units: Math.round(orders * (1.4 + random() * 0.8)) };
}

function add(a: SalesFigures, b: SalesFigures): SalesFigures {
  return { revenue: roundTo(a.revenue + b.revenue, 2), orders: a.orders + b.orders, units: a.units + b.units };
}

const ZERO: SalesFigures = { revenue: 0, orders: 0, units: 0 };

function figuresFor(seed: number, region: SalesRegion | 'all', date: string): SalesFigures {
  if (region !== 'all') return dailySales(seed, region, date);
  return SALES_REGIONS.reduce((sum, r) => add(sum, dailySales(seed, r, date)), ZERO);
}

function monthIndex(month: string): number {
  return Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;
}

function monthOf(index: number): string {
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
}

export interface SalesRow extends SalesFigures {
  /** The day (`2026-03-05`), the first day of the week within the month, or the month. */
  period: string;
  days: number;
}

export interface SalesReport {
  month: string;
  region: SalesRegion | 'all';
  granularity: 'daily' | 'weekly' | 'monthly';
  currency: 'CNY';
  /** False for the current month: it only has the days that are over. */
  complete: boolean;
  /** The last day included. */
  through: string | null;
  records: number;
  data: SalesRow[];
  totals: SalesFigures;
}

interface SalesArgs {
  month: string;
  region: SalesRegion | 'all';
  granularity: 'daily' | 'weekly' | 'monthly';
}

export function salesTools(seed: number): ToolSpec<any, unknown>[] {
  const querySales: ToolSpec<SalesArgs, SalesReport> = {
    name: 'query_sales_data',
    description:
      'Sales figures (revenue in CNY, orders, units) for one month and region, by day, week (Monday-based, clipped to the month) or the whole month. ' +
      'Days are UTC calendar days. The current month is returned with complete=false and only the days already over ("through"). ' +
      `Errors: 400 boundary_violation for a month in the future or more than ${SALES_HISTORY_MONTHS} months back (details give the valid range); ` +
      '400 enum_mismatch for an unknown region. Read-only and idempotent: safe to retry.',
    input: {
      type: 'object',
      properties: {
        month: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: 'Calendar month, YYYY-MM.' },
        region: {
          enum: [...SALES_REGIONS, 'all'],
          default: 'all',
          'x-synonyms': { 华北: 'north', 华南: 'south', 华东: 'east', 华西: 'west', 西南: 'west', 华中: 'central', 全国: 'all', 'north china': 'north', 'south china': 'south', 'east china': 'east', 'west china': 'west', 'central china': 'central', total: 'all', national: 'all' },
        },
        granularity: { enum: ['daily', 'weekly', 'monthly'], default: 'daily', 'x-synonyms': { day: 'daily', week: 'weekly', month: 'monthly', 按天: 'daily', 按周: 'weekly', 按月: 'monthly' } },
      },
      required: ['month'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        month: { type: 'string' },
        region: { type: 'string' },
        granularity: { type: 'string' },
        currency: { const: 'CNY' },
        complete: { type: 'boolean' },
        records: { type: 'integer' },
        data: { type: 'array', items: { type: 'object', properties: { period: { type: 'string' }, revenue: { type: 'number' }, orders: { type: 'integer' }, units: { type: 'integer' } }, required: ['period', 'revenue', 'orders', 'units'] } },
        totals: { type: 'object', properties: { revenue: { type: 'number' }, orders: { type: 'integer' }, units: { type: 'integer' } }, required: ['revenue', 'orders', 'units'] },
      },
      required: ['month', 'region', 'granularity', 'currency', 'complete', 'records', 'data', 'totals'],
    },
    idempotent: true,
    annotations: { title: 'Query sales data', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args, ctx) {
      const today = formatIsoDate(ctx.clock.now());
      const current = monthIndex(today.slice(0, 7));
      const wanted = monthIndex(args.month);
      const earliest = monthOf(current - SALES_HISTORY_MONTHS);
      if (wanted > current || wanted < current - SALES_HISTORY_MONTHS) {
        throw new ParameterError('boundary_violation', `no sales data for ${args.month}: data covers ${earliest} to ${today.slice(0, 7)}`, {
          code: 'MONTH_OUT_OF_RANGE',
          details: { parameter: 'month', received: args.month, min: earliest, max: today.slice(0, 7) },
        });
      }
      const first = `${args.month}-01`;
      const nextMonth = `${monthOf(wanted + 1)}-01`;
      const complete = wanted < current;
      const end = complete ? nextMonth : today; // exclusive: today is not over yet
      const days: { date: string; figures: SalesFigures }[] = [];
      for (let date = first; date < end; date = addDays(date, 1)) days.push({ date, figures: figuresFor(seed, args.region, date) });

      const rows: SalesRow[] = [];
      if (args.granularity === 'daily') {
        for (const d of days) rows.push({ period: d.date, days: 1, ...d.figures });
      } else if (args.granularity === 'monthly') {
        if (days.length > 0) rows.push({ period: args.month, days: days.length, ...days.reduce((s, d) => add(s, d.figures), ZERO) });
      } else {
        for (const d of days) {
          const weekday = (new Date(parseIsoDate(d.date)!).getUTCDay() + 6) % 7;
          const last = rows[rows.length - 1];
          if (last === undefined || weekday === 0) rows.push({ period: d.date, days: 1, ...d.figures });
          else Object.assign(last, add(last, d.figures), { days: last.days + 1 });
        }
      }
      return {
        month: args.month,
        region: args.region,
        granularity: args.granularity,
        currency: 'CNY',
        complete,
        through: days.length === 0 ? null : days[days.length - 1]!.date,
        records: rows.length,
        data: rows,
        totals: days.reduce((s, d) => add(s, d.figures), ZERO),
      };
    },
  };
  return [querySales];
}
