/**
 * The tool execution record (DESIGN.md "The record"): one per logical call, snake_case, exactly
 * as stored and exported. Seed 001's ToolExecutionRecord plus the fields faultline adds.
 */
import type { CallStatus, FailureCategory, FailureStage, FeedbackAction } from './taxonomy.js';

export const RECORD_SCHEMA_VERSION = 1;

export type BreakerStateName = 'closed' | 'open' | 'half_open';

/** The outcome of one attempt inside a logical call. */
export type AttemptOutcome = 'success' | 'failure' | 'timeout';

export interface AttemptRecord {
  /** 0 for the first attempt. */
  attempt: number;
  /** UTC ISO-8601. */
  started_at: string;
  duration_ms: number;
  outcome: AttemptOutcome;
  failure_type: string | null;
  error_code: string | null;
  /** How long the runtime waited before this attempt (backoff or Retry-After); 0 for the first. */
  delay_before_ms: number;
  /** The kind of fault injected into this attempt, if any (see `fault` on the record). */
  fault_kind?: string | null;
  /** The timeout this attempt ran under, when the tool's timeout is adaptive. */
  timeout?: AttemptTimeout;
}

/** Which timeout an attempt ran under, and why (adaptive timeouts). */
export interface AttemptTimeout {
  ms: number;
  /** `fixed`: too few successes known, the tool's own timeout; `adaptive`: k x p99; `floor` / `ceiling`: k x p99 clamped. */
  basis: 'fixed' | 'adaptive' | 'floor' | 'ceiling';
  p99_ms: number | null;
  /** Successes the p99 was taken over. */
  samples: number;
  reason: string;
}

/** What recovered a failure, as the correction memory keeps it. */
export type CorrectionAction = 'retry_with_fixed_params' | 'wait_and_retry' | 'retry' | 'switch_tool' | 'refresh_credential';

export interface CorrectionRecovery {
  action: CorrectionAction;
  /** For `retry_with_fixed_params`: only the arguments that changed (a removed one is null), redacted. */
  params_delta?: Record<string, unknown>;
  /** For `wait_and_retry`: how long the caller waited before the call that worked. */
  wait_ms?: number;
  /** For `switch_tool`: the tool that worked instead. */
  tool?: string;
  note?: string;
}

/** The most recent recovery that worked for the same failure signature (from the correction memory). */
export interface LastRecovery extends CorrectionRecovery {
  /** UTC ISO-8601, when the recovering call ran. */
  recovered_at: string;
  /** How many times this recovery worked (pushed from distinct traces). */
  uses: number;
}

/**
 * The pre-flight failure predictor's estimate for a call, made before it ran: the probability it
 * fails, and the features that raised it most (their share of the score in log-odds).
 */
export interface PredictedFailure {
  probability: number;
  top_features: { feature: string; contribution: number }[];
}

/** Machine-readable feedback for the agent. */
export interface RecordFeedback {
  action: FeedbackAction;
  hint: string;
  /** Whether calling again (possibly after fixing something) can succeed. */
  retryable: boolean;
  retry_after_ms: number | null;
  /** Present when the correction memory knows a recovery that worked for this failure's signature. */
  last_recovery?: LastRecovery;
  /** Present when the runtime runs a failure predictor (also in `context_snapshot`, for every call). */
  predicted_failure?: PredictedFailure;
}

/**
 * `none`: succeeded first time. `auto_recovered`: failures happened and the runtime handled them
 * (retry, credential refresh, fallback). `needs_decision`: the failure was handed to the agent.
 */
export type RecoveryMode = 'none' | 'auto_recovered' | 'needs_decision';

/** The fault an injector applied to this call: ground truth for training and scoring. */
export interface InjectedFault {
  kind: string;
  rule_id?: string;
  params?: Record<string, unknown>;
  transport?: string;
}

/** Links a failed primary call and the fallback call that replaced it. */
export type FallbackLink =
  | { role: 'primary'; to: string; reason: string }
  | { role: 'fallback'; from: string; primary_execution_id: string; reason: string };

export interface ToolExecutionRecord {
  /** UUIDv7, so inserts are time-ordered. */
  execution_id: string;
  trace_id: string;
  step_index: number;
  tool_name: string;
  status: CallStatus;
  failure_stage: FailureStage | null;
  failure_category: FailureCategory | null;
  failure_type: string | null;
  /** e.g. HTTP_429, ECONNREFUSED, MCP_-32602, TIMEOUT. */
  error_code: string | null;
  /** The arguments as the caller sent them, redacted. Null in summary records. */
  input_params: unknown;
  params_hash: string;
  /** JSON text of the output (or error body), redacted and truncated. */
  raw_output: string | null;
  /** The length of the output before truncation. */
  output_length: number | null;
  error_message: string | null;
  /** The last frames of the stack, redacted. */
  error_stack: string | null;
  duration_ms: number;
  retry_count: number;
  attempts: AttemptRecord[];
  breaker_state: BreakerStateName;
  idempotent: boolean;
  /** The first fault injected into this call (ground truth for scoring and training); per-attempt kinds are in `attempts`. */
  fault: InjectedFault | null;
  feedback: RecordFeedback | null;
  recovery: RecoveryMode;
  fallback: FallbackLink | null;
  /** intent, session_id, agent, model, and whatever the caller adds. */
  context_snapshot: Record<string, unknown>;
  /** UTC ISO-8601, when the call started. */
  created_at: string;
  schema_version: number;
  /** True when only the summary of a success was kept (tool, status, duration, params hash). */
  summary_only: boolean;
}
