/**
 * faultline: a tool runtime for LLM agents in which every tool call, above all every failed one,
 * is data. See DESIGN.md for the architecture and README.md for a tour.
 */
export { createRuntime } from './runtime/runtime.js';
export type { RecordSink } from './core/record-sink.js';
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
export { defineTool, isTool } from './runtime/define-tool.js';
export type { JsonSchema, Tool, ToolAnnotations, ToolContext, ToolSpec } from './runtime/define-tool.js';
export { AuthError, BusinessError, HttpError, ParameterError, ToolError, toolError } from './runtime/tool-errors.js';
export type { AuthFailureType, BusinessFailureType, ParameterFailureType, ToolErrorOptions } from './runtime/tool-errors.js';
export { createVirtualClock, systemClock } from './core/clock.js';
export type { Clock, SchedulingClock, VirtualClock, VirtualClockOptions } from './core/clock.js';
export { classifyError, classifyHttpStatus, classifyOutput } from './runtime/classify.js';
export type { Classification } from './runtime/classify.js';
export { buildFeedback, describeRecovery } from './runtime/feedback.js';
export type { CorrectionMemoryOptions, CorrectionMemoryView } from './runtime/correction-memory.js';
export { correctionsFromTrajectory } from './annotate/corrections-from-trajectory.js';
export { DEFAULT_CORRECTION_LIMITS } from './store/corrections.js';
export type { Feedback, FeedbackContext, FeedbackOverride, FeedbackOverrides } from './runtime/feedback.js';
export { backoffCeiling, backoffDelay, DEFAULT_BACKOFF } from './runtime/backoff.js';
export { seededRandom } from './core/seeded-random.js';
export type { BackoffOptions } from './runtime/backoff.js';
export { decideRetry, DEFAULT_RETRY } from './runtime/retry-policy.js';
export type { RetryDecision, RetryOptions, StopReason } from './runtime/retry-policy.js';
export { ConsecutiveBreaker, DEFAULT_BREAKER } from './runtime/breaker.js';
export type { Admission, BreakerOptions, BreakerProvider, BreakerSnapshot } from './runtime/breaker.js';
export { parseRetryAfter } from './runtime/retry-after.js';
export type { ValidationIssue, ValidationIssueCode } from './runtime/validate.js';

export { FaultlineError, ConfigError, DuplicateToolError, RuntimeClosedError, ToolDefinitionError } from './core/errors.js';

export * from './core/taxonomy.js';
export type {
  AttemptOutcome,
  AttemptRecord,
  BreakerStateName,
  FallbackLink,
  InjectedFault,
  CorrectionAction,
  CorrectionRecovery,
  LastRecovery,
  RecordFeedback,
  RecoveryMode,
  ToolExecutionRecord,
} from './core/record-types.js';
export { RECORD_SCHEMA_VERSION } from './core/record-types.js';
export { paramsHash, canonicalJson } from './core/params-hash.js';

// What a model reads back from a call (the SDK integrations use it; so can your own loop).
export { failureForModel, resultForModel, resultText } from './integrations/model-facing-result.js';
export type { ModelFacingFailure } from './integrations/model-facing-result.js';

// Records: redaction, recording, stores.
export { createRedactor, defaultRedactor, BUILTIN_RULES } from './record/redact.js';
export type { FoundSecrets, RedactOptions, Redactor, RedactionRule } from './record/redact.js';
export { createRecorder } from './record/recorder.js';
export type { Recorder, RecorderOptions, RecorderStats, RecordingStats } from './record/recorder.js';
export { summarizeSuccess } from './record/summarize.js';
export { uuidv7 } from './record/uuid-v7.js';
export { openStore, DEFAULT_SQLITE_PATH } from './store/open-store.js';
export { createMemoryStore } from './store/memory/memory-store.js';
export { createSqliteStore } from './store/sqlite/sqlite-store.js';
export type { SqliteStoreOptions } from './store/sqlite/sqlite-store.js';
export type {
  BatchEncoding,
  CorrectionEntry,
  CorrectionLimits,
  CorrectionMemoryStore,
  CorrectionQuery,
  NewCorrection,
  FailureBreakdownRow,
  FailureSignature,
  HourlyPoint,
  RecordQuery,
  StatsFilter,
  Store,
  StoreKind,
  TimeWindow,
  ToolStats,
} from './core/store-types.js';
/** PostgreSQL: `import { createPostgresStore } from 'faultline/postgres'` (loads `pg` only when used), or `openStore('postgres://…')`. */

// Fault injection.
export * from './faults/index.js';

// Monitoring.
export { evaluateAlerts, loadAlertConfig, resolveAlertConfig, DEFAULT_ALERT_CONFIG, ALERT_RULES } from './monitor/alert-rules.js';
export type { Alert, AlertConfig, AlertRuleName, AlertSeverity, EvaluateAlertsOptions } from './monitor/alert-rules.js';
export { createMetrics, createStoreMetrics, DEFAULT_MAX_TOOLS, METRIC_NAMES, OTHER_TOOLS_LABEL, UNKNOWN_TOOL_LABEL } from './monitor/metrics.js';
export type { FaultlineMetrics, MetricsOptions, StoreMetrics, StoreMetricsOptions } from './monitor/metrics.js';
export { createDashboard } from './monitor/dashboard/create-dashboard.js';
export type { Dashboard, DashboardOptions } from './monitor/dashboard/create-dashboard.js';

// The mock tool catalog and its HTTP server.
export { createToolCatalog, CATALOG_TOOL_NAMES, DEFAULT_CATALOG_NOW, startMockToolServer } from './tools/index.js';
export type { CatalogSnapshot, CatalogState, MockToolServer, MockToolServerOptions, ToolCatalog, ToolCatalogOptions } from './tools/index.js';

// The MCP fault proxy.
export { startMcpProxy, serveMcpOverHttp, isIdempotentTool, McpUpstreamError } from './faults/mcp-proxy/index.js';

// The HTTP fault proxy.
export { startHttpFaultProxy, compileRoutes, parseRoutes, loadRoutes } from './faults/http-proxy/index.js';

// Trajectories: the model, the builder from records, importers.
export * from './trajectory/index.js';

// Annotation: rule annotators, outcome backtrace, heuristic semantic judge.
export * from './annotate/index.js';

// Datasets: trajectories, SFT, preference pairs, with cards and splits.
export * from './dataset/index.js';
