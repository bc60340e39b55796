/**
 * What a serving command's start creates before it can fail: `proxy` opens its store (which
 * creates the SQLite file, its -wal/-shm and the `.faultline` directory) before it listens, so
 * that a bad `--db` is one line; a port that is then taken must not leave an empty database
 * behind, which a later `stats` would read as "no calls" instead of "no store". The command notes
 * what is missing before it starts and, when the start fails, removes what appeared since.
 *
 * Only what did not exist is removed: a store that was there keeps its file and sidecars (a -wal
 * may hold another process's committed records), and a directory goes only while it is empty.
 */
import { lstatSync, rmdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';

/** The files SQLite keeps beside a database: removed with it, and only with it. */
const SQLITE_SIDECARS = ['-wal', '-shm', '-journal'] as const;

export interface StartLeftovers {
  /**
   * Removes the files and directories that were missing when they were noted: files first, then
   * directories deepest first, each only if empty. Never throws: the start's own error is the one
   * to report. Call it after closing the store, so that SQLite has let go of its files.
   */
  remove(): void;
}

/**
 * Whether anything is at `path`. lstat: a dangling symlink is something the user put there, not
 * something to remove. ENOTDIR (a parent is a file) is nothing there, as ENOENT is; any other
 * failure (EACCES) counts as something there, so that what cannot be seen is never removed.
 * Never throws: noting comes before the store is opened, whose own error is the one to report.
 */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
}

/** `dir` and its ancestors that do not exist, deepest first. */
function missingDirectories(dir: string): string[] {
  const missing: string[] = [];
  for (let at = dir; !exists(at); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  return missing;
}

/**
 * Notes what of a start's outputs is not there yet: the SQLite file `sqliteFile` (absolute, or
 * undefined for a store that is not a file) with its sidecars and directories, and `directories`
 * (a spool directory, say) with their missing ancestors.
 * @example
 * const leftovers = noteStartLeftovers({ sqliteFile: sqlitePathOf(db, cwd), directories: [dirname(spool)] });
 * try { await listen(); } catch (error) { await store.close(); leftovers.remove(); throw error; }
 */
export function noteStartLeftovers(paths: { sqliteFile?: string | undefined; directories?: readonly string[] }): StartLeftovers {
  const files: string[] = [];
  const directories = new Set<string>();
  const { sqliteFile } = paths;
  if (sqliteFile !== undefined && !exists(sqliteFile)) {
    files.push(sqliteFile, ...SQLITE_SIDECARS.map((suffix) => sqliteFile + suffix).filter((path) => !exists(path)));
    for (const dir of missingDirectories(dirname(sqliteFile))) directories.add(dir);
  }
  for (const dir of paths.directories ?? []) for (const missing of missingDirectories(dir)) directories.add(missing);
  // Deepest first: a path is longer than any of its ancestors.
  const ordered = [...directories].sort((a, b) => b.length - a.length);
  return {
    remove() {
      for (const file of files) {
        try {
          rmSync(file, { force: true });
        } catch {
          // Best effort: whatever stays is named by nothing, and the start's error is what matters.
        }
      }
      for (const dir of ordered) {
        try {
          rmdirSync(dir);
        } catch {
          // Not empty (something else was put there meanwhile), or gone already: left as it is.
        }
      }
    },
  };
}
