/**
 * One tools/call through the proxy as a ToolExecutionRecord. The proxy makes one attempt and
 * never retries (the agent on the other side decides that), so the record has one attempt, a
 * closed breaker, and `needs_decision` for every failure.
 */
import { isoTime } from '../../record/iso-time.js';
import { paramsHash } from '../../record/params-hash.js';
import type { Redactor } from '../../record/redact.js';
import { toJsonText, truncateText } from '../../record/truncate.js';
import { RECORD_SCHEMA_VERSION, type InjectedFault, type RecordFeedback, type ToolExecutionRecord } from '../../record/types.js';
import type { Classification } from '../../runtime/classify.js';
import { buildFeedback } from '../../runtime/feedback.js';
import type { CallStatus } from '../../taxonomy.js';

export interface ProxiedCall {
  executionId: string;
  traceId: string;
  stepIndex: number;
  toolName: string;
  args: unknown;
  startedAt: number;
  endedAt: number;
  status: CallStatus;
  /** Undefined for a success. */
  classification: Classification | undefined;
  /** What `raw_output` shows: the result content, or the error's data. */
  shown: unknown;
  idempotent: boolean;
  fault: InjectedFault | null;
  context: Record<string, unknown>;
}

export interface RecordShaping {
  redactor: Redactor | undefined;
  maxOutputChars: number;
}

function feedbackFor(call: ProxiedCall, c: Classification): RecordFeedback {
  const feedback = buildFeedback(
    {
      toolName: call.toolName,
      classification: c,
      issues: undefined,
      attempts: 1,
      // The agent decides what happens next; for a write that may have landed, that is checking first.
      ambiguousWrite: c.ambiguous && !call.idempotent,
      canRefreshCredential: false,
      fallbackTool: undefined,
      suggestions: [],
      retryAfterMs: c.retryAfterMs,
    },
    [],
  );
  return { action: feedback.action, hint: feedback.hint, retryable: feedback.retryable, retry_after_ms: feedback.retryAfterMs ?? null };
}

export function buildCallRecord(call: ProxiedCall, shaping: RecordShaping): ToolExecutionRecord {
  const { redactor, maxOutputChars } = shaping;
  const redactValue = <T>(value: T): T => (redactor === undefined ? value : redactor.value(value));
  const params = redactValue(call.args);
  let c = call.classification;
  // Messages can quote secrets back (an echoed token); the record and the hint both get the redacted text.
  if (c !== undefined && redactor !== undefined) c = { ...c, message: redactor.text(c.message) };
  let rawOutput: string | null = null;
  let outputLength: number | null = null;
  if (call.shown !== undefined) {
    const text = toJsonText(redactValue(call.shown));
    outputLength = text.length;
    rawOutput = truncateText(text, maxOutputChars);
  }
  const duration = Math.max(0, call.endedAt - call.startedAt);
  return {
    execution_id: call.executionId,
    trace_id: call.traceId,
    step_index: call.stepIndex,
    tool_name: call.toolName,
    status: call.status,
    failure_stage: c?.stage ?? null,
    failure_category: c?.category ?? null,
    failure_type: c?.type ?? null,
    error_code: c?.code ?? null,
    input_params: params,
    params_hash: paramsHash(params),
    raw_output: rawOutput,
    output_length: outputLength,
    error_message: c?.message ?? null,
    // The error happened on the other side of the wire; a stack of the proxy's own frames would mislead.
    error_stack: null,
    duration_ms: duration,
    retry_count: 0,
    attempts: [
      {
        attempt: 0,
        started_at: isoTime(call.startedAt),
        duration_ms: duration,
        outcome: call.status === 'success' ? 'success' : call.status === 'timeout' ? 'timeout' : 'failure',
        failure_type: c?.type ?? null,
        error_code: c?.code ?? null,
        delay_before_ms: 0,
        fault_kind: call.fault?.kind ?? null,
      },
    ],
    breaker_state: 'closed',
    idempotent: call.idempotent,
    fault: call.fault,
    feedback: c === undefined ? null : feedbackFor(call, c),
    recovery: c === undefined ? 'none' : 'needs_decision',
    fallback: null,
    context_snapshot: redactValue(call.context),
    created_at: isoTime(call.startedAt),
    schema_version: RECORD_SCHEMA_VERSION,
    summary_only: false,
  };
}
