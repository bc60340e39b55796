#!/usr/bin/env node
import type { CliIo } from './io.js';
import { runCli } from './run-cli.js';

// `faultline tail | head -3`: once the reader is gone, stop quietly, as Unix tools do, instead of
// dying on an unhandled EPIPE with a stack trace. Other stream errors still surface.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

let interrupted: Promise<void> | undefined;
const io: CliIo = {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  // A getter: touching process.stdin creates the stream, which only `review` needs.
  get stdin(): NodeJS.ReadableStream & { isTTY?: boolean } {
    return process.stdin;
  },
  // Installed only when a long-running command asks for it: a handler makes Node stop exiting on
  // Ctrl-C, which every other command still should.
  get interrupted(): Promise<void> {
    interrupted ??= new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    return interrupted;
  },
};
const code = await runCli(process.argv.slice(2), io);
process.exitCode = code;
