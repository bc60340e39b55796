/**
 * The tool runtime: validate -> breaker -> execute (timeout, signal) -> classify -> retry? ->
 * validate output -> feedback -> record. Tool failures come back as values, never as throws.
 */
import { ConfigError, DuplicateToolError, RuntimeClosedError, ToolDefinitionError } from '../core/errors.js';
import { isoTime } from '../record/iso-time.js';
import { paramsHash } from '../core/params-hash.js';
import { createRedactor, type FoundSecrets, type RedactOptions, type Redactor } from '../record/redact.js';
import { redactFault } from '../record/redact-fault.js';
import { uuidv7 } from '../record/uuid-v7.js';
import { DEFAULT_MAX_OUTPUT_CHARS, toJsonText, trimStack, truncateText } from '../record/truncate.js';
import {
  RECORD_SCHEMA_VERSION,
  type AttemptRecord,
  type FallbackLink,
  type LastRecovery,
  type RecordFeedback,
  type RecoveryMode,
  type ToolExecutionRecord,
} from '../core/record-types.js';
import type { FaultInjector, PlannedFault } from './fault-injector.js';
import { createRecorder, type Recorder, type RecorderOptions, type RecordingStats } from '../record/recorder.js';
import { openStoreLazily, STORE_SPEC_FORMS } from '../store/open-store.js';
import { hasCorrectionMemory } from '../store/corrections.js';
import type { Store } from '../core/store-types.js';
import type { InjectedFault } from '../core/record-types.js';
import type { RecordSink } from '../core/record-sink.js';
import { countsAgainstBreaker, type CallStatus, type FailureCategory, type FailureStage, type FeedbackAction } from '../core/taxonomy.js';
import { seededRandom } from '../core/seeded-random.js';
import { ConsecutiveBreaker, DEFAULT_BREAKER, type BreakerOptions, type BreakerProvider, type BreakerSnapshot } from './breaker.js';
import { classifyError, classifyOutput, rejection, timeoutClassification, type Classification } from './classify.js';
import { canSchedule, systemClock, type Clock } from '../core/clock.js';
import { closeBeforeExit } from './close-at-exit.js';
import { definedOnly, isTool, type JsonSchema, type Tool, type ToolAnnotations, type ToolContext } from './define-tool.js';
import { RuntimeCorrectionMemory, type CorrectionMemoryOptions, type CorrectionMemoryView } from './correction-memory.js';
import { buildFeedback, lastRecoveryHint, type FeedbackOverrides } from './feedback.js';
import { DEFAULT_RETRY, decideRetry, type RetryOptions, type StopReason } from './retry-policy.js';
import { closestNames } from './suggest.js';
import { describeIssues, failureTypeOf, redactIssues, type ValidationIssue } from './validate.js';

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
   * The correction memory (seed 004 section 6): recoveries that worked, per failure signature,
   * surfaced as `feedback.last_recovery` when the same failure comes back. On by default (kept in
   * the store when it has one, else in process); `false` turns it off. Bounds: `capacity`
   * (default 100) and `perSignature` (default 5).
   */
  correctionMemory?: CorrectionMemoryOptions | false;
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
}

export interface FallbackInfo {
  tool: string;
  reason: string;
  record: ToolExecutionRecord;
}

export type ExecuteResult<Output = unknown> =
  | { ok: true; output: Output; record: ToolExecutionRecord; fallbackFrom?: FallbackInfo }
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

interface RegisteredTool {
  tool: Tool;
  retry: RetryOptions;
  breaker: ConsecutiveBreaker;
}

type AttemptResult =
  | { kind: 'ok'; value: unknown }
  /** `fromTool`: the tool's own error, come through a planned fault unchanged. */
  | { kind: 'error'; error: unknown; fromTool?: true }
  | { kind: 'timeout' }
  | { kind: 'cancelled'; reason: unknown };

/** One logical call's bookkeeping, shared by its attempts. */
/** How much of a tool name the model made up is kept (registered names are not cut). */
const MAX_UNKNOWN_TOOL_NAME = 128;

interface Call {
  id: string;
  toolName: string;
  args: unknown;
  options: ExecuteOptions;
  traceId: string;
  stepIndex: number;
  startedAt: number;
  attempts: AttemptRecord[];
  idempotencyKey: string | undefined;
  fallback: FallbackLink | null;
  fault: InjectedFault | null;
  /** A planned fault that had nothing to act on (see `PlannedFault.onlyOnSuccess`); kept beside the record's `fault`. */
  faultNotApplied: InjectedFault | null;
  seededKeys: boolean;
  /** The context snapshot, when the call's session already built it (shared by its calls). */
  snapshot: Readonly<Record<string, unknown>> | undefined;
}

/** The secrets found in a session's shared context snapshot, to scrub from each of its records. */
const SHARED_SNAPSHOT_SECRETS = new WeakMap<object, FoundSecrets>();

