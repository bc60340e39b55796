/**
 * How a ToolExecutionRecord maps onto the `tool_executions` table and back: the column list with
 * SQL types (for `unnest` inserts), parameter encoding, and row decoding.
 */
import pg from 'pg';
import type { ToolExecutionRecord } from '../../core/record-types.js';

type ColumnName = keyof ToolExecutionRecord;

interface Column {
  name: ColumnName;
  /** The element type of the array parameter that carries this column in a batch insert. */
  sqlType: 'uuid' | 'text' | 'integer' | 'double precision' | 'boolean' | 'json' | 'jsonb' | 'timestamptz';
}

/** Every record field, in table order. A record field missing here would silently not be stored. */
export const RECORD_COLUMNS: readonly Column[] = [
  { name: 'execution_id', sqlType: 'uuid' },
  { name: 'trace_id', sqlType: 'text' },
  { name: 'step_index', sqlType: 'integer' },
  { name: 'tool_name', sqlType: 'text' },
  { name: 'status', sqlType: 'text' },
  { name: 'failure_stage', sqlType: 'text' },
  { name: 'failure_category', sqlType: 'text' },
  { name: 'failure_type', sqlType: 'text' },
  { name: 'error_code', sqlType: 'text' },
  // Sent as json: the text is kept in `input_params_json` (key order as the model wrote it) and
  // cast to jsonb for `input_params`, which the GIN index serves (see INSERT_RECORD_SELECT).
  { name: 'input_params', sqlType: 'json' },
  { name: 'params_hash', sqlType: 'text' },
  { name: 'raw_output', sqlType: 'text' },
  { name: 'output_length', sqlType: 'integer' },
  { name: 'error_message', sqlType: 'text' },
  { name: 'error_stack', sqlType: 'text' },
  { name: 'duration_ms', sqlType: 'double precision' },
  { name: 'retry_count', sqlType: 'integer' },
  { name: 'attempts', sqlType: 'jsonb' },
  { name: 'breaker_state', sqlType: 'text' },
  { name: 'idempotent', sqlType: 'boolean' },
  { name: 'fault', sqlType: 'jsonb' },
  { name: 'feedback', sqlType: 'jsonb' },
  { name: 'recovery', sqlType: 'text' },
  { name: 'fallback', sqlType: 'jsonb' },
  { name: 'context_snapshot', sqlType: 'jsonb' },
  { name: 'created_at', sqlType: 'timestamptz' },
  { name: 'schema_version', sqlType: 'integer' },
  { name: 'summary_only', sqlType: 'boolean' },
];

/** `execution_id, trace_id, ...`: the record's columns, in table order. */
const RECORD_COLUMN_LIST = RECORD_COLUMNS.map((c) => c.name).join(', ');

/**
 * The columns an insert writes: every record column, then `input_params_json` (version 4). jsonb
 * stores an object's keys sorted (shortest first), so `input_params` alone would hand exports and
 * trajectories the model's arguments in another order than SQLite and the memory store do; the
 * json copy keeps the text as recorded.
 */
export const INSERT_RECORD_COLUMNS = `${RECORD_COLUMN_LIST}, input_params_json`;

/** The SELECT list for {@link INSERT_RECORD_COLUMNS}, over `unnest(...) AS u(<record columns>)`. */
const INSERT_RECORD_SELECT = [
  ...RECORD_COLUMNS.map((c) => (c.name === 'input_params' ? 'u.input_params::jsonb' : `u.${c.name}`)),
  'u.input_params',
].join(', ');

/**
 * A record's columns for SELECT, decoded by {@link rowToRecord}. Rows stored before version 4 have
 * no json copy and come back in jsonb's key order.
 */
export const RECORD_SELECT_LIST = RECORD_COLUMNS.map((c) =>
  c.name === 'input_params' ? 'COALESCE(input_params_json, input_params::json) AS input_params' : c.name,
).join(', ');

// PostgreSQL text cannot hold NUL, and jsonb rejects `\u0000` and unpaired surrogate escapes.
// Rejecting the batch instead would make the recorder retry it forever, so those characters
// become U+FFFD: the only lossy step in the round trip.
const NUL = /\u0000/g;
const JSON_UNSTORABLE_ESCAPE = /\\\\|\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

