/**
 * Applies a {@link RollupDelta} to the PostgreSQL rollup tables: one `INSERT ... SELECT FROM
 * unnest(...) ON CONFLICT DO UPDATE` per table that adds the delta's counts to the stored ones.
 */
import type pg from 'pg';
import { compareText, ROLLUP_COUNTER_FIELDS, type RollupDelta } from '../rollup.js';
import { storableText } from './record-row.js';

interface UpsertColumn<Row> {
  name: string;
  sqlType: 'text' | 'bigint' | 'integer' | 'double precision';
  value(row: Row): unknown;
  /** How the stored value `t.<name>` combines with the incoming `EXCLUDED.<name>`; absent for keys. */
  merge?: string;
}

interface UpsertPlan<Row> {
  table: string;
  key: readonly string[];
  columns: readonly UpsertColumn<Row>[];
  /** Rows are locked in this order; every writer using the same order cannot deadlock on them. */
  compare(a: Row, b: Row): number;
}

const add = (name: string) => `t.${name} + EXCLUDED.${name}`;

type Hourly = RollupDelta['hourly'][number];
type Duration = RollupDelta['durations'][number];
type Failure = RollupDelta['failures'][number];
type Signature = RollupDelta['signatures'][number];

const HOURLY: UpsertPlan<Hourly> = {
  table: 'rollup_hourly',
  key: ['hour_ms', 'tool_name'],
  columns: [
    { name: 'tool_name', sqlType: 'text', value: (r) => r.tool_name },
    { name: 'hour_ms', sqlType: 'bigint', value: (r) => r.hour_ms },
    ...ROLLUP_COUNTER_FIELDS.map(
      (field): UpsertColumn<Hourly> => ({
        name: field,
        sqlType: field === 'duration_sum' ? 'double precision' : 'bigint',
        value: (r) => r[field],
        merge: add(field),
      }),
    ),
  ],
  compare: (a, b) => a.hour_ms - b.hour_ms || compareText(a.tool_name, b.tool_name),
};

const DURATIONS: UpsertPlan<Duration> = {
  table: 'rollup_duration',
  key: ['hour_ms', 'tool_name', 'bucket'],
  columns: [
    { name: 'tool_name', sqlType: 'text', value: (r) => r.tool_name },
    { name: 'hour_ms', sqlType: 'bigint', value: (r) => r.hour_ms },
    { name: 'bucket', sqlType: 'integer', value: (r) => r.bucket },
    { name: 'count', sqlType: 'bigint', value: (r) => r.count, merge: add('count') },
  ],
  compare: (a, b) => a.hour_ms - b.hour_ms || compareText(a.tool_name, b.tool_name) || a.bucket - b.bucket,
};

const FAILURES: UpsertPlan<Failure> = {
  table: 'rollup_failures',
  key: ['hour_ms', 'tool_name', 'failure_stage', 'failure_category', 'failure_type'],
  columns: [
    { name: 'tool_name', sqlType: 'text', value: (r) => r.tool_name },
    { name: 'hour_ms', sqlType: 'bigint', value: (r) => r.hour_ms },
    { name: 'failure_stage', sqlType: 'text', value: (r) => r.failure_stage },
    { name: 'failure_category', sqlType: 'text', value: (r) => r.failure_category },
    { name: 'failure_type', sqlType: 'text', value: (r) => r.failure_type },
    { name: 'count', sqlType: 'bigint', value: (r) => r.count, merge: add('count') },
  ],
  compare: (a, b) =>
    a.hour_ms - b.hour_ms ||
    compareText(a.tool_name, b.tool_name) ||
    compareText(a.failure_stage, b.failure_stage) ||
    compareText(a.failure_category, b.failure_category) ||
    compareText(a.failure_type, b.failure_type),
};

const SIGNATURES: UpsertPlan<Signature> = {
  table: 'failure_signatures',
  key: ['signature'],
  columns: [
    { name: 'signature', sqlType: 'text', value: (r) => r.signature },
    { name: 'tool_name', sqlType: 'text', value: (r) => r.tool_name },
    { name: 'failure_stage', sqlType: 'text', value: (r) => r.failure_stage },
    { name: 'failure_type', sqlType: 'text', value: (r) => r.failure_type },
    { name: 'error_code', sqlType: 'text', value: (r) => r.error_code },
    { name: 'normalized_message', sqlType: 'text', value: (r) => r.normalized_message },
    { name: 'first_seen_ms', sqlType: 'bigint', value: (r) => r.first_seen_ms, merge: 'LEAST(t.first_seen_ms, EXCLUDED.first_seen_ms)' },
    { name: 'last_seen_ms', sqlType: 'bigint', value: (r) => r.last_seen_ms, merge: 'GREATEST(t.last_seen_ms, EXCLUDED.last_seen_ms)' },
    { name: 'count', sqlType: 'bigint', value: (r) => r.count, merge: add('count') },
  ],
  compare: (a, b) => compareText(a.signature, b.signature),
};

function upsertSql<Row>(schema: string, plan: UpsertPlan<Row>): string {
  const names = plan.columns.map((c) => c.name).join(', ');
  const arrays = plan.columns.map((c, i) => `$${i + 1}::${c.sqlType}[]`).join(', ');
  const updates = plan.columns
    .filter((c) => c.merge !== undefined)
    .map((c) => `${c.name} = ${c.merge}`)
    .join(', ');
  return (
    `INSERT INTO ${schema}.${plan.table} AS t (${names}) SELECT * FROM unnest(${arrays}) ` +
    `ON CONFLICT (${plan.key.join(', ')}) DO UPDATE SET ${updates}`
  );
}

function upsertParams<Row>(plan: UpsertPlan<Row>, rows: readonly Row[]): unknown[][] {
  const sorted = [...rows].sort(plan.compare);
  return plan.columns.map((c) => {
    if (c.sqlType !== 'text') return sorted.map((row) => c.value(row));
    // Normalized messages keep whatever the raw message held, NUL included.
    return sorted.map((row) => storableText(c.value(row) as string | null));
  });
}

/** Prepared SQL for one schema: the statements are built once per store, not per insert. */
export interface RollupWriter {
  apply(client: pg.ClientBase, delta: RollupDelta): Promise<void>;
}

/**
 * A writer that adds deltas to the rollup tables of `schema` (already quoted). Call it inside the
 * transaction that inserted the records the delta was computed from.
 */
export function createRollupWriter(schema: string): RollupWriter {
  const hourly = upsertSql(schema, HOURLY);
  const durations = upsertSql(schema, DURATIONS);
  const failures = upsertSql(schema, FAILURES);
  const signatures = upsertSql(schema, SIGNATURES);
  return {
    async apply(client, delta) {
      // Fixed table order for the same reason rows are sorted: concurrent writers lock alike.
      if (delta.hourly.length > 0) await client.query(hourly, upsertParams(HOURLY, delta.hourly));
      if (delta.durations.length > 0) await client.query(durations, upsertParams(DURATIONS, delta.durations));
      if (delta.failures.length > 0) await client.query(failures, upsertParams(FAILURES, delta.failures));
      if (delta.signatures.length > 0) await client.query(signatures, upsertParams(SIGNATURES, delta.signatures));
    },
  };
}
