/**
 * The CLI entry: parses argv with commander, runs one command, and turns user mistakes into one
 * line on stderr and exit code 2. Nothing here reads process globals; main.ts passes them in.
 */
import { useHelpFormat } from './help-format.js';
import { Command, CommanderError } from 'commander';
import { ConfigError, FaultlineError } from '../core/errors.js';
import { CliError } from './cli-error.js';
import type { CliContext, CliIo } from './io.js';

export const VERSION = '0.1.0';

type CommandFactory = (ctx: CliContext) => Command;

/**
 * Each command module exports a factory; adding a command is adding a line here. They load on
 * demand: `faultline stats` imports only what stats needs, not the MCP SDK or the benchmark
 * (start-up is a third of a second of module loading otherwise). Help and unknown commands load
 * them all, in this order.
 */
const COMMANDS: Readonly<Record<string, () => Promise<CommandFactory>>> = {
  bench: async () => (await import('./commands/bench.js')).benchCommand,
  demo: async () => (await import('./commands/demo.js')).demoCommand,
  stats: async () => (await import('./commands/stats.js')).statsCommand,
  alerts: async () => (await import('./commands/alerts.js')).alertsCommand,
  tail: async () => (await import('./commands/tail.js')).tailCommand,
  metrics: async () => (await import('./commands/metrics.js')).metricsCommand,
  dashboard: async () => (await import('./commands/dashboard.js')).dashboardCommand,
  'mock-tools': async () => (await import('./commands/mock-tools.js')).mockToolsCommand,
  proxy: async () => (await import('./commands/proxy.js')).proxyCommand,
  'mcp-proxy': async () => (await import('./commands/mcp-proxy.js')).mcpProxyCommand,
  import: async () => (await import('./commands/import.js')).importCommand,
  annotate: async () => (await import('./commands/annotate.js')).annotateCommand,
  corrections: async () => (await import('./commands/corrections.js')).correctionsCommand,
  breakers: async () => (await import('./commands/breakers.js')).breakersCommand,
  review: async () => (await import('./commands/review.js')).reviewCommand,
  export: async () => (await import('./commands/export.js')).exportCommand,
  augment: async () => (await import('./commands/augment.js')).augmentCommand,
  prune: async () => (await import('./commands/prune.js')).pruneCommand,
  predictor: async () => (await import('./commands/predictor.js')).predictorCommand,
};

/** The factories a command line needs: just its command when the first word names one, else all. */
async function factoriesFor(argv: readonly string[]): Promise<CommandFactory[]> {
  const first = argv.find((arg) => !arg.startsWith('-'));
  const names = first !== undefined && Object.hasOwn(COMMANDS, first) ? [first] : Object.keys(COMMANDS);
  return Promise.all(names.map((name) => COMMANDS[name]!()));
}

/**
 * Commander checks mandatory options before unknown ones, so `export --fromat sft --out x` said
 * "required option '--format <format>' not specified" instead of naming the typo. Here they are
 * checked just before the action, after the unknown options and the arguments, with commander's
 * own error.
 */
function checkMandatoryOptionsLast(command: Command): void {
  const mandatory = command.options.filter((o) => o.mandatory);
  for (const option of mandatory) option.makeOptionMandatory(false);
  if (mandatory.length > 0) {
    command.hook('preAction', (self) => {
      const missing = mandatory.find((o) => self.getOptionValue(o.attributeName()) === undefined);
      if (missing !== undefined) self.error(`error: required option '${missing.flags}' not specified`, { code: 'commander.missingMandatoryOptionValue', exitCode: 1 });
    });
  }
  for (const sub of command.commands) checkMandatoryOptionsLast(sub);
}

function buildProgram(ctx: CliContext, factories: readonly CommandFactory[]): Command {
  const io = ctx.io;
  const program = new Command('faultline')
    .description('Tool-call runtime, failure analytics, FailBench and training data for LLM agents.')
    .version(VERSION)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      // Commander's own usage errors: printed once, by the catch below, as a single line.
      outputError: () => undefined,
    });
  for (const make of factories) {
    const command = make(ctx);
    checkMandatoryOptionsLast(command);
    command.exitOverride();
    command.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s), outputError: () => undefined });
    program.addCommand(command);
  }
  useHelpFormat(program);
  return program;
}

/**
 * The help to point a usage error at: that of the (sub)command the command line names, whose
 * flags the error is about, or the program's when it names none (an unknown command).
 */
function helpLine(program: Command, argv: readonly string[]): string {
  const path = [program.name()];
  let command = program;
  for (const arg of argv) {
    if (arg === '--') break;
    if (arg.startsWith('-')) continue;
    const sub = command.commands.find((c) => c.name() === arg);
    if (sub === undefined) break;
    path.push(sub.name());
    command = sub;
  }
  return `${path.join(' ')} --help`;
}

/** Runs the CLI and returns the exit code. `argv` excludes the node binary and script path. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const ctx: CliContext = { io, exitCode: 0 };
  let program: Command | undefined;
  try {
    program = buildProgram(ctx, await factoriesFor(argv));
    await program.parseAsync([...argv], { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      // Commander puts its "Did you mean" on a second line; usage errors stay one line.
      const message = error.message.replace(/^error:\s*/, '').replace(/\s*\n\s*/g, ' ');
      io.stderr.write(`faultline: ${message} (see '${program === undefined ? 'faultline --help' : helpLine(program, argv)}')\n`);
      return 2;
    }
    if (CliError.isInstance(error)) {
      io.stderr.write(`faultline: ${error.message}\n`);
      return error.exitCode;
    }
    if (ConfigError.isInstance(error) || FaultlineError.isInstance(error)) {
      io.stderr.write(`faultline: ${error.message}\n`);
      return 2;
    }
    const text = error instanceof Error ? error.message : String(error);
    io.stderr.write(`faultline: internal error: ${text}\n`);
    if (io.env['FAULTLINE_DEBUG'] === '1' && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return 1;
  }
}
