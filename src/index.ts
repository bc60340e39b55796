/**
 * faultline: the tool runtime, its taxonomy and its errors. Stores, fault plans and proxies, the
 * mock tools, datasets, monitoring and FailBench have entry points of their own (DESIGN.md,
 * "Layout"), so this one loads no storage driver, MCP SDK or metrics client.
 */
export { createRuntime } from './runtime/runtime.js';
export type {
  CallError,
  CallFeedback,
  CredentialRefresher,
  ExecuteOptions,
  ExecuteResult,
  FallbackInfo,
  Runtime,
  RuntimeOptions,
  Session,
  ToolInfo,
} from './runtime/runtime.js';
export type { RecordSink } from './core/record-sink.js';
export { defineTool, isTool } from './runtime/define-tool.js';
export type { JsonSchema, Tool, ToolAnnotations, ToolContext, ToolSpec } from './runtime/define-tool.js';
export { AuthError, BusinessError, HttpError, ParameterError, ToolError, toolError } from './runtime/tool-errors.js';
export type { AuthFailureType, BusinessFailureType, ParameterFailureType, ToolErrorOptions } from './runtime/tool-errors.js';
export { createVirtualClock, systemClock } from './core/clock.js';
export type { Clock, SchedulingClock, VirtualClock, VirtualClockOptions } from './core/clock.js';
export { classifyError, classifyHttpStatus, classifyOutput } from './runtime/classify.js';
export type { Classification } from './runtime/classify.js';
export { buildFeedback, describeRecovery } from './runtime/feedback.js';
export type { Feedback, FeedbackContext, FeedbackOverride, FeedbackOverrides } from './runtime/feedback.js';
export type { CorrectionMemoryOptions, CorrectionMemoryView } from './runtime/correction-memory.js';
export { backoffDelay } from './runtime/backoff.js';
export type { BackoffOptions } from './runtime/backoff.js';
export { decideRetry } from './runtime/retry-policy.js';
export type { RetryDecision, RetryOptions, StopReason } from './runtime/retry-policy.js';
export { ConsecutiveBreaker } from './runtime/breaker.js';
export type { Admission, Breaker, BreakerOptions, BreakerProvider, BreakerSnapshot } from './runtime/breaker.js';
export { parseRetryAfter } from './runtime/retry-after.js';
export type { ValidationIssue, ValidationIssueCode } from './runtime/validate.js';
export type { FaultCallInfo, FaultInjector, PlannedFault } from './runtime/fault-injector.js';
export type { LoopGuardOptions } from './runtime/loop-guard.js';
export type { PredictorOptions } from './runtime/failure-prediction.js';
export type { PostConditionIssue, Verify, VerifyContext } from './runtime/post-conditions.js';
export type { AdaptiveTimeoutOptions } from './runtime/adaptive-timeout.js';

// Redaction and recording, as the runtime's `redact` and `recording` options take them.
export { createRedactor, defaultRedactor, BUILTIN_RULES } from './record/redact.js';
export type { FoundSecrets, RedactOptions, Redactor, RedactionRule } from './record/redact.js';
export type { RecorderOptions, RecorderStats, RecordingStats } from './record/recorder.js';

// What a model reads back from a call (the SDK integrations use it; so can your own loop).
export { failureForModel, resultForModel, resultText } from './integrations/model-facing-result.js';
export type { ModelFacingFailure } from './integrations/model-facing-result.js';

export { FaultlineError, ConfigError, DuplicateToolError, RuntimeClosedError, ToolDefinitionError } from './core/errors.js';

export {
  CALL_STATUSES,
  FAILURE_CATEGORIES,
  FAILURE_STAGES,
  FAILURE_TYPES,
  categoryOfType,
  countsAgainstBreaker,
  toTrainingLabel,
} from './core/taxonomy.js';
export type {
  CallStatus,
  FailureCategory,
  FailureStage,
  FeedbackAction,
  KnownFailureType,
  TrainingFailureSubtype,
  TrainingFailureType,
  TrainingLabel,
} from './core/taxonomy.js';
export { RECORD_SCHEMA_VERSION } from './core/record-types.js';
export type {
  AttemptOutcome,
  AttemptRecord,
  AttemptTimeout,
  BreakerStateName,
  CorrectionAction,
  CorrectionRecovery,
  FallbackLink,
  InjectedFault,
  LastRecovery,
  PredictedFailure,
  RecordFeedback,
  RecoveryMode,
  ToolExecutionRecord,
} from './core/record-types.js';