/** The context handed to `execute`. The AbortController is made only if the tool asks for the signal. */
class AttemptContext implements ToolContext {
  private controller: AbortController | undefined;
  /** Set by a planned fault that runs the attempt as a dry run (lost_write). */
  dryRun = false;
  constructor(
    private readonly call: Call,
    readonly attempt: number,
    readonly clock: Clock,
  ) {}
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }
  get idempotencyKey(): string {
    const call = this.call;
    // Seeded runtimes are for reproducible runs (FailBench, tests): their keys derive from the
    // call's place in its trace, so a rerun sends the same keys. Otherwise keys are random.
    return (call.idempotencyKey ??=
      call.options.idempotencyKey ?? (call.seededKeys ? `idem-${call.traceId}-${call.stepIndex}-${call.toolName}` : uuidv7()));
  }
  get traceId(): string {
    return this.call.traceId;
  }
  get toolName(): string {
    return this.call.toolName;
  }
  /** The arguments as the call gave them, as the fault injector saw them (before defaults were filled in). */
  get callArgs(): unknown {
    return this.call.args;
  }
  abort(reason: unknown): void {
    this.controller?.abort(reason);
  }
}

const MAX_TRACKED_TRACES = 10_000;

/** Arguments that arrived as JSON text that does not parse; `run` rejects the call at request_build. */
class MalformedArguments {
  constructor(
    readonly raw: string,
    readonly reason: string,
  ) {}
}

function parseArguments(argumentsJson: string): unknown {
  if (argumentsJson.trim() === '') return {};
  try {
    return JSON.parse(argumentsJson) as unknown;
  } catch (error) {
    return new MalformedArguments(argumentsJson, error instanceof Error ? error.message : String(error));
  }
}

