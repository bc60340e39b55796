/**
 * Mapping between a ToolExecutionRecord and a `tool_executions` row. This sits on the insert hot
 * path, so it avoids work it can skip: empty structures are constants instead of JSON.stringify
 * calls, and parameters are positional.
 */
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { RollupRecord } from '../rollup.js';

/** Column order of {@link recordParams}; also the column list of the insert statement. */
export const RECORD_COLUMNS = [
  'execution_id',
  'trace_id',
  'step_index',
  'tool_name',
  'status',
  'failure_stage',
  'failure_category',
  'failure_type',
  'error_code',
  'input_params',
  'params_hash',
  'raw_output',
  'output_length',
  'error_message',
  'error_stack',
  'duration_ms',
  'retry_count',
  'attempts',
  'breaker_state',
  'idempotent',
  'fault',
  'feedback',
  'recovery',
  'fallback',
  'context_snapshot',
  'created_at',
  'created_ms',
  'schema_version',
  'summary_only',
] as const;

export type SqliteValue = string | number | null;

function isEmptyObject(value: object): boolean {
  for (const _key in value) return false;
  return true;
}

function jsonOrNull(value: unknown): string | null {
  // `undefined` has no JSON form; it is stored as NULL and comes back as null.
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** JSON of the frozen context snapshots a session's records share (see the runtime), made once. */
const sharedSnapshotJson = new WeakMap<object, string>();

function snapshotJson(snapshot: Record<string, unknown>): string {
  if (!Object.isFrozen(snapshot)) return isEmptyObject(snapshot) ? '{}' : JSON.stringify(snapshot);
  let json = sharedSnapshotJson.get(snapshot);
  if (json === undefined) {
    json = JSON.stringify(snapshot);
    // Freezing is shallow: an object value could still change, so only all-scalar snapshots are kept.
    if (Object.values(snapshot).every((v) => v === null || typeof v !== 'object')) sharedSnapshotJson.set(snapshot, json);
  }
  return json;
}

/** Bind parameters for one row, in {@link RECORD_COLUMNS} order: a new array, filled in order (so packed). */
export function recordParams(r: ToolExecutionRecord, createdMs: number): SqliteValue[] {
  const into: SqliteValue[] = [];
  into[0] = r.execution_id;
  into[1] = r.trace_id;
  into[2] = r.step_index;
  into[3] = r.tool_name;
  into[4] = r.status;
  into[5] = r.failure_stage;
  into[6] = r.failure_category;
  into[7] = r.failure_type;
  into[8] = r.error_code;
  into[9] = jsonOrNull(r.input_params);
  into[10] = r.params_hash;
  into[11] = r.raw_output;
  into[12] = r.output_length;
  into[13] = r.error_message;
  into[14] = r.error_stack;
  into[15] = r.duration_ms;
  into[16] = r.retry_count;
  into[17] = r.attempts.length === 0 ? '[]' : JSON.stringify(r.attempts);
  into[18] = r.breaker_state;
  into[19] = r.idempotent ? 1 : 0;
  into[20] = jsonOrNull(r.fault);
  into[21] = jsonOrNull(r.feedback);
  into[22] = r.recovery;
  into[23] = jsonOrNull(r.fallback);
  into[24] = snapshotJson(r.context_snapshot);
  into[25] = r.created_at;
  into[26] = createdMs;
  into[27] = r.schema_version;
  into[28] = r.summary_only ? 1 : 0;
  return into;
}

/** Position of `created_ms` in a {@link recordParams} row. */
export const CREATED_MS_PARAM = RECORD_COLUMNS.indexOf('created_ms');

/**
 * The fields the rollups read, from a {@link recordParams} row: all scalar columns, so rows
 * prepared in another thread need no JSON parsing to update the rollups.
 */
export function rollupRecordOfParams(p: readonly SqliteValue[]): RollupRecord {
  return {
    execution_id: p[0] as string,
    tool_name: p[3] as string,
    status: p[4] as RollupRecord['status'],
    failure_stage: p[5] as RollupRecord['failure_stage'],
    failure_category: p[6] as RollupRecord['failure_category'],
    failure_type: p[7] as string | null,
    error_code: p[8] as string | null,
    error_message: p[13] as string | null,
    duration_ms: p[15] as number,
    retry_count: p[16] as number,
    breaker_state: p[18] as RollupRecord['breaker_state'],
    created_at: p[25] as string,
  };
}

/**
 * The record a {@link recordParams} row holds (what the store would read back): for a batch
 * encoded in another thread whose write failed, so the recorder can spool its records.
 */
export function recordOfParams(p: readonly SqliteValue[]): ToolExecutionRecord {
  const row: Record<string, SqliteValue> = {};
  for (let i = 0; i < RECORD_COLUMNS.length; i++) row[RECORD_COLUMNS[i]!] = p[i] ?? null;
  return rowToRecord(row as unknown as RecordRow);
}

/** A `SELECT *` row of `tool_executions`, as better-sqlite3 returns it. */
export interface RecordRow {
  execution_id: string;
  trace_id: string;
  step_index: number;
  tool_name: string;
  status: ToolExecutionRecord['status'];
  failure_stage: ToolExecutionRecord['failure_stage'];
  failure_category: ToolExecutionRecord['failure_category'];
  failure_type: string | null;
  error_code: string | null;
  input_params: string | null;
  params_hash: string;
  raw_output: string | null;
  output_length: number | null;
  error_message: string | null;
  error_stack: string | null;
  duration_ms: number;
  retry_count: number;
  attempts: string;
  breaker_state: ToolExecutionRecord['breaker_state'];
  idempotent: number;
  fault: string | null;
  feedback: string | null;
  recovery: ToolExecutionRecord['recovery'];
  fallback: string | null;
  context_snapshot: string;
  created_at: string;
  created_ms: number;
  schema_version: number;
  summary_only: number;
}

function parseOrNull<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** The record a row holds. */
export function rowToRecord(row: RecordRow): ToolExecutionRecord {
  return {
    execution_id: row.execution_id,
    trace_id: row.trace_id,
    step_index: row.step_index,
    tool_name: row.tool_name,
    status: row.status,
    failure_stage: row.failure_stage,
    failure_category: row.failure_category,
    failure_type: row.failure_type,
    error_code: row.error_code,
    input_params: parseOrNull<unknown>(row.input_params),
    params_hash: row.params_hash,
    raw_output: row.raw_output,
    output_length: row.output_length,
    error_message: row.error_message,
    error_stack: row.error_stack,
    duration_ms: row.duration_ms,
    retry_count: row.retry_count,
    attempts: row.attempts === '[]' ? [] : (JSON.parse(row.attempts) as ToolExecutionRecord['attempts']),
    breaker_state: row.breaker_state,
    idempotent: row.idempotent === 1,
    fault: parseOrNull<NonNullable<ToolExecutionRecord['fault']>>(row.fault),
    feedback: parseOrNull<NonNullable<ToolExecutionRecord['feedback']>>(row.feedback),
    recovery: row.recovery,
    fallback: parseOrNull<NonNullable<ToolExecutionRecord['fallback']>>(row.fallback),
    context_snapshot: row.context_snapshot === '{}' ? {} : (JSON.parse(row.context_snapshot) as Record<string, unknown>),
    created_at: row.created_at,
    schema_version: row.schema_version,
    summary_only: row.summary_only === 1,
  };
}
