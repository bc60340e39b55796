/**
 * `faultline mcp-proxy`: an MCP server that forwards to a real one through a fault plan and
 * records every tools/call. By default it speaks MCP on stdin/stdout, so an MCP client config
 * runs `faultline mcp-proxy --plan p.yaml -- <server command>` where it ran the server; with
 * `--port` it serves Streamable HTTP on 127.0.0.1 instead. Diagnostics go to stderr only.
 *
 * A server that cannot be started (no such command, or it exits before the MCP handshake) is bad
 * input: one line, exit 2, and no store is created. A server that dies later is data: the proxy
 * records the failed calls, keeps answering, and stops only when its client goes away or it is
 * signalled (exit 1 then, since the session lost its server). With --restart it starts the
 * server again (backoff, at most --max-restarts attempts per outage) and exits 1 only if it is down
 * at the end. Each client's server connection declares what that client declared (proxy.ts).
 */
import { parseDurationMs } from '../../core/duration-text.js';
import type { Readable, Writable } from 'node:stream';
import { Command } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { configuredAdminToken } from '../../faults/admin-http.js';
import { generateAdminToken, startAdminServer, type AdminServer } from '../../faults/mcp-proxy/admin-server.js';
import { serveMcpOverHttp, type McpHttpServer } from '../../faults/mcp-proxy/http-downstream.js';
import { DEFAULT_MAX_RESTARTS, startMcpProxy, type McpProxy } from '../../faults/mcp-proxy/proxy.js';
import { stdioDownstream } from '../../faults/mcp-proxy/stdio-lines.js';
import { McpUpstreamError, type McpUpstream } from '../../faults/mcp-proxy/upstream.js';
import { createFaultPlan, type FaultPlan } from '../../faults/plan.js';
import { loadFaultPlan } from '../../faults/plan-validate.js';
import { DEFAULT_SQLITE_PATH } from '../../store/open-store.js';
import { CliError } from '../cli-error.js';
import { parseDuration } from '../duration-option.js';
import type { CliContext, CliIo } from '../io.js';
import { collectAllowedHost } from '../listen-options.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface McpProxyOptions {
  retention?: string;
  plan?: string;
  db?: string;
  upstream?: string;
  header: string[];
  port?: string;
  adminPort?: string;
  adminToken?: string;
  upstreamTimeout: string;
  restart?: boolean;
  maxRestarts?: string;
  allowHost: string[];
  json?: boolean;
}

/** The io of a command that serves MCP on stdio: stdin is only read here, so it is optional in CliIo. */
type StdioCliIo = CliIo & { stdin?: NodeJS.ReadableStream };

function port(flag: string, text: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value > 65_535) throw new CliError(`${flag} must be a port number from 0 to 65535, got "${text}"`);
  return value;
}

function count(flag: string, text: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > 1000) throw new CliError(`${flag} must be a whole number from 1 to 1000, got "${text}"`);
  return value;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function headers(lines: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (name === '' || /\s/.test(name)) throw new CliError(`--header must look like "Name: value", got "${line}"`);
    out[name] = line.slice(colon + 1).trim();
  }
  return out;
}

