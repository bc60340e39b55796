/**
 * `faultline proxy`: the HTTP fault proxy in front of a tool API until Ctrl-C. Agents call the
 * proxy instead of the API; every request is recorded in the store, and faults come from the plan
 * file, the X-Inject-Error header, or a plan swapped in through the admin API while it runs.
 */
import { parseDurationMs } from '../../core/duration-text.js';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { Command } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { ADMIN_TOKEN_ENV, configuredAdminToken } from '../../faults/admin-http.js';
import { startHttpFaultProxy, type HttpFaultProxy } from '../../faults/http-proxy/http-proxy.js';
import { openProxyStore } from '../../faults/http-proxy/record-store.js';
import { loadRoutes } from '../../faults/http-proxy/routes.js';
import { createFaultPlan } from '../../faults/plan.js';
import { loadFaultPlan } from '../../faults/plan-validate.js';
import { defaultSpoolPath } from '../../record/spool.js';
import { DEFAULT_SQLITE_PATH, sqlitePathOf } from '../../store/open-store.js';
import { CliError } from '../cli-error.js';
import { parseDuration } from '../duration-option.js';
import { writeLine, type CliContext } from '../io.js';
import { collectAllowedHost, parsePort } from '../listen-options.js';
import { assertSqliteStoreCreatable } from '../report-options.js';
import { probeTarget } from '../probe-endpoint.js';
import { noteStartLeftovers } from '../start-leftovers.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface ProxyOptions {
  retention?: string;
  target?: string;
  plan?: string;
  port: string;
  host: string;
  db?: string;
  routes?: string;
  adminToken?: string;
  adminPort?: string;
  adminHost?: string;
  holdCap: string;
  allowHost: string[];
  json?: boolean;
}

export const DEFAULT_PROXY_PORT = 8080;

function targetUrl(text: string | undefined): URL {
  if (text === undefined) throw new CliError('--target <url> is required: the API to put the proxy in front of, e.g. http://127.0.0.1:8787');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError(`--target must be an http(s) URL, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--target must be an http(s) URL, got "${text}"`);
  return url;
}

/** Reads a config file, turning its ConfigError into the CLI's one-line usage error. */
async function config<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (ConfigError.isInstance(error)) throw new CliError(error.message, 2, { cause: error });
    throw error;
  }
}

