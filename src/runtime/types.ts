/** The runtime's public types: its options, a call's result, and the runtime and session handles. */
import type { FaultInjector } from './fault-injector.js';
import type { RedactOptions } from '../record/redact.js';
import type { RecorderOptions, RecordingStats } from '../record/recorder.js';
import type { AttemptTimeout, LastRecovery, PredictedFailure, ToolExecutionRecord } from '../core/record-types.js';
import type { RecordSink } from '../core/record-sink.js';
import type { Store } from '../core/store-types.js';
import type { FailureCategory, FailureStage, FeedbackAction } from '../core/taxonomy.js';
import type { BreakerOptions, BreakerProvider, BreakerSnapshot } from './breaker.js';
import type { Clock } from '../core/clock.js';
import type { CorrectionMemoryOptions, CorrectionMemoryView } from './correction-memory.js';
import type { JsonSchema, Tool, ToolAnnotations } from './define-tool.js';
import type { FeedbackOverrides } from './feedback.js';
import type { LoopGuardOptions } from './loop-guard.js';
import type { PredictorOptions } from './failure-prediction.js';
import type { RetryOptions } from './retry-policy.js';
import type { ValidationIssue } from './validate.js';

/** Called when the runtime refreshes credentials after an auth failure. Return false if it could not. */
export type CredentialRefresher = (info: { toolName: string; error: CallError }) => Promise<boolean | void> | boolean | void;

export interface RuntimeOptions {
  tools: readonly Tool[];
  /**
   * Where records are stored: `'sqlite:PATH'` or a `.db` path, `'postgres://…'`, `'memory:'`, or a
   * Store. Records go through a batching recorder (see `recording`). Without a store (and without
   * `recorder`), records reach only `onRecord`; the CLI defaults to SQLite at `.faultline/faultline.db`.
   */
  store?: string | Store;
  /** How records reach the store: batching, durability, spooling, success summaries. */
  recording?: Omit<RecorderOptions, 'store'>;
  /**
   * Retention: records older than this are deleted from `store`, with their share of the
   * rollups (`Store.prune`), when the runtime starts and then every hour while it runs. A duration
   * as the CLI writes it (`'30d'`, `'24h'`, `'90m'`) or milliseconds. Failures are reported like
   * store write errors. Default: records are kept for ever (`faultline prune` deletes them by hand).
   * @example createRuntime({ tools, store: 'sqlite:.faultline/faultline.db', retention: '30d' })
   */
  retention?: string | number;
  /** A custom sink instead of `store` (advanced: the runtime uses it as is). */
  recorder?: RecordSink;
  clock?: Clock;
  /** Seed for retry jitter, for reproducible runs. Default: Math.random. */
  seed?: number;
  /** Redaction of everything recorded; on by default. `false` disables it (not recommended). */
  redact?: RedactOptions | false;
  /** Defaults for every tool; a tool's own settings win. */
  retry?: Partial<RetryOptions>;
  breaker?: Partial<BreakerOptions>;
  /**
   * Where each tool's breaker comes from. Default: one in-process breaker per tool. A shared
   * provider (`createRedisBreakers` from `faultline/redis`) gives breakers whose state the
   * runtimes of many processes share.
   */
  breakers?: BreakerProvider;
  feedback?: FeedbackOverrides;
  /**
   * Whether the agent sees an auth failure's (401, 403) upstream message and body. Default false:
   * the agent's error names the tool, the status and the code, nothing the upstream said (paths,
   * hosts, scopes); the record keeps it, redacted.
   */
  discloseAuthDetails?: boolean;
  /** Enables one retry after an auth failure, when this succeeds. */
  refreshCredential?: CredentialRefresher;
  /** Called synchronously with every record. Errors it throws are routed to `onListenerError`. */
  onRecord?: (record: ToolExecutionRecord) => void;
  /** Errors from `onRecord` and a custom `recorder`, with where they arose; store write errors (records, corrections) come as `store` unless `recording.onError` takes them. Default: a process warning (store errors: at most one a minute). */
  onListenerError?: (error: unknown, where: string) => void;
  /** Raw output kept per record. Default 2000 characters. */
  maxOutputChars?: number;
  /** Fields added to every record's context_snapshot (agent, model, deployment, ...). */
  context?: Record<string, unknown>;
  /** Injects faults into tool attempts (chaos testing, FailBench); see `createFaultPlan`. */
  faults?: FaultInjector;
  /**
   * The correction memory: recoveries that worked, per failure signature,
   * surfaced as `feedback.last_recovery` when the same failure comes back. On by default (kept in
   * the store when it has one, else in process); `false` turns it off. Bounds: `capacity`
   * (default 100) and `perSignature` (default 5).
   */
  correctionMemory?: CorrectionMemoryOptions | false;
  /**
   * The loop guard (off by default): per session (`sessionId`, else the trace), the Nth identical
   * failing call is refused before it runs (`rejected` / `logic` / `loop_detected`), and a
   * non-idempotent write repeated with identical arguments is refused or flagged. `true` takes
   * the defaults (N = 4, duplicate writes refused within 5 minutes unless keyed).
   */
  loopGuard?: LoopGuardOptions | boolean;
  /**
   * Background probes of open circuits (off by default): at each cooldown the runtime tries the
   * tool's `healthCheck`, or the call that opened the circuit when the tool is idempotent, and
   * closes the circuit on success. With Redis-shared breakers one process probes per cooldown.
   */
  breakerProbes?: boolean;
  /**
   * The pre-flight failure predictor (off by default): a model from `faultline predictor train`
   * scores each call before it runs; the estimate is `predictedFailure` on the result (in the
   * feedback of a failure) and `predicted_failure` in the record. With `refuseAbove`, a call at or
   * above it is refused unrun (`rejected` / `system` / `predicted_failure`).
   */
  predictor?: PredictorOptions;
}

