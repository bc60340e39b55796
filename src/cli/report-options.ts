/**
 * What the reporting commands (stats, alerts, tail, metrics, dashboard) share: opening the store
 * named by `--db` without ever creating or writing it (or, for the commands that add to stored
 * data, opening it for writing only if it exists), and reading counts. Windows (`--since`,
 * `--until`) are read by `monitor/time-window.ts`, which the dashboard shares.
 *
 * A PostgreSQL read that gets no answer (a table another session keeps locked, a server that
 * stopped answering) fails after {@link readBoundMs} with one line naming the store, instead of
 * holding the command (an `alerts` gate in CI, a dashboard request) for ever.
 */
import { existsSync, statSync } from 'node:fs';
import { FaultlineError } from '../errors.js';
import { statIfAny } from '../replace-files.js';
import { displayStoreSpec, openStore, sqlitePathOf, type OpenStoreOptions } from '../store/open-store.js';
import type { Store } from '../store/types.js';
import { CliError } from './cli-error.js';
import { parseInteger } from './integer-option.js';
import type { CliIo } from './io.js';
import { assertWritableFile } from './output-paths.js';

export const DB_OPTION_HELP = 'store to read: a SQLite path (default .faultline/faultline.db) or a postgres:// URL (?schema=NAME)';

/** The environment variable that sets {@link readBoundMs}: milliseconds, 0 for no bound. */
export const READ_TIMEOUT_ENV = 'FAULTLINE_PG_READ_TIMEOUT_MS';
/** How long a PostgreSQL read of a reporting command may go unanswered unless {@link READ_TIMEOUT_ENV} says otherwise. */
const DEFAULT_READ_TIMEOUT_MS = 30_000;
/** PostgreSQL's SQLSTATE for a statement cancelled, here by `statement_timeout`. */
const QUERY_CANCELED = '57014';

/** What {@link openReportStore} takes besides the store. */
export interface ReportStoreOptions {
  /**
   * The PostgreSQL statement bound of a reader with its own (`tail`, which retries): its errors
   * are passed on as they are. Without it, reads are bounded by {@link readBoundMs}.
   */
  statementTimeoutMs?: number;
  /**
   * For a server (dashboard, metrics), which answers a read that failed as that request's error:
   * the error says what happened to the store without "cannot read the store:".
   */
  serving?: boolean;
}

/**
 * Opens the store read-only. A SQLite file that does not exist is a user mistake, reported
 * before SQLite would create an empty database in its place.
 * @throws CliError / ConfigError with one line when the store is missing, is a directory, cannot
 * be opened, or (from its reads) is PostgreSQL and does not answer within the bound.
 */
export async function openReportStore(spec: string | undefined, io: CliIo, options: ReportStoreOptions = {}): Promise<Store> {
  assertSqliteStoreExists(spec, io.cwd, 'run `faultline demo` or point --db at one');
  if (options.statementTimeoutMs !== undefined) return openStore(spec, { statementTimeoutMs: options.statementTimeoutMs, cwd: io.cwd, readonly: true });
  const bound = readBoundMs(io);
  const store = await openStore(spec, { ...boundOption(bound), cwd: io.cwd, readonly: true });
  return bounded(store, spec, bound, options.serving === true);
}

/**
 * Opens for writing a store that must already exist, for the commands that add to stored data
 * (annotate, augment, review, corrections --learn): a mistyped `--db` is reported instead of
 * creating an empty store (a SQLite file, or a PostgreSQL schema) and finding nothing in it.
 * With `boundReads`, its statements are bounded as {@link openReportStore}'s reads are, once it
 * is migrated: a migration (a table rewritten) may take longer than any read.
 * @throws CliError / ConfigError with one line when the store is missing, is a directory, or cannot be opened.
 */
export async function openExistingStore(spec: string | undefined, io: CliIo, options: { boundReads?: boolean } = {}): Promise<Store> {
  assertSqliteStoreExists(spec, io.cwd, 'import or record something first, or point --db at one');
  const store = await openStore(spec, { cwd: io.cwd, mustExist: true });
  const bound = options.boundReads === true ? readBoundMs(io) : 0;
  if (bound === 0 || store.kind !== 'postgres') return store;
  // The bound is a setting of the store's connections, so the migrated store is opened again with it.
  await store.close();
  return bounded(await openStore(spec, { statementTimeoutMs: bound, cwd: io.cwd, mustExist: true }), spec, bound, false);
}

/**
 * How long one PostgreSQL statement of a reporting command may go unanswered:
 * {@link READ_TIMEOUT_ENV} in milliseconds (0: no bound), else {@link DEFAULT_READ_TIMEOUT_MS}.
 * @throws CliError when the variable is not such a number.
 */
function readBoundMs(io: Pick<CliIo, 'env'>): number {
  const text = io.env[READ_TIMEOUT_ENV];
  // Up to a day: the client's own deadline, a little later, must fit a timer.
  return text === undefined || text.trim() === '' ? DEFAULT_READ_TIMEOUT_MS : parseInteger(text, READ_TIMEOUT_ENV, 0, 86_400_000);
}

function boundOption(bound: number): Pick<OpenStoreOptions, 'statementTimeoutMs'> {
  return bound === 0 ? {} : { statementTimeoutMs: bound };
}

/**
 * `store` whose calls that get no answer within `bound` (the server cancelled the statement, or
 * the client gave up on a server that says nothing) fail with one line naming the store.
 */
function bounded(store: Store, spec: string | undefined, bound: number, serving: boolean): Store {
  if (bound === 0 || store.kind !== 'postgres' || spec === undefined) return store;
  const fail = (error: unknown): never => {
    const why = unanswered(error);
    if (why === undefined) throw error;
    const line = `${displayStoreSpec(spec)}: no answer within ${bound / 1000} s (${why})`;
    throw new CliError(serving ? line : `cannot read the store: ${line}`, 2, { cause: error });
  };
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof Promise ? result.catch(fail) : result;
      };
    },
  });
}

/** Why a store call got no answer, or undefined when it failed otherwise. */
function unanswered(error: unknown): string | undefined {
  if (FaultlineError.isInstance(error) || !(error instanceof Error)) return undefined;
  if ((error as { code?: unknown }).code === QUERY_CANCELED) return 'a lock held by another session?';
  // pg's client-side query_timeout; pg gives this error no code, only this text.
  if (error.message === 'Query read timeout') return 'the server is not answering';
  return undefined;
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
