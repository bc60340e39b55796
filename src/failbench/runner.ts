/**
 * The FailBench runner: drives an agent through scenarios whose tools fail in planned ways,
 * records every call under one trace per run (with the injected fault as ground truth), and
 * turns what happened into a ScenarioResult. Scoring lives in score.ts; the world in world.ts.
 */
import { notify, warnListenerError } from '../core/notify.js';
import { setMaxListeners } from 'node:events';
import { ConfigError, FaultlineError } from '../core/errors.js';
import { canonicalJson } from '../core/params-hash.js';
import { openRecording, type Recording, type RecordingTarget } from '../record/open-recording.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { uuidv7 } from '../record/uuid-v7.js';
import type { RecordSink } from '../core/record-sink.js';
import type { ExecuteResult } from '../runtime/runtime.js';
import type { Store } from '../core/store-types.js';
import { ModelEndpointError, rejectsEveryRequest } from '../llm/model-endpoint-error.js';
import { faultEffect } from './fault-effects.js';
import { failability, type Failability } from './failability.js';
import { evaluateOracle, fileVersions } from './oracle.js';
import { maxIdenticalFailures as longestIdenticalFailures, scoreRun } from './run-verdict.js';
import type {
  Agent,
  AgentOutcome,
  AgentTask,
  AgentToolResult,
  CallTrace,
  Diagnosis,
  FeedbackMode,
  ModelEndpointFailure,
  RawToolError,
  Scenario,
  ScenarioResult,
  TaskSampling,
} from './types.js';
import { createWireHost, type WireHost } from './transport/index.js';
import { checkedTransport, runTransport, type Transport } from './transport/run-transport.js';
import { BUDGET_START, budgetStep, RETRY_AFTER_START, retryAfterStep, type BudgetEvent } from './call-trace-reducers.js';
import { checkScenario, createWorld, digest, type ScenarioWorld } from './world.js';
import type { Capability } from './capabilities.js';

/** Calls an agent may make per scenario when the scenario sets no budget. */
const onProgressFailed = warnListenerError('onProgress');

export const DEFAULT_CALL_BUDGET = 30;
/** Virtual time per scenario when the scenario sets no budget: 10 minutes. */
export const DEFAULT_VIRTUAL_BUDGET_MS = 600_000;
/** The error code of calls made after the budget ran out. */
export const BUDGET_EXHAUSTED = 'BUDGET_EXHAUSTED';

export { TRANSPORTS, type Transport } from './transport/run-transport.js';

export interface RunScenarioOptions {
  feedback: FeedbackMode;
  /** The run seed: with the scenario id and the repeat it seeds the fault plan and retry jitter. */
  seed: number;
  /** 0-based index of this repeat (for pass^k): each repeat draws its own faults (see WorldOptions.repeat). Default 0. */
  repeat?: number;
  /** Records go through a recorder over this store, flushed before the result is returned. */
  store?: Store;
  transport?: Transport;
  /** Names the run in trace ids and task ids. Default: a fresh UUIDv7. */
  runId?: string;
  /** A sink shared across runs (runSuite passes one); takes precedence over `store`. */
  sink?: RecordSink;
  /** Store write problems; never thrown at the run. */
  onRecordError?: (error: unknown) => void;
  /** Handed to the agent as `task.sampling` (fission continuations; see fission.ts). */
  sampling?: TaskSampling;
  /** The trace to record under. Default: {@link traceIdOf}(runId, agent, scenario, repeat). */
  traceId?: string;
  /** Servers shared by the runs of a suite over http or mcp (runSuite passes one); default: the run's own. */
  wires?: WireHost;
  /** The runtime's optional checks to turn on (see capabilities.ts). Default none. */
  capabilities?: readonly Capability[];
  /**
   * Cancels the run from outside (runSuite, once it stops): the agent's `task.signal` aborts, as
   * when the budget runs out, so a model request in flight ends at once.
   */
  signal?: AbortSignal;
}