function upstreamFrom(opts: McpProxyOptions, command: readonly string[], io: CliIo): McpUpstream {
  if (opts.upstream !== undefined && command.length > 0) throw new CliError('give either --upstream <url> or -- <server command>, not both');
  if (opts.upstream !== undefined) {
    let url: URL;
    try {
      url = new URL(opts.upstream);
    } catch {
      throw new CliError(`--upstream must be an http(s) URL, got "${opts.upstream}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--upstream must be an http(s) URL, got "${opts.upstream}"`);
    return opts.header.length > 0 ? { url, headers: headers(opts.header) } : { url };
  }
  if (opts.header.length > 0) throw new CliError('--header only applies to --upstream');
  const [executable, ...args] = command;
  if (executable === undefined || executable.trim() === '') {
    throw new CliError('no upstream MCP server: add -- <server command...> (stdio) or --upstream <url> (Streamable HTTP)');
  }
  // The server is the user's own program: it gets the whole environment (its API keys), as it would when run directly.
  const env = Object.fromEntries(Object.entries(io.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return { command: executable, args, env, cwd: io.cwd, stderr: io.stderr };
}

async function loadPlan(path: string): Promise<FaultPlan> {
  try {
    return createFaultPlan(await loadFaultPlan(path));
  } catch (error) {
    if (ConfigError.isInstance(error)) throw new CliError(error.message, 2, { cause: error });
    throw error;
  }
}

/** Resolves when the stdio client goes away: its end of our stdin closed. */
function endOf(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.once('end', () => resolve());
    stream.once('close', () => resolve());
  });
}

export function mcpProxyCommand(ctx: CliContext): Command {
  return new Command('mcp-proxy')
    .description('Serve an MCP server through a fault plan, recording every tools/call (stdio by default; --port for Streamable HTTP)')
    .usage('[--plan <file>] [options] -- <server command...>  |  [--plan <file>] --upstream <url> [options]')
    .argument('[command...]', 'the upstream MCP server to start, after --')
    .option('--plan <file>', 'fault plan, YAML (or JSON for .json); without one the proxy only records (the admin API can set one)')
    .addOption(storeOption('where to store the records'))
    .option('--upstream <url>', 'proxy a Streamable HTTP MCP server instead of starting one')
    .option('--header <line>', 'HTTP header sent to --upstream, "Name: value" (repeatable)', collect, [])
    .option('--port <port>', 'serve Streamable HTTP on 127.0.0.1:<port>/mcp instead of stdio (0 picks a free port)')
    .option('--allow-host <name>', 'with --port: a Host name besides 127.0.0.1/localhost that requests may carry (repeatable)', collectAllowedHost, [])
    .option('--admin-port <port>', 'serve GET/PUT /plan and GET /state on 127.0.0.1:<port> (0 picks a free port)')
    .addOption(optionDefaultShown('--admin-token <token>', 'bearer token for the admin endpoint', '$FAULTLINE_ADMIN_TOKEN, else one is generated and printed to stderr'))
    .option('--upstream-timeout <duration>', 'how long an upstream request may go without an answer or progress (30s, 5m, 1h)', '5m')
    .option('--restart', 'start the server command again when it exits (backoff from 0.5 s, doubling, at most 30 s)')
    .addOption(optionDefaultShown('--max-restarts <n>', 'with --restart: start attempts per outage before the server is left down; a server that came back and answered gets them all again', String(DEFAULT_MAX_RESTARTS)))
    .option('--retention <age>', 'delete records older than this (30d, 24h, 90m) from the store at start and then every hour, with their share of the stats')
    .option('--json', 'at exit, print where the records went as one JSON line on stderr (stdout may be the MCP stream)')
    .addHelpText(
      'after',
      '\nThe proxy mirrors the upstream server (name, version, capabilities, tools and their annotations) and declares to it\n' +
        'exactly what its client declared (one server connection per client), forwards\n' +
        'tools, resources, prompts, progress and cancellation, and applies the plan to tools/call: an HTTP-style fault\n' +
        'becomes a JSON-RPC error (400 -> -32602, 500/502/504 -> -32603, drops -> -32000, delayed timeouts -> -32001)\n' +
        'or an isError result (401/403/404/409/429/503); hangs and commit_then_drop never answer.\n\n' +
        'If the server exits while the proxy runs, the proxy stays up: every tools/call fails with -32000 and is\n' +
        'recorded (connection_reset if it was running, dependency_down after), tools/list answers from the last list,\n' +
        'and the exit code is 1 once the client disconnects. A server that cannot start exits 2 with one line.\n' +
        'An --upstream server that stops accepting connections fails each call with -32000 and the errno in data\n' +
        '(ECONNREFUSED: the call did not reach it), recorded as that network failure.\n' +
        'With --restart the proxy starts the server again, lists its tools again, and sends notifications/tools/list_changed\n' +
        'to clients if they changed; calls made while it is down fail and are recorded as above.\n\n' +
        'Example (an MCP client config):\n' +
        '  "command": "npx", "args": ["faultline", "mcp-proxy", "--plan", "faults.yaml", "--", "npx", "@modelcontextprotocol/server-everything"]\n' +
        'Change the plan while it runs:\n' +
        '  curl -H "Authorization: Bearer $FAULTLINE_ADMIN_TOKEN" -X PUT --data-binary @outage.yaml http://127.0.0.1:<admin-port>/plan',
    )
    .action(async (command: string[], opts: McpProxyOptions) => {
      const io = ctx.io as StdioCliIo;
      const log = (line: string) => io.stderr.write(`faultline mcp-proxy: ${line}\n`);
      const upstream = upstreamFrom(opts, command, io);
      const httpPort = opts.port === undefined ? undefined : port('--port', opts.port);
      const adminPort = opts.adminPort === undefined ? undefined : port('--admin-port', opts.adminPort);
      const upstreamTimeoutMs = parseDuration(opts.upstreamTimeout, '--upstream-timeout', { minMs: 1, maxMs: 86_400_000 });
      if (opts.adminToken !== undefined && opts.adminToken.trim() === '') throw new CliError('--admin-token must not be empty');
      if (opts.adminToken !== undefined && adminPort === undefined) throw new CliError('--admin-token needs --admin-port');
      if (opts.allowHost.length > 0 && httpPort === undefined) throw new CliError('--allow-host needs --port');
      if (opts.maxRestarts !== undefined && opts.restart !== true) throw new CliError('--max-restarts needs --restart');
      if (opts.restart === true && !('command' in upstream)) throw new CliError('--restart applies to a server command (-- <command...>), not to --upstream');
      const maxRestarts = opts.maxRestarts === undefined ? DEFAULT_MAX_RESTARTS : count('--max-restarts', opts.maxRestarts);
      const retentionMs = opts.retention === undefined ? undefined : parseDurationMs(opts.retention, '--retention');
      const plan = opts.plan === undefined ? createFaultPlan({ version: 1, rules: [] }) : await loadPlan(opts.plan);

      // The ports are taken before the server is started or the store opened, so that a port in
      // use is one line and nothing else; requests that come before the proxy is up are refused.
      let proxy: McpProxy | undefined;
      const started = (): McpProxy => {
        if (proxy === undefined) throw new Error('the upstream MCP server is still starting');
        return proxy;
      };
      let http: McpHttpServer | undefined;
      let admin: AdminServer | undefined;
      const configured = configuredAdminToken(opts.adminToken, io.env);
      const token = configured ?? generateAdminToken();
      try {
        if (httpPort !== undefined) http = await listen('--port', httpPort, () => serveMcpOverHttp({ connect: (transport) => started().connect(transport) }, { port: httpPort, allowedHosts: opts.allowHost, log }));
        if (adminPort !== undefined) {
          admin = await listen('--admin-port', adminPort, () =>
            startAdminServer({ plan, token, port: adminPort, state: () => ({ ...proxy?.stats() }), onUpdate: (p) => log(`plan updated: ${p.spec.rules.length} rule(s)`) }),
          );
        }
        proxy = await startMcpProxy({
          upstream,
          plan,
          cwd: io.cwd,
          upstreamTimeoutMs,
          log,
          ...(opts.db === undefined ? {} : { store: opts.db }),
          ...(retentionMs === undefined ? {} : { retention: retentionMs }),
          ...(opts.restart === true ? { restart: { maxRestarts } } : {}),
        });
      } catch (error) {
        await admin?.close();
        await http?.close();
        if (McpUpstreamError.isInstance(error) || ConfigError.isInstance(error)) throw new CliError(error.message, 2, { cause: error });
        throw error;
      }

      try {
        // The upstream ending is not among these: the proxy goes on answering for it (see proxy.ts).
        const stopped: Promise<unknown>[] = [];
        if (io.interrupted !== undefined) stopped.push(io.interrupted);
        if (http !== undefined) {
          log(`serving ${proxy.serverInfo.name} at ${http.url}`);
        } else {
          const stdin = io.stdin ?? process.stdin;
          stopped.push(endOf(stdin));
          await proxy.connect(stdioDownstream(stdin as Readable, io.stdout as Writable));
        }
        if (admin !== undefined) {
          log(`admin endpoint at ${admin.url} (GET/PUT /plan, GET /state)`);
          if (configured === undefined) log(`admin token: ${token}`);
        }
        // With --port and no signal to wait for (an embedding caller without one), this waits for ever, as a server should.
        await (stopped.length > 0 ? Promise.race(stopped) : new Promise<never>(() => undefined));
      } finally {
        await admin?.close();
        await http?.close();
        await proxy.close();
      }
      const stats = proxy.stats();
      if (opts.json === true) io.stderr.write(`${JSON.stringify({ stopped: true, calls: stats.calls, recording: stats.recording })}\n`);
      else log(`stopped after ${stats.calls} tool call(s); records in ${opts.db ?? DEFAULT_SQLITE_PATH}`);
      // The session lost its server: worth a non-zero exit for scripts, although the proxy carried on.
      if (stats.upstreamLost !== null) ctx.exitCode = 1;
    });
}

async function listen<T>(flag: string, port: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CliError(`cannot listen on 127.0.0.1:${port} (${flag}): ${typeof code === 'string' ? code : (error as Error).message}`, 2, { cause: error });
  }
}
