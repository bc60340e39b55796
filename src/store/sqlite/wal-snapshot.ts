/**
 * Reading a WAL-mode store in a directory faultline cannot write (a read-only mount, a read-only
 * copy). SQLite opens a WAL database through its `-shm` file, which it must create beside the
 * database when no writer has one open; in a read-only directory it cannot, and even a read-only
 * open fails ("unable to open database file"). SQLite's own answer is the `immutable=1` URI
 * parameter, but better-sqlite3 is built without URI filenames (`SQLITE_USE_URI=0`, and it does not
 * pass `SQLITE_OPEN_URI`). So the reporting commands read a copy of the file in memory instead,
 * which, like `immutable=1`, is the store as it was when copied; the store copies it again (or
 * opens it where it lies, once a writer elsewhere made its -shm) when {@link walSnapshotSource}
 * says the file changed, so that a long reader (`faultline tail`) sees what is added.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConfigError } from '../../core/errors.js';

/** Beyond this, a copy in memory costs too much; the user is asked to copy the file instead. */
export const WAL_SNAPSHOT_MAX_BYTES = 512 * 1024 * 1024;

/** Bytes 18 and 19 of the database header: the file format versions, 2 for WAL, 1 for legacy. */
const FORMAT_VERSION_OFFSET = 18;
const WAL_FORMAT = 2;
const LEGACY_FORMAT = 1;

function isWalFile(path: string): boolean {
  const header = Buffer.alloc(FORMAT_VERSION_OFFSET + 2);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    return readSync(fd, header, 0, header.length, 0) === header.length && header[FORMAT_VERSION_OFFSET] === WAL_FORMAT;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isWritableDirectory(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a read-only open of `path` failed with `error` only because it is a WAL database whose
 * `-shm` file is missing and cannot be created.
 */
export function failedForWantOfShm(path: string, error: unknown): boolean {
  if ((error as { code?: unknown } | null)?.code !== 'SQLITE_CANTOPEN') return false;
  return isWalFile(path) && !existsSync(`${path}-shm`) && !isWritableDirectory(dirname(path));
}

/**
 * The bytes of `path` as a database SQLite can open from memory (its header set back to the
 * legacy format, which a deserialized database needs).
 * @throws ConfigError when the file is too large to copy into memory, or has a write-ahead log
 * whose transactions a copy of the main file would miss.
 */
export function readWalSnapshot(path: string): Buffer {
  const location = JSON.stringify(path);
  const wal = statSync(`${path}-wal`, { throwIfNoEntry: false });
  if (wal !== undefined && wal.size > 0) {
    throw new ConfigError(
      `cannot read SQLite store ${location}: its directory is read-only and its write-ahead log (-wal) cannot be read without a -shm file there; copy the .db and -wal files to a writable directory and point --db at the copy`,
      'store',
    );
  }
  const size = statSync(path).size;
  if (size > WAL_SNAPSHOT_MAX_BYTES) {
    throw new ConfigError(
      `cannot read SQLite store ${location}: its directory is read-only, so SQLite cannot create its -shm file, and at ${Math.round(size / 1024 / 1024)} MiB it is too large to read into memory instead; copy it to a writable directory and point --db at the copy`,
      'store',
    );
  }
  const bytes = readFileSync(path);
  bytes[FORMAT_VERSION_OFFSET] = LEGACY_FORMAT;
  bytes[FORMAT_VERSION_OFFSET + 1] = LEGACY_FORMAT;
  return bytes;
}

/**
 * What a copy of `path` is taken from, as a value that changes when the file does: its identity,
 * size and modification time, its -wal's, and whether a -shm is there (a writer has it open).
 * Undefined while no file is at `path`.
 */
export function walSnapshotSource(path: string): string | undefined {
  const db = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (db === undefined) return undefined;
  const wal = statSync(`${path}-wal`, { bigint: true, throwIfNoEntry: false });
  return [db.dev, db.ino, db.size, db.mtimeNs, wal?.size, wal?.mtimeNs, existsSync(`${path}-shm`)].join(':');
}