/** What a report needs to know about a scenario without its oracle and plan. */
export interface ScenarioSummary {
  id: string;
  title: string;
  kind: Scenario['kind'];
  language: Scenario['language'];
  taxonomy: Scenario['taxonomy'];
  dimensions: Scenario['dimensions'];
  recoverable: boolean;
  tools: string[];
  /** The fault kinds its plan can inject, in rule order. */
  faultKinds: string[];
  /** Per measure it can score: whether a minimal bad behaviour fails it there, and how (failability.ts). */
  failability?: Failability;
}

export interface SuiteMeta {
  runId: string;
  version: string;
  seed: number;
  feedback: FeedbackMode;
  transport: Transport;
  /** Repeats per (scenario, agent): the k of pass^k. */
  repeat: number;
  concurrency: number;
  /** The runtime's optional checks the runs had on (capabilities.ts); absent when none. */
  capabilities?: Capability[];
  agents: string[];
  /** Wall-clock times (ISO) of the suite, for the report; not part of the results. */
  startedAt: string;
  finishedAt: string;
}

export interface SuiteResult {
  meta: SuiteMeta;
  scenarios: ScenarioSummary[];
  /** Ordered by agent, then scenario, then repeat, whatever order the runs finished in. */
  results: ScenarioResult[];
}

export interface SuiteProgress {
  done: number;
  total: number;
  result: ScenarioResult;
}

export interface RunSuiteOptions {
  scenarios: readonly Scenario[];
  agents: readonly Agent[];
  feedback: FeedbackMode;
  seed: number;
  /** Runs per (scenario, agent). Default 1. */
  repeat?: number;
  /** Runs in flight at once. Default 1. */
  concurrency?: number;
  /** The runtime's optional checks to turn on for every run (capabilities.ts). Default none. */
  capabilities?: readonly Capability[];
  store?: Store;
  transport?: Transport;
  runId?: string;
  /** faultline's version, for the report. */
  version?: string;
  /** Called after every run; what it throws is a process warning, never the run's failure. */
  onProgress?: (progress: SuiteProgress) => void;
  onRecordError?: (error: unknown) => void;
  /** Wall clock for the start and end times in the metadata. Default Date.now. */
  now?: () => number;
  /**
   * Runs in a row of one agent that its model endpoint failed after every retry (down, 5xx,
   * timeouts) before the suite stops with {@link SuiteStoppedError}. Default
   * {@link DEFAULT_ENDPOINT_FAILURE_LIMIT}; `Infinity` never stops for these. Runs lost to other
   * rejections (a 400 for one scenario's context length) count here too. A rejection every run
   * would meet (bad key, unknown model: see rejectsEveryRequest) stops the suite at once, whatever
   * this is.
   */
  endpointFailureLimit?: number;
}

/** See {@link RunSuiteOptions.endpointFailureLimit}. */
export const DEFAULT_ENDPOINT_FAILURE_LIMIT = 3;

const SUITE_STOPPED_MARKER = Symbol.for('faultline.error.SuiteStoppedError');

/**
 * A suite stopped before its end because an agent's model endpoint cannot serve it: it rejected a
 * request in a way every scenario would meet (`rejected`: a bad key, an unknown model, a wrong
 * URL; see rejectsEveryRequest), or it lost {@link RunSuiteOptions.endpointFailureLimit} runs in a
 * row after every retry or to other rejections (`stopped_answering`). The results so far are not returned: scores over a part of
 * the suite, cut where the endpoint failed, would read as the agent's. Their records are stored.
 * The message names the provider and what the endpoint said, never the API key.
 */
export class SuiteStoppedError extends FaultlineError {
  readonly [SUITE_STOPPED_MARKER] = true;

