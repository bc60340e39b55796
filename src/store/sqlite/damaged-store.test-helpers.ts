/**
 * A SQLite store file that opens (its schema and schema_migrations are intact) but whose other
 * tables and indexes are damaged, as a bad disk or a copy cut short leaves one: reads and writes of them fail
 * with SQLITE_CORRUPT.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createSqliteStore } from './sqlite-store.js';

/** `only`: damage just these tables and indexes (by name), so that some writes still succeed. */
export async function writeDamagedStore(path: string, records: readonly ToolExecutionRecord[], only?: readonly string[]): Promise<string> {
  const store = createSqliteStore({ path });
  await store.insert(records);
  await store.close();
  const db = new Database(path);
  // Folded into the main file, so that the bytes overwritten below are the ones SQLite reads.
  db.pragma('journal_mode = DELETE');
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const roots = db
    .prepare(`SELECT name, rootpage FROM sqlite_master WHERE tbl_name != 'schema_migrations' AND rootpage > 1`)
    .all()
    .filter((row) => only === undefined || only.includes((row as { name: string }).name)) as { rootpage: number }[];
  db.close();
  const fd = openSync(path, 'r+');
  try {
    // 0xFF is no b-tree page type.
    for (const { rootpage } of roots) writeSync(fd, Buffer.alloc(64, 0xff), 0, 64, (rootpage - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
  return path;
}
