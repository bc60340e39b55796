/**
 * What a model reads back from a tool call run through faultline, whichever SDK carries it.
 *
 * A success is the tool's output itself, so the model sees the data it asked for. A failure is
 * an envelope with `ok: false`, the runtime's classification and its feedback: what went wrong in
 * low-cardinality terms (`type`, `category`), exactly which arguments to fix (`issues`), how long
 * to wait (`retry_after_ms`), the action to take and, from the correction memory, what fixed the
 * same failure last time. Keys are snake_case, as in the record, since models read them as text.
 * Everything in it was redacted by the runtime.
 */
import type { LastRecovery } from '../core/record-types.js';
import type { ExecuteResult } from '../runtime/runtime.js';
import type { ValidationIssue } from '../runtime/validate.js';
import type { FailureCategory, FailureStage, FeedbackAction } from '../core/taxonomy.js';

export interface ModelFacingFailure {
  ok: false;
  error: {
    type: string;
    category: FailureCategory;
    stage: FailureStage;
    code: string;
    message: string;
    status?: number;
    retry_after_ms?: number;
    issues?: ValidationIssue[];
    body?: unknown;
  };
  feedback: {
    action: FeedbackAction;
    hint: string;
    retryable: boolean;
    retry_after_ms?: number;
    last_recovery?: LastRecovery;
  };
  /** What a partial result did return. */
  partial?: unknown;
  /** The tool that answered instead, when the runtime fell back and that failed too. */
  fallback_from?: string;
}

/** The failure envelope of a failed call. */
export function failureForModel(result: Extract<ExecuteResult, { ok: false }>): ModelFacingFailure {
  const { error, feedback } = result;
  const out: ModelFacingFailure = {
    ok: false,
    error: { type: error.type, category: error.category, stage: error.stage, code: error.code, message: error.message },
    feedback: { action: feedback.action, hint: feedback.hint, retryable: feedback.retryable },
  };
  if (error.status !== undefined) out.error.status = error.status;
  if (error.retryAfterMs !== undefined) out.error.retry_after_ms = error.retryAfterMs;
  if (error.issues !== undefined) out.error.issues = error.issues;
  if (error.body !== undefined) out.error.body = error.body;
  if (feedback.retryAfterMs !== undefined) out.feedback.retry_after_ms = feedback.retryAfterMs;
  if (feedback.lastRecovery !== undefined) out.feedback.last_recovery = feedback.lastRecovery;
  if (result.partial !== undefined) out.partial = result.partial;
  if (result.fallbackFrom !== undefined) out.fallback_from = result.fallbackFrom.tool;
  return out;
}

/** The result as a value: the output on success, the failure envelope otherwise. */
export function resultForModel(result: ExecuteResult): unknown {
  return result.ok ? result.output : failureForModel(result);
}

/**
 * The result as message text: a string output as it is, anything else as JSON. An output that
 * JSON cannot carry (undefined) becomes `null`.
 */
export function resultText(result: ExecuteResult): string {
  const value = resultForModel(result);
  if (typeof value === 'string') return value;
  return JSON.stringify(value) ?? 'null';
}
