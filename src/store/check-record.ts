/**
 * The one rule every store's `insert` applies to the records it is given, before anything of the
 * batch is written: a record whose required or numeric fields have the wrong type is refused,
 * and the batch with it, with a ConfigError naming the execution_id and the field. Records built
 * by the runtime always pass; the check is for records built by hand or read back from elsewhere,
 * which each adapter used to treat its own way (SQLite dropped a NaN duration silently,
 * PostgreSQL refused a fractional count with a driver error).
 *
 * It runs on the recorder's hot path, so it is typeof and Number.isInteger tests only: no JSON,
 * no allocation while records pass. `created_at` is parsed by each store anyway
 * (`createdAtMs`), which refuses a date that does not parse.
 */
import { ConfigError } from '../core/errors.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

const STRING_FIELDS = ['execution_id', 'trace_id', 'tool_name', 'status', 'params_hash', 'breaker_state', 'recovery', 'created_at'] as const;
const INTEGER_FIELDS = ['step_index', 'retry_count', 'schema_version'] as const;
const BOOLEAN_FIELDS = ['idempotent', 'summary_only'] as const;

/** The integer columns are 32-bit in PostgreSQL; every store takes the same range. */
function isInt32(value: unknown): boolean {
  return typeof value === 'number' && (value | 0) === value;
}

function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function refuse(record: ToolExecutionRecord, field: string, expected: string, value: unknown): never {
  const id = typeof record.execution_id === 'string' ? record.execution_id : shown(record.execution_id);
  throw new ConfigError(`store.insert: record ${id} has an invalid ${field}: expected ${expected}, got ${shown(value)}`, field);
}

/**
 * @throws ConfigError for the first record with a field of the wrong type, naming the record and the field.
 */
export function checkRecord(record: ToolExecutionRecord): void {
  if (typeof record !== 'object' || record === null) {
    throw new ConfigError(`store.insert: expected a record object, got ${shown(record)}`, 'record');
  }
  for (const field of STRING_FIELDS) {
    if (typeof record[field] !== 'string') refuse(record, field, 'a string', record[field]);
  }
  for (const field of INTEGER_FIELDS) {
    if (!isInt32(record[field])) refuse(record, field, 'a 32-bit integer', record[field]);
  }
  for (const field of BOOLEAN_FIELDS) {
    if (typeof record[field] !== 'boolean') refuse(record, field, 'true or false', record[field]);
  }
  if (!Number.isFinite(record.duration_ms)) refuse(record, 'duration_ms', 'a finite number of milliseconds', record.duration_ms);
  const outputLength = record.output_length;
  if (outputLength !== null && !isInt32(outputLength)) refuse(record, 'output_length', 'a 32-bit integer or null', outputLength);
  if (!Array.isArray(record.attempts)) refuse(record, 'attempts', 'an array', record.attempts);
  const context = record.context_snapshot;
  if (typeof context !== 'object' || context === null) refuse(record, 'context_snapshot', 'an object', context);
}

/** {@link checkRecord} on every record of a batch, before any of it is written. */
export function checkRecords(records: readonly ToolExecutionRecord[]): void {
  for (let i = 0; i < records.length; i++) checkRecord(records[i]!);
}
