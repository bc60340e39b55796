/**
 * `faultline breakers`: the circuits that the runtimes of many processes share through Redis
 * (`faultline/redis`), as Redis holds them; `--reset TOOL` closes one for every process. Exits 1
 * when a circuit is open, so a health check or a deploy gate can ask "is a tool down?".
 */
import { Command } from 'commander';
import { createRedisBreakers, type SharedBreakerState } from '../../runtime/redis-breakers.js';
import { maskUrlPassword } from '../../core/mask-url-password.js';
import { CliError } from '../cli-error.js';
import { formatTable } from '../format-table.js';
import { writeLine, type CliContext } from '../io.js';
import { optionDefaultShown } from '../help-format.js';

interface BreakersOptions {
  redis?: string;
  prefix: string;
  reset?: string;
  json?: boolean;
}

/** What a reader can say of a shared circuit now: open, or open with its cooldown over (a probe may go). */
function describeState(s: SharedBreakerState, now: number): string {
  if (s.state !== 'open') return s.state;
  if (s.openedAt !== null && s.cooldownMs !== null && now - s.openedAt >= s.cooldownMs) return 'half_open';
  return 'open';
}

export function breakersCommand(ctx: CliContext): Command {
  return new Command('breakers')
    .description('Show the circuit breakers shared through Redis (exit 1 when one is open); --reset closes one for every process')
    .addOption(optionDefaultShown('--redis <url>', 'Redis URL', '$FAULTLINE_REDIS_URL, else redis://127.0.0.1:6379'))
    .option('--prefix <prefix>', 'the prefix the runtimes use', 'faultline')
    .option('--reset <tool>', "close this tool's shared circuit")
    .option('--json', 'print one object per tool as JSON')
    .action(async (opts: BreakersOptions) => {
      const { io } = ctx;
      const url = opts.redis ?? io.env['FAULTLINE_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
      // The URL is shown with its password masked.
      if (!/^rediss?:\/\//.test(url)) throw new CliError(`--redis must be a redis:// or rediss:// URL, got "${maskUrlPassword(url)}"`);
      // One attempt, no reconnecting: a CLI says at once that Redis is not there.
      const shared = createRedisBreakers({ url, prefix: opts.prefix, onError: () => undefined, redis: { retryStrategy: () => null, connectTimeout: 3000 } });
      try {
        try {
          await shared.ready();
        } catch (error) {
          throw new CliError((error as Error).message);
        }
        if (opts.reset !== undefined) {
          // A mistyped tool (or prefix) would otherwise be 'closed' too, and the real circuit left open.
          const known = Object.keys(await shared.sharedStates()).sort();
          if (!known.includes(opts.reset)) {
            const listed = known.length === 0 ? 'none is shared there' : `shared: ${known.join(', ')}`;
            throw new CliError(`no shared circuit of ${opts.reset} under prefix "${opts.prefix}" at ${maskUrlPassword(url)} (${listed}); nothing reset`);
          }
          await shared.reset(opts.reset);
          if (opts.json !== true) writeLine(io.stdout, `faultline breakers: closed the shared circuit of ${opts.reset}`);
        }
        const states = await shared.sharedStates();
        const now = Date.now();
        const rows = Object.entries(states)
          .map(([tool, s]) => ({ tool, ...s, now: describeState(s, now) }))
          .sort((a, b) => a.tool.localeCompare(b.tool));
        if (rows.some((r) => r.state === 'open')) ctx.exitCode = 1;
        if (opts.json === true) {
          for (const r of rows) writeLine(io.stdout, JSON.stringify({ tool: r.tool, state: r.now, consecutive_failures: r.consecutiveFailures, opened_at: r.openedAt === null ? null : new Date(r.openedAt).toISOString(), trips: r.trips, cooldown_ms: r.cooldownMs }));
          return;
        }
        if (rows.length === 0) {
          writeLine(io.stdout, `no shared circuits under prefix "${opts.prefix}" at ${maskUrlPassword(url)}`);
          return;
        }
        writeLine(
          io.stdout,
          formatTable(rows, [
            { header: 'tool', value: (r) => r.tool, maxWidth: 40 },
            { header: 'state', value: (r) => r.now },
            { header: 'failures in a row', value: (r) => r.consecutiveFailures, align: 'right' },
            { header: 'opened at', value: (r) => (r.openedAt === null ? '' : new Date(r.openedAt).toISOString()) },
            { header: 'trips', value: (r) => r.trips, align: 'right' },
          ]),
        );
      } finally {
        await shared.close();
      }
    });
}
