/**
 * Summary records (DESIGN.md "The record" (`summary_only`)): high-volume tools
 * that succeed first time would otherwise flood the store with payloads nobody trains or alerts on.
 */
import type { ToolExecutionRecord } from '../core/record-types.js';

/**
 * Whether a record may be reduced to a summary: a success that needed no recovery at all.
 * Failures, and successes that needed retries or a fallback, carry recovery information and are
 * always kept whole.
 */
export function isSummarizable(record: ToolExecutionRecord): boolean {
  return record.status === 'success' && record.recovery === 'none' && record.retry_count === 0;
}

/**
 * The summary form of a first-time success: identity, timing, outcome and the params hash stay;
 * the heavy payload fields are nulled or emptied and `summary_only` is set. Any other record is
 * returned unchanged (the same object), so callers can apply this to every record.
 *
 * @example
 * store.insert(records.map(summarizeSuccess));
 */
export function summarizeSuccess(record: ToolExecutionRecord): ToolExecutionRecord {
  if (record.summary_only || !isSummarizable(record)) return record;
  return {
    ...record,
    input_params: null,
    raw_output: null,
    error_message: null,
    error_stack: null,
    attempts: [],
    context_snapshot: {},
    summary_only: true,
  };
}
