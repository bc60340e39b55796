/**
 * One logical call: its bookkeeping (shared by its attempts and its record) and what every part
 * of a call reads from the runtime that runs it.
 */
import type { FaultInjector } from './fault-injector.js';
import type { Redactor } from '../record/redact.js';
import type { AttemptRecord, FallbackLink, InjectedFault, PredictedFailure, ToolExecutionRecord } from '../core/record-types.js';
import { uuidv7 } from '../record/uuid-v7.js';
import type { Clock } from '../core/clock.js';
import type { RuntimeCorrectionMemory } from './correction-memory.js';
import type { FeedbackOverrides } from './feedback.js';
import type { BreakerProber } from './breaker-probes.js';
import type { LoopGuard } from './loop-guard.js';
import type { PreflightPredictor } from './failure-prediction.js';
import type { TraceSteps } from '../core/trace-steps.js';
import type { CredentialRefresher, ExecuteOptions } from './types.js';

/** The runtime as its calls see it: fixed when the runtime is created, read by every call. */
export interface CallEnv {
  clock: Clock;
  /** Retry jitter; seeded when the runtime is. */
  random: () => number;
  /** Idempotency keys derive from the call's place in its trace (seeded runtimes), else are random. */
  seededKeys: boolean;
  /** Undefined when redaction is off. */
  redactor: Redactor | undefined;
  maxOutputChars: number;
  faults: FaultInjector | undefined;
  corrections: RuntimeCorrectionMemory | undefined;
  refreshCredential: CredentialRefresher | undefined;
  feedback: FeedbackOverrides | undefined;
  /** The runtime's own context_snapshot fields. */
  context: Record<string, unknown> | undefined;
  reportListenerError: (error: unknown, where: string) => void;
  /** Hands a finished record to `onRecord` and the sink; a promise only when the caller must wait. */
  emit: (record: ToolExecutionRecord) => Promise<void> | undefined;
  /** Whether agents see the upstream's message and body of auth failures (see auth-disclosure.ts). */
  discloseAuthDetails: boolean;
  /** Undefined when background breaker probes are off. */
  prober: BreakerProber | undefined;
  /** Undefined when the loop guard is off. */
  loopGuard: LoopGuard | undefined;
  /** Undefined when the failure predictor is off. */
  predictor: PreflightPredictor | undefined;
}

export interface Call {
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
  /** The loop guard's key for the call (session, tool, arguments); undefined when it does not watch it. */
  loopKey: string | undefined;
  /** What the loop guard flagged about a call it let run (a repeated write). */
  notice: string | undefined;
  /** The failure predictor's estimate, made before the call ran. */
  prediction: PredictedFailure | undefined;
}

export function newCall(
  env: CallEnv,
  steps: TraceSteps,
  toolName: string,
  args: unknown,
  opts: ExecuteOptions,
  startedAt: number,
  snapshot: Call['snapshot'],
): Call {
  const id = uuidv7(startedAt);
  const traceId = opts.traceId ?? id;
  return {
    id,
    toolName,
    args,
    options: opts,
    traceId,
    stepIndex: opts.stepIndex ?? (opts.traceId === undefined ? 0 : steps.take(traceId)),
    startedAt,
    attempts: [],
    idempotencyKey: undefined,
    fallback: null,
    fault: null,
    faultNotApplied: null,
    seededKeys: env.seededKeys,
    snapshot,
    loopKey: undefined,
    notice: undefined,
    prediction: undefined,
  };
}

/** Arguments that arrived as JSON text that does not parse; the call is rejected at request_build. */
export class MalformedArguments {
  constructor(
    readonly raw: string,
    readonly reason: string,
  ) {}
}

export function parseArguments(argumentsJson: string): unknown {
  if (argumentsJson.trim() === '') return {};
  try {
    return JSON.parse(argumentsJson) as unknown;
  } catch (error) {
    return new MalformedArguments(argumentsJson, error instanceof Error ? error.message : String(error));
  }
}
