/**
 * Writes `tool_executions` rows, several per statement, and tells which of them were new.
 *
 * Why several per statement: in better-sqlite3 a statement call costs about as much in the binding
 * (each array element read through V8's API, the result object built) as SQLite spends inserting
 * the row and its five index entries. Eight rows per call, the values spread as arguments, cost
 * the least per row; a bigger statement binds slower (figures: perf/RESULTS.md).
 *
 * Inserts skip a row whose `execution_id` is already stored (a spooled batch replayed, a repeated
 * id) with `ON CONFLICT (execution_id) DO NOTHING`, and only the rows really written may reach the
 * rollups. Not `OR IGNORE`, which would also drop a row that breaks any other constraint (a NULL
 * in a NOT NULL column) without a word. A
 * multi-row statement reports only how many rows it wrote. When that is all of them (the normal
 * case) nothing more is asked; otherwise the new rows are the statement's last `changes` rowids
 * (SQLite gives each new row the next rowid after the largest, in statement order), read back by
 * rowid range. The count read back is checked against `changes`, so a table whose rowids are not handed
 * out that way (a rowid at the 64-bit maximum makes SQLite pick random ones) fails loudly instead
 * of miscounting.
 */
import type Database from 'better-sqlite3';
import { RECORD_COLUMNS, type SqliteValue } from './record-row.js';

/** Rows per multi-row INSERT (see the module comment for the measurements). */
export const ROWS_PER_STATEMENT = 8;

export interface RowWriter {
  /**
   * Inserts `rows` ({@link RECORD_COLUMNS} order) and calls `written(i)`, in order, for each row
   * stored: not for a row whose id was stored before or came earlier in `rows` (the first copy
   * wins). Run it inside a transaction.
   * @throws RangeError for a row of the wrong width (nothing of that statement's rows is written).
   */
  write(rows: readonly (readonly SqliteValue[])[], written: (index: number) => void): void;
}

export function createRowWriter(db: Database.Database): RowWriter {
  const width = RECORD_COLUMNS.length;
  const tuple = `(${RECORD_COLUMNS.map(() => '?').join(', ')})`;
  const head = `INSERT INTO tool_executions (${RECORD_COLUMNS.join(', ')}) VALUES `;
  const tail = ' ON CONFLICT (execution_id) DO NOTHING';
  const one = db.prepare(head + tuple + tail);
  const many = db.prepare(head + Array.from({ length: ROWS_PER_STATEMENT }, () => tuple).join(', ') + tail);
  const idsBetween = db.prepare('SELECT execution_id FROM tool_executions WHERE rowid > ? AND rowid <= ?').pluck();
  // Binding copies the values, so one parameter array serves every statement.
  const params = new Array<SqliteValue>(ROWS_PER_STATEMENT * width).fill(null);

  const checkWidth = (row: readonly SqliteValue[], index: number): void => {
    if (row.length !== width) throw new RangeError(`row ${index} has ${row.length} parameter values, a tool_executions row takes ${width}`);
  };

  /** Reports the rows of `rows[from, from + ROWS_PER_STATEMENT)` that the statement wrote. */
  const reportPartial = (rows: readonly (readonly SqliteValue[])[], from: number, changes: number, lastRowid: number, written: (index: number) => void): void => {
    const ids = idsBetween.all(lastRowid - changes, lastRowid) as string[];
    if (ids.length !== changes) {
      throw new Error(
        `tool_executions rowids are not in insertion order (${changes} rows written, ${ids.length} found in rowids ${lastRowid - changes + 1}-${lastRowid})`,
      );
    }
    const fresh = new Set(ids);
    for (let j = from; j < from + ROWS_PER_STATEMENT; j++) {
      // `delete` is true once per id: a second copy in the same statement is the ignored one.
      if (fresh.delete(rows[j]![0] as string)) written(j);
    }
  };

  return {
    write(rows, written) {
      let i = 0;
      for (; i + ROWS_PER_STATEMENT <= rows.length; i += ROWS_PER_STATEMENT) {
        let p = 0;
        for (let j = i; j < i + ROWS_PER_STATEMENT; j++) {
          const row = rows[j]!;
          checkWidth(row, j);
          for (let c = 0; c < width; c++) params[p++] = row[c]!;
        }
        // Spread, not an array: the binding then reads its arguments directly instead of asking
        // V8 for each element (a fifth of the call's cost).
        const info = many.run(...params);
        if (info.changes === ROWS_PER_STATEMENT) {
          for (let j = i; j < i + ROWS_PER_STATEMENT; j++) written(j);
        } else if (info.changes > 0) {
          reportPartial(rows, i, info.changes, Number(info.lastInsertRowid), written);
        }
      }
      for (; i < rows.length; i++) {
        const row = rows[i]!;
        checkWidth(row, i);
        if (one.run(...row).changes === 1) written(i);
      }
    },
  };
}