/** `value` with NUL characters replaced by U+FFFD, which PostgreSQL text can hold. */
export function storableText(value: string | null): string | null {
  if (value === null || !value.includes('\u0000')) return value;
  return value.replace(NUL, '\ufffd');
}

function storableJson(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = JSON.stringify(value);
  // JSON.stringify escapes NUL and lone surrogates as \uXXXX and emits paired surrogates raw,
  // so any surrogate escape left in its output is unpaired. `\\\\` is matched first so that an
  // escaped backslash followed by a literal "u0000" is left alone.
  if (text === undefined || !text.includes('\\u')) return text ?? null;
  return text.replace(JSON_UNSTORABLE_ESCAPE, (match) => (match === '\\\\' ? match : '\\ufffd'));
}

function parameterValue(record: ToolExecutionRecord, column: Column): unknown {
  const value = record[column.name];
  switch (column.sqlType) {
    case 'json':
    case 'jsonb':
      return storableJson(value);
    case 'text':
      return storableText(value as string | null);
    default:
      return value;
  }
}

/**
 * One array per column, ready for `INSERT ... SELECT * FROM unnest($1::uuid[], ...)`: the
 * statement has as many parameters as the table has columns, whatever the batch size.
 */
export function columnArrays(records: readonly ToolExecutionRecord[]): unknown[][] {
  const arrays = RECORD_COLUMNS.map(() => new Array<unknown>(records.length));
  for (let row = 0; row < records.length; row++) {
    const record = records[row] as ToolExecutionRecord;
    for (let col = 0; col < RECORD_COLUMNS.length; col++) {
      (arrays[col] as unknown[])[row] = parameterValue(record, RECORD_COLUMNS[col] as Column);
    }
  }
  return arrays;
}

/**
 * `SELECT ... FROM unnest($1::uuid[], $2::text[], ...) AS u(...)`, numbering parameters from 1:
 * the rows of `INSERT INTO tool_executions (INSERT_RECORD_COLUMNS)`, one array per record column.
 */
export const INSERT_RECORD_ROWS =
  `SELECT ${INSERT_RECORD_SELECT} FROM unnest(${RECORD_COLUMNS.map((c, i) => `$${i + 1}::${c.sqlType}[]`).join(', ')}) ` +
  `AS u(${RECORD_COLUMN_LIST})`;

const INT8_OID = 20;
const NUMERIC_OID = 1700;
const TIMESTAMPTZ_OID = 1184;
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ_OID) as (value: string) => Date;

/**
 * Result parsers for every query the store runs. pg returns BIGINT and NUMERIC (COUNT, SUM) as
 * strings to avoid precision loss; the counts here stay far below 2^53. Passed per query rather
 * than set globally so that a caller's own pool keeps its own parsers.
 */
export const RESULT_TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    if (oid === TIMESTAMPTZ_OID) return (value: string) => parseTimestamptz(value).toISOString();
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

/** Rebuilds a record from a `SELECT <RECORD_COLUMN_LIST>` row decoded with RESULT_TYPES. */
export function rowToRecord(row: Record<string, unknown>): ToolExecutionRecord {
  return {
    execution_id: row['execution_id'],
    trace_id: row['trace_id'],
    step_index: row['step_index'],
    tool_name: row['tool_name'],
    status: row['status'],
    failure_stage: row['failure_stage'],
    failure_category: row['failure_category'],
    failure_type: row['failure_type'],
    error_code: row['error_code'],
    input_params: row['input_params'],
    params_hash: row['params_hash'],
    raw_output: row['raw_output'],
    output_length: row['output_length'],
    error_message: row['error_message'],
    error_stack: row['error_stack'],
    duration_ms: row['duration_ms'],
    retry_count: row['retry_count'],
    attempts: row['attempts'],
    breaker_state: row['breaker_state'],
    idempotent: row['idempotent'],
    fault: row['fault'],
    feedback: row['feedback'],
    recovery: row['recovery'],
    fallback: row['fallback'],
    context_snapshot: row['context_snapshot'],
    created_at: row['created_at'],
    schema_version: row['schema_version'],
    summary_only: row['summary_only'],
  } as ToolExecutionRecord;
}