  constructor(
    readonly reason: 'rejected' | 'stopped_answering',
    /** The agent whose endpoint failed. */
    readonly agent: string,
    /** The last failure: for `stopped_answering`, that of the last of the runs in a row. */
    readonly failure: ModelEndpointFailure,
    /** Runs in a row that failed (1 for `rejected`). */
    readonly consecutive: number,
    /** Runs finished, of `total`. */
    readonly completed: number,
    readonly total: number,
  ) {
    super(
      reason === 'rejected'
        ? `the ${failure.provider} endpoint rejected the request (${failure.message})`
        : failure.kind === 'rejected'
          ? `the ${failure.provider} endpoint failed ${consecutive} runs in a row (the last rejected: ${failure.message})`
          : `the ${failure.provider} endpoint stopped answering: ${consecutive} runs in a row failed after every retry (${failure.message})`,
    );
  }

  static override isInstance(value: unknown): value is SuiteStoppedError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SUITE_STOPPED_MARKER] === true;
  }
}

/** Watches the runs of a suite for a model endpoint that cannot serve it; see {@link SuiteStoppedError}. */
export interface EndpointWatch {
  /** Aborts once the suite should stop: pass it to the runs in flight, start no new one. */
  readonly signal: AbortSignal;
  /** Why the suite stops, once it does. */
  readonly stopped: SuiteStoppedError | undefined;
  /** Notes a finished run. */
  observe(result: ScenarioResult): void;
}

/**
 * Counts, per agent, the runs in a row its model endpoint lost; any run the endpoint served
 * resets the count. Runs finishing after the stop (cancelled in flight) change nothing. `total`
 * is the number of runs planned so far, for the error's message (fission plans its branches late).
 */
export function watchModelEndpoints(limit: number, total: () => number): EndpointWatch {
  if (!(limit >= 1)) throw new ConfigError(`endpointFailureLimit must be >= 1, got ${String(limit)}`, 'endpointFailureLimit');
  const controller = new AbortController();
  // Every run in flight listens to it (and stops listening when done): more than 10 at once under
  // --concurrency is no leak, and must not print Node's MaxListenersExceededWarning.
  setMaxListeners(0, controller.signal);
  const streaks = new Map<string, number>();
  let stopped: SuiteStoppedError | undefined;
  let completed = 0;
  return {
    signal: controller.signal,
    get stopped() {
      return stopped;
    },
    observe(result) {
      if (stopped !== undefined) return;
      completed++;
      const failure = result.modelEndpointFailure;
      if (failure === undefined) {
        streaks.set(result.agent, 0);
        return;
      }
      const streak = (streaks.get(result.agent) ?? 0) + 1;
      streaks.set(result.agent, streak);
      if (rejectsEveryRequest(failure)) stopped = new SuiteStoppedError('rejected', result.agent, failure, 1, completed, total());
      else if (streak >= limit) stopped = new SuiteStoppedError('stopped_answering', result.agent, failure, streak, completed, total());
      if (stopped !== undefined) controller.abort(stopped);
    },
  };
}

export function summarizeScenario(scenario: Scenario): ScenarioSummary {
  return {
    id: scenario.id,
    title: scenario.title,
    kind: scenario.kind,
    language: scenario.language,
    taxonomy: scenario.taxonomy,
    dimensions: [...scenario.dimensions],
    recoverable: scenario.recoverable,
    tools: [...scenario.tools],
    faultKinds: scenario.faults.map((f) => f.fault),
    failability: failability(scenario),
  };
}

/** An opaque id per (run, scenario): stable within a run, meaningless to the agent. */
export function taskIdOf(runId: string, scenarioId: string): string {
  return `task-${digest(runId, scenarioId).slice(0, 16)}`;
}

/** The trace a run's calls are recorded under. Readable, so `faultline tail --trace` can find it. */
export function traceIdOf(runId: string, agent: string, scenarioId: string, repeat: number): string {
  return `failbench:${runId}:${agent}:${scenarioId}:${repeat}`;
}

function rawError(result: ExecuteResult & { ok: false }): RawToolError {
  const e = result.error;
  const raw: RawToolError = { code: e.code, message: e.message };
  // The mock server answers invalid arguments with a 400, as a real API would.
  const status = e.status ?? (e.code === 'INVALID_ARGUMENTS' ? 400 : undefined);
  if (status !== undefined) raw.status = status;
  if (e.retryAfterMs !== undefined) raw.headers = { 'retry-after': String(Math.max(0, Math.ceil(e.retryAfterMs / 1000))) };
  if (e.body !== undefined) raw.body = e.body;
  else if (e.issues !== undefined) raw.body = { issues: e.issues };
  return raw;
}

