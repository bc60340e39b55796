import { describe, expect, it } from 'vitest';
import { makeFailureRecord, makeRecord } from './fixture.js';
import { isSummarizable, summarizeSuccess } from './summarize.js';

describe('summarizeSuccess', () => {
  it('keeps identity, timing and outcome of a first-time success and empties the payload', () => {
    const record = makeRecord({ context_snapshot: { intent: 'weather', session_id: 's1' }, error_message: null });
    const summary = summarizeSuccess(record);

    expect(summary).not.toBe(record);
    expect(summary.summary_only).toBe(true);
    expect(summary.input_params).toBeNull();
    expect(summary.raw_output).toBeNull();
    expect(summary.attempts).toEqual([]);
    expect(summary.context_snapshot).toEqual({});
    for (const key of [
      'execution_id',
      'trace_id',
      'step_index',
      'tool_name',
      'status',
      'duration_ms',
      'params_hash',
      'created_at',
      'schema_version',
      'retry_count',
      'breaker_state',
      'idempotent',
      'output_length',
    ] as const) {
      expect(summary[key]).toEqual(record[key]);
    }
    // The input record is left alone: callers may still hold it.
    expect(record.summary_only).toBe(false);
    expect(record.attempts).toHaveLength(1);
  });

  it('never summarizes failures', () => {
    const failure = makeFailureRecord({ failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error' });
    expect(isSummarizable(failure)).toBe(false);
    expect(summarizeSuccess(failure)).toBe(failure);
    const timeout = makeRecord({ status: 'timeout', recovery: 'none' });
    expect(summarizeSuccess(timeout)).toBe(timeout);
  });

  it('keeps successes that needed recovery whole', () => {
    const retried = makeRecord({ recovery: 'auto_recovered', retry_count: 2 });
    expect(isSummarizable(retried)).toBe(false);
    expect(summarizeSuccess(retried)).toBe(retried);
    const inconsistent = makeRecord({ recovery: 'none', retry_count: 1 });
    expect(summarizeSuccess(inconsistent)).toBe(inconsistent);
  });

  it('is idempotent', () => {
    const once = summarizeSuccess(makeRecord());
    expect(summarizeSuccess(once)).toBe(once);
  });
});
