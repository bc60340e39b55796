/**
 * `faultline mock-tools`: serves the mock tool catalog over HTTP until Ctrl-C, with faults from
 * the X-Inject-Error header and, optionally, a fault plan file.
 */
import { Command } from 'commander';
import { DEFAULT_SEED } from '../../core/seeded-random.js';
import { ConfigError } from '../../core/errors.js';
import { createFaultPlan } from '../../faults/plan.js';
import { loadFaultPlan } from '../../faults/plan-validate.js';
import { anchoredClock } from '../../tools/anchored-clock.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW } from '../../tools/catalog.js';
import { startMockToolServer, type FaultDecider, type MockToolServer } from '../../tools/http-server.js';
import { CliError } from '../cli-error.js';
import { parseDuration } from '../duration-option.js';
import { parseInteger } from '../integer-option.js';
import { writeLine, type CliContext } from '../io.js';
import { collectAllowedHost, parsePort } from '../listen-options.js';

interface MockToolsOptions {
  port: string;
  host: string;
  seed: string;
  plan?: string;
  now?: string;
  timeoutCap?: string;
  allowHost: string[];
  json?: boolean;
}

export function mockToolsCommand(ctx: CliContext): Command {
  return new Command('mock-tools')
    .description('Serve the stateful mock tool catalog (weather, sales, documents, orders, messaging, calendar, payments, files) over HTTP, failing on demand')
    .option('--port <port>', 'port to listen on; 0 picks a free one', '8787')
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--seed <n>', 'seed of the catalog data (same seed, same data)', String(DEFAULT_SEED))
    .option('--plan <file>', 'fault plan (YAML, or JSON for .json) for requests without an X-Inject-Error header')
    .option('--now <iso>', 'the instant the seeded data ends and the server clock starts', new Date(DEFAULT_CATALOG_NOW).toISOString())
    .option('--timeout-cap <duration>', 'how long an injected timeout holds a request before answering 504 (0: answer at once; 500ms, 30s, 5m)', '30s')
    .option('--allow-host <name>', 'a Host name besides 127.0.0.1/localhost that requests may carry while bound to loopback (repeatable)', collectAllowedHost, [])
    .option('--json', 'print the server address as one JSON line')
    .addHelpText(
      'after',
      '\nEndpoints: GET /tools, POST /tools/<name> (JSON arguments), GET /state, GET /faults.\n' +
        'Fault headers: X-Inject-Error: 400|401|403|404|409|429[:s]|500|502|503[:s]|504|timeout|reset|partial|empty|malformed|slow:<ms>;\n' +
        'X-Inject-Commit: true runs the tool before the fault (the write lands, the response is lost).',
    )
    .action(async (opts: MockToolsOptions) => {
      const { io } = ctx;
      const port = parsePort(opts.port);
      const seed = parseInteger(opts.seed, '--seed', -2_147_483_648, 4_294_967_295);
      const timeoutCapMs = parseDuration(opts.timeoutCap ?? '30s', '--timeout-cap', { minMs: 1, maxMs: 600_000, zero: true });
      const nowMs = Date.parse(opts.now ?? '');
      if (Number.isNaN(nowMs)) throw new CliError(`--now must be an ISO-8601 time such as 2026-03-29T14:00:00Z, got "${opts.now ?? ''}"`);
      if (opts.host.trim() === '') throw new CliError('--host must not be empty');

      const catalog = createToolCatalog({ seed, now: nowMs });
      const clock = anchoredClock(nowMs);
      let plan: FaultDecider | undefined;
      if (opts.plan !== undefined) {
        try {
          const spec = await loadFaultPlan(opts.plan);
          // The plan's own seed wins; a plan without one follows --seed, so one number reproduces the run.
          plan = createFaultPlan(spec, spec.seed === undefined ? { clock, seed } : { clock });
        } catch (error) {
          if (ConfigError.isInstance(error)) throw new CliError(error.message, 2, { cause: error });
          throw error;
        }
      }

      let server: MockToolServer;
      try {
        server = await startMockToolServer({ catalog, port, host: opts.host, allowedHosts: opts.allowHost, clock, timeoutCapMs, ...(plan !== undefined ? { plan } : {}) });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        throw new CliError(`cannot listen on ${opts.host}:${port}: ${typeof code === 'string' ? code : (error as Error).message}`, 2, { cause: error });
      }

      try {
        if (opts.json === true) {
          writeLine(io.stdout, JSON.stringify({ url: server.url, tools: catalog.tools.length, seed, now: catalog.state.anchor, plan: opts.plan ?? null }));
        } else {
          writeLine(io.stdout, `faultline mock-tools: ${catalog.tools.length} tools at ${server.url} (seed ${seed}, data as of ${catalog.state.anchor}${opts.plan !== undefined ? `, plan ${opts.plan}` : ''})`);
          writeLine(io.stdout, `  GET ${server.url}/tools   POST ${server.url}/tools/<name>   GET ${server.url}/state   (Ctrl-C to stop)`);
        }
        // Without an interrupt source (embedded use) it serves until the process ends.
        await (io.interrupted ?? new Promise<void>(() => undefined));
      } finally {
        await server.close();
      }
      if (opts.json !== true) {
        const n = server.injected.length;
        writeLine(io.stderr, `faultline mock-tools: stopped (${n} ${n === 1 ? 'fault' : 'faults'} injected)`);
      }
    });
}
