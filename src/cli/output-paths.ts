/**
 * Output paths of the commands. They are checked before a command opens, runs or stores anything
 * (a benchmark that ends in "cannot write" after its whole run, or an annotate that stored its
 * labels and then failed on `--out`, wastes the work and half-does it), a file written as it goes
 * reports its errors as one line instead of crashing the process, and a set of output files is
 * replaced all or nothing (`replaceFiles`, src/io/replace-files.ts, which the FailBench report shares).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { accessSync, constants, createWriteStream, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { FaultlineError } from '../core/errors.js';
import { fileErrorReason, replaceFiles, statIfAny } from '../io/replace-files.js';
import { CliError } from './cli-error.js';

/**
 * Checks that `dir` is a directory that can be written in, or, with `create`, that it can be
 * made: its nearest existing ancestor is a writable directory. `shown` is `dir` as the user
 * wrote it; messages name `what` (the output path as given) and that ancestor as given.
 */
function assertDirectory(dir: string, shown: string, what: string, create: boolean): void {
  let at = dir;
  let atShown = shown;
  let stats = statIfAny(at);
  while (stats === undefined) {
    if (!create) throw new CliError(`cannot write ${what}: its directory does not exist`);
    const parent = dirname(at);
    if (parent === at) throw new CliError(`cannot write ${what}: its directory does not exist`);
    at = parent;
    // Once the path as given runs out ('.'), the absolute one is shown.
    const shownParent = dirname(atShown);
    atShown = shownParent === atShown || shownParent === '.' ? at : shownParent;
    stats = statIfAny(at);
  }
  if (!stats.isDirectory()) throw new CliError(`cannot write ${what}: ${atShown} is not a directory`);
  try {
    accessSync(at, constants.W_OK);
  } catch (error) {
    throw new CliError(`cannot write ${what}: ${fileErrorReason(error)}`, 2, { cause: error });
  }
}

/**
 * Checks, before any work, that a file can be written at `path` (absolute; `shown` as the user
 * gave it): it is not a directory, and its directory exists (or, with `createDirectory`, can be
 * made) and is writable.
 * @throws CliError with one line naming `shown`.
 */
export function assertWritableFile(path: string, shown: string, options: { createDirectory?: boolean } = {}): void {
  if (statIfAny(path)?.isDirectory() === true) throw new CliError(`cannot write ${shown}: is a directory`);
  assertDirectory(dirname(path), dirname(shown), shown, options.createDirectory === true);
}

/**
 * Checks, before any work, that `dir` (absolute; `shown` as given) is a writable directory or can
 * be made one.
 * @throws CliError with one line naming `shown`.
 */
export function assertWritableDirectory(dir: string, shown: string): void {
  const stats = statIfAny(dir);
  if (stats !== undefined && !stats.isDirectory()) throw new CliError(`cannot write ${shown}: not a directory`);
  assertDirectory(dir, shown, shown, true);
}

/** A file written as the command goes (`--out` of annotate). */
export interface OutputStream {
  /** Resolves once `text` is taken (waiting out backpressure). */
  write(text: string): Promise<void>;
  /** Flushes and closes the file. */
  close(): Promise<void>;
}

/**
 * Opens `path` for writing. A write stream's error (the file cannot be opened, the disk fills)
 * is an 'error' event: unheard, it crashes the process with a stack trace; heard but not
 * awaited, it leaves a wait for 'drain' or 'close' that never ends. Here it rejects the next
 * `write` or the `close` with one line naming `shown`.
 */
export function openOutputStream(path: string, shown: string): OutputStream {
  const stream = createWriteStream(path);
  let failure: unknown;
  stream.on('error', (error) => (failure ??= error));
  const check = (): void => {
    if (failure !== undefined) throw new CliError(`cannot write ${shown}: ${fileErrorReason(failure)}`, 2, { cause: failure });
  };
  // An errored stream closes itself; `check` then reports why.
  const closed = once(stream, 'close').catch(() => undefined);
  return {
    async write(text) {
      check();
      // `once` rejects when 'error' comes instead of 'drain'; `check` reports it.
      if (text !== '' && !stream.write(text)) await once(stream, 'drain').catch(() => undefined);
      check();
    },
    async close() {
      if (!stream.closed) stream.end();
      await closed;
      check();
    },
  };
}

/** A file written as the command goes that replaces `path` only once the command succeeded. */
export interface ReplacingOutput extends Pick<OutputStream, 'write'> {
  /** Closes the temporary file and renames it over the target (replaceFiles). */
  commit(): Promise<void>;
  /** Closes and removes the temporary file; the target stays as it was. Never throws. */
  discard(): Promise<void>;
}

/**
 * Writes to a temporary file beside `path` (absolute; `shown` as given), which {@link
 * ReplacingOutput.commit} renames into place, as `export` does: a command that fails midway (its
 * input turns out malformed, the store goes away) leaves the file that was there untouched
 * instead of truncated or half-written.
 */
export function openReplacingOutput(path: string, shown: string): ReplacingOutput {
  const temporary = `${path}.partial-${randomUUID()}`;
  const stream = openOutputStream(temporary, shown);
  const remove = () => {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Left as it is: the failure being reported is the one that matters.
    }
  };
  return {
    write: (text) => stream.write(text),
    async commit() {
      try {
        await stream.close();
        replaceFiles([[temporary, path]]);
      } catch (error) {
        remove();
        if (FaultlineError.isInstance(error) && !CliError.isInstance(error)) throw new CliError(error.message.replace(path, shown), 2, { cause: error });
        throw error;
      }
    },
    async discard() {
      await stream.close().catch(() => undefined);
      remove();
    },
  };
}
