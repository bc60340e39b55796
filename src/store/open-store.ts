/**
 * Turns a store spec (the `store` runtime option, the CLI's `--db`) into a Store.
 */
import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { maskUrlPassword } from '../core/mask-url-password.js';
import { createMemoryStore } from './memory/memory-store.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';
import { lazyStore, storeKindOf } from './lazy-store.js';
import { SQLITE_WRITER_IN_FLIGHT, sqliteBatchEncoding, sqliteWorkerAvailable, startSqliteWorkerStore } from './sqlite/sqlite-worker-store.js';
import type { Store } from '../core/store-types.js';

/** Where the SQLite store lives when no spec is given, relative to the working directory. */
export const DEFAULT_SQLITE_PATH = '.faultline/faultline.db';

export interface OpenStoreOptions {
  /** Base for relative SQLite paths. Default `process.cwd()`. */
  cwd?: string;
  /**
   * For reporting commands: open a SQLite store read-only; open a PostgreSQL store only if its
   * schema holds one (never create it). Ignored by the other kinds.
   */
  readonly?: boolean;
  /**
   * For the commands that add to stored data: open a PostgreSQL store only if its schema holds
   * one (migrating it if it is older), never create it. SQLite callers check that the file exists
   * (`sqlitePathOf`). Implied by `readonly`.
   */
  mustExist?: boolean;
  /**
   * Where a SQLite file's writes run. `'worker'`: in a worker thread
   * ({@link createSqliteWorkerStore}), off the caller's event loop and on another core, when the
   * compiled worker entry is there (run from TypeScript sources, or with `sqliteWorkerUrl` unset
   * and no entry, the writer stays in this thread); the runtime and the HTTP proxy open their
   * stores this way. `'thread'` (the default): in this thread. Ignored for read-only and
   * `:memory:` databases and the other kinds.
   */
  sqliteWriter?: 'worker' | 'thread';
  /** The writer thread's entry (tests substitute a loader). Default: the compiled entry. */
  sqliteWorkerUrl?: URL;
  /** @internal Given the writer thread's `poll` as soon as it starts, before the store is open (see `openStoreLazily`). */
  onWorkerStart?: (poll: () => void) => void;
  /**
   * PostgreSQL only: the longest a statement may take before it fails like an outage (see
   * `PostgresStoreOptions.statementTimeoutMs`), for readers that must not hang. Default: no bound.
   */
  statementTimeoutMs?: number;
}

/** Where the writes of a store opened by {@link openStore} run: undefined when it is not a SQLite file. */
export function sqliteWriterOf(spec: string | undefined, options: OpenStoreOptions = {}): 'worker' | 'thread' | undefined {
  if (sqlitePathOf(spec, options.cwd) === undefined) return undefined;
  return writesInWorker(options) ? 'worker' : 'thread';
}

function writesInWorker(options: OpenStoreOptions): boolean {
  return options.sqliteWriter === 'worker' && options.readonly !== true && (options.sqliteWorkerUrl !== undefined || sqliteWorkerAvailable());
}

/** The forms {@link openStore} accepts, for error and help text. */
export const STORE_SPEC_FORMS =
  "a path ending in .db/.sqlite/.sqlite3, 'sqlite:PATH', ':memory:' or 'memory:', or a postgres:// / postgresql:// URL";

const SQLITE_EXTENSIONS = /\.(?:db|sqlite3?)$/i;

/** Shape check for a Store passed through untouched; adapters are not classes callers can see. */
function isStore(value: unknown): value is Store {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Store).insert === 'function' &&
    typeof (value as Store).query === 'function' &&
    typeof (value as Store).close === 'function'
  );
}

interface PostgresModule {
  createPostgresStore(options: { url: string; schema?: string; readonly?: boolean; mustExist?: boolean; statementTimeoutMs?: number }): Promise<Store> | Store;
}

// Held in a variable so that the compiler does not resolve it: the PostgreSQL adapter, and `pg`
// with it, are only loaded by users who ask for them.
const POSTGRES_MODULE = './postgres/postgres-store.js';

/**
 * Splits a `?schema=NAME` parameter off a PostgreSQL URL: a CLI user has only the URL to choose
 * a schema with, and `pg` would otherwise send the unknown parameter to the server.
 */
function postgresSchemaOf(spec: string): { url: string; schema?: string } {
  let parsed: URL;
  try {
    parsed = new URL(spec);
  } catch {
    // createPostgresStore reports unparseable URLs with its own one-line message.
    return { url: spec };
  }
  const schema = parsed.searchParams.get('schema');
  if (schema === null) return { url: spec };
  parsed.searchParams.delete('schema');
  return { url: parsed.toString(), schema };
}

async function openPostgres(spec: string, options: OpenStoreOptions): Promise<Store> {
  let mod: PostgresModule;
  try {
    mod = (await import(POSTGRES_MODULE)) as PostgresModule;
  } catch (error) {
    throw new ConfigError(`the PostgreSQL store is unavailable: ${(error as Error).message.split('\n')[0]}`, 'store', {
      cause: error,
    });
  }
  return mod.createPostgresStore({
    ...postgresSchemaOf(spec),
    ...(options.readonly === true ? { readonly: true } : {}),
    ...(options.mustExist === true ? { mustExist: true } : {}),
    ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
  });
}