/**
 * Creates a runtime over a set of tools.
 *
 * @example
 * const rt = createRuntime({ tools: [getWeather], onRecord: (r) => console.log(r.status) });
 * const r = await rt.execute('get_weather', { city: 'Paris' }, { traceId: 'run-1', intent: 'weather in Paris tomorrow' });
 * if (!r.ok) console.log(r.feedback.action, r.feedback.hint);
 * await rt.close();
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  if (typeof options !== 'object' || options === null || !Array.isArray(options.tools)) {
    throw new ToolDefinitionError('(runtime)', 'createRuntime needs { tools: [...] }');
  }
  const clock = options.clock ?? systemClock;
  const random = options.seed === undefined ? Math.random : seededRandom(options.seed);
  const redactor: Redactor | undefined = options.redact === false ? undefined : createRedactor(options.redact ?? {});
  const maxOutputChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const runtimeRetry: RetryOptions = { ...DEFAULT_RETRY, ...definedOnly(options.retry) };
  const runtimeBreaker: BreakerOptions = { ...DEFAULT_BREAKER, ...definedOnly(options.breaker) };
  if (options.store !== undefined && options.recorder !== undefined) {
    throw new ToolDefinitionError('(runtime)', 'pass either store or recorder, not both');
  }
  // Anything else would be ignored in silence, and the records with it.
  const storeOption = options.store as unknown;
  const isStoreObject = typeof storeOption === 'object' && storeOption !== null && typeof (storeOption as Store).insert === 'function';
  if (storeOption !== undefined && typeof storeOption !== 'string' && !isStoreObject) {
    throw new ConfigError(`store must be a spec (${STORE_SPEC_FORMS}) or a Store with insert(), got ${storeOption === null ? 'null' : typeof storeOption}`, 'store');
  }
  const recorderOption = options.recorder as unknown;
  if (recorderOption !== undefined && (typeof recorderOption !== 'object' || recorderOption === null || typeof (recorderOption as RecordSink).enqueue !== 'function')) {
    throw new ConfigError(`recorder must be an object with enqueue(record), got ${recorderOption === null ? 'null' : typeof recorderOption}`, 'recorder');
  }
  // A store given by spec is opened (lazily) and closed by the runtime; a Store object stays the caller's.
  const ownedStore =
    typeof options.store === 'string'
      ? // A SQLite file gets its writer in a worker thread: the transactions then run beside the agent
        // instead of stalling its event loop, and on another core.
        openStoreLazily(options.store, { sqliteWriter: 'worker' })
      : undefined;
  const store: Store | undefined = ownedStore ?? (typeof options.store === 'object' ? options.store : undefined);
  const reportListenerError =
    options.onListenerError ??
    ((error: unknown, where: string) => {
      process.emitWarning(`faultline: ${where} threw: ${error instanceof Error ? error.message : String(error)}`);
    });
  const reportStoreError = options.recording?.onError ?? storeErrorReporter(options.onListenerError);
  const ownRecorder: Recorder | undefined =
    options.recorder !== undefined || store === undefined ? undefined : createRecorder({ ...options.recording, store, onError: reportStoreError });
  const recorder: RecordSink | undefined = options.recorder ?? ownRecorder;
  const onRecord = options.onRecord;
  const faults = options.faults;

  const corrections = createCorrectionMemory(options, store, reportStoreError);

  const registry = new Map<string, RegisteredTool>();
  for (const tool of options.tools) {
    if (!isTool(tool)) throw new ToolDefinitionError(String((tool as { name?: unknown })?.name), 'tools must be created with defineTool()');
    if (registry.has(tool.name)) throw new DuplicateToolError(tool.name);
    registry.set(tool.name, {
      tool,
      retry: { ...runtimeRetry, ...tool.retry },
      breaker: options.breakers?.breakerFor(tool.name, { ...runtimeBreaker, ...tool.breaker }) ?? new ConsecutiveBreaker({ ...runtimeBreaker, ...tool.breaker }),
    });
  }
  for (const { tool } of registry.values()) {
    if (tool.fallback !== undefined && !registry.has(tool.fallback)) {
      throw new ToolDefinitionError(tool.name, `fallback "${tool.fallback}" is not a registered tool`);
    }
  }
  const toolInfos: ToolInfo[] = [...registry.values()].map(({ tool }) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    idempotent: tool.idempotent,
  }));

  const stepCounters = new Map<string, number>();
  let closed = false;
  let closing: Promise<void> | undefined;

  function nextStep(traceId: string): number {
    const step = stepCounters.get(traceId) ?? 0;
    if (step === 0 && stepCounters.size >= MAX_TRACKED_TRACES) {
      const oldest = stepCounters.keys().next().value;
      if (oldest !== undefined) stepCounters.delete(oldest);
    }
    stepCounters.set(traceId, step + 1);
    return step;
  }

  const seededKeys = options.seed !== undefined;

  function newCall(toolName: string, args: unknown, opts: ExecuteOptions, startedAt: number, snapshot: Call['snapshot']): Call {
    const id = uuidv7(startedAt);
    const traceId = opts.traceId ?? id;
    return {
      id,
      toolName,
      args,
      options: opts,
      traceId,
      stepIndex: opts.stepIndex ?? (opts.traceId === undefined ? 0 : nextStep(traceId)),
      startedAt,
      attempts: [],
      idempotencyKey: undefined,
      fallback: null,
      fault: null,
      faultNotApplied: null,
      seededKeys,
      snapshot,
    };
  }

  /**
   * Shows the injector what the tool answered (what a later `stale` fault may replay), as the
   * proxies show their plan every answer they pass on. A stale fault remembers its own.
   */
  function observed(call: { toolName: string; args: unknown }, output: unknown): unknown {
    if (faults?.observe === undefined) return output;
    const show = (value: unknown) => {
      try {
        faults.observe!({ toolName: call.toolName, args: call.args, output: value, now: clock.now() });
      } catch (error) {
        reportListenerError(error, 'faults.observe');
      }
      return value;
    };
    return output !== null && typeof (output as PromiseLike<unknown>)?.then === 'function' ? Promise.resolve(output).then(show) : show(output);
  }

  /** `toolFailure` is given the tool's own error, when a planned fault ran the tool and it threw. */
  function startTool(entry: RegisteredTool, args: unknown, ctx: AttemptContext, planned: PlannedFault | undefined, toolFailure: { error?: unknown }): unknown {
    const call = { toolName: entry.tool.name, args: ctx.callArgs };
    if (planned === undefined) return observed(call, entry.tool.execute(args, ctx));
    const runTool = (options?: { dryRun?: boolean }) =>
      Promise.resolve()
        .then(() => {
          if (options?.dryRun === true) ctx.dryRun = true;
          const output = entry.tool.execute(args, ctx);
          return planned.fault.kind === 'stale' ? output : observed(call, output);
        })
        .catch((error: unknown) => {
          toolFailure.error = error;
          throw error;
        });
    const pending = planned.replace !== undefined ? planned.replace(ctx, runTool) : runTool();
    const transform = planned.transform;
    return transform === undefined ? pending : Promise.resolve(pending).then((output) => transform(output, ctx));
  }

  function runAttempt(
    entry: RegisteredTool,
    args: unknown,
    ctx: AttemptContext,
    signal: AbortSignal | undefined,
    startedAt: number,
    planned: PlannedFault | undefined,
  ): Promise<AttemptResult> {
    const timeoutMs = entry.tool.timeoutMs;
    return new Promise<AttemptResult>((resolve) => {
      let settled = false;
      let cancelTimer: () => void;
      let onCallerAbort: (() => void) | undefined;
      const settle = (result: AttemptResult) => {
        if (settled) return;
        settled = true;
        cancelTimer();
        if (onCallerAbort !== undefined) signal!.removeEventListener('abort', onCallerAbort);
        resolve(result);
      };
      const onTimeout = () => {
        if (settled) return;
        ctx.abort(new DOMException(`${entry.tool.name} timed out after ${timeoutMs} ms`, 'TimeoutError'));
        settle({ kind: 'timeout' });
      };
      const deadline = startedAt + timeoutMs;
      if (canSchedule(clock)) {
        cancelTimer = clock.schedule(deadline, onTimeout);
      } else {
        const stopSleep = new AbortController();
        clock.sleep(timeoutMs, stopSleep.signal).then(onTimeout, () => undefined);
        cancelTimer = () => stopSleep.abort();
      }
      if (signal !== undefined) {
        onCallerAbort = () => {
          ctx.abort(signal.reason);
          settle({ kind: 'cancelled', reason: signal.reason });
        };
        signal.addEventListener('abort', onCallerAbort, { once: true });
      }
      let pending: unknown;
      const toolFailure: { error?: unknown } = {};
      try {
        pending = startTool(entry, args, ctx, planned, toolFailure);
      } catch (error) {
        settle({ kind: 'error', error });
        return;
      }
      if (pending !== null && typeof (pending as PromiseLike<unknown>)?.then === 'function') {
        (pending as PromiseLike<unknown>).then(
          (value) => settle({ kind: 'ok', value }),
          (error: unknown) => settle('error' in toolFailure && toolFailure.error === error ? { kind: 'error', error, fromTool: true } : { kind: 'error', error }),
        );
      } else {
        settle({ kind: 'ok', value: pending });
      }
    });
  }

  function planFault(call: Call, entry: RegisteredTool, attempt: number, now: number): PlannedFault | undefined {
    try {
      return faults!.plan({ toolName: call.toolName, args: call.args, attempt, traceId: call.traceId, now, idempotent: entry.tool.idempotent });
    } catch (error) {
      reportListenerError(error, 'faults.plan');
      return undefined;
    }
  }

  function emit(record: ToolExecutionRecord): Promise<void> | undefined {
    if (onRecord !== undefined) {
      try {
        onRecord(record);
      } catch (error) {
        try {
          reportListenerError(error, 'onRecord');
        } catch {
          // A failing error handler must not break the call either.
        }
      }
    }
    if (recorder === undefined) return undefined;
    // A sink of the user's own may throw, reject, or return what `push` returns (`enqueue: (r) =>
    // records.push(r)`): none of that may break the call, as a store failure may not.
    let wait: unknown;
    try {
      wait = recorder.enqueue(record);
    } catch (error) {
      reportSinkError(error);
      return undefined;
    }
    if (wait === undefined || typeof (wait as PromiseLike<void> | null)?.then !== 'function') return undefined;
    return Promise.resolve(wait as PromiseLike<void>).then(undefined, reportSinkError);
  }
  function reportSinkError(error: unknown): void {
    try {
      reportListenerError(error, 'recorder.enqueue');
    } catch {
      // A failing error handler must not break the call either.
    }
  }

  function redactValue<T>(value: T, found?: FoundSecrets): T {
    return redactor === undefined ? value : redactor.value(value, found);
  }
  function redactText(text: string, found?: FoundSecrets): string {
    return redactor === undefined ? text : redactor.text(text, found);
  }
  /** `record` with each secret found in one of its fields scrubbed from all of them (see FoundSecrets). */
  function scrubbed(record: ToolExecutionRecord, found: FoundSecrets): ToolExecutionRecord {
    return redactor === undefined || found.length === 0 ? record : redactor.scrubRecord(record, found);
  }

  function contextSnapshot(opts: ExecuteOptions, found?: FoundSecrets): Record<string, unknown> {
    if (options.context === undefined && opts.intent === undefined && opts.sessionId === undefined && opts.agent === undefined && opts.model === undefined && opts.context === undefined) {
      return {};
    }
    const snapshot: Record<string, unknown> = {};
    if (options.context !== undefined) Object.assign(snapshot, options.context);
    if (opts.intent !== undefined) snapshot['intent'] = opts.intent;
    if (opts.sessionId !== undefined) snapshot['session_id'] = opts.sessionId;
    if (opts.agent !== undefined) snapshot['agent'] = opts.agent;
    if (opts.model !== undefined) snapshot['model'] = opts.model;
    if (opts.context !== undefined) Object.assign(snapshot, opts.context);
    return redactValue(snapshot, found);
  }

  /** A session's snapshot, frozen because its calls' records share it; what was secret in it is kept beside it. */
  function sharedSnapshot(opts: ExecuteOptions): Readonly<Record<string, unknown>> {
    const found: FoundSecrets = [];
    const snapshot = Object.freeze(contextSnapshot(opts, found));
    if (found.length !== 0) SHARED_SNAPSHOT_SECRETS.set(snapshot, found);
    return snapshot;
  }

  /** The context of a call's record, and what was secret in it added to `found`. */
  function recordContext(call: Call, found: FoundSecrets): Record<string, unknown> {
    let snapshot: Record<string, unknown>;
    if (call.snapshot === undefined) {
      snapshot = contextSnapshot(call.options, found);
    } else {
      snapshot = call.snapshot;
      const shared = SHARED_SNAPSHOT_SECRETS.get(call.snapshot);
      if (shared !== undefined) found.push(...shared);
    }
    return call.fault === null && call.faultNotApplied !== null ? { ...snapshot, fault_not_applied: redactValue(call.faultNotApplied, found) } : snapshot;
  }

  interface Ending {
    status: CallStatus;
    classification?: Classification;
    issues?: ValidationIssue[];
    output?: unknown;
    feedback?: RecordFeedback;
    recovery: RecoveryMode;
    breaker: ConsecutiveBreaker | undefined;
    idempotent: boolean;
    /** When the call ended, if the caller already read the clock. */
    endedAt?: number;
  }

  /** The call's record, each piece redacted and what was secret in it added to `found` (the caller scrubs). */
  function buildRecord(call: Call, end: Ending, found: FoundSecrets): ToolExecutionRecord {
    const params = redactValue(call.args, found);
    const c = end.classification;
    let rawOutput: string | null = null;
    let outputLength: number | null = null;
    const shown = end.output !== undefined ? end.output : c?.body;
    if (shown !== undefined) {
      const text = toJsonText(redactValue(shown, found));
      outputLength = text.length;
      rawOutput = truncateText(text, maxOutputChars);
    }
    const now = end.endedAt ?? clock.now();
    return {
      execution_id: call.id,
      trace_id: call.traceId,
      step_index: call.stepIndex,
      tool_name: call.toolName,
      status: end.status,
      failure_stage: c?.stage ?? null,
      failure_category: c?.category ?? null,
      failure_type: c?.type ?? null,
      error_code: c?.code ?? null,
      input_params: params,
      params_hash: paramsHash(params),
      raw_output: rawOutput,
      output_length: outputLength,
      // The classification's message and issues arrive redacted (see finishFailure).
      error_message: c === undefined ? null : end.issues !== undefined ? `${c.message}: ${describeIssues(end.issues)}` : c.message,
      error_stack: c?.stack === undefined ? null : redactText(trimStack(c.stack) ?? '', found),
      duration_ms: Math.max(0, now - call.startedAt),
      retry_count: Math.max(0, call.attempts.length - 1),
      attempts: call.attempts,
      breaker_state: end.breaker?.currentState ?? 'closed',
      idempotent: end.idempotent,
      fault: redactFault(call.fault, redactor, found),
      feedback: end.feedback ?? null,
      recovery: end.recovery,
      fallback: call.fallback,
      context_snapshot: recordContext(call, found),
      created_at: isoTime(call.startedAt),
      schema_version: RECORD_SCHEMA_VERSION,
      summary_only: false,
    };
  }

  // Not async: on the common path (no backpressure) the result is returned without an extra
  // promise, which saves microtask turns on every successful call.
  function finishSuccess(call: Call, entry: RegisteredTool, output: unknown, recovered: boolean, endedAt: number): ExecuteResult | Promise<ExecuteResult> {
    const found: FoundSecrets = [];
    const built = buildRecord(
      call,
      {
        endedAt,
        status: 'success',
        output,
        recovery: recovered ? 'auto_recovered' : 'none',
        breaker: entry.breaker,
        idempotent: entry.tool.idempotent,
      },
      found,
    );
    const record = scrubbed(built, found);
    const result: ExecuteResult = { ok: true, output, record };
    if (corrections?.tracking === true) corrections.noteSuccess(record, call.startedAt);
    const wait = emit(record);
    return wait === undefined ? result : wait.then(() => result);
  }

  interface FailureDetails {
    status: CallStatus;
    classification: Classification;
    issues?: ValidationIssue[];
    entry: RegisteredTool | undefined;
    stopReason: StopReason | undefined;
    suggestions?: string[];
    retryAfterMs?: number;
    fallbackTool?: string;
    /** The runtime sent the call to the fallback tool (for the primary's record). */
    fallbackUsed?: { tool: string; reason: string };
    recovery?: RecoveryMode;
  }

  /** A non-idempotent call that ran and failed in a way that may have taken effect (timeout, reset, 500/502/504). */
  function isAmbiguousWrite(call: Call, d: FailureDetails): boolean {
    const tool = d.entry?.tool;
    return d.classification.ambiguous && tool !== undefined && !tool.idempotent && call.attempts.length > 0;
  }

  function failureFeedback(call: Call, d: FailureDetails): RecordFeedback {
    const tool = d.entry?.tool;
    const c = d.classification;
    const feedback = buildFeedback(
      {
        toolName: call.toolName,
        classification: c,
        issues: d.issues,
        attempts: call.attempts.length,
        ambiguousWrite: isAmbiguousWrite(call, d),
        canRefreshCredential: options.refreshCredential !== undefined,
        fallbackTool: d.fallbackTool ?? tool?.fallback,
        suggestions: d.suggestions ?? [],
        retryAfterMs: d.retryAfterMs ?? c.retryAfterMs,
      },
      [tool?.feedback, options.feedback],
    );
    if (d.fallbackUsed !== undefined) {
      // The runtime already acted on the failure; the record says what it did.
      feedback.action = 'use_fallback';
      feedback.hint = `${call.toolName} failed (${c.code}, ${d.fallbackUsed.reason.replace(/_/g, ' ')}); the call went to ${d.fallbackUsed.tool} instead.`;
    }
    return { action: feedback.action, hint: feedback.hint, retryable: feedback.retryable, retry_after_ms: feedback.retryAfterMs ?? null };
  }

  async function finishFailure(call: Call, failure: FailureDetails): Promise<ExecuteResult & { ok: false }> {
    // Messages and issues can quote secrets back (an echoed token, a key sent as an enum value);
    // they reach the record and the agent's context, so both see only the redacted text.
    // Object.assign, not spread: on Node 20 `{ ...x, key: value }` costs about 1 us (see the session's execute).
    // A secret found in one piece (a key in the arguments) is scrubbed from all of them (the
    // message that echoes it), in the record and in what the agent gets.
    const found: FoundSecrets = [];
    const d: FailureDetails = Object.assign({}, failure, {
      classification: Object.assign({}, failure.classification, { message: redactText(failure.classification.message, found) }),
    });
    if (failure.issues !== undefined) d.issues = redactor === undefined ? failure.issues : redactIssues(failure.issues, redactor);
    const built = buildRecord(
      call,
      {
        status: d.status,
        classification: d.classification,
        ...(d.issues !== undefined ? { issues: d.issues } : {}),
        feedback: failureFeedback(call, d),
        recovery: d.recovery ?? 'needs_decision',
        breaker: d.entry?.breaker,
        idempotent: d.entry?.tool.idempotent ?? false,
      },
      found,
    );
    const record = scrubbed(built, found);
    if (found.length !== 0 && d.issues !== undefined) d.issues = redactor!.scrub(d.issues, found);
    const feedback = record.feedback!;
    if (corrections !== undefined) consultCorrections(corrections, call, d, feedback, record);
    const wait = emit(record);
    if (wait !== undefined) await wait;
    const c = d.classification;
    const error: CallError = {
      stage: c.stage,
      category: c.category,
      type: c.type,
      code: c.code,
      message: record.error_message ?? c.message,
      retryable: feedback.retryable,
    };
    if (feedback.retry_after_ms !== null) error.retryAfterMs = feedback.retry_after_ms;
    if (c.status !== undefined) error.status = c.status;
    if (d.issues !== undefined) error.issues = d.issues;
    if (c.body !== undefined) error.body = found.length === 0 ? redactValue(c.body) : redactor!.scrub(redactValue(c.body, found), found);
    const callFeedback: CallFeedback = { action: feedback.action, hint: feedback.hint, retryable: feedback.retryable };
    if (feedback.retry_after_ms !== null) callFeedback.retryAfterMs = feedback.retry_after_ms;
    if (feedback.last_recovery !== undefined) callFeedback.lastRecovery = feedback.last_recovery;
    const result: ExecuteResult & { ok: false } = { ok: false, error, feedback: callFeedback, record };
    if (c.partial !== undefined) result.partial = c.partial;
    return result;
  }

  function toCallError(c: Classification): CallError {
    return { stage: c.stage, category: c.category, type: c.type, code: c.code, message: c.message, retryable: false };
  }

  /** Adds the last recovery to a failure's feedback, and remembers the failure until its trace recovers it. */
  function consultCorrections(memory: RuntimeCorrectionMemory, call: Call, d: FailureDetails, feedback: RecordFeedback, record: ToolExecutionRecord): void {
    const ambiguousWrite = isAmbiguousWrite(call, d);
    if (d.fallbackUsed === undefined) {
      const last = memory.lastRecoveryFor(record, ambiguousWrite);
      if (last !== undefined) {
        feedback.last_recovery = last;
        feedback.hint = `${feedback.hint} ${lastRecoveryHint(last)}`;
      }
    }
    if (call.options.traceId !== undefined && record.recovery === 'needs_decision') memory.noteFailure(record, call.startedAt + record.duration_ms, ambiguousWrite);
  }

  function learnRefresh(call: Call, c: Classification, endedAt: number): void {
    if (corrections === undefined) return;
    const failed = {
      status: 'failure' as const,
      tool_name: call.toolName,
      failure_stage: c.stage,
      failure_category: c.category,
      failure_type: c.type,
      error_code: c.code,
      error_message: redactText(c.message),
      trace_id: call.traceId,
    };
    corrections.learn(failed, { action: 'refresh_credential' }, isoTime(endedAt));
  }

  async function viaFallback(call: Call, entry: RegisteredTool, failure: FailureDetails, reason: string, depth: number): Promise<ExecuteResult> {
    const fallbackName = entry.tool.fallback!;
    call.fallback = { role: 'primary', to: fallbackName, reason };
    const fallbackResult = await run(fallbackName, call.args, call.options, depth + 1, {
      role: 'fallback',
      from: call.toolName,
      primary_execution_id: call.id,
      reason,
    });
    const primary = await finishFailure(call, {
      ...failure,
      fallbackTool: fallbackName,
      fallbackUsed: { tool: fallbackName, reason },
      recovery: fallbackResult.ok ? 'auto_recovered' : 'needs_decision',
    });
    if (fallbackResult.ok && corrections !== undefined) {
      corrections.learn(primary.record, { action: 'switch_tool', tool: fallbackName, note: `runtime fallback (${reason.replace(/_/g, ' ')})` }, fallbackResult.record.created_at);
    }
    return { ...fallbackResult, fallbackFrom: { tool: call.toolName, reason, record: primary.record } };
  }

  async function run(
    toolName: string,
    args: unknown,
    opts: ExecuteOptions,
    depth: number,
    fallbackOf: FallbackLink | null,
    snapshot?: Call['snapshot'],
  ): Promise<ExecuteResult> {
    const startedAt = clock.now();
    const call = newCall(toolName, args, opts, startedAt, snapshot);
    call.fallback = fallbackOf;
    if (fallbackOf !== null) call.stepIndex = opts.stepIndex ?? call.stepIndex;

    const entry = registry.get(toolName);
    if (entry === undefined) {
      const suggestions = closestNames(toolName, registry.keys());
      // The model made this name up: it may hold anything (a pasted key, a whole prompt), and it
      // goes into the record, the stats and the hint, so it is redacted and cut like any text.
      // Redacted before it is cut: a key cut in half no longer matches its rule, and its first
      // half would be stored. The first cut only bounds the redactor's work; whatever a secret
      // across it leaves lies beyond the final cut.
      call.toolName = truncateText(redactText(toolName.slice(0, 4096)), MAX_UNKNOWN_TOOL_NAME);
      return finishFailure(call, {
        status: 'rejected',
        classification: rejection('request_build', 'parameter', 'unknown_tool', 'UNKNOWN_TOOL', `unknown tool "${call.toolName}"`),
        entry: undefined,
        stopReason: undefined,
        suggestions,
      });
    }
    const tool = entry.tool;

    if (args instanceof MalformedArguments) {
      call.args = args.raw;
      return finishFailure(call, {
        status: 'rejected',
        classification: rejection('request_build', 'parameter', 'malformed_arguments', 'MALFORMED_ARGUMENTS', args.reason),
        entry,
        stopReason: undefined,
      });
    }

    const validated = tool.validateInput(args);
    if (!validated.ok) {
      const type = failureTypeOf(validated.issues);
      return finishFailure(call, {
        status: 'rejected',
        classification: rejection('param_validation', 'parameter', type, 'INVALID_ARGUMENTS', `invalid arguments for ${toolName}`),
        issues: validated.issues,
        entry,
        stopReason: undefined,
      });
    }

    const breaker = entry.breaker;
    if (breaker.admit(startedAt) === 'reject') {
      const snapshot = breaker.snapshot();
      const remaining = snapshot.openedAt === null ? undefined : Math.max(0, snapshot.openedAt + breaker.options.cooldownMs - startedAt);
      const failure: FailureDetails = {
        status: 'rejected',
        classification: rejection('execution', 'system', 'circuit_open', 'CIRCUIT_OPEN', `the circuit for ${toolName} is open`),
        entry,
        stopReason: 'circuit_open',
        ...(remaining !== undefined ? { retryAfterMs: remaining } : {}),
      };
      if (tool.fallback !== undefined && depth === 0) return viaFallback(call, entry, failure, 'circuit_open', depth);
      return finishFailure(call, failure);
    }

    const signal = opts.signal;
    const safeToRepeat = tool.idempotent || tool.idempotencyKey;
    let canRefresh = options.refreshCredential !== undefined;
    let refreshed = false;
    /** The auth failure a credential refresh answered, for the correction memory. */
    let refreshedAfter: Classification | undefined;
    let delay = 0;
    for (let attempt = 0; ; attempt++) {
      if (delay > 0) {
        try {
          await clock.sleep(delay, signal);
        } catch {
          breaker.onNeutral();
          return finishFailure(call, {
            status: 'failure',
            classification: rejection('execution', 'system', 'cancelled', 'ABORTED', `the call to ${toolName} was cancelled`),
            entry,
            stopReason: 'cancelled',
          });
        }
      }
      if (attempt > 0 && breaker.currentState === 'open') {
        // Another call opened the circuit while this one was waiting to retry.
        break;
      }
      const attemptStart = attempt === 0 ? startedAt : clock.now();
      const ctx = new AttemptContext(call, attempt, clock);
      const planned = faults === undefined ? undefined : planFault(call, entry, attempt, attemptStart);
      const result = await runAttempt(entry, validated.value, ctx, signal, attemptStart, planned);
      const attemptEnd = clock.now();
      // `fault` is ground truth: a fault that met the tool's own failure left it as it was, as the proxies record it.
      const skipped = planned?.onlyOnSuccess === true && result.kind === 'error' && result.fromTool === true;
      const applied = skipped ? undefined : planned;
      if (applied !== undefined) call.fault ??= applied.fault;
      else if (skipped) call.faultNotApplied ??= planned.fault;

      let classification: Classification | undefined;
      let issues: ValidationIssue[] | undefined;
      let output: unknown;
      switch (result.kind) {
        case 'ok':
          output = result.value;
          classification = classifyOutput(output, attemptEnd);
          if (classification === undefined && tool.validateOutput !== undefined) {
            const checked = tool.validateOutput(output);
            if (!checked.ok) {
              issues = checked.issues;
              classification = rejection('result_parse', 'system', 'output_schema_mismatch', 'OUTPUT_SCHEMA_MISMATCH', `${toolName} returned output that does not match its schema`);
              classification.body = output;
            }
          }
          break;
        case 'error':
          classification = classifyError(result.error, attemptEnd);
          break;
        case 'timeout':
          classification = timeoutClassification(tool.timeoutMs);
          break;
        case 'cancelled':
          classification = rejection('execution', 'system', 'cancelled', 'ABORTED', `the call to ${toolName} was cancelled`);
          break;
      }

      call.attempts.push({
        attempt,
        started_at: isoTime(attemptStart),
        duration_ms: attemptEnd - attemptStart,
        outcome: classification === undefined ? 'success' : result.kind === 'timeout' ? 'timeout' : 'failure',
        failure_type: classification?.type ?? null,
        error_code: classification?.code ?? null,
        delay_before_ms: delay,
        ...(faults !== undefined ? { fault_kind: applied?.fault.kind ?? null } : {}),
      });

      if (classification === undefined) {
        breaker.onSuccess();
        if (refreshedAfter !== undefined) learnRefresh(call, refreshedAfter, attemptEnd);
        return finishSuccess(call, entry, output, attempt > 0 || refreshed, attemptEnd);
      }

      let tripped = false;
      if (countsAgainstBreaker(classification.category, classification.type)) tripped = breaker.onFailure(attemptEnd);
      else breaker.onNeutral();

      const decision: ReturnType<typeof decideRetry> = tripped
        ? { kind: 'stop', reason: 'circuit_open' }
        : decideRetry(classification, { attempt, safeToRepeat, canRefresh }, entry.retry, random);

      if (decision.kind === 'refresh_credential') {
        canRefresh = false;
        let ok = false;
        try {
          ok = (await options.refreshCredential!({ toolName, error: toCallError(classification) })) !== false;
        } catch (error) {
          reportListenerError(error, 'refreshCredential');
        }
        if (ok) {
          refreshed = true;
          refreshedAfter = classification;
          delay = 0;
          continue;
        }
      } else if (decision.kind === 'retry') {
        delay = decision.delayMs;
        continue;
      }

      const stopReason: StopReason = decision.kind === 'stop' ? decision.reason : 'not_retryable';
      const failure: FailureDetails = {
        status: classification.type === 'timeout' ? 'timeout' : 'failure',
        classification,
        ...(issues !== undefined ? { issues } : {}),
        entry,
        stopReason,
      };
      const exhaustedRateLimit = classification.category === 'rate_limit';
      if (tool.fallback !== undefined && depth === 0 && (tripped || exhaustedRateLimit)) {
        return viaFallback(call, entry, failure, tripped ? 'circuit_open' : 'rate_limit_exhausted', depth);
      }
      return finishFailure(call, failure);
    }
    // Reached only when another call opened the circuit between this call's attempts.
    const last = call.attempts[call.attempts.length - 1]!;
    const classification = rejection('execution', 'system', 'circuit_open', 'CIRCUIT_OPEN', `the circuit for ${toolName} opened during retries (last failure: ${last.failure_type ?? 'unknown'})`);
    const failure: FailureDetails = { status: 'failure', classification, entry, stopReason: 'circuit_open' };
    if (tool.fallback !== undefined && depth === 0) return viaFallback(call, entry, failure, 'circuit_open', depth);
    return finishFailure(call, failure);
  }

  const runtime: Runtime = {
    execute<Output>(toolName: string, args: unknown, opts: ExecuteOptions = {}): Promise<ExecuteResult<Output>> {
      if (closed) return Promise.reject(new RuntimeClosedError());
      return run(toolName, args, opts, 0, null) as Promise<ExecuteResult<Output>>;
    },
    executeJson<Output>(toolName: string, argumentsJson: string, opts: ExecuteOptions = {}): Promise<ExecuteResult<Output>> {
      return runtime.execute<Output>(toolName, parseArguments(argumentsJson), opts);
    },
    session(sessionOptions = {}) {
      const traceId = sessionOptions.traceId ?? uuidv7();
      let step = 0;
      // Built (and redacted) once for the session's calls that add no context of their own; frozen
      // because their records share it.
      let snapshot: Call['snapshot'];
      function execute<Output>(toolName: string, args: unknown, opts: Omit<ExecuteOptions, 'traceId' | 'stepIndex'> = {}) {
        if (closed) return Promise.reject(new RuntimeClosedError());
        // Object.assign, not `{ ...sessionOptions, ...opts, traceId, stepIndex }`: on Node 20 (V8
        // 11.3) an object literal that spreads an object and then adds keys takes about 1 us, a
        // tenth of a whole call, where this takes a few tens of ns.
        const merged: ExecuteOptions = Object.assign({}, sessionOptions, opts, { traceId, stepIndex: step++ });
        const own = 'intent' in opts || 'sessionId' in opts || 'agent' in opts || 'model' in opts || 'context' in opts;
        const shared = own ? undefined : (snapshot ??= sharedSnapshot(merged));
        return run(toolName, args, merged, 0, null, shared) as Promise<ExecuteResult<Output>>;
      }
      return {
        traceId,
        execute,
        executeJson: (toolName, argumentsJson, opts) => execute(toolName, parseArguments(argumentsJson), opts),
      };
    },
    store,
    corrections,
    tools: toolInfos,
    breakers: {
      state: (name) => registry.get(name)?.breaker.snapshot(),
      snapshot() {
        const out: Record<string, BreakerSnapshot> = {};
        for (const [name, entry] of registry) out[name] = entry.breaker.snapshot();
        return out;
      },
      restore(snapshot) {
        for (const [name, state] of Object.entries(snapshot)) registry.get(name)?.breaker.restore(state);
      },
    },
    stats: () => ownRecorder?.recording(),
    async flush() {
      await recorder?.flush?.();
      await corrections?.flush();
    },
    close() {
      closed = true;
      forgetAtExit?.();
      closing ??= (async () => {
        await corrections?.flush();
        await recorder?.close?.();
        await ownedStore?.close();
      })();
      return closing;
    },
  };
  // A runtime that batches into a store is closed at `beforeExit` if the caller has not closed it,
  // so that a script which forgets `rt.close()` still stores its last batch.
  const forgetAtExit = options.recorder === undefined && recorder !== undefined ? closeBeforeExit(() => runtime.close()) : undefined;
  return runtime;
}

