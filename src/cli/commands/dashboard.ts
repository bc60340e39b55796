/**
 * `faultline dashboard`: a local, read-only web page over the store that `stats`, `alerts` and
 * `tail` read: per-tool figures, the alerts firing now, hourly series, failures by stage and
 * category, the newest failures with a page per record and per trace, failure signatures, and
 * JSON endpoints with the same data. Binds to 127.0.0.1 unless told otherwise.
 */
import { Command } from 'commander';
import { loadAlertConfig, resolveAlertConfig } from '../../monitor/alert-rules.js';
import { createDashboard, LOOPBACK_HOSTS } from '../../monitor/dashboard/create-dashboard.js';
import { parseSince, parseUntil } from '../../monitor/time-window.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliContext } from '../io.js';
import { isLoopback, parsePort, serveUntilInterrupted } from '../listen-options.js';
import { DB_OPTION_HELP, openReportStore, parseCount } from '../report-options.js';

interface DashboardOptions {
  db?: string;
  json?: boolean;
  port: string;
  host: string;
  since: string;
  until?: string;
  config?: string;
  refresh: string;
}

export const DEFAULT_DASHBOARD_PORT = 4319;

export function dashboardCommand(ctx: CliContext): Command {
  return new Command('dashboard')
    .description('Serve a read-only web dashboard over the store: tools, alerts, hourly series, failures, records, traces (Ctrl-C stops)')
    .option('--db <store>', DB_OPTION_HELP)
    .option('--port <port>', 'port to listen on (0 picks a free one)', String(DEFAULT_DASHBOARD_PORT))
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--since <time>', 'the window shown first: 90m, 24h, 7d, or an ISO date (the page offers 1h, 24h, 7d)', '24h')
    .option('--until <time>', 'the window\'s end, an ISO date, as on stats (default now)')
    .option('--config <file>', 'alert thresholds and per-tool timeouts, YAML or JSON (as `faultline alerts --config`)')
    .option('--refresh <seconds>', 'how often pages refresh themselves (0: never)', '5')
    .option('--json', 'print the address as JSON once listening')
    .action(async (opts: DashboardOptions) => {
      const { io } = ctx;
      // Bad input is reported before the store is touched or a port taken.
      const port = parsePort(opts.port);
      // '' would bind every interface, and is not loopback to the Host check either.
      if (opts.host.trim() === '') throw new CliError('--host must not be empty');
      parseSince(opts.since, parseUntil(opts.until, Date.now()));
      const refreshSeconds = parseCount(opts.refresh, '--refresh', 0);
      const alerts = opts.config === undefined ? resolveAlertConfig({}) : loadAlertConfig(opts.config, { cwd: io.cwd });
      const store = await openReportStore(opts.db, io, { serving: true });
      const serve = { name: 'dashboard', path: '/', port, host: opts.host, json: opts.json === true };
      await serveUntilInterrupted(io, store, serve, () =>
        createDashboard({
          store,
          alerts,
          since: opts.since.trim(),
          ...(opts.until === undefined ? {} : { until: opts.until.trim() }),
          refreshSeconds,
          // Bound to loopback, it answers to loopback names only (no DNS rebinding); bound wider, to any.
          allowedHosts: isLoopback(opts.host) ? [...LOOPBACK_HOSTS, opts.host.toLowerCase()] : 'any',
          onError: (error, path) => writeLine(io.stderr, `faultline dashboard: ${path}: ${error instanceof Error ? error.message : String(error)}`),
        }).handler,
      );
    });
}
