/**
 * Builds well-formed records for tests, benchmarks and examples without running a tool.
 * Exported from `faultline/testing`.
 */
import { uuidv7 } from './uuid-v7.js';
import { RECORD_SCHEMA_VERSION, type ToolExecutionRecord } from '../core/record-types.js';

/** A complete, valid record; pass overrides for the fields a test cares about. */
export function makeRecord(overrides: Partial<ToolExecutionRecord> = {}): ToolExecutionRecord {
  const createdMs = overrides.created_at !== undefined ? Date.parse(overrides.created_at) : Date.now();
  const base: ToolExecutionRecord = {
    execution_id: uuidv7(createdMs),
    trace_id: 'trace-fixture',
    step_index: 0,
    tool_name: 'get_weather',
    status: 'success',
    failure_stage: null,
    failure_category: null,
    failure_type: null,
    error_code: null,
    input_params: { city: 'Paris', unit: 'celsius' },
    params_hash: '5f1c0a7e2b9d4c31',
    raw_output: '{"city":"Paris","temperature":18,"condition":"cloudy"}',
    output_length: 54,
    error_message: null,
    error_stack: null,
    duration_ms: 12,
    retry_count: 0,
    attempts: [
      {
        attempt: 0,
        started_at: new Date(createdMs).toISOString(),
        duration_ms: 12,
        outcome: 'success',
        failure_type: null,
        error_code: null,
        delay_before_ms: 0,
      },
    ],
    breaker_state: 'closed',
    idempotent: true,
    fault: null,
    feedback: null,
    recovery: 'none',
    fallback: null,
    context_snapshot: {},
    created_at: new Date(createdMs).toISOString(),
    schema_version: RECORD_SCHEMA_VERSION,
    summary_only: false,
  };
  return { ...base, ...overrides };
}

/** A failed record of the given shape, with feedback filled in. */
export function makeFailureRecord(
  shape: Pick<ToolExecutionRecord, 'failure_stage' | 'failure_category' | 'failure_type'> &
    Partial<ToolExecutionRecord>,
): ToolExecutionRecord {
  return makeRecord({
    status: 'failure',
    error_code: 'HTTP_500',
    error_message: 'upstream failed',
    raw_output: null,
    output_length: null,
    feedback: { action: 'retry', hint: 'retry later', retryable: true, retry_after_ms: null },
    recovery: 'needs_decision',
    ...shape,
  });
}
