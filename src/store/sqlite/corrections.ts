/**
 * The correction memory in SQLite (table `corrections`, schema version 3): the SQL behind
 * `pushCorrection(s)`, `latestCorrection` and `listCorrections`, with the semantics of
 * `../corrections.ts`. `seq` (the rowid) is the push order: a new row always gets a larger one.
 */
import type Database from 'better-sqlite3';
import {
  assertCorrection,
  assertCorrections,
  CorrectionBuffer,
  correctionLimits,
  CORRECTION_COLUMNS,
  listLimit,
  recoveryKey,
  rowToCorrection,
  type CorrectionRow,
} from '../corrections.js';
import type { CorrectionEntry, CorrectionLimits, CorrectionQuery, NewCorrection } from '../../core/store-types.js';

/** Version 3 of the SQLite schema. */
export const SQLITE_CORRECTIONS_SCHEMA = `
CREATE TABLE corrections (
  seq INTEGER PRIMARY KEY,
  signature TEXT NOT NULL,
  recovery_key TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  failure_category TEXT,
  failure_type TEXT NOT NULL,
  error_code TEXT,
  recovery TEXT NOT NULL,
  trace_id TEXT,
  recovered_at TEXT NOT NULL,
  uses INTEGER NOT NULL
);
CREATE INDEX idx_corrections_signature ON corrections (signature, recovery_key);
`;

export interface SqliteCorrections {
  push(correction: NewCorrection, limits?: Partial<CorrectionLimits>): CorrectionEntry;
  /** Pushes in order in one transaction; validates every correction first. */
  pushMany(corrections: readonly NewCorrection[], limits?: Partial<CorrectionLimits>): void;
  latest(signature: string): CorrectionEntry | null;
  list(query: CorrectionQuery): CorrectionEntry[];
}

/** Statements are prepared on first use, so a database without version 3 fails only when asked for corrections. */
export function sqliteCorrections(db: Database.Database): SqliteCorrections {
  let prepared: ReturnType<typeof prepare> | undefined;
  const statements = () => (prepared ??= prepare(db));
  return {
    push(correction, limits) {
      assertCorrection(correction);
      const s = statements();
      return s.push.immediate(correction, recoveryKey(correction), correctionLimits(limits));
    },
    pushMany(corrections, limits) {
      const resolved = assertCorrections(corrections, limits);
      if (corrections.length === 0) return;
      statements().pushMany.immediate(corrections, resolved);
    },
    latest(signature) {
      const row = statements().latest.get(signature) as CorrectionRow | undefined;
      return row === undefined ? null : rowToCorrection(row);
    },
    list(query) {
      const limit = listLimit(query);
      if (limit === 0) return [];
      const s = statements();
      const rows = (query.signature === undefined ? s.list.all(limit) : s.listSignature.all(query.signature, limit)) as CorrectionRow[];
      return rows.map(rowToCorrection);
    },
  };
}

interface PushState {
  rows: number;
  seq: number;
  trimmed: Set<string>;
}

/** A batch is replayed in memory while the table holds at most this many rows (or four per correction pushed). */
const IN_MEMORY_TABLE_ROWS = 1000;

const canonicalTime = (iso: string): string => new Date(Date.parse(iso)).toISOString();

