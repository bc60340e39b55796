/**
 * The one way faultline reads a file a user names (plans, routes, alert configs, scenarios, logs
 * to import or annotate, saved runs, the judge cache). Each check makes a mistake one clear line
 * instead of a hang or a silent wrong result:
 * - only a regular file is read. A FIFO opened for reading waits for a writer for ever, so the
 *   file is opened non-blocking and checked on its descriptor (no window between check and read);
 * - an empty file (no bytes, or only whitespace) is refused, unless the caller reads state of its
 *   own that may start empty: an empty input is nearly always a mistake (a failed download, a
 *   redirect that truncated the file), and reading nothing from it would pass for success;
 * - text must be UTF-8: a byte that is not would decode to U+FFFD, and a plan rule or route
 *   holding it could never match;
 * - text files are read whole, so they are capped in size.
 * The callers put the reason after their own words (`cannot read fault plan x.yaml: <reason>`).
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, statSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import { fileErrorReason } from './replace-files.js';

/** A file read, or why it was not. */
export type InputFileResult<T> = { ok: true; value: T } | { ok: false; reason: string; cause?: unknown };

export interface ReadInputOptions {
  /** An empty file reads as '' instead of being refused (state the caller writes itself). Default false. */
  allowEmpty?: boolean;
  /** Larger files are refused. Default {@link MAX_INPUT_TEXT_BYTES}. */
  maxBytes?: number;
  /**
   * `replace` decodes bytes that are not UTF-8 as U+FFFD instead of refusing the file: for a
   * file of the caller's own whose last write may have been cut mid-character. Default `strict`.
   */
  utf8?: 'strict' | 'replace';
}

/** Config text is read whole: plans, routes and scenarios are kilobytes. */
export const MAX_INPUT_TEXT_BYTES = 64 * 1024 * 1024;

// Windows has no O_NONBLOCK (and no FIFOs to open by path).
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** Why opening failed: a socket cannot be opened by path at all (ENXIO). */
function openProblem(error: unknown): InputFileResult<never> {
  const code = (error as NodeJS.ErrnoException).code;
  return { ok: false, reason: code === 'ENXIO' ? 'is a socket, not a regular file' : fileErrorReason(error), cause: error };
}

/** Why a file of this kind cannot be read as input, or undefined when it is a regular file. */
function kindProblem(stats: Stats): string | undefined {
  if (stats.isDirectory()) return 'is a directory';
  if (stats.isFIFO()) return 'is a FIFO (named pipe), not a regular file';
  if (stats.isSocket()) return 'is a socket, not a regular file';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'is a device, not a regular file';
  if (!stats.isFile()) return 'not a regular file';
  return undefined;
}

function decode(bytes: Buffer, options: ReadInputOptions): InputFileResult<string> {
  if (options.utf8 !== 'replace' && !isUtf8(bytes)) {
    const text = bytes.toString('utf8');
    const at = text.indexOf('\uFFFD');
    const line = at < 0 ? undefined : text.slice(0, at).split('\n').length;
    return { ok: false, reason: `not valid UTF-8${line === undefined ? '' : ` (line ${line})`}` };
  }
  // Editors on Windows save UTF-8 with a byte order mark, which JSON.parse refuses.
  const text = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3).toString('utf8') : bytes.toString('utf8');
  if (options.allowEmpty !== true && text.trim() === '') return { ok: false, reason: 'the file is empty' };
  return { ok: true, value: text };
}

function sized(stats: Stats, options: ReadInputOptions): string | undefined {
  const kind = kindProblem(stats);
  if (kind !== undefined) return kind;
  const max = options.maxBytes ?? MAX_INPUT_TEXT_BYTES;
  if (stats.size > max) return `larger than ${Math.round(max / 1024 / 1024)} MiB`;
  return undefined;
}

/** Reads a text file as the module comment says. Never throws. */
export async function readInputText(path: string, options: ReadInputOptions = {}): Promise<InputFileResult<string>> {
  let handle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    return openProblem(error);
  }
  try {
    const problem = sized(await handle.stat(), options);
    if (problem !== undefined) return { ok: false, reason: problem };
    return decode(await handle.readFile(), options);
  } catch (error) {
    return { ok: false, reason: fileErrorReason(error), cause: error };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Opens `path` as the module comment says and hands `read` its descriptor and stats; never throws. */
function withInputFd<T>(path: string, read: (fd: number, stats: Stats) => InputFileResult<T>): InputFileResult<T> {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    return openProblem(error);
  }
  try {
    return read(fd, fstatSync(fd));
  } catch (error) {
    return { ok: false, reason: fileErrorReason(error), cause: error };
  } finally {
    closeSync(fd);
  }
}

/** {@link readInputText}, synchronously (for loaders that are synchronous). Never throws. */
export function readInputTextSync(path: string, options: ReadInputOptions = {}): InputFileResult<string> {
  return withInputFd(path, (fd, stats) => {
    const problem = sized(stats, options);
    return problem !== undefined ? { ok: false, reason: problem } : decode(readFileSync(fd), options);
  });
}

/**
 * What is wrong with what is at `path` for a reader that opens it itself (SQLite): something
 * other than a regular file (a FIFO would hang it). Undefined when it is a file or nothing is there.
 */
export function nonFileProblem(path: string): string | undefined {
  let stats: Stats | undefined;
  try {
    stats = statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  return stats === undefined ? undefined : kindProblem(stats);
}

/** Whether the file holds nothing but whitespace (and a byte order mark); reads only up to its first other byte. */
function onlyWhitespace(fd: number): boolean {
  const chunk = Buffer.alloc(64 * 1024);
  let position = 0;
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, position);
    if (n === 0) return true;
    for (let i = 0; i < n; i++) {
      const byte = chunk[i]!;
      const bom = position + i < 3 && byte === [0xef, 0xbb, 0xbf][position + i];
      if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && !bom) return false;
    }
    position += n;
  }
}

/**
 * Checks a file that is then read as a stream (a log to import or annotate) or by another reader
 * (a module to load): there, regular and not empty. Its size when it is. Never throws.
 */
export function checkInputFile(path: string, options: Pick<ReadInputOptions, 'allowEmpty'> = {}): InputFileResult<{ size: number }> {
  return withInputFd(path, (fd, stats) => {
    const kind = kindProblem(stats);
    if (kind !== undefined) return { ok: false, reason: kind };
    if (options.allowEmpty !== true && onlyWhitespace(fd)) return { ok: false, reason: 'the file is empty' };
    return { ok: true, value: { size: stats.size } };
  });
}
