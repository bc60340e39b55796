/**
 * `faultline alerts`: evaluates the monitoring rules over a window and prints the firing ones.
 * Exit code 1 when any fires, so it can gate a cron job or a CI step.
 */
import { Command } from 'commander';
import { defaultAlertWindow, evaluateAlerts, loadAlertConfig, resolveAlertConfig, type Alert } from '../../monitor/alert-rules.js';
import { isoWindow, parseSince, parseUntil } from '../../monitor/time-window.js';
import type { TimeWindow } from '../../core/store-types.js';
import { formatTable } from '../format-table.js';
import { writeLine, type CliContext } from '../io.js';
import { openReportStore } from '../report-options.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface AlertsOptions {
  db?: string;
  json?: boolean;
  config?: string;
  since?: string;
  until?: string;
  tool?: string;
}

/** The `--json` output. */
export interface AlertsReport {
  window: { since: string; until: string };
  firing: number;
  alerts: Alert[];
}

export function alertsCommand(ctx: CliContext): Command {
  return new Command('alerts')
    .description('Evaluate the alert rules over the last hour or so (failure types and breaker trips: the last day) and print the firing ones; exit 1 when any fires')
    .addOption(storeOption('store to read'))
    .option('--config <file>', 'alert thresholds and per-tool timeouts, YAML or JSON')
    .addOption(optionDefaultShown('--since <time>', 'window start: 90m, 24h, 7d, or an ISO date', 'the last complete hour and the current one'))
    .addOption(optionDefaultShown('--until <time>', 'window end, an ISO date', 'now'))
    .option('--tool <name>', 'only this tool')
    .option('--json', 'print the alerts as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Success rate is judged per tool and hour, P95 latency, retry and validation rates over the window,',
        'each only with at least 20 calls there (minCalls in the --config file, per rule or for all), so a',
        'tool that failed a handful of times does not page anyone.',
        'As the monitoring rules define them, the failure type distribution and breaker trips are read per day: over the last',
        '24 hours up to the window\'s end (or the whole window when longer). In the --config file,',
        'rules.failure_type_jump.windowHours (default: 24) and baselineHours (the hours before; default: 168)',
        'and rules.breaker_trip.windowHours (default: 24) change that.',
      ].join('\n'),
    )
    .action(async (opts: AlertsOptions) => {
      const { io } = ctx;
      const until = parseUntil(opts.until, Date.now());
      const window: TimeWindow = opts.since === undefined ? defaultAlertWindow(until) : { since: parseSince(opts.since, until), until };
      // Bad input is reported before the store is touched.
      const config = opts.config === undefined ? resolveAlertConfig({}) : loadAlertConfig(opts.config, { cwd: io.cwd });
      const store = await openReportStore(opts.db, io);
      let alerts: Alert[];
      try {
        alerts = await evaluateAlerts(store, { window, config, ...(opts.tool === undefined ? {} : { toolName: opts.tool }) });
      } finally {
        await store.close();
      }
      if (alerts.length > 0) ctx.exitCode = 1;

      const shown = isoWindow(window.since, window.until);
      if (opts.json === true) {
        const report: AlertsReport = { window: shown, firing: alerts.length, alerts };
        writeLine(io.stdout, JSON.stringify(report, null, 2));
        return;
      }
      if (alerts.length === 0) {
        writeLine(io.stdout, `faultline alerts: none firing, ${shown.since} .. ${shown.until}`);
        return;
      }
      writeLine(io.stdout, `faultline alerts: ${alerts.length} firing, ${shown.since} .. ${shown.until}`);
      writeLine(io.stdout);
      writeLine(
        io.stdout,
        formatTable(alerts, [
          { header: 'severity', value: (a) => a.severity },
          { header: 'rule', value: (a) => a.rule },
          { header: 'tool', value: (a) => a.tool_name, maxWidth: 40 },
          { header: 'message', value: (a) => a.message },
        ]),
      );
    });
}
