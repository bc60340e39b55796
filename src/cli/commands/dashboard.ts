/**
 * `faultline dashboard`: a local web page over the store that `stats`, `alerts` and `tail` read:
 * per-tool figures, the alerts firing now, hourly series, failures by stage and category, the
 * newest failures with a page per record and per trace, failure signatures, the stored
 * trajectories, the judges' review and precision, the saved FailBench runs side by side, and
 * JSON endpoints with the same data. Binds to 127.0.0.1 unless told otherwise.
 *
 * Read-only unless started with `--review`: then the store is opened for writing and the review
 * page saves decisions for requests bearing the admin token (`--admin-token`, else
 * $FAULTLINE_ADMIN_TOKEN, else one is generated and printed, as the proxies do).
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { DEFAULT_REVIEW_SHARE } from '../../annotate/review.js';
import { BENCH_RUNS_DIR } from '../../failbench/stored-runs.js';
import { ADMIN_TOKEN_ENV, configuredAdminToken } from '../../faults/admin-http.js';
import { DEFAULT_REVIEW_SEED } from '../../monitor/dashboard/review-data.js';
import { loadAlertConfig, resolveAlertConfig } from '../../monitor/alert-rules.js';
import { createDashboard, LOOPBACK_HOSTS } from '../../monitor/dashboard/create-dashboard.js';
import { parseSince, parseUntil } from '../../monitor/time-window.js';
import { CliError } from '../cli-error.js';
import { parseDuration } from '../duration-option.js';
import { writeLine, type CliContext } from '../io.js';
import { isLoopback, parsePort, serveUntilInterrupted } from '../listen-options.js';
import { openExistingStore, openReportStore, parseCount } from '../report-options.js';
import { parseShare } from './review.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface DashboardOptions {
  db?: string;
  json?: boolean;
  port: string;
  host: string;
  since: string;
  until?: string;
  config?: string;
  refresh: string;
  runs?: string;
  review?: boolean;
  adminToken?: string;
  share: string;
  seed: string;
}

export const DEFAULT_DASHBOARD_PORT = 4319;

export function dashboardCommand(ctx: CliContext): Command {
  return new Command('dashboard')
    .description('Serve a web dashboard over the store: tools, alerts, failures, traces, trajectories, judge review, FailBench runs (read-only unless --review; Ctrl-C stops)')
    .addOption(storeOption('store to read'))
    .option('--port <port>', 'port to listen on (0 picks a free one)', String(DEFAULT_DASHBOARD_PORT))
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--since <time>', 'the window shown first: 90m, 24h, 7d, or an ISO date (the page offers 1h, 24h, 7d)', '24h')
    .addOption(optionDefaultShown('--until <time>', "the window's end, an ISO date, as on stats", 'now'))
    .option('--config <file>', 'alert thresholds and per-tool timeouts, YAML or JSON (as `faultline alerts --config`)')
    .option('--refresh <duration>', 'how often pages refresh themselves: 5s, 1m (0: never)', '5s')
    .addOption(optionDefaultShown('--runs <dir>', `where saved FailBench runs are`, `${BENCH_RUNS_DIR}`))
    .option('--review', "take review decisions on the review page (opens the store for writing; needs the admin token)")
    .addOption(optionDefaultShown('--admin-token <token>', `bearer token review decisions need`, `$${ADMIN_TOKEN_ENV}, else one is generated and printed`))
    .option('--share <fraction>', 'share of the unreviewed judge labels the review page samples, in (0, 1] (as `faultline review`)', String(DEFAULT_REVIEW_SHARE))
    .option('--seed <n>', 'seed of the review sample (as `faultline review`)', String(DEFAULT_REVIEW_SEED))
    .option('--json', 'print the address as JSON once listening')
    .action(async (opts: DashboardOptions) => {
      const { io } = ctx;
      // Bad input is reported before the store is touched or a port taken.
      const port = parsePort(opts.port);
      // '' would bind every interface, and is not loopback to the Host check either.
      if (opts.host.trim() === '') throw new CliError('--host must not be empty');
      parseSince(opts.since, parseUntil(opts.until, Date.now()));
      const refreshSeconds = parseDuration(opts.refresh, '--refresh', { minMs: 1000, maxMs: 86_400_000, zero: true }) / 1000;
      const alerts = opts.config === undefined ? resolveAlertConfig({}) : loadAlertConfig(opts.config, { cwd: io.cwd });
      const share = parseShare(opts.share);
      const seed = parseCount(opts.seed, '--seed', 0);
      if (opts.adminToken !== undefined && opts.adminToken.trim() === '') throw new CliError('--admin-token must not be empty');
      if (opts.adminToken !== undefined && opts.review !== true) throw new CliError('--admin-token needs --review');
      const givenToken = configuredAdminToken(opts.adminToken, io.env);
      const reviewToken = opts.review === true ? (givenToken ?? randomBytes(24).toString('base64url')) : undefined;
      const store = opts.review === true ? await openExistingStore(opts.db, io, { boundReads: true }) : await openReportStore(opts.db, io, { serving: true });
      const notes = (url: string) => {
        if (reviewToken === undefined) return { lines: [], fields: {} };
        const review = `${url.replace(/\/$/, '')}/review`;
        // A generated token goes in the address's fragment, which the browser keeps to itself: the page reads it from there.
        const link = givenToken === undefined ? `${review}#token=${reviewToken}` : review;
        const source = givenToken === undefined ? `Bearer ${reviewToken} (generated)` : opts.adminToken !== undefined ? 'the --admin-token' : `$${ADMIN_TOKEN_ENV}`;
        return { lines: [`  review: ${link}   token: ${source}`], fields: { review_url: link, ...(givenToken === undefined ? { admin_token: reviewToken } : {}) } };
      };
      const serve = { name: 'dashboard', path: '/', port, host: opts.host, json: opts.json === true, notes };
      await serveUntilInterrupted(io, store, serve, () =>
        createDashboard({
          store,
          alerts,
          since: opts.since.trim(),
          ...(opts.until === undefined ? {} : { until: opts.until.trim() }),
          refreshSeconds,
          runsDir: resolve(io.cwd, opts.runs ?? BENCH_RUNS_DIR),
          reviewSample: { share, seed },
          ...(reviewToken === undefined ? {} : { reviewToken }),
          // Bound to loopback, it answers to loopback names only (no DNS rebinding); bound wider, to any.
          allowedHosts: isLoopback(opts.host) ? [...LOOPBACK_HOSTS, opts.host.toLowerCase()] : 'any',
          onError: (error, path) => writeLine(io.stderr, `faultline dashboard: ${path}: ${error instanceof Error ? error.message : String(error)}`),
        }).handler,
      );
    });
}
