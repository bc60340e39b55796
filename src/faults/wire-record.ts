/**
 * Records for calls a proxy observed on the wire. A proxy makes one attempt and never retries
 * (the agent on the other side decides that), so such a record has one attempt, a closed breaker,
 * no stack (the error happened on the other side; the proxy's own frames would mislead) and
 * `needs_decision` for every failure. The HTTP and MCP proxies shape their inputs; this builds
 * the feedback the same way for both, and the record through the runtime's own builder.
 */
import { isoTime } from '../record/iso-time.js';
import { redactFault } from '../record/redact-fault.js';
import type { FoundSecrets, Redactor } from '../record/redact.js';
import type { InjectedFault, RecordFeedback, ToolExecutionRecord } from '../core/record-types.js';
import type { Classification } from '../runtime/classify.js';
import { executionRecord } from '../runtime/execution-record.js';
import { buildFeedback } from '../runtime/feedback.js';
import type { CallStatus } from '../core/taxonomy.js';

export interface WireCall {
  executionId: string;
  traceId: string;
  stepIndex: number;
  toolName: string;
  /** Already redacted. */
  params: unknown;
  status: CallStatus;
  /** Undefined for a success; its message already redacted. */
  classification: Classification | undefined;
  rawOutput: string | null;
  outputLength: number | null;
  startedAt: number;
  endedAt: number;
  idempotent: boolean;
  /** Redacted here, for both proxies. */
  fault: InjectedFault | null;
  /** Already redacted. */
  context: Record<string, unknown>;
  /** The record's redactor (undefined: redaction is off), applied here to the fault and to the feedback hint, which may quote the message. */
  redactor: Redactor | undefined;
  /**
   * What redaction found secret in the other fields (see `FoundSecrets`): scrubbed from the
   * whole record, so a key masked in the arguments is not kept where the server's error echoes it.
   */
  found: FoundSecrets;
}

/** The feedback an agent gets for a failure the proxy saw, with no runtime recovery behind it. */
export function wireFeedback(toolName: string, c: Classification, idempotent: boolean): RecordFeedback {
  const feedback = buildFeedback(
    {
      toolName,
      classification: c,
      issues: undefined,
      attempts: 1,
      // For a write that may have landed, what comes next is checking first.
      ambiguousWrite: c.ambiguous && !idempotent,
      canRefreshCredential: false,
      fallbackTool: undefined,
      suggestions: [],
      retryAfterMs: c.retryAfterMs,
    },
    [],
  );
  return { action: feedback.action, hint: feedback.hint, retryable: feedback.retryable, retry_after_ms: feedback.retryAfterMs ?? null };
}

export function buildWireRecord(call: WireCall): ToolExecutionRecord {
  const c = call.classification;
  const duration = Math.max(0, call.endedAt - call.startedAt);
  let feedback: RecordFeedback | null = null;
  if (c !== undefined) {
    feedback = wireFeedback(call.toolName, c, call.idempotent);
    if (call.redactor !== undefined) feedback.hint = call.redactor.text(feedback.hint, call.found);
  }
  const record = executionRecord({
    executionId: call.executionId,
    traceId: call.traceId,
    stepIndex: call.stepIndex,
    toolName: call.toolName,
    status: call.status,
    classification: c,
    params: call.params,
    rawOutput: call.rawOutput,
    outputLength: call.outputLength,
    errorMessage: c?.message ?? null,
    errorStack: null,
    startedAt: call.startedAt,
    endedAt: call.endedAt,
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
    breakerState: 'closed',
    idempotent: call.idempotent,
    fault: redactFault(call.fault, call.redactor, call.found),
    feedback,
    recovery: c === undefined ? 'none' : 'needs_decision',
    fallback: null,
    context: call.context,
  });
  return call.redactor === undefined ? record : call.redactor.scrubRecord(record, call.found);
}
