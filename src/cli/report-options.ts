/**
 * What the reporting commands (stats, alerts, tail, metrics, dashboard) share: opening the store
 * named by `--db` without ever creating or writing it (or, for the commands that add to stored
 * data, opening it for writing only if it exists), and reading counts. Windows (`--since`,
 * `--until`) are read by `monitor/time-window.ts`, which the dashboard shares.
 *
 * A PostgreSQL read that gets no answer (a table another session keeps locked, a server that
 * stopped answering) fails after {@link readBoundMs} with one line naming the store, instead of
 * holding the command (an `alerts` gate in CI, a dashboard request) for ever. Any other failure
 * of the store itself (a connection cut, a permission refused, a SQLite file locked) is one line
 * naming the store too, and exit 2: for `alerts`, a dead database is not the 1 of "firing".
 */
import { existsSync, statSync } from 'node:fs';
import { FaultlineError } from '../core/errors.js';
import { statIfAny } from '../io/replace-files.js';
import { DEFAULT_SQLITE_PATH, displayStoreSpec, openStore, sqlitePathOf, type OpenStoreOptions } from '../store/open-store.js';
import type { Store } from '../core/store-types.js';
import { CliError } from './cli-error.js';
import { parseInteger } from './integer-option.js';
import type { CliIo } from './io.js';
import { assertWritableFile } from './output-paths.js';


/** The environment variable that sets {@link readBoundMs}: milliseconds, 0 for no bound. */
export const READ_TIMEOUT_ENV = 'FAULTLINE_PG_READ_TIMEOUT_MS';
/** How long a PostgreSQL read of a reporting command may go unanswered unless {@link READ_TIMEOUT_ENV} says otherwise. */
const DEFAULT_READ_TIMEOUT_MS = 30_000;
/** PostgreSQL's SQLSTATE for a statement cancelled, here by `statement_timeout`. */
const QUERY_CANCELED = '57014';
/** A PostgreSQL SQLSTATE (`57P01` terminated, `42501` permission denied, ...). */
const SQLSTATE = /^[0-9A-Z]{5}$/;
/** A system error's errno name (ECONNRESET, EPIPE, ECONNREFUSED, EIO, ...); Node's own codes are ERR_*. */
const SYSTEM_ERRNO = /^E[A-Z0-9]+$/;
/**
 * What pg says, with no code, when the connection under a query is lost or cannot be made (the
 * server went away or restarted, or says nothing to a new connection).
 */
const PG_CONNECTION_LOST = new Set([
  'Connection terminated unexpectedly',
  'Client has encountered a connection error and is not queryable',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
]);
/** The Store methods that write: their failures say "cannot write to the store". */
const WRITES: ReadonlySet<PropertyKey> = new Set([
  'insert',
  'insertEncoded',
  'prune',
  'insertTrajectories',
  'updateTrajectories',
  'pushCorrection',
  'pushCorrections',
] satisfies (keyof Store)[]);

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
 * be opened, or (from its reads) fails or, PostgreSQL, does not answer within the bound.
 */
export async function openReportStore(spec: string | undefined, io: CliIo, options: ReportStoreOptions = {}): Promise<Store> {
  assertSqliteStoreExists(spec, io.cwd, 'run `npx faultline demo` or point --db at one');
  if (options.statementTimeoutMs !== undefined) return openStore(spec, { statementTimeoutMs: options.statementTimeoutMs, cwd: io.cwd, readonly: true });
  const bound = readBoundMs(io);
  const store = await openStore(spec, { ...boundOption(bound), cwd: io.cwd, readonly: true });
  return reportingFailures(store, spec, bound, options.serving === true);
}

/**
 * Opens for writing a store that must already exist, for the commands that add to stored data
 * (annotate, augment, review, corrections --learn): a mistyped `--db` is reported instead of
 * creating an empty store (a SQLite file, or a PostgreSQL schema) and finding nothing in it.
 * With `boundReads`, its statements are bounded as {@link openReportStore}'s reads are, once it
 * is migrated: a migration (a table rewritten) may take longer than any read.
 * @throws CliError / ConfigError with one line when the store is missing, is a directory, cannot
 * be opened, or (from its reads and writes) fails or does not answer within the bound.
 */
export async function openExistingStore(spec: string | undefined, io: CliIo, options: { boundReads?: boolean } = {}): Promise<Store> {
  assertSqliteStoreExists(spec, io.cwd, 'import or record something first, or point --db at one');
  const store = await openStore(spec, { cwd: io.cwd, mustExist: true });
  const bound = options.boundReads === true && store.kind === 'postgres' ? readBoundMs(io) : 0;
  if (bound === 0) return reportingFailures(store, spec, 0, false);
  // The bound is a setting of the store's connections, so the migrated store is opened again with it.
  await store.close();
  return reportingFailures(await openStore(spec, { statementTimeoutMs: bound, cwd: io.cwd, mustExist: true }), spec, bound, false);
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
 * `store` whose calls that fail in the store (see {@link storeFailure}) fail with one line naming
 * the store, "cannot read the store: …" or, for a write, "cannot write to the store: …" (for a
 * server, `serving`, without those words: it answers the request with the line). faultline's own
 * errors pass as they are: a ConfigError already says what is wrong, and anything else is a bug.
 */
function reportingFailures(store: Store, spec: string | undefined, bound: number, serving: boolean): Store {
  const shown = displayStoreSpec(spec ?? DEFAULT_SQLITE_PATH);
  const failed = (write: boolean) => (error: unknown): never => {
    const why = storeFailure(error, bound);
    if (why === undefined) throw error;
    const line = `${shown}: ${why}`;
    throw new CliError(serving ? line : `cannot ${write ? 'write to' : 'read'} the store: ${line}`, 2, { cause: error });
  };
  const onRead = failed(false);
  const onWrite = failed(true);
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const onError = WRITES.has(key) ? onWrite : onRead;
      return (...args: unknown[]): unknown => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof Promise ? result.catch(onError) : result;
      };
    },
  });
}

/**
 * What the failure of a store call says of the store, or undefined when it is no failure of the
 * store's: a FaultlineError (its message is already one line for the user), or a bug. The store's
 * are the driver's: PostgreSQL's (a SQLSTATE), the system's (an errno name: a connection reset, a
 * read that failed), pg's own when it lost its connection, and SQLite's (a SQLITE_* code).
 */
function storeFailure(error: unknown, bound: number): string | undefined {
  if (FaultlineError.isInstance(error) || !(error instanceof Error)) return undefined;
  const why = bound === 0 ? undefined : unanswered(error);
  if (why !== undefined) return `no answer within ${bound / 1000} s (${why})`;
  const code = (error as { code?: unknown }).code;
  const fromDriver = typeof code === 'string' ? SQLSTATE.test(code) || SYSTEM_ERRNO.test(code) || code.startsWith('SQLITE_') : PG_CONNECTION_LOST.has(error.message);
  if (!fromDriver) return undefined;
  // A refused connection to a dual-stack host is an AggregateError with only its code.
  const message = error.message.trim() === '' ? String(code) : error.message;
  return message.split('\n', 1)[0]!.trim();
}

/** Why a store call got no answer, or undefined when it failed otherwise. */
function unanswered(error: Error): string | undefined {
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
