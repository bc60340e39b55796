/**
 * The P95 trend rule (seed 001 section 4.4 watches P95 against 80% of the timeout): a tool whose
 * hourly P95 rises steadily over the last N hours is heading for its timeout, and this fires
 * while there is still room, before the threshold rule does. "Steadily": N consecutive hours,
 * each with enough calls, none more than `tolerance` below the hour before, and the last at least
 * `minRise` times the first. Read from the hourly rollups, like every rule.
 */
import { HOUR_MS, hourStartMs } from '../store/rollup.js';
import type { HourlyPoint, StatsFilter, StatsReader } from '../core/store-types.js';

export interface P95TrendConfig {
  enabled?: boolean;
  /** How many consecutive hours (the current one included) the rise must span. Default 6. */
  hours?: number;
  /** How many times the first hour's P95 the last must reach. Default 1.5. */
  minRise?: number;
  /** How far an hour may dip below the one before and still count as rising. Default 0.05 (5%). */
  tolerance?: number;
  /** Calls each hour needs to count. Default: the config's `minCalls` (20). */
  minCalls?: number;
  severity?: 'warning' | 'critical';
}

export interface P95Trend {
  tool_name: string;
  /** The last hour's P95 over the first's. */
  rise: number;
  first_ms: number;
  last_ms: number;
  /** Start of the last hour of the run (UTC ISO-8601). */
  hour: string;
  hours: number;
}

/** The window the rule reads: the `hours` hours that end in the one `filter` ends in. */
export function trendFilter(filter: StatsFilter, hours: number): StatsFilter {
  return { ...filter, since: hourStartMs(filter.until) - (hours - 1) * HOUR_MS };
}

/** The tools whose P95 rose steadily over the last `hours` hours of `points` (one tool's points in hour order). */
function trendOf(points: readonly HourlyPoint[], rule: Required<Omit<P95TrendConfig, 'enabled' | 'severity'>>): P95Trend | undefined {
  const run = points.slice(-rule.hours);
  if (run.length < rule.hours) return undefined;
  for (let i = 0; i < run.length; i++) {
    const p = run[i]!;
    if (p.total < rule.minCalls || p.p95_ms === null || p.p95_ms <= 0) return undefined;
    if (i === 0) continue;
    const before = run[i - 1]!;
    if (Date.parse(p.hour) - Date.parse(before.hour) !== HOUR_MS) return undefined;
    if (p.p95_ms < before.p95_ms! * (1 - rule.tolerance)) return undefined;
  }
  const first = run[0]!.p95_ms!;
  const last = run[run.length - 1]!.p95_ms!;
  const rise = last / first;
  if (rise < rule.minRise) return undefined;
  return { tool_name: run[0]!.tool_name, rise, first_ms: first, last_ms: last, hour: run[run.length - 1]!.hour, hours: rule.hours };
}

/** Every tool whose hourly P95 rose steadily over the last `rule.hours` hours up to `filter.until`. */
export async function p95Trends(store: StatsReader, filter: StatsFilter, rule: Required<Omit<P95TrendConfig, 'enabled' | 'severity'>>): Promise<P95Trend[]> {
  const byTool = new Map<string, HourlyPoint[]>();
  for (const point of await store.hourly(trendFilter(filter, rule.hours))) {
    const list = byTool.get(point.tool_name) ?? [];
    list.push(point);
    byTool.set(point.tool_name, list);
  }
  const trends: P95Trend[] = [];
  for (const points of byTool.values()) {
    points.sort((a, b) => a.hour.localeCompare(b.hour));
    const trend = trendOf(points, rule);
    if (trend !== undefined) trends.push(trend);
  }
  return trends;
}