/** Failed attempts the agent never saw: retries the runtime made, and a primary it fell back from. */
function absorbedOf(result: ExecuteResult): number {
  const failed = (record: ToolExecutionRecord) => record.attempts.filter((a) => a.outcome !== 'success').length;
  const own = result.ok ? failed(result.record) : Math.max(0, result.record.attempts.length - 1);
  return own + (result.fallbackFrom === undefined ? 0 : failed(result.fallbackFrom.record));
}

function toAgentResult(result: ExecuteResult, feedback: FeedbackMode): AgentToolResult {
  const absorbedFailures = absorbedOf(result);
  if (result.ok) return feedback === 'raw' ? { ok: true, output: result.output } : { ok: true, output: result.output, assisted: { absorbedFailures } };
  const error = rawError(result);
  if (feedback === 'raw') return { ok: false, error };
  const e = result.error;
  const f = result.feedback;
  return {
    ok: false,
    error,
    assisted: {
      stage: e.stage,
      category: e.category,
      type: e.type,
      action: f.action,
      hint: f.hint,
      retryable: f.retryable,
      ...(f.retryAfterMs !== undefined ? { retryAfterMs: f.retryAfterMs } : {}),
      absorbedFailures,
    },
  };
}

/**
 * One call as the scorer sees it: what the agent sent and got, with the ground truth beside it
 * (the fault that hit it, the classes of failure it met, whether it may have taken effect).
 */
function traceOf(tool: string, args: Record<string, unknown>, result: ExecuteResult, fault: ToolExecutionRecord['fault'], absorbed: number, startedMs: number, endedMs: number): CallTrace {
  const trace: CallTrace = { tool, args: JSON.parse(canonicalJson(args)) as unknown, ok: result.ok, virtualMs: startedMs, endMs: endedMs };
  const effect = fault === null ? undefined : faultEffect(fault.kind);
  const faultClasses = effect?.categories(fault?.params) ?? [];
  if (fault !== null) trace.fault = fault.kind;
  if (!result.ok) {
    trace.code = result.error.code;
    trace.category = result.error.category;
    trace.met = [...new Set([result.error.category, ...faultClasses])];
    if (result.error.retryAfterMs !== undefined) trace.retryAfterMs = result.error.retryAfterMs;
    // The runtime says verify_state exactly when a failure of a non-idempotent tool may have taken effect.
    if (result.feedback.action === 'verify_state') trace.ambiguous = true;
    // A wrong 200 that the runtime's post-conditions turned into a failure was still received: the
    // run is scored on what the agent did with it, as when it arrives as a 200.
    if (effect?.shows === 'wrong_result' && result.error.stage === 'result_parse' && result.error.category === 'semantic') trace.wrongResult = true;
  } else if (effect?.shows === 'wrong_result') {
    trace.wrongResult = true;
    trace.met = [...faultClasses];
  } else if (effect?.shows === 'failure' || (effect !== undefined && absorbed > 0)) {
    // A broken answer, or a failure the runtime met and handled itself (assisted mode; it tells the agent so).
    trace.met = [...faultClasses];
  }
  return trace;
}

const OUTCOME_STATUSES = new Set(['completed', 'gave_up', 'escalated']);

/** An agent's return value, or an 'error' outcome saying what was wrong with it. */
function checkedOutcome(value: unknown): ScenarioResult['outcome'] {
  const o = value as Partial<AgentOutcome> | null;
  if (o === null || typeof o !== 'object' || !OUTCOME_STATUSES.has(o.status as string) || typeof o.answer !== 'string') {
    return { status: 'error', answer: 'the agent returned something that is not an AgentOutcome', diagnoses: [] };
  }
  const diagnoses: Diagnosis[] = Array.isArray(o.diagnoses) ? o.diagnoses.filter((d) => d !== null && typeof d === 'object' && typeof d.tool === 'string') : [];
  return { status: o.status!, answer: o.answer, diagnoses };
}

