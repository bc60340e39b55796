/**
 * The multi-row writer against the plain reading of its insert (a stored execution_id is skipped): a row is stored and counted
 * only if its id was neither stored before nor earlier in the batch. Batches are random mixes of
 * fresh ids, ids already stored and ids repeated inside one statement's rows or across them.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { contractDataset } from '../contracts/contract-data.test-helpers.js';
import { migrate } from './migrations.js';
import { recordParams, type SqliteValue } from './record-row.js';
import { createRowWriter, ROWS_PER_STATEMENT } from './row-writer.js';
import { createdAtMs } from '../rollup.js';
import { seededRandom } from '../../core/seeded-random.js';

function freshDb(): Database.Database {
  const db = new Database(':memory:');
  migrate(db, ':memory:');
  return db;
}

const rowsOf = (records: ReturnType<typeof contractDataset>): SqliteValue[][] => records.map((r) => recordParams(r, createdAtMs(r)));

describe('row writer', () => {
  it('stores and reports exactly the first copy of each id not stored before, over random batches', () => {
    const random = seededRandom(7);
    const pool = rowsOf(contractDataset(400));
    const db = freshDb();
    const writer = createRowWriter(db);
    const stored = new Map<string, SqliteValue[]>();
    for (let batch = 0; batch < 60; batch++) {
      const size = Math.floor(random() * 3 * ROWS_PER_STATEMENT) + 1;
      const rows: SqliteValue[][] = [];
      for (let i = 0; i < size; i++) {
        const pick = random();
        // A repeat of a row earlier in this batch, with another status (the first copy must win).
        if (pick < 0.15 && rows.length > 0) rows.push([...rows[Math.floor(random() * rows.length)]!].fill('failure', 4, 5));
        else rows.push(pool[Math.floor(random() * pool.length)]!);
      }
      const expected: number[] = [];
      const seen = new Set<string>();
      rows.forEach((row, i) => {
        const id = row[0] as string;
        if (!stored.has(id) && !seen.has(id)) expected.push(i);
        seen.add(id);
      });
      const reported: number[] = [];
      db.transaction(() => writer.write(rows, (i) => reported.push(i)))();
      expect(reported).toEqual(expected);
      for (const i of expected) stored.set(rows[i]![0] as string, rows[i]!);
    }
    expect(stored.size).toBeGreaterThan(100);
    const byId = new Map(
      (db.prepare('SELECT execution_id, status FROM tool_executions').all() as { execution_id: string; status: string }[]).map((r) => [r.execution_id, r.status]),
    );
    expect(byId.size).toBe(stored.size);
    for (const [id, row] of stored) expect(byId.get(id)).toBe(row[4]);
  });

  it('refuses a row of the wrong width, in a full statement and in the remainder, writing none of that statement', () => {
    const rows = rowsOf(contractDataset(ROWS_PER_STATEMENT + 2));
    const db = freshDb();
    const writer = createRowWriter(db);
    const short = rows.map((r, i) => (i === 3 ? r.slice(1) : r));
    expect(() => writer.write(short, () => undefined)).toThrow(/row 3 has 28 parameter values/);
    const tail = rows.map((r, i) => (i === ROWS_PER_STATEMENT + 1 ? [...r, 'extra'] : r));
    expect(() => db.transaction(() => writer.write(tail, () => undefined))()).toThrow(/row 9 has 30 parameter values/);
    expect(db.prepare('SELECT count(*) FROM tool_executions').pluck().get()).toBe(0);
  });

  it('skips only a stored execution_id: a row that breaks another constraint fails its statement, in a full one and in the remainder', () => {
    const rows = rowsOf(contractDataset(ROWS_PER_STATEMENT + 2));
    const db = freshDb();
    const writer = createRowWriter(db);
    db.transaction(() => writer.write(rows.slice(0, 1), () => undefined))();
    for (const at of [3, ROWS_PER_STATEMENT + 1]) {
      // A NaN duration binds as NULL; OR IGNORE used to drop such a row without a word.
      const broken = rows.map((r, i) => (i === at ? r.map((v, c) => (c === 15 ? Number.NaN : v)) : r));
      expect(() => db.transaction(() => writer.write(broken, () => undefined))()).toThrow(/NOT NULL constraint failed: tool_executions\.duration_ms/);
      expect(db.prepare('SELECT count(*) FROM tool_executions').pluck().get()).toBe(1);
    }
    const reported: number[] = [];
    db.transaction(() => writer.write(rows, (i) => reported.push(i)))();
    expect(reported).toEqual(rows.map((_, i) => i).slice(1));
  });

  it('fails loudly, instead of miscounting, when SQLite no longer hands out rowids in order', () => {
    const rows = rowsOf(contractDataset(2 * ROWS_PER_STATEMENT));
    const db = freshDb();
    const writer = createRowWriter(db);
    db.transaction(() => writer.write(rows.slice(0, 1), () => undefined))();
    // A row at the largest rowid makes SQLite choose random rowids for the rows after it.
    db.prepare('UPDATE tool_executions SET rowid = 9223372036854775807').run();
    const batch = [rows[0]!, ...rows.slice(ROWS_PER_STATEMENT + 1)];
    expect(() => db.transaction(() => writer.write(batch, () => undefined))()).toThrow(/rowids are not in insertion order/);
    expect(db.prepare('SELECT count(*) FROM tool_executions').pluck().get()).toBe(1);
  });
});