function prepare(db: Database.Database) {
  const same = db.prepare('SELECT seq, uses, trace_id FROM corrections WHERE signature = ? AND recovery_key = ?');
  const bySeq = db.prepare(`SELECT ${CORRECTION_COLUMNS} FROM corrections WHERE seq = ?`);
  // Seqs are given here, one above the largest, so that a recovery moved to the top is one UPDATE
  // of its row (the same order as deleting it and inserting it anew).
  const insert = db.prepare(
    `INSERT INTO corrections (seq, signature, recovery_key, tool_name, failure_category, failure_type, error_code, recovery, trace_id, recovered_at, uses)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const move = db.prepare(
    `UPDATE corrections SET seq = ?, tool_name = ?, failure_category = ?, failure_type = ?, error_code = ?, recovery = ?, trace_id = ?,
       recovered_at = ?, uses = ? WHERE seq = ?`,
  );
  const maxSeq = db.prepare('SELECT coalesce(max(seq), 0) FROM corrections').pluck();
  // The newest `perSignature` of a signature stay; the index on (signature, recovery_key) finds
  // its few rows.
  const trimSignature = db.prepare(
    'DELETE FROM corrections WHERE seq IN (SELECT seq FROM corrections WHERE signature = ? ORDER BY seq DESC LIMIT -1 OFFSET ?)',
  );
  const trimOldest = db.prepare('DELETE FROM corrections WHERE seq IN (SELECT seq FROM corrections ORDER BY seq LIMIT ?)');
  const countAll = db.prepare('SELECT count(*) FROM corrections').pluck();
  /**
   * One push, `recoveredAt` being the correction's time in canonical form. `table.rows` is the
   * table's row count and `table.seq` its largest seq, read once per transaction and kept up to
   * date here, so that the capacity check costs nothing until rows must go: trimming to capacity
   * with a subquery over the whole table on every push was most of the cost of a batch.
   * `table.trimmed`: the signatures already trimmed to their cap in this transaction.
   */
  const pushOne = (c: NewCorrection, recoveredAt: string, key: string, limits: CorrectionLimits, table: PushState): CorrectionEntry => {
    const found = same.get(c.signature, key) as { seq: number; uses: number; trace_id: string | null } | undefined;
    if (found !== undefined && found.trace_id !== null && found.trace_id === c.trace_id) {
      return rowToCorrection(bySeq.get(found.seq) as CorrectionRow);
    }
    const uses = (found?.uses ?? 0) + 1;
    const recovery = JSON.stringify(c.recovery);
    table.seq += 1;
    if (found !== undefined) {
      move.run(table.seq, c.tool_name, c.failure_category, c.failure_type, c.error_code, recovery, c.trace_id, recoveredAt, uses, found.seq);
    } else {
      insert.run(table.seq, c.signature, key, c.tool_name, c.failure_category, c.failure_type, c.error_code, recovery, c.trace_id, recoveredAt, uses);
      table.rows += 1;
    }
    // A signature trimmed earlier in this transaction (same limits) holds at most its cap; a
    // recovery moved to the top kept its own row, so only a new row can take it over again.
    if (found === undefined || !table.trimmed.has(c.signature)) {
      table.rows -= trimSignature.run(c.signature, limits.perSignature).changes;
      table.trimmed.add(c.signature);
    }
    if (table.rows > limits.capacity) table.rows -= trimOldest.run(table.rows - limits.capacity).changes;
    return {
      signature: c.signature,
      tool_name: c.tool_name,
      failure_category: c.failure_category,
      failure_type: c.failure_type,
      error_code: c.error_code,
      recovery: JSON.parse(recovery) as CorrectionEntry['recovery'],
      trace_id: c.trace_id,
      recovered_at: recoveredAt,
      uses,
    };
  };
  const state = (): PushState => ({ rows: countAll.get() as number, seq: maxSeq.get() as number, trimmed: new Set() });
  const push = db.transaction((c: NewCorrection, key: string, limits: CorrectionLimits) => pushOne(c, canonicalTime(c.recovered_at), key, limits, state()));
  const all = db.prepare(`SELECT seq, recovery_key, ${CORRECTION_COLUMNS} FROM corrections ORDER BY seq`);
  const deleteSeq = db.prepare('DELETE FROM corrections WHERE seq = ?');
  /**
   * A batch replayed in memory: the table (a few rows, bounded by the capacity) is read into the
   * runtime's own LIFO buffer, which applies the same rules push by push (the contract suite checks
   * both agree), and only the net change is written: rows gone are deleted, rows new or moved to
   * the top are inserted under the seq the one-by-one run would have given them. A runtime learns
   * thousands of corrections a second under a failing tool, nearly all of them moving the same
   * few rows, so this turns four or five statements per correction into a few per batch.
   */
  const pushBatch = (list: readonly NewCorrection[], limits: CorrectionLimits): void => {
    const buffer = new CorrectionBuffer(limits);
    const before = new Set<number>();
    for (const row of all.all() as (CorrectionRow & { seq: number; recovery_key: string })[]) {
      buffer.restore(row.seq, rowToCorrection(row), row.recovery_key);
      before.add(row.seq);
    }
    for (const c of list) buffer.add(Object.assign({}, c, { recovered_at: canonicalTime(c.recovered_at) }), limits);
    const after = new Set<number>();
    for (const slot of buffer.slots()) {
      after.add(slot.seq);
      if (before.has(slot.seq)) continue;
      const e = slot.entry;
      insert.run(slot.seq, e.signature, slot.key, e.tool_name, e.failure_category, e.failure_type, e.error_code, JSON.stringify(e.recovery), e.trace_id, e.recovered_at, e.uses);
    }
    for (const seq of before) if (!after.has(seq)) deleteSeq.run(seq);
  };
  const pushMany = db.transaction((list: readonly NewCorrection[], limits: CorrectionLimits): void => {
    const rows = countAll.get() as number;
    // Replaying in memory reads the whole table, which pays once the batch is not much smaller
    // than the table (the capacity is 100 by default).
    if (rows <= Math.max(IN_MEMORY_TABLE_ROWS, 4 * list.length)) return pushBatch(list, limits);
    const table: PushState = { rows, seq: maxSeq.get() as number, trimmed: new Set() };
    // Nothing is returned, so the corrections are read as they are: no copy per correction.
    for (const c of list) pushOne(c, canonicalTime(c.recovered_at), recoveryKey(c), limits, table);
  });
  return {
    push,
    pushMany,
    latest: db.prepare(`SELECT ${CORRECTION_COLUMNS} FROM corrections WHERE signature = ? ORDER BY seq DESC LIMIT 1`),
    list: db.prepare(`SELECT ${CORRECTION_COLUMNS} FROM corrections ORDER BY seq DESC LIMIT ?`),
    listSignature: db.prepare(`SELECT ${CORRECTION_COLUMNS} FROM corrections WHERE signature = ? ORDER BY seq DESC LIMIT ?`),
  };
}