/**
 * A store spec fit for a terminal: a URL's password becomes `***`, its user name stays, so a
 * command printed with it still works where the server needs no password.
 * @example displayStoreSpec('postgres://app:s3cret@db/faultline') === 'postgres://app:***@db/faultline'
 */
export function displayStoreSpec(spec: string): string {
  return maskUrlPassword(spec);
}

/**
 * The absolute SQLite file a spec names (`undefined` is the default path), or undefined when the
 * spec names another kind of store or an in-memory SQLite database. Lets callers check that a
 * file exists before opening it.
 */
export function sqlitePathOf(spec: string | undefined, cwd: string = process.cwd()): string | undefined {
  const path = sqliteSpecPath(spec);
  if (path === undefined || path === ':memory:') return undefined;
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** The path part of a SQLite spec, as written; undefined for other specs. */
function sqliteSpecPath(spec: string | undefined): string | undefined {
  if (spec === undefined) return DEFAULT_SQLITE_PATH;
  const trimmed = spec.trim();
  if (/^sqlite:/i.test(trimmed)) {
    // `sqlite://rel.db` and `sqlite:///abs.db` are common URL spellings of `sqlite:PATH`.
    const path = trimmed.slice('sqlite:'.length).replace(/^\/\//, '');
    if (path === '') throw new ConfigError(`store spec 'sqlite:' needs a path; expected ${STORE_SPEC_FORMS}`, 'store');
    return path;
  }
  if (SQLITE_EXTENSIONS.test(trimmed)) return trimmed;
  return undefined;
}

/**
 * Opens the store a spec names.
 *
 * - `undefined`: SQLite at {@link DEFAULT_SQLITE_PATH} under `cwd`;
 * - a Store: returned as is;
 * - `':memory:'` or `'memory:'`: a fresh in-memory store;
 * - `'sqlite:PATH'` (also `sqlite://PATH`), or a path ending in `.db`, `.sqlite` or `.sqlite3`: SQLite;
 * - `postgres://…` or `postgresql://…`: PostgreSQL; `?schema=NAME` selects the schema (default `faultline`).
 *
 * @throws ConfigError with a one-line message for anything else, or when the store cannot be opened.
 * @example
 * const store = await openStore(process.env.FAULTLINE_DB); // '.faultline/faultline.db' when unset
 */
export async function openStore(spec: string | Store | undefined, options: OpenStoreOptions = {}): Promise<Store> {
  if (spec !== undefined && typeof spec !== 'string') {
    if (isStore(spec)) return spec;
    throw new ConfigError(`store must be a Store object or a string: ${STORE_SPEC_FORMS}`, 'store');
  }
  const cwd = options.cwd ?? process.cwd();
  const sqlite = (path: string): Store | Promise<Store> => {
    const absolute = path === ':memory:' || isAbsolute(path) ? path : resolve(cwd, path);
    if (absolute !== ':memory:' && writesInWorker(options)) {
      const started = startSqliteWorkerStore({ path: absolute, ...(options.sqliteWorkerUrl !== undefined ? { workerUrl: options.sqliteWorkerUrl } : {}) });
      options.onWorkerStart?.(started.poll);
      return started.opened;
    }
    return createSqliteStore({ path: absolute, ...(options.readonly === undefined ? {} : { readonly: options.readonly }) });
  };

  if (spec === undefined) return sqlite(DEFAULT_SQLITE_PATH);
  const trimmed = spec.trim();
  if (trimmed === ':memory:' || trimmed === 'memory:') return createMemoryStore();
  if (/^postgres(?:ql)?:\/\//i.test(trimmed)) return openPostgres(trimmed, options);
  const path = sqliteSpecPath(trimmed);
  if (path !== undefined) return sqlite(path);
  throw new ConfigError(`unknown store ${JSON.stringify(displayStoreSpec(trimmed))}; expected ${STORE_SPEC_FORMS}`, 'store');
}

/**
 * A store that opens `spec` on first use (see `lazy-store.ts`: a store that fails to open behaves
 * like one that is down), declaring from the start what the store it opens declares: the recorder
 * reads `maxInsertsInFlight` and `batchEncoding` once, when it is created, before the open.
 */
export function openStoreLazily(spec: string, options: OpenStoreOptions = {}): Store & { opened(): Promise<Store> } {
  if (sqliteWriterOf(spec, options) !== 'worker') return lazyStore(storeKindOf(spec), () => openStore(spec, options));
  // The writer thread's replies, its ready message included, can be taken without the event loop.
  let poll: (() => void) | undefined;
  return lazyStore('sqlite', () => openStore(spec, { ...options, onWorkerStart: (p) => (poll = p) }), {
    maxInsertsInFlight: SQLITE_WRITER_IN_FLIGHT,
    batchEncoding: sqliteBatchEncoding,
    poll: () => poll?.(),
  });
}
