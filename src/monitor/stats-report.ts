/**
 * What `faultline stats` reports, as data: per-tool figures from the hourly rollups (seed 001
 * section 4.4), each tool's top failure types, and where failures happen (stage) against why
 * (category). The stats command prints it; the dashboard serves and renders the same object.
 */
import { hourRange } from '../store/rollup.js';
import type { FailureBreakdownRow, StatsFilter, StatsReader, ToolStats } from '../core/store-types.js';
import { FAILURE_CATEGORIES, FAILURE_STAGES, type FailureCategory, type FailureStage } from '../core/taxonomy.js';
import { isoWindow } from './time-window.js';

export interface TopFailureType {
  tool_name: string;
  failure_type: string;
  failure_category: FailureCategory;
  count: number;
  /** Of the tool's failures in the window. */
  share: number;
}

export interface StageCategoryCell {
  failure_stage: FailureStage;
  failure_category: FailureCategory;
  count: number;
}

/** `faultline stats --json`, and the dashboard's `/api/stats`. */
export interface StatsReport {
  /** The window asked for. */
  window: { since: string; until: string };
  /**
   * The window the figures count: the rollups are hourly, so every UTC hour `window` touches,
   * whole (from the start of the hour `since` falls in to the end of the hour before `until`).
   */
  counted_window: { since: string; until: string };
  tools: ToolStats[];
  top_failure_types: TopFailureType[];
  stage_category: StageCategoryCell[];
}

/** Reads the report for `filter`, with `top` failure types per tool. */
export async function buildStatsReport(store: StatsReader, filter: StatsFilter, top: number): Promise<StatsReport> {
  const [tools, breakdown] = await Promise.all([store.toolStats(filter), store.failureBreakdown(filter)]);
  const { fromHourMs, untilHourMs } = hourRange(filter);
  return {
    window: isoWindow(filter.since, filter.until),
    counted_window: isoWindow(fromHourMs, untilHourMs),
    tools,
    top_failure_types: topFailureTypes(breakdown, top),
    stage_category: stageCategory(breakdown),
  };
}

/** Each tool's most frequent failure types, summed over stages. */
export function topFailureTypes(rows: readonly FailureBreakdownRow[], top: number): TopFailureType[] {
  const byTool = new Map<string, Map<string, TopFailureType>>();
  const totals = new Map<string, number>();
  for (const row of rows) {
    let types = byTool.get(row.tool_name);
    if (types === undefined) byTool.set(row.tool_name, (types = new Map()));
    totals.set(row.tool_name, (totals.get(row.tool_name) ?? 0) + row.count);
    // A type belongs to one category in the taxonomy; a tool reporting it under two is keyed apart.
    const key = `${row.failure_type}\u001f${row.failure_category}`;
    const entry = types.get(key);
    if (entry === undefined) types.set(key, { tool_name: row.tool_name, failure_type: row.failure_type, failure_category: row.failure_category, count: row.count, share: 0 });
    else entry.count += row.count;
  }
  const out: TopFailureType[] = [];
  for (const tool of [...byTool.keys()].sort()) {
    const total = totals.get(tool) ?? 0;
    const ranked = [...byTool.get(tool)!.values()].sort((a, b) => b.count - a.count || a.failure_type.localeCompare(b.failure_type));
    for (const entry of ranked.slice(0, top)) out.push({ ...entry, share: total === 0 ? 0 : entry.count / total });
  }
  return out;
}

/** Failures per (stage, category), in taxonomy order; empty cells are left out. */
export function stageCategory(rows: readonly FailureBreakdownRow[]): StageCategoryCell[] {
  const counts = new Map<string, number>();
  for (const row of rows) {
    const key = `${row.failure_stage}/${row.failure_category}`;
    counts.set(key, (counts.get(key) ?? 0) + row.count);
  }
  const out: StageCategoryCell[] = [];
  for (const stage of FAILURE_STAGES) {
    for (const category of FAILURE_CATEGORIES) {
      const count = counts.get(`${stage}/${category}`);
      if (count !== undefined) out.push({ failure_stage: stage, failure_category: category, count });
    }
  }
  return out;
}
