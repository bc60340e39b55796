/**
 * The one place a ToolExecutionRecord is assembled, for the runtime and for the proxies: each
 * shapes (and redacts) its pieces, and this lays them out in the record's field order, so a
 * record reads the same whoever made it.
 */
import { isoTime } from '../record/iso-time.js';
import { paramsHash } from '../core/params-hash.js';
import {
  RECORD_SCHEMA_VERSION,
  type AttemptRecord,
  type BreakerStateName,
  type FallbackLink,
  type InjectedFault,
  type RecordFeedback,
  type RecoveryMode,
  type ToolExecutionRecord,
} from '../core/record-types.js';
import type { CallStatus } from '../core/taxonomy.js';
import type { Classification } from './classify.js';

/** A finished call's pieces. Everything here is already redacted. */
export interface RecordPieces {
  executionId: string;
  traceId: string;
  stepIndex: number;
  toolName: string;
  status: CallStatus;
  /** Undefined for a success. */
  classification: Classification | undefined;
  params: unknown;
  rawOutput: string | null;
  outputLength: number | null;
  errorMessage: string | null;
  errorStack: string | null;
  startedAt: number;
  endedAt: number;
  attempts: AttemptRecord[];
  breakerState: BreakerStateName;
  idempotent: boolean;
  fault: InjectedFault | null;
  feedback: RecordFeedback | null;
  recovery: RecoveryMode;
  fallback: FallbackLink | null;
  context: Record<string, unknown>;
}

export function executionRecord(p: RecordPieces): ToolExecutionRecord {
  const c = p.classification;
  return {
    execution_id: p.executionId,
    trace_id: p.traceId,
    step_index: p.stepIndex,
    tool_name: p.toolName,
    status: p.status,
    failure_stage: c?.stage ?? null,
    failure_category: c?.category ?? null,
    failure_type: c?.type ?? null,
    error_code: c?.code ?? null,
    input_params: p.params,
    params_hash: paramsHash(p.params),
    raw_output: p.rawOutput,
    output_length: p.outputLength,
    error_message: p.errorMessage,
    error_stack: p.errorStack,
    duration_ms: Math.max(0, p.endedAt - p.startedAt),
    retry_count: Math.max(0, p.attempts.length - 1),
    attempts: p.attempts,
    breaker_state: p.breakerState,
    idempotent: p.idempotent,
    fault: p.fault,
    feedback: p.feedback,
    recovery: p.recovery,
    fallback: p.fallback,
    context_snapshot: p.context,
    created_at: isoTime(p.startedAt),
    schema_version: RECORD_SCHEMA_VERSION,
    summary_only: false,
  };
}
