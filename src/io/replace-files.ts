/**
 * Replacing a set of files all or nothing (an export's splits and card, a benchmark's report
 * files): the caller writes each new file to a temporary path, then `replaceFiles` moves them all
 * into place, or none.
 */
import { randomUUID } from 'node:crypto';
import { renameSync, rmSync, statSync, type Stats } from 'node:fs';
import { FaultlineError } from '../core/errors.js';

/** The short reason of a failed file operation, for a one-line message. */
export function fileErrorReason(error: unknown): string {
  switch ((error as NodeJS.ErrnoException | undefined)?.code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a parent is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EFBIG':
      return 'file too large';
    case 'EIO':
      return 'input/output error';
    case 'EROFS':
      return 'read-only file system';
    default:
      return (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
  }
}

/** `stat`, or undefined when nothing is there (ENOTDIR: a parent is a file, so nothing is there either). */
export function statIfAny(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new FaultlineError(`cannot write ${path}: ${fileErrorReason(error)}`, { cause: error });
  }
}

/**
 * Renames each `[temporary, target]` pair, all or nothing. Every target is checked first (a
 * directory there would be renamed over on some systems and refused midway on others); each
 * existing target is moved aside before its new file goes in, and kept until all are in, so a
 * rename failing midway puts back the old files (and removes the new ones where there was none).
 * The temporary files a failed call did not get to are left for the caller to remove.
 * @throws FaultlineError with one line naming the target that could not be written.
 */
export function replaceFiles(moves: readonly (readonly [temporary: string, target: string])[]): void {
  for (const [, target] of moves) {
    if (statIfAny(target)?.isDirectory() === true) throw new FaultlineError(`cannot write ${target}: is a directory`);
  }
  const suffix = `.previous-${randomUUID()}`;
  const done: { target: string; previous: string | undefined; placed: boolean }[] = [];
  let failed: { target: string; error: unknown } | undefined;
  for (const [temporary, target] of moves) {
    const entry: (typeof done)[number] = { target, previous: undefined, placed: false };
    try {
      if (statIfAny(target) !== undefined) {
        renameSync(target, target + suffix);
        entry.previous = target + suffix;
      }
      done.push(entry);
      renameSync(temporary, target);
      entry.placed = true;
    } catch (error) {
      failed = { target, error };
      break;
    }
  }
  if (failed === undefined) {
    for (const { previous } of done) if (previous !== undefined) rmSync(previous, { force: true });
    return;
  }
  for (const { target, previous, placed } of done.reverse()) {
    try {
      if (previous !== undefined) renameSync(previous, target);
      else if (placed) rmSync(target, { force: true });
    } catch {
      // Putting back what can be put back; the first failure is the one reported.
    }
  }
  throw new FaultlineError(`cannot write ${failed.target}: ${fileErrorReason(failed.error)}`, { cause: failed.error });
}
