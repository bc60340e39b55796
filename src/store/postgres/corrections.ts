/**
 * The correction memory in PostgreSQL (table `corrections`, schema version 3): the SQL behind
 * `pushCorrection(s)`, `latestCorrection` and `listCorrections`, with the semantics of
 * `../corrections.ts`. `seq` (bigserial) is the push order. Pushes from many processes serialize
 * on a transaction-scoped advisory lock, so "move the same recovery to the top" cannot race.
 */
import type pg from 'pg';
import {
  assertCorrections,
  CORRECTION_COLUMNS,
  listLimit,
  normalizedCorrection,
  recoveryKey,
  rowToCorrection,
  type CorrectionRow,
} from '../corrections.js';
import type { CorrectionEntry, CorrectionLimits, CorrectionQuery, NewCorrection } from '../../core/store-types.js';

/** Version 3 of the PostgreSQL schema; `s` is the quoted schema name. */
export const postgresCorrectionsSchema = (s: string): string => `
  CREATE TABLE ${s}.corrections (
    seq bigserial PRIMARY KEY,
    signature text NOT NULL,
    recovery_key text NOT NULL,
    tool_name text NOT NULL,
    failure_category text,
    failure_type text NOT NULL,
    error_code text,
    recovery jsonb NOT NULL,
    trace_id text,
    recovered_at timestamptz NOT NULL,
    uses integer NOT NULL
  );
  CREATE INDEX idx_corrections_signature ON ${s}.corrections (signature, recovery_key);
`;

/**
 * Pushes the corrections in order inside one transaction on `client` (checked out by the caller,
 * who handles failures), taking the advisory lock once; returns each entry as stored.
 */
export async function pushPostgresCorrections(
  client: pg.ClientBase,
  schema: string,
  corrections: readonly NewCorrection[],
  limits?: Partial<CorrectionLimits>,
): Promise<CorrectionEntry[]> {
  const resolved = assertCorrections(corrections, limits);
  if (corrections.length === 0) return [];
  const normalized = corrections.map(normalizedCorrection);
  await client.query('BEGIN');
  try {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('faultline.corrections'), hashtext($1))`, [schema]);
    const entries: CorrectionEntry[] = [];
    for (const c of normalized) entries.push(await pushOne(client, schema, c, resolved));
    await client.query('COMMIT');
    return entries;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** One push, inside the caller's transaction (which holds the advisory lock). */
async function pushOne(client: pg.ClientBase, schema: string, c: NewCorrection, { capacity, perSignature }: CorrectionLimits): Promise<CorrectionEntry> {
  const key = recoveryKey(c);
  const found = await client.query<CorrectionRow & { seq: string }>(
    `SELECT seq, ${CORRECTION_COLUMNS} FROM ${schema}.corrections WHERE signature = $1 AND recovery_key = $2`,
    [c.signature, key],
  );
  const same = found.rows[0];
  if (same !== undefined && same.trace_id !== null && same.trace_id === c.trace_id) return rowToCorrection(same);
  if (same !== undefined) await client.query(`DELETE FROM ${schema}.corrections WHERE seq = $1`, [same.seq]);
  const entry = { ...c, uses: (same === undefined ? 0 : Number(same.uses)) + 1 };
  await client.query(
    `INSERT INTO ${schema}.corrections
       (signature, recovery_key, tool_name, failure_category, failure_type, error_code, recovery, trace_id, recovered_at, uses)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9::timestamptz, $10)`,
    [c.signature, key, c.tool_name, c.failure_category, c.failure_type, c.error_code, JSON.stringify(c.recovery), c.trace_id, c.recovered_at, entry.uses],
  );
  await client.query(
    `DELETE FROM ${schema}.corrections WHERE signature = $1 AND seq NOT IN
       (SELECT seq FROM ${schema}.corrections WHERE signature = $1 ORDER BY seq DESC LIMIT $2)`,
    [c.signature, perSignature],
  );
  await client.query(
    `DELETE FROM ${schema}.corrections WHERE seq NOT IN (SELECT seq FROM ${schema}.corrections ORDER BY seq DESC LIMIT $1)`,
    [capacity],
  );
  return entry;
}

/** Newest first; `query.signature` narrows to one signature. */
export async function listPostgresCorrections(pool: pg.Pool, schema: string, query: CorrectionQuery): Promise<CorrectionEntry[]> {
  const limit = listLimit(query);
  if (limit === 0) return [];
  const result =
    query.signature === undefined
      ? await pool.query<CorrectionRow>(`SELECT ${CORRECTION_COLUMNS} FROM ${schema}.corrections ORDER BY seq DESC LIMIT $1`, [limit])
      : await pool.query<CorrectionRow>(
          `SELECT ${CORRECTION_COLUMNS} FROM ${schema}.corrections WHERE signature = $1 ORDER BY seq DESC LIMIT $2`,
          [query.signature, limit],
        );
  return result.rows.map(rowToCorrection);
}
