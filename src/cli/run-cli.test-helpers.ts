/**
 * Running the CLI in-process with captured output, for command tests.
 */
import { Writable } from 'node:stream';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { CliIo } from './io.js';
import { runCli } from './run-cli.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CapturedIo {
  io: CliIo;
  stdout(): string;
  stderr(): string;
}

function sink(chunks: string[]): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
}

export function captureIo(cwd: string, interrupted?: Promise<void>): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: sink(out), stderr: sink(err), env: {}, cwd, ...(interrupted === undefined ? {} : { interrupted }) };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

/** Runs `faultline <argv>` to completion. */
export async function runCapture(argv: readonly string[], cwd: string): Promise<CliRun> {
  const captured = captureIo(cwd);
  const code = await runCli(argv, captured.io);
  return { code, stdout: captured.stdout(), stderr: captured.stderr() };
}

/** Starts a long-running `faultline <argv>` in-process; `stop` plays Ctrl-C, `exit` is its exit code. */
export function startCli(argv: readonly string[], cwd: string): { captured: CapturedIo; exit: Promise<number>; stop: () => void } {
  let stop!: () => void;
  const interrupted = new Promise<void>((resolve) => (stop = resolve));
  const captured = captureIo(cwd, interrupted);
  return { captured, exit: runCli(argv, captured.io), stop };
}

/** A SQLite store file holding `records`, closed again so commands open it themselves. */
export async function writeStoreFile(path: string, records: readonly ToolExecutionRecord[]): Promise<string> {
  const store = createSqliteStore({ path });
  await store.insert(records);
  await store.close();
  return path;
}

/** Polls until `check` returns a value other than undefined. */
export async function waitFor<T>(check: () => T | undefined, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