/** At most one warning a minute about the store: the recorder and the correction memory both meet an outage. */
const STORE_WARNING_INTERVAL_MS = 60_000;

/**
 * What the runtime does with store errors (writes of records and corrections) when
 * `recording.onError` is not set: tells `onListenerError` (as `store`), or warns that the store
 * cannot be written and that records are kept, at most once a minute.
 */
function storeErrorReporter(onListenerError: RuntimeOptions['onListenerError']): (error: unknown) => void {
  if (onListenerError !== undefined) return (error) => onListenerError(error, 'store');
  let warnedAt = -Infinity;
  return (error) => {
    const now = Date.now();
    if (now - warnedAt < STORE_WARNING_INTERVAL_MS) return;
    warnedAt = now;
    const message = error instanceof Error ? error.message : String(error);
    process.emitWarning(`faultline: cannot write to the store (${message}); records are kept (queue or spool) and sent again when it answers`);
  };
}

/** The runtime's correction memory, kept in the store when it has one; undefined when turned off. */
function createCorrectionMemory(options: RuntimeOptions, store: Store | undefined, onError: (error: unknown) => void): RuntimeCorrectionMemory | undefined {
  if (options.correctionMemory === false) return undefined;
  try {
    return new RuntimeCorrectionMemory(options.correctionMemory ?? {}, hasCorrectionMemory(store) ? store : undefined, onError);
  } catch (error) {
    throw new ToolDefinitionError('(runtime)', (error as Error).message);
  }
}
