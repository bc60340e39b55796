/**
 * What the reporting commands (stats, alerts, tail, metrics, dashboard) share: opening the store
 * named by `--db` without ever creating or writing it (or, for the commands that add to stored
 * data, opening it for writing only if it exists), and reading counts. Windows (`--since`,
 * `--until`) are read by `monitor/time-window.ts`, which the dashboard shares.
 */
import { existsSync, statSync } from 'node:fs';
import { statIfAny } from '../replace-files.js';
import { openStore, sqlitePathOf, type OpenStoreOptions } from '../store/open-store.js';
import type { Store } from '../store/types.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './io.js';
import { assertWritableFile } from './output-paths.js';

export const DB_OPTION_HELP = 'store to read: a SQLite path (default .faultline/faultline.db) or a postgres:// URL (?schema=NAME)';

/**
 * Opens the store read-only. A SQLite file that does not exist is a user mistake, reported
 * before SQLite would create an empty database in its place.
 * @throws CliError / ConfigError with one line when the store is missing, is a directory, or cannot be opened.
 */
export async function openReportStore(spec: string | undefined, io: CliIo, options: Pick<OpenStoreOptions, 'statementTimeoutMs'> = {}): Promise<Store> {
  assertSqliteStoreExists(spec, io.cwd, 'run `faultline demo` or point --db at one');
  return openStore(spec, { ...options, cwd: io.cwd, readonly: true });
}

/**
 * Opens for writing a store that must already exist, for the commands that add to stored data
 * (annotate, augment, review, corrections --learn): a mistyped `--db` is reported instead of
 * creating an empty store (a SQLite file, or a PostgreSQL schema) and finding nothing in it.
 * @throws CliError / ConfigError with one line when the store is missing, is a directory, or cannot be opened.
 */
export async function openExistingStore(spec: string | undefined, io: CliIo): Promise<Store> {
  assertSqliteStoreExists(spec, io.cwd, 'import or record something first, or point --db at one');
  return openStore(spec, { cwd: io.cwd, mustExist: true });
}

/**
 * Checks, before a command that records (demo, bench, import, proxy) opens `spec`, that a SQLite
 * store can be created there: not a directory, and a new file's directory exists or can be made
 * (a read-only mount, a file in the way). SQLite would say only "unable to open database file".
 * An existing file is left to the store, which says when it is read-only.
 * @throws CliError with one line naming the path.
 */
export function assertSqliteStoreCreatable(spec: string | undefined, cwd: string): void {
  const path = sqlitePathOf(spec, cwd);
  if (path === undefined) return;
  const stats = statIfAny(path);
  if (stats?.isDirectory() === true) throw new CliError(`${path} is a directory, not a faultline store (point --db at the .db file)`);
  if (stats === undefined) assertWritableFile(path, path, { createDirectory: true });
}

/** The SQLite file of `spec` (undefined for PostgreSQL), after checking it is there and is a file. */
function assertSqliteStoreExists(spec: string | undefined, cwd: string, hint: string): string | undefined {
  const path = sqlitePathOf(spec, cwd);
  if (path === undefined) return undefined;
  if (!existsSync(path)) throw new CliError(`no faultline store at ${path} (${hint})`);
  // SQLite would answer "disk I/O error".
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() === true) {
    throw new CliError(`${path} is a directory, not a faultline store (point --db at the .db file)`);
  }
  return path;
}

/** A positive integer option value. */
export function parseCount(text: string, flag: string, min = 1): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) throw new CliError(`invalid ${flag} ${JSON.stringify(text)}: expected an integer >= ${min}`);
  return Number(text);
}
