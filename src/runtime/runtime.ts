/**
 * The tool runtime: validate -> breaker -> execute (timeout, signal) -> classify -> retry? ->
 * validate output -> feedback -> record. Tool failures come back as values, never as throws.
 * The parts: registry.ts (tools), execute-call.ts (a call), call-loop.ts (its attempts),
 * attempt.ts (one attempt), call-result.ts and call-record.ts (its result and record),
 * runtime-recording.ts (where records go).
 */
import { RuntimeClosedError, ToolDefinitionError } from '../core/errors.js';
import { createRedactor } from '../record/redact.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from '../record/truncate.js';
import { uuidv7 } from '../record/uuid-v7.js';
import { seededRandom } from '../core/seeded-random.js';
import { DEFAULT_BREAKER, type BreakerOptions } from './breaker.js';
import { parseArguments, type Call, type CallEnv } from './call.js';
import { systemClock } from '../core/clock.js';
import { closeBeforeExit } from './close-at-exit.js';
import { sharedSnapshot } from './context-snapshot.js';
import { definedOnly } from './define-tool.js';
import { executeCall, type CallScope } from './execute-call.js';
import { createRegistry } from './registry.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
import { recordEmitter } from '../record/record-emitter.js';
import { createCorrectionMemory, openRuntimeRecording } from './runtime-recording.js';
import { BreakerProber } from './breaker-probes.js';
import { LoopGuard } from './loop-guard.js';
import { PreflightPredictor } from './failure-prediction.js';
import { retentionFor } from '../store/retention.js';
import { TraceSteps } from '../core/trace-steps.js';
import type { ExecuteOptions, ExecuteResult, Runtime, RuntimeOptions } from './types.js';

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
} from './types.js';

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
  const redactor = options.redact === false ? undefined : createRedactor(options.redact ?? {});
  const recording = openRuntimeRecording(options);
  const { store, sink, reportListenerError } = recording;
  const corrections = createCorrectionMemory(options, store, recording.reportStoreError);
  const clock = options.clock ?? systemClock;
  const retention = retentionFor(options.retention, store, { onError: recording.reportStoreError, now: () => clock.now() });
  const retry: RetryOptions = { ...DEFAULT_RETRY, ...definedOnly(options.retry) };
  const breaker: BreakerOptions = { ...DEFAULT_BREAKER, ...definedOnly(options.breaker) };
  const registry = createRegistry(options.tools, { retry, breaker, breakers: options.breakers });
  const env: CallEnv = {
    clock,
    random: options.seed === undefined ? Math.random : seededRandom(options.seed),
    seededKeys: options.seed !== undefined,
    redactor,
    maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
    faults: options.faults,
    corrections,
    refreshCredential: options.refreshCredential,
    feedback: options.feedback,
    context: options.context,
    reportListenerError,
    emit: recordEmitter(options.onRecord, sink, reportListenerError),
    discloseAuthDetails: options.discloseAuthDetails === true,
    prober: options.breakerProbes === true ? new BreakerProber(options.clock ?? systemClock, reportListenerError) : undefined,
    loopGuard: options.loopGuard === undefined || options.loopGuard === false ? undefined : new LoopGuard(options.loopGuard === true ? {} : options.loopGuard),
    predictor: options.predictor === undefined ? undefined : new PreflightPredictor(options.predictor),
  };
  const scope: CallScope = { env, registry, steps: new TraceSteps() };
  const adaptive = [...registry.names()].flatMap((name) => registry.get(name)?.adaptiveTimeout ?? []);
  const timeoutsLoaded = store === undefined ? Promise.resolve() : Promise.all(adaptive.map((t) => t.load(store, recording.reportStoreError))).then(() => undefined);
  let closed = false;
  let closing: Promise<void> | undefined;

  const runtime: Runtime = {
    execute<Output>(toolName: string, args: unknown, opts: ExecuteOptions = {}): Promise<ExecuteResult<Output>> {
      if (closed) return Promise.reject(new RuntimeClosedError());
      return executeCall(scope, toolName, args, opts, 0, null) as Promise<ExecuteResult<Output>>;
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
        const shared = own ? undefined : (snapshot ??= sharedSnapshot(env, merged));
        return executeCall(scope, toolName, args, merged, 0, null, shared) as Promise<ExecuteResult<Output>>;
      }
      return {
        traceId,
        execute,
        executeJson: (toolName, argumentsJson, opts) => execute(toolName, parseArguments(argumentsJson), opts),
      };
    },
    store,
    corrections,
    adaptiveTimeouts: {
      loaded: timeoutsLoaded,
      current: (name) => registry.get(name)?.adaptiveTimeout?.current(),
    },
    tools: registry.infos,
    breakers: registry.breakers,
    stats: () => recording.recorder?.recording(),
    async flush() {
      await sink?.flush?.();
      await corrections?.flush();
    },
    close() {
      closed = true;
      env.prober?.stop();
      forgetAtExit?.();
      closing ??= (async () => {
        await retention?.stop();
        await corrections?.flush();
        // A sink of the caller's is closed too: `rt.close()` is where its last records are flushed.
        await options.recorder?.close?.();
        await recording.close();
      })();
      return closing;
    },
  };
  // A runtime that batches into a store is closed at `beforeExit` if the caller has not closed it,
  // so that a script which forgets `rt.close()` still stores its last batch.
  const forgetAtExit = options.recorder === undefined && sink !== undefined ? closeBeforeExit(() => runtime.close()) : undefined;
  return runtime;
}