export function proxyCommand(ctx: CliContext): Command {
  return new Command('proxy')
    .description('Put a fault-injecting, recording HTTP proxy in front of a tool API (Ctrl-C stops)')
    .option('--target <url>', 'the API to forward to, e.g. http://127.0.0.1:8787 (required)')
    .option('--plan <file>', 'fault plan, YAML (or JSON for .json); without one only X-Inject-Error and the admin API inject faults')
    .option('--port <port>', 'port to listen on (0 picks a free one)', String(DEFAULT_PROXY_PORT))
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .addOption(storeOption('where to store the records'))
    .option('--routes <file>', 'YAML mapping requests to tool names, e.g. routes: [{ match: "GET /v1/weather", tool: get_weather }]')
    .addOption(optionDefaultShown('--admin-token <token>', `bearer token of the admin API`, `$${ADMIN_TOKEN_ENV}, else one is generated and printed`))
    .option('--admin-port <port>', 'serve the admin API on its own port instead of under /__faultline/ on the proxy port')
    .option('--admin-host <host>', 'also serve the admin API to non-loopback clients: the address they reach it on (0.0.0.0 for any)')
    .option('--allow-host <name>', 'a Host name besides 127.0.0.1/localhost that requests may carry while bound to loopback (repeatable)', collectAllowedHost, [])
    .option('--hold-cap <duration>', 'how long a timeout fault without its own delay holds a request before answering 504 (500ms, 30s, 5m)', '30s')
    .option('--retention <age>', 'delete records older than this (30d, 24h, 90m) from the store at start and then every hour, with their share of the stats')
    .option('--json', 'print the endpoints as one JSON line once listening, and where the records went as another at exit')
    .addHelpText(
      'after',
      '\nRequests are named as tools by --routes, then POST /tools/<name> -> <name>, else "METHOD /path" with ids as :id.\n' +
        'Per request: X-Inject-Error: 400|401|403|404|409|429[:s]|500|502|503[:s]|504|timeout|reset|partial|empty|malformed|slow:<ms>\n' +
        '(X-Inject-Commit: true forwards first); the headers are not forwarded.\n' +
        'Admin API (Authorization: Bearer <token>): GET|PUT /__faultline/plan, GET /__faultline/state, e.g.\n' +
        '  curl -H "Authorization: Bearer $FAULTLINE_ADMIN_TOKEN" -X PUT --data-binary @outage.yaml http://127.0.0.1:8080/__faultline/plan',
    )
    .action(async (opts: ProxyOptions) => {
      const { io } = ctx;
      const target = targetUrl(opts.target);
      const port = parsePort(opts.port);
      const adminPort = opts.adminPort === undefined ? undefined : parsePort(opts.adminPort, '--admin-port');
      const holdCapMs = parseDuration(opts.holdCap, '--hold-cap', { minMs: 1, maxMs: 86_400_000 });
      const retentionMs = opts.retention === undefined ? undefined : parseDurationMs(opts.retention, '--retention');
      if (opts.host.trim() === '') throw new CliError('--host must not be empty');
      if (opts.adminHost !== undefined && opts.adminHost.trim() === '') throw new CliError('--admin-host must not be empty');
      if (opts.adminToken !== undefined && opts.adminToken.trim() === '') throw new CliError('--admin-token must not be empty');
      const givenToken = configuredAdminToken(opts.adminToken, io.env);
      const adminToken = givenToken ?? randomBytes(24).toString('base64url');

      const plan = createFaultPlan(opts.plan === undefined ? { version: 1, rules: [] } : await config(() => loadFaultPlan(resolve(io.cwd, opts.plan!))));
      const routes = opts.routes === undefined ? [] : await config(() => loadRoutes(resolve(io.cwd, opts.routes!)));
      await probeTarget(target);
      // Opened here, before listening, so that a bad --db fails the command with one line. A SQLite
      // file is written from a worker thread, off the event loop every request goes through.
      const db = opts.db ?? DEFAULT_SQLITE_PATH;
      const spool = defaultSpoolPath(io.cwd);
      assertSqliteStoreCreatable(db, io.cwd);
      // A start that fails from here on (a taken port, most often) removes the store file and the
      // directories it created: an empty database left behind would read as "no calls recorded".
      const leftovers = noteStartLeftovers({ sqliteFile: sqlitePathOf(db, io.cwd), directories: [dirname(spool)] });
      const { store, writer } = await config(() => openProxyStore(db, io.cwd)).catch((error: unknown) => {
        leftovers.remove();
        throw error;
      });

      let proxy: HttpFaultProxy;
      try {
        proxy = await startHttpFaultProxy({
          target,
          plan,
          port,
          host: opts.host,
          routes,
          store,
          recording: { spool: { path: spool } },
          ...(retentionMs === undefined ? {} : { retention: retentionMs }),
          adminToken,
          holdCapMs,
          allowedHosts: opts.allowHost,
          ...(adminPort === undefined ? {} : { adminPort }),
          ...(opts.adminHost === undefined ? {} : { adminHost: opts.adminHost }),
        });
      } catch (error) {
        await store.close();
        leftovers.remove();
        const { code, port: failedPort } = error as { code?: unknown; port?: unknown };
        if (typeof code !== 'string') throw error;
        // The proxy port is bound first: the admin port failed if the error names it and not the proxy's.
        if (adminPort !== undefined && failedPort === adminPort && adminPort !== port) {
          throw new CliError(`cannot listen on ${opts.adminHost ?? '127.0.0.1'}:${adminPort} (--admin-port): ${code}`, 2, { cause: error });
        }
        throw new CliError(`cannot listen on ${opts.host}:${port}: ${code}`, 2, { cause: error });
      }

      try {
        const rules = plan.spec.rules.length;
        if (opts.json === true) {
          const info: Record<string, unknown> = { url: proxy.url, target: target.href, admin_url: proxy.adminUrl, plan: opts.plan ?? null, rules, db };
          if (writer !== undefined) info['sqlite_writer'] = writer;
          if (givenToken === undefined) info['admin_token'] = adminToken;
          writeLine(io.stdout, JSON.stringify(info));
        } else {
          writeLine(io.stdout, `faultline proxy: ${proxy.url} -> ${target.href} (${opts.plan === undefined ? 'no plan' : `plan ${opts.plan}, ${rules} rule${rules === 1 ? '' : 's'}`}; records to ${db})`);
          const source = givenToken === undefined ? `Bearer ${adminToken} (generated)` : opts.adminToken !== undefined ? 'the --admin-token' : `$${ADMIN_TOKEN_ENV}`;
          writeLine(io.stdout, `  admin: ${proxy.adminUrl}/plan, /state   token: ${source}   (Ctrl-C to stop)`);
        }
        // Without an interrupt source (embedded use) it serves until the process ends.
        await (io.interrupted ?? new Promise<void>(() => undefined));
      } finally {
        await proxy.close();
        await store.close();
      }
      const s = proxy.stats();
      if (opts.json === true) {
        writeLine(io.stdout, JSON.stringify({ stopped: true, requests: s.requests, injected: s.injected, recorded: s.recorded, recording: s.recording }));
      } else {
        writeLine(io.stderr, `faultline proxy: stopped after ${s.requests} request${s.requests === 1 ? '' : 's'} (${s.injected} with faults, ${s.recorded} recorded)`);
      }
    });
}
