/**
 * `faultline metrics`: a Prometheus endpoint at /metrics whose numbers are read from the store's
 * rollups on every scrape, for agent processes that write to the store but serve no metrics of
 * their own. Binds to 127.0.0.1 unless told otherwise: the numbers describe internal tools; on
 * loopback it answers only to loopback Host names, so a web page cannot read it by DNS rebinding.
 * `--max-tools` bounds the `tool` label values (the store may hold any number of names: proxied
 * URLs, imports, made-up names), as `createStoreMetrics`'s `maxTools` does.
 */
import { Command } from 'commander';
import { createStoreMetrics, DEFAULT_MAX_TOOLS, OTHER_TOOLS_LABEL } from '../../monitor/metrics.js';
import { CliError } from '../cli-error.js';
import type { CliContext } from '../io.js';
import { loopbackHostAllowed, parsePort, serveUntilInterrupted } from '../listen-options.js';
import { openReportStore, parseCount } from '../report-options.js';
import { storeOption } from '../store-option.js';

interface MetricsOptions {
  db?: string;
  json?: boolean;
  port: string;
  host: string;
  maxTools: string;
}

export const DEFAULT_METRICS_PORT = 9464;

export function metricsCommand(ctx: CliContext): Command {
  return new Command('metrics')
    .description('Serve Prometheus metrics at /metrics, computed from the store on every scrape (Ctrl-C stops)')
    .addOption(storeOption('store to read'))
    .option('--port <port>', 'port to listen on (0 picks a free one)', String(DEFAULT_METRICS_PORT))
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--max-tools <n>', `distinct tool labels at most, for the tools with the most calls; the rest are summed as tool="${OTHER_TOOLS_LABEL}"`, String(DEFAULT_MAX_TOOLS))
    .option('--json', 'print the endpoint as JSON once listening')
    .action(async (opts: MetricsOptions) => {
      const { io } = ctx;
      const port = parsePort(opts.port);
      const maxTools = parseCount(opts.maxTools, '--max-tools');
      // '' would bind every interface, and is not loopback to the Host check either.
      if (opts.host.trim() === '') throw new CliError('--host must not be empty');
      const store = await openReportStore(opts.db, io, { serving: true });
      await serveUntilInterrupted(io, store, { name: 'metrics', path: '/metrics', port, host: opts.host, json: opts.json === true }, () => {
        const metrics = createStoreMetrics(store, { maxTools });
        return (req, res) => {
          const path = (req.url ?? '/').split('?', 1)[0];
          if (!loopbackHostAllowed(req, opts.host)) {
            res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end(`refused: Host ${JSON.stringify(req.headers.host)} is not this server's; scrape it by 127.0.0.1 or localhost\n`);
          } else if (path === '/metrics') metrics.handler(req, res);
          else res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: try /metrics\n');
        };
      });
    });
}
