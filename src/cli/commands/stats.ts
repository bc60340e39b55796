/**
 * `faultline stats`: per-tool failure analytics over a window, read from the hourly rollups
 * (the monitoring design's metrics): calls, failure and retry rates, latency percentiles, breaker
 * trips, parameter-validation failures; then the top failure types per tool and where failures
 * happen (stage) against why (category).
 */
import { Command } from 'commander';
import { formatMs, formatPercent } from '../../monitor/format-figures.js';
import { buildStatsReport, type StageCategoryCell, type StatsReport } from '../../monitor/stats-report.js';
import { parseSince, parseUntil } from '../../monitor/time-window.js';
import type { StatsFilter } from '../../core/store-types.js';
import { FAILURE_CATEGORIES, FAILURE_STAGES, type FailureCategory, type FailureStage } from '../../core/taxonomy.js';
import { formatTable } from '../format-table.js';
import { writeLine, type CliContext } from '../io.js';
import { openReportStore, parseCount } from '../report-options.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

export type { StatsReport };

interface StatsOptions {
  db?: string;
  json?: boolean;
  since: string;
  until?: string;
  tool?: string;
  top: string;
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

/**
 * What `stats` says of a window without calls. A store that has calls elsewhere (a bench run,
 * dated on the scenarios' virtual clock; a window in the past) gets the date of the newest one
 * stored, and, when it is before the window, a --since that covers it.
 */
function emptyWindowLine(newest: string | undefined, since: number): string {
  if (newest === undefined) return 'no calls recorded in this window';
  const before = Date.parse(newest) < since ? ` (try --since ${newest.slice(0, 13)}:00Z)` : '';
  return `no calls recorded in this window; the newest call stored is dated ${newest}${before}`;
}

export function statsCommand(ctx: CliContext): Command {
  return new Command('stats')
    .description('Per-tool failure analytics: calls, failure/retry/validation rates, p50/p95, breaker trips, top failure types')
    .addOption(storeOption('store to read'))
    .option('--since <time>', 'window start: 90m, 24h, 7d, or an ISO date (stats cover every UTC hour the window touches)', '24h')
    .addOption(optionDefaultShown('--until <time>', 'window end, an ISO date', 'now'))
    .option('--tool <name>', 'only this tool')
    .option('--top <n>', 'failure types shown per tool', '3')
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      [
        '',
        'The figures come from hourly rollups, so a window is counted in whole UTC hours: from the start',
        'of the hour --since falls in to the end of the hour --until falls in (--since 90m at 14:10 counts',
        '12:00 to 15:00). The report says so when that differs from the window asked for; --json gives',
        'both, as window and counted_window.',
      ].join('\n'),
    )
    .action(async (opts: StatsOptions) => {
      const { io } = ctx;
      const until = parseUntil(opts.until, Date.now());
      const since = parseSince(opts.since, until);
      const top = parseCount(opts.top, '--top');
      const store = await openReportStore(opts.db, io);
      let report: StatsReport;
      // The newest call stored, when the window holds none (see emptyWindowLine).
      let newest: string | undefined;
      try {
        const filter: StatsFilter = { since, until, ...(opts.tool === undefined ? {} : { toolName: opts.tool }) };
        report = await buildStatsReport(store, filter, top);
        if (opts.json !== true && opts.tool === undefined && report.tools.length === 0) newest = (await store.query({ limit: 1, order: 'desc' }))[0]?.created_at;
      } finally {
        await store.close();
      }

      if (opts.json === true) {
        writeLine(io.stdout, JSON.stringify(report, null, 2));
        return;
      }
      const calls = report.tools.reduce((sum, t) => sum + t.total, 0);
      const scope = opts.tool === undefined ? `${report.tools.length} tool${report.tools.length === 1 ? '' : 's'}` : `tool ${opts.tool}`;
      const { window, counted_window: counted } = report;
      const rounded = counted.since === window.since && counted.until === window.until ? '' : ` (counted in whole hours: ${counted.since} .. ${counted.until})`;
      writeLine(io.stdout, `faultline stats: ${scope}, ${calls} calls, ${window.since} .. ${window.until}${rounded}`);
      if (calls === 0) {
        writeLine(io.stdout, emptyWindowLine(newest, since));
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