async function closeRuntime(runtime: { close(): Promise<void> }, recording: Recording): Promise<void> {
  await runtime.close();
  await recording.close();
}

/** A run's records go through a recorder over the caller's store, with no spool file of its own. */
function recordingOver(store: Store | undefined, onError: ((error: unknown) => void) | undefined): RecordingTarget {
  return { store, recording: { spool: false, ...(onError !== undefined ? { onError } : {}) } };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** How the agent's run ended: its outcome, or what went wrong with it (its model endpoint, a throw, a runaway loop). */
async function runAgent(
  agent: Agent,
  task: AgentTask,
  runEnded: Promise<'ended'>,
  exhausted: () => ScenarioResult['budgetExhausted'],
): Promise<{ outcome: ScenarioResult['outcome']; endpointFailure: ModelEndpointFailure | undefined; agentError: string | undefined }> {
  let outcome: ScenarioResult['outcome'];
  let endpointFailure: ModelEndpointFailure | undefined;
  let agentError: string | undefined;
  try {
    const ran = Promise.resolve().then(() => agent.run(task));
    const first = await Promise.race([ran, runEnded]);
    outcome =
      first === 'ended'
        ? { status: 'error', answer: `kept calling tools after the budget ran out (${exhausted() ?? 'calls'})`, diagnoses: [] }
        : checkedOutcome(first);
    if (first === 'ended') ran.catch(() => undefined);
    else if (outcome.status === 'error') agentError = outcome.answer;
  } catch (error) {
    if (ModelEndpointError.isInstance(error)) {
      // The endpoint failed, not the agent: the run is kept (its calls were recorded) but not scored.
      endpointFailure = { provider: error.provider, kind: error.kind, message: error.detail, attempts: error.attempts, ...(error.status !== undefined ? { status: error.status } : {}) };
      outcome = { status: 'error', answer: `the model endpoint failed: ${error.message}`, diagnoses: [] };
    } else {
      agentError = messageOf(error).split('\n')[0]!;
      outcome = { status: 'error', answer: `the agent threw: ${messageOf(error)}`, diagnoses: [] };
    }
  }
  return { outcome, endpointFailure, agentError };
}

/** What a finished run gives to score it by. */
interface FinishedRun {
  agent: string;
  repeat: number;
  outcome: ScenarioResult['outcome'];
  calls: CallTrace[];
  state: ReturnType<ScenarioWorld['catalog']['state']['snapshot']>;
  before: ReturnType<typeof fileVersions>;
  retryAfter: ScenarioResult['retryAfter'];
  virtualMs: number;
  traceId: string;
  feedback: RunScenarioOptions['feedback'];
  absorbedFailures: number;
  exhausted: ScenarioResult['budgetExhausted'];
  endpointFailure: ModelEndpointFailure | undefined;
  agentError: string | undefined;
}

/** The run judged by the oracle and scored, as a ScenarioResult. */
function scenarioResult(scenario: Scenario, run: FinishedRun): ScenarioResult {
  const { outcome, calls, state, before, endpointFailure, exhausted, agentError } = run;
  const verdict = evaluateOracle(scenario.oracle, outcome, state, before);
  const dup = state.duplicates;
  const duplicateSideEffects = dup.orders.extra + dup.messages.extra + dup.events.extra + dup.refunds.extra;
  const writes = [state.orders, state.messages, state.events, state.refunds].reduce((n, items) => n + items.filter((i) => i.source === 'tool').length, 0);
  // A run lost to the model endpoint says nothing about the agent: it is kept, and scored on nothing.
  const scored = endpointFailure === undefined ? scoreRun(scenario, { outcome, calls, oracle: verdict, state, before }) : undefined;
  const result: ScenarioResult = {
    scenarioId: scenario.id,
    agent: run.agent,
    repeat: run.repeat,
    outcome,
    scores: scored?.scores ?? {},
    oraclePassed: verdict.passed,
    calls,
    maxIdenticalFailures: longestIdenticalFailures(calls),
    duplicateSideEffects,
    retryAfter: run.retryAfter,
    virtualMs: run.virtualMs,
    state,
    traceId: run.traceId,
    feedback: run.feedback,
    absorbedFailures: run.absorbedFailures,
    writes,
    ...(exhausted !== undefined ? { budgetExhausted: exhausted } : {}),
  };
  if (verdict.failures.length > 0) result.oracleFailures = verdict.failures;
  if (scored !== undefined) {
    if (Object.keys(scored.reasons).length > 0) result.reasons = scored.reasons;
    if (scored.retryAfterCompliant !== undefined) result.retryAfterCompliant = scored.retryAfterCompliant;
    result.needlessCalls = scored.needlessCalls;
    result.diagnosisAudit = scored.diagnoses;
  }
  if (endpointFailure !== undefined) result.modelEndpointFailure = endpointFailure;
  if (agentError !== undefined) result.agentError = agentError;
  return result;
}

/**
 * Runs one scenario with one agent in a fresh world and scores it. Never throws for what the
 * agent does: an agent that throws gets outcome status 'error'. Throws ConfigError for a
 * scenario that cannot run (unknown tool, invalid fault plan).
 *
 * Budget: when the calls or the virtual time run out, `task.signal` aborts. The first call
 * after that is answered `BUDGET_EXHAUSTED` so the agent can still return its outcome; a second
 * one ends the run at once with status 'error' (and never settles, which stops a runaway loop).
 *
 * @example
 * const result = await runScenario(scenario, robustAgent, { feedback: 'raw', seed: 1 });
 * result.scores.loop_avoidance; // true, false, or undefined when the scenario does not score it
 */
export async function runScenario(scenario: Scenario, agent: Agent, options: RunScenarioOptions): Promise<ScenarioResult> {
  const transport = runTransport(options.transport, options.wires);
  const runId = options.runId ?? uuidv7();
  const repeat = options.repeat ?? 0;
  const feedback = options.feedback;
  const traceId = options.traceId ?? traceIdOf(runId, agent.name, scenario.id, repeat);
  const recording = openRecording(options.sink !== undefined ? { recorder: options.sink } : recordingOver(options.store, options.onRecordError));
  const { sink } = recording;
  const context = { failbench_run_id: runId, scenario_id: scenario.id, agent: agent.name, repeat, feedback_mode: feedback };
  // The runtime closes its recorder on close(); a shared one must outlive this run.
  const world = createWorld(scenario, {
    feedback,
    seed: options.seed,
    repeat,
    ...transport.worldOptions(context, sink),
    ...(options.capabilities !== undefined && options.capabilities.length > 0 ? { capabilities: options.capabilities } : {}),
  });
  try {
    await transport.connect(world, traceId, context, sink);
  } catch (error) {
    await closeRuntime(world.runtime, recording);
    throw error;
  }
  const { clock, runtime, catalog, startMs } = world;
  // What fileVersions(catalog.state.snapshot()) gives, without copying the whole state.
  const before: ReturnType<typeof fileVersions> = new Map([...catalog.state.files.values()].map((f) => [f.path, f.version]));
  const callBudget = scenario.budget?.calls ?? DEFAULT_CALL_BUDGET;
  const timeBudget = scenario.budget?.virtual_ms ?? DEFAULT_VIRTUAL_BUDGET_MS;
  const deadline = startMs + timeBudget;

  const budget = new AbortController();
  const cancel = () => budget.abort(options.signal?.reason);
  if (options.signal?.aborted === true) cancel();
  else options.signal?.addEventListener('abort', cancel, { once: true });
  const limits = { calls: callBudget, deadline };
  let budgetState = BUDGET_START;
  const advance = (event: BudgetEvent) => {
    const was = budgetState.exhausted;
    budgetState = budgetStep(budgetState, event, limits);
    const why = budgetState.exhausted;
    if (was === undefined && why !== undefined) {
      budget.abort(new DOMException(why === 'calls' ? `the budget of ${callBudget} tool calls is used up` : `the budget of ${timeBudget} ms of virtual time is used up`, 'AbortError'));
    }
  };
  let endRun: () => void = () => undefined;
  const runEnded = new Promise<'ended'>((resolve) => (endRun = () => resolve('ended')));
  let finished = false;

  const calls: CallTrace[] = [];
  const inFlight = new Set<Promise<unknown>>();
  let step = 0;
  let absorbedFailures = 0;
  let retryAfter = RETRY_AFTER_START;

  const budgetError = (): AgentToolResult => ({
    ok: false,
    error: { code: BUDGET_EXHAUSTED, message: `the scenario's budget is used up (${budgetState.exhausted === 'calls' ? 'tool calls' : 'virtual time'}); finish now` },
  });

  async function execute(name: string, args: Record<string, unknown>): Promise<AgentToolResult> {
    const started = clock.now();
    retryAfter = retryAfterStep(retryAfter, { type: 'call', tool: name, at: started });
    const run = () => runtime.execute(name, args, { traceId, stepIndex: step++, intent: scenario.instruction });
    const { value: result, fault } = await transport.track(run);
    const ended = clock.now();
    const absorbed = absorbedOf(result);
    const trace = traceOf(name, args, result, fault, absorbed, started - startMs, ended - startMs);
    calls.push(trace);
    absorbedFailures += absorbed;
    retryAfter = retryAfterStep(retryAfter, { type: 'answer', call: trace, at: ended });
    advance({ type: 'answer', at: ended, answered: calls.length });
    return toAgentResult(result, feedback);
  }

  const task: AgentTask = {
    id: taskIdOf(runId, scenario.id),
    instruction: scenario.instruction,
    now: new Date(startMs).toISOString(),
    tools: world.tools.map((t) => structuredClone(t)),
    feedback,
    signal: budget.signal,
    ...(options.sampling !== undefined ? { sampling: { ...options.sampling } } : {}),
    callTool(name, args) {
      // A call that never settles stops a runaway agent for good; one answered at once would let
      // a `for (;;) await callTool()` loop spin on microtasks and starve the whole process.
      if (finished) return new Promise<never>(() => undefined);
      advance({ type: 'request', at: clock.now(), started: step });
      if (budgetState.verdict === 'end_run') {
        endRun();
        return new Promise<never>(() => undefined);
      }
      if (budgetState.verdict === 'budget_error') return Promise.resolve(budgetError());
      // Copied now: the agent may mutate its arguments after the call, and the trace must not change.
      const copy = (args !== null && typeof args === 'object' ? structuredClone(args) : args) as Record<string, unknown>;
      const call = execute(String(name), copy);
      inFlight.add(call);
      void call.finally(() => inFlight.delete(call));
      return call;
    },
    async sleep(ms) {
      const wait = Number.isFinite(ms) && ms > 0 ? ms : 0;
      const remaining = deadline - clock.now();
      if (wait >= remaining) {
        await clock.sleep(Math.max(0, remaining));
        advance({ type: 'slept_to_deadline' });
        return;
      }
      await clock.sleep(wait);
    },
  };

  const { outcome, endpointFailure, agentError } = await runAgent(agent, task, runEnded, () => budgetState.exhausted);
  finished = true;
  options.signal?.removeEventListener('abort', cancel);
  await Promise.allSettled([...inFlight]);
  // The transport first: a proxy records what was still in flight into the sink.
  await transport.close();
  await closeRuntime(runtime, recording);

  return scenarioResult(scenario, {
    agent: agent.name,
    repeat,
    outcome,
    calls,
    state: catalog.state.snapshot(),
    before,
    retryAfter: { honored: retryAfter.honored, due: retryAfter.due },
    virtualMs: clock.now() - startMs,
    traceId,
    feedback,
    absorbedFailures,
    exhausted: budgetState.exhausted,
    endpointFailure,
    agentError,
  });
}

/**
 * Runs every scenario with every agent, `repeat` times each, at most `concurrency` at once, in
 * fresh worlds. Records go to `store` through one recorder, flushed before this resolves (or throws).
 * @throws ConfigError for duplicate agent names or scenario ids, and for scenarios that cannot run.
 * @throws SuiteStoppedError when an agent's model endpoint cannot serve the suite (see
 * {@link RunSuiteOptions.endpointFailureLimit}): no new run starts, the runs in flight are
 * cancelled, and it is thrown once they have ended and their records are flushed.
 */
export async function runSuite(options: RunSuiteOptions): Promise<SuiteResult> {
  const wallClock = options.now ?? Date.now;
  const startedAt = new Date(wallClock()).toISOString();
  const repeat = options.repeat ?? 1;
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(repeat) || repeat < 1) throw new ConfigError(`repeat must be an integer >= 1, got ${String(repeat)}`, 'repeat');
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError(`concurrency must be an integer >= 1, got ${String(concurrency)}`, 'concurrency');
  const transport = checkedTransport(options.transport);
  const agentNames = options.agents.map((a) => a.name);
  const dupAgent = agentNames.find((name, i) => agentNames.indexOf(name) !== i);
  if (dupAgent !== undefined) throw new ConfigError(`agent "${dupAgent}" is listed twice`, 'agents');
  const ids = options.scenarios.map((s) => s.id);
  const dupScenario = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dupScenario !== undefined) throw new ConfigError(`scenario id "${dupScenario}" appears twice`, 'scenarios');
  // Fail before any agent runs, not half way through the suite.
  // Checked without building worlds: each run builds its own, and building one is synchronous work
  // that would hold up the runs already in flight.
  for (const scenario of options.scenarios) checkScenario(scenario, { seed: options.seed });
  const jobs: { scenario: Scenario; agent: Agent; repeat: number }[] = [];
  for (const agent of options.agents) for (const scenario of options.scenarios) for (let r = 0; r < repeat; r++) jobs.push({ scenario, agent, repeat: r });
  const watch = watchModelEndpoints(options.endpointFailureLimit ?? DEFAULT_ENDPOINT_FAILURE_LIMIT, () => jobs.length);

  const runId = options.runId ?? uuidv7();
  const recording = openRecording(recordingOver(options.store, options.onRecordError));
  const recorder = recording.sink;
  const wires = transport === 'inprocess' ? undefined : createWireHost(transport);
  const results: ScenarioResult[] = new Array<ScenarioResult>(jobs.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < jobs.length && watch.stopped === undefined) {
      const index = next++;
      const job = jobs[index]!;
      const result = await runScenario(job.scenario, job.agent, {
        feedback: options.feedback,
        seed: options.seed,
        repeat: job.repeat,
        runId,
        transport,
        ...(recorder !== undefined ? { sink: recorder } : {}),
        ...(wires !== undefined ? { wires } : {}),
        ...(options.capabilities !== undefined ? { capabilities: options.capabilities } : {}),
        signal: watch.signal,
      });
      results[index] = result;
      done++;
      watch.observe(result);
      // A progress display must not break the run.
      notify(options.onProgress, { done, total: jobs.length, result }, onProgressFailed);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, jobs.length)) }, worker));
  } finally {
    await wires?.close();
    await recording.close();
  }
  if (watch.stopped !== undefined) throw watch.stopped;
  return {
    meta: {
      runId,
      version: options.version ?? 'unknown',
      seed: options.seed,
      feedback: options.feedback,
      transport,
      repeat,
      concurrency,
      ...(options.capabilities !== undefined && options.capabilities.length > 0 ? { capabilities: [...options.capabilities] } : {}),
      agents: agentNames,
      startedAt,
      finishedAt: new Date(wallClock()).toISOString(),
    },
    scenarios: options.scenarios.map(summarizeScenario),
    results,
  };
}
