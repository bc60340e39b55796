/**
 * `faultline stats`: per-tool failure analytics over a window, read from the hourly rollups
 * (seed 001 section 4.4's metrics): calls, failure and retry rates, latency percentiles, breaker
 * trips, parameter-validation failures; then the top failure types per tool and where failures
 * happen (stage) against why (category).
 */
import { Command } from 'commander';
import type { FailureBreakdownRow, StatsFilter, ToolStats } from '../../store/types.js';
import { FAILURE_CATEGORIES, FAILURE_STAGES, type FailureCategory, type FailureStage } from '../../taxonomy.js';
import { formatTable } from '../format-table.js';
import { writeLine, type CliContext } from '../io.js';
import {
  DB_OPTION_HELP,
  formatMs,
  formatPercent,
  isoWindow,
  openReportStore,
  parseCount,
  parseSince,
  parseUntil,
} from '../report-options.js';

interface StatsOptions {
  db?: string;
  json?: boolean;
  since: string;
  until?: string;
  tool?: string;
  top: string;
}

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

/** The `--json` output. */
export interface StatsReport {
  window: { since: string; until: string };
  tools: ToolStats[];
  top_failure_types: TopFailureType[];
  stage_category: StageCategoryCell[];
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

function stageCategoryTable(cells: readonly StageCategoryCell[]): string {
  const categories = FAILURE_CATEGORIES.filter((c) => cells.some((cell) => cell.failure_category === c));
  const stages = FAILURE_STAGES.filter((s) => cells.some((cell) => cell.failure_stage === s));
  const count = (stage: FailureStage, category: FailureCategory) =>
    cells.find((c) => c.failure_stage === stage && c.failure_category === category)?.count ?? 0;
  return formatTable(stages, [
    { header: 'stage \\ category', value: (s) => s },
    ...categories.map((category) => ({ header: category, value: (s: FailureStage) => count(s, category), align: 'right' as const })),
    { header: 'total', value: (s: FailureStage) => categories.reduce((sum, c) => sum + count(s, c), 0), align: 'right' as const },
  ]);
}

export function statsCommand(ctx: CliContext): Command {
  return new Command('stats')
    .description('Per-tool failure analytics: calls, failure/retry/validation rates, p50/p95, breaker trips, top failure types')
    .option('--db <store>', DB_OPTION_HELP)
    .option('--since <time>', 'window start: 90m, 24h, 7d, or an ISO date (stats cover every UTC hour the window touches)', '24h')
    .option('--until <time>', 'window end, an ISO date (default now)')
    .option('--tool <name>', 'only this tool')
    .option('--top <n>', 'failure types shown per tool', '3')
    .option('--json', 'print the report as JSON')
    .action(async (opts: StatsOptions) => {
      const { io } = ctx;
      const until = parseUntil(opts.until, Date.now());
      const since = parseSince(opts.since, until);
      const top = parseCount(opts.top, '--top');
      const store = await openReportStore(opts.db, io);
      let report: StatsReport;
      try {
        const filter: StatsFilter = { since, until, ...(opts.tool === undefined ? {} : { toolName: opts.tool }) };
        const [tools, breakdown] = await Promise.all([store.toolStats(filter), store.failureBreakdown(filter)]);
        report = { window: isoWindow(since, until), tools, top_failure_types: topFailureTypes(breakdown, top), stage_category: stageCategory(breakdown) };
      } finally {
        await store.close();
      }

      if (opts.json === true) {
        writeLine(io.stdout, JSON.stringify(report, null, 2));
        return;
      }
      const calls = report.tools.reduce((sum, t) => sum + t.total, 0);
      const scope = opts.tool === undefined ? `${report.tools.length} tool${report.tools.length === 1 ? '' : 's'}` : `tool ${opts.tool}`;
      writeLine(io.stdout, `faultline stats: ${scope}, ${calls} calls, ${report.window.since} .. ${report.window.until}`);
      if (calls === 0) {
        writeLine(io.stdout, 'no calls recorded in this window');
        return;
      }
      writeLine(io.stdout);
      writeLine(
        io.stdout,
        formatTable(report.tools, [
          { header: 'tool', value: (t) => t.tool_name, maxWidth: 40 },
          { header: 'calls', value: (t) => t.total, align: 'right' },
          { header: 'failed', value: (t) => formatPercent(t.failure_rate), align: 'right' },
          { header: 'retried', value: (t) => formatPercent(t.retry_rate), align: 'right' },
          { header: 'p50', value: (t) => formatMs(t.p50_ms), align: 'right' },
          { header: 'p95', value: (t) => formatMs(t.p95_ms), align: 'right' },
          { header: 'breaker trips', value: (t) => t.breaker_trips, align: 'right' },
          { header: 'param invalid', value: (t) => formatPercent(t.param_validation_failure_rate), align: 'right' },
        ]),
      );
      if (report.top_failure_types.length === 0) {
        writeLine(io.stdout);
        writeLine(io.stdout, 'no failures in this window');
        return;
      }
      writeLine(io.stdout);
      writeLine(io.stdout, 'Top failure types');
      writeLine(
        io.stdout,
        formatTable(report.top_failure_types, [
          { header: 'tool', value: (t) => t.tool_name, maxWidth: 40 },
          { header: 'type', value: (t) => t.failure_type },
          { header: 'category', value: (t) => t.failure_category },
          { header: 'count', value: (t) => t.count, align: 'right' },
          { header: 'of failures', value: (t) => formatPercent(t.share), align: 'right' },
        ]),
      );
      writeLine(io.stdout);
      writeLine(io.stdout, 'Failures by stage and category');
      writeLine(io.stdout, stageCategoryTable(report.stage_category));
    });
}
