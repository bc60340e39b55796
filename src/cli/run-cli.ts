/**
 * The CLI entry: parses argv with commander, runs one command, and turns user mistakes into one
 * line on stderr and exit code 2. Nothing here reads process globals; main.ts passes them in.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError, FaultlineError } from '../errors.js';
import { CliError } from './cli-error.js';
import { alertsCommand } from './commands/alerts.js';
import { annotateCommand } from './commands/annotate.js';
import { benchCommand } from './commands/bench.js';
import { demoCommand } from './commands/demo.js';
import { exportCommand } from './commands/export.js';
import { importCommand } from './commands/import.js';
import { metricsCommand } from './commands/metrics.js';
import { mcpProxyCommand } from './commands/mcp-proxy.js';
import { mockToolsCommand } from './commands/mock-tools.js';
import { proxyCommand } from './commands/proxy.js';
import { statsCommand } from './commands/stats.js';
import { tailCommand } from './commands/tail.js';
import type { CliContext, CliIo } from './io.js';

export const VERSION = '0.1.0';

/** Each command module exports a factory; adding a command is adding a line here. */
const COMMANDS: readonly ((ctx: CliContext) => Command)[] = [demoCommand, statsCommand, alertsCommand, tailCommand, metricsCommand, mockToolsCommand, mcpProxyCommand, proxyCommand, benchCommand, importCommand, annotateCommand, exportCommand];

function buildProgram(ctx: CliContext): Command {
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
  for (const make of COMMANDS) {
    const command = make(ctx);
    command.exitOverride();
    command.configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s), outputError: () => undefined });
    program.addCommand(command);
  }
  return program;
}

/** Runs the CLI and returns the exit code. `argv` excludes the node binary and script path. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const ctx: CliContext = { io, exitCode: 0 };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      const message = error.message.replace(/^error:\s*/, '');
      io.stderr.write(`faultline: ${message} (see 'faultline --help')\n`);
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
