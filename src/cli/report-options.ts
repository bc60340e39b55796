/**
 * What the reporting commands (stats, alerts, tail, metrics, dashboard) share: opening the store
 * named by `--db` without ever creating or writing it, and reading counts. Windows (`--since`,
 * `--until`) are read by `monitor/time-window.ts`, which the dashboard shares.
 */
import { existsSync, statSync } from 'node:fs';
import { openStore, sqlitePathOf } from '../store/open-store.js';
import type { Store } from '../store/types.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './io.js';

export const DB_OPTION_HELP = 'store to read: a SQLite path (default .faultline/faultline.db) or a postgres:// URL (?schema=NAME)';

/**
 * Opens the store read-only. A SQLite file that does not exist is a user mistake, reported
 * before SQLite would create an empty database in its place.
 * @throws CliError / ConfigError with one line when the store is missing, is a directory, or cannot be opened.
 */
export async function openReportStore(spec: string | undefined, io: CliIo): Promise<Store> {
  const path = sqlitePathOf(spec, io.cwd);
  if (path !== undefined && !existsSync(path)) {
    throw new CliError(`no faultline store at ${path} (run \`faultline demo\` or point --db at one)`);
  }
  // SQLite would answer "disk I/O error".
  if (path !== undefined && statSync(path, { throwIfNoEntry: false })?.isDirectory() === true) {
    throw new CliError(`${path} is a directory, not a faultline store (point --db at the .db file)`);
  }
  return openStore(spec, { cwd: io.cwd, readonly: true });
}

/** A positive integer option value. */
export function parseCount(text: string, flag: string, min = 1): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min) throw new CliError(`invalid ${flag} ${JSON.stringify(text)}: expected an integer >= ${min}`);
  return Number(text);
}