export interface ExecuteOptions {
  traceId?: string;
  stepIndex?: number;
  /** What the agent is trying to do, in its words: the anchor for semantic checks later. */
  intent?: string;
  sessionId?: string;
  agent?: string;
  model?: string;
  /** More context_snapshot fields. */
  context?: Record<string, unknown>;
  /** Cancels the call (and its retries). */
  signal?: AbortSignal;
  /** Reuse a key across logical calls (e.g. an agent repeating a write it is unsure about). */
  idempotencyKey?: string;
}

export interface CallError {
  stage: FailureStage;
  category: FailureCategory;
  type: string;
  code: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  status?: number;
  /** For parameter failures: exactly what to fix. */
  issues?: ValidationIssue[];
  /** The error body the tool or service returned (redacted). */
  body?: unknown;
}

export interface CallFeedback {
  action: FeedbackAction;
  hint: string;
  retryable: boolean;
  retryAfterMs?: number;
  /** What fixed the same failure (same signature) the last time, from the correction memory. */
  lastRecovery?: LastRecovery;
  /** The failure predictor's estimate for the call, made before it ran (when the runtime has a predictor). */
  predictedFailure?: PredictedFailure;
}

export interface FallbackInfo {
  tool: string;
  reason: string;
  record: ToolExecutionRecord;
}

export type ExecuteResult<Output = unknown> =
  | { ok: true; output: Output; record: ToolExecutionRecord; fallbackFrom?: FallbackInfo; notice?: CallFeedback; predictedFailure?: PredictedFailure }
  | { ok: false; error: CallError; feedback: CallFeedback; record: ToolExecutionRecord; partial?: unknown; fallbackFrom?: FallbackInfo };

/** What an agent needs to know about a tool to call it. */
export interface ToolInfo {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  idempotent: boolean;
}

/** A trace: calls made through it share a trace id and get consecutive step indexes. */
export interface Session {
  readonly traceId: string;
  execute<Output = unknown>(toolName: string, args: unknown, options?: Omit<ExecuteOptions, 'traceId' | 'stepIndex'>): Promise<ExecuteResult<Output>>;
  /** `execute` with the arguments as the JSON text a model wrote (see `Runtime.executeJson`). */
  executeJson<Output = unknown>(toolName: string, argumentsJson: string, options?: Omit<ExecuteOptions, 'traceId' | 'stepIndex'>): Promise<ExecuteResult<Output>>;
}

export interface Runtime {
  /** The store records go to, when one was configured. */
  readonly store: Store | undefined;
  /** The correction memory; undefined when `correctionMemory: false`. */
  readonly corrections: CorrectionMemoryView | undefined;
  /** The adaptive timeouts of the tools that opted in (`adaptiveTimeout`). */
  readonly adaptiveTimeouts: {
    /** Settles once each tool's recent successes have been read back from the store. */
    readonly loaded: Promise<void>;
    /** The timeout the tool's next attempt gets, and why; undefined for a tool with a fixed timeout. */
    current(toolName: string): AttemptTimeout | undefined;
  };
  execute<Output = unknown>(toolName: string, args: unknown, options?: ExecuteOptions): Promise<ExecuteResult<Output>>;
  /**
   * Runs a call whose arguments are the JSON text a model produced (OpenAI `tool_calls[].function.arguments`).
   * Text that does not parse is not guessed at: the call is rejected at stage `request_build` with
   * type `malformed_arguments`, recorded with the raw text as `input_params`, and the feedback asks
   * the model to send valid JSON. An empty string means no arguments (`{}`).
   */
  executeJson<Output = unknown>(toolName: string, argumentsJson: string, options?: ExecuteOptions): Promise<ExecuteResult<Output>>;
  session(options?: Omit<ExecuteOptions, 'stepIndex' | 'signal' | 'idempotencyKey'>): Session;
  readonly tools: readonly ToolInfo[];
  readonly breakers: {
    state(toolName: string): BreakerSnapshot | undefined;
    snapshot(): Record<string, BreakerSnapshot>;
    restore(snapshot: Record<string, BreakerSnapshot>): void;
  };
  /**
   * Where this runtime's records are: `offered` = `stored` + `spooled` + `inMemory` + `dropped` +
   * `rejected` (see `RecordingStats`). Undefined when records go to no store of the runtime's (no
   * `store`, or a `recorder` of the caller's).
   */
  stats(): RecordingStats | undefined;
  /** Writes everything recorded so far. */
  flush(): Promise<void>;
  /**
   * Flushes and releases the recorder. Safe to call twice. A runtime that batches into a store and
   * is still open when the process runs out of work (`beforeExit`) is closed then. `process.exit()`
   * skips that, but the recorder then appends what it holds to its spool, replayed by the next
   * process (record/spool-at-exit.ts); a signal that kills the process loses what was only in
   * memory (at most `recording.maxQueue` records, at most `maxUnsavedMs` old), so call this (or use
   * `recording: { mode: 'durable' }`).
   */
  close(): Promise<void>;
}
