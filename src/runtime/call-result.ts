/**
 * How a call's result is made once it has ended: the record (built, scrubbed, emitted), the
 * feedback with what the correction memory knows, and the `ExecuteResult` the agent gets.
 */
import { isoTime } from '../record/iso-time.js';
import type { FoundSecrets } from '../record/redact.js';
import type { RecordFeedback, RecoveryMode, ToolExecutionRecord } from '../core/record-types.js';
import type { CallStatus, FeedbackAction } from '../core/taxonomy.js';
import type { Call, CallEnv } from './call.js';
import { buildRecord, redactText, redactValue, scrubbed, type Ending } from './call-record.js';
import { rejection, type Classification } from './classify.js';
import type { RuntimeCorrectionMemory } from './correction-memory.js';
import { authFailureBody, authFailureMessage } from './auth-disclosure.js';
import { buildFeedback, lastRecoveryHint } from './feedback.js';
import type { RegisteredTool } from './registry.js';
import type { StopReason } from './retry-policy.js';
import type { CallError, CallFeedback, ExecuteResult } from './types.js';
import { describeIssues, redactIssues, type ValidationIssue } from './validate.js';

export interface FailureDetails {
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
  /** The action the check that refused the call advises (the loop guard). */
  action?: FeedbackAction;
}

/**
 * The classification of a call whose feedback or record could not be built (stage `feedback`):
 * what went wrong in the runtime, and how the call itself had ended.
 */
function feedbackFailure(what: string, error: unknown, original: Classification | undefined): Classification {
  const reason = error instanceof Error ? error.message : String(error);
  const outcome = original === undefined ? 'the tool itself answered' : `the call itself ended in ${original.stage} / ${original.type} (${original.code}): ${original.message}`;
  const c = rejection('feedback', 'system', 'feedback_failed', 'FEEDBACK_FAILED', `faultline could not build this call's ${what} (${reason}); ${outcome}`);
  c.stack = error instanceof Error ? error.stack : undefined;
  return c;
}

/**
 * The record of a call whose own record could not be built: the failure at stage `feedback`,
 * without the pieces that may have caused it (arguments, output, context) when a first try
 * with them fails too.
 */
function feedbackStageRecord(env: CallEnv, call: Call, end: Ending, error: unknown, original: Classification | undefined): ToolExecutionRecord {
  const classification = feedbackFailure('record', error, original);
  const ending: Ending = { ...end, status: 'failure', classification, output: undefined, recovery: 'needs_decision' };
  delete ending.issues;
  const found: FoundSecrets = [];
  try {
    return scrubbed(env, buildRecord(env, call, ending, found), found);
  } catch {
    const bare: Call = { ...call, args: null, options: {}, snapshot: undefined, fault: null, faultNotApplied: null };
    classification.body = undefined;
    return buildRecord(env, bare, ending, []);
  }
}

// Not async: on the common path (no backpressure) the result is returned without an extra
// promise, which saves microtask turns on every successful call.
export function finishSuccess(env: CallEnv, call: Call, entry: RegisteredTool, output: unknown, recovered: boolean, endedAt: number): ExecuteResult | Promise<ExecuteResult> {
  let record: ToolExecutionRecord;
  try {
    record = successRecord(env, call, entry, output, recovered, endedAt);
  } catch (error) {
    // The tool answered: the agent gets its answer, and the record says that faultline failed.
    record = feedbackStageRecord(env, call, { status: 'success', recovery: 'none', breaker: entry.breaker, idempotent: entry.tool.idempotent, endedAt }, error, undefined);
  }
  const result: ExecuteResult = { ok: true, output, record };
  if (env.predictor !== undefined) {
    env.predictor.observe(call, record);
    if (call.prediction !== undefined) {
      result.predictedFailure = call.prediction;
      record.context_snapshot = { ...record.context_snapshot, predicted_failure: call.prediction };
    }
  }
  if (call.loopKey !== undefined) {
    env.loopGuard!.noteSuccess(call, endedAt, !entry.tool.idempotent, call.id);
    if (record.feedback !== null) result.notice = { action: record.feedback.action, hint: record.feedback.hint, retryable: false };
  }
  const corrections = env.corrections;
  if (corrections?.tracking === true) corrections.noteSuccess(record, call.startedAt);
  const wait = env.emit(record);
  return wait === undefined ? result : wait.then(() => result);
}

function successRecord(env: CallEnv, call: Call, entry: RegisteredTool, output: unknown, recovered: boolean, endedAt: number): ToolExecutionRecord {
  const found: FoundSecrets = [];
  const built = buildRecord(
    env,
    call,
    {
      endedAt,
      status: 'success',
      output,
      recovery: recovered ? 'auto_recovered' : 'none',
      breaker: entry.breaker,
      idempotent: entry.tool.idempotent,
      ...(call.notice !== undefined ? { feedback: { action: 'verify_state' as const, hint: call.notice, retryable: false, retry_after_ms: null } } : {}),
    },
    found,
  );
  return scrubbed(env, built, found);
}

/** A non-idempotent call that ran and failed in a way that may have taken effect (timeout, reset, 500/502/504). */
function isAmbiguousWrite(call: Call, d: FailureDetails): boolean {
  const tool = d.entry?.tool;
  return d.classification.ambiguous && tool !== undefined && !tool.idempotent && call.attempts.length > 0;
}

function failureFeedback(env: CallEnv, call: Call, d: FailureDetails, withOverrides: boolean): RecordFeedback {
  const tool = d.entry?.tool;
  const c = d.classification;
  const feedback = buildFeedback(
    {
      toolName: call.toolName,
      classification: c,
      issues: d.issues,
      attempts: call.attempts.length,
      ambiguousWrite: isAmbiguousWrite(call, d),
      mismatchedWrite: c.category === 'semantic' && c.stage === 'result_parse' && tool !== undefined && !tool.idempotent,
      canRefreshCredential: env.refreshCredential !== undefined,
      fallbackTool: d.fallbackTool ?? tool?.fallback,
      suggestions: d.suggestions ?? [],
      retryAfterMs: d.retryAfterMs ?? c.retryAfterMs,
      suggestedAction: d.action,
    },
    withOverrides ? [tool?.feedback, env.feedback] : [],
  );
  if (d.fallbackUsed !== undefined) {
    // The runtime already acted on the failure; the record says what it did.
    feedback.action = 'use_fallback';
    feedback.hint = `${call.toolName} failed (${c.code}, ${d.fallbackUsed.reason.replace(/_/g, ' ')}); the call went to ${d.fallbackUsed.tool} instead.`;
  }
  return { action: feedback.action, hint: feedback.hint, retryable: feedback.retryable, retry_after_ms: feedback.retryAfterMs ?? null };
}

export async function finishFailure(env: CallEnv, call: Call, failure: FailureDetails): Promise<ExecuteResult & { ok: false }> {
  const redactor = env.redactor;
  // Messages and issues can quote secrets back (an echoed token, a key sent as an enum value);
  // they reach the record and the agent's context, so both see only the redacted text.
  // Object.assign, not spread: on Node 20 `{ ...x, key: value }` costs about 1 us (see the session's execute).
  // A secret found in one piece (a key in the arguments) is scrubbed from all of them (the
  // message that echoes it), in the record and in what the agent gets.
  const found: FoundSecrets = [];
  const d: FailureDetails = Object.assign({}, failure, {
    classification: Object.assign({}, failure.classification, { message: redactText(env, failure.classification.message, found) }),
  });
  if (failure.issues !== undefined) d.issues = redactor === undefined ? failure.issues : redactIssues(failure.issues, redactor);
  // A feedback override of the user's may throw: the agent then gets the default feedback, and
  // the record says, at stage `feedback`, that building it failed.
  let feedbackFailed: Classification | undefined;
  let recordFeedback: RecordFeedback;
  try {
    recordFeedback = failureFeedback(env, call, d, true);
  } catch (error) {
    feedbackFailed = feedbackFailure('feedback', error, d.classification);
    recordFeedback = failureFeedback(env, call, d, false);
  }
  const end: Ending = {
    status: d.status,
    classification: feedbackFailed ?? d.classification,
    ...(d.issues !== undefined && feedbackFailed === undefined ? { issues: d.issues } : {}),
    feedback: recordFeedback,
    recovery: d.recovery ?? 'needs_decision',
    breaker: d.entry?.breaker,
    idempotent: d.entry?.tool.idempotent ?? false,
  };
  let record: ToolExecutionRecord;
  try {
    record = scrubbed(env, buildRecord(env, call, end, found), found);
  } catch (error) {
    record = feedbackStageRecord(env, call, end, error, d.classification);
    record.feedback = recordFeedback;
  }
  if (found.length !== 0 && d.issues !== undefined) d.issues = redactor!.scrub(d.issues, found);
  const feedback = record.feedback!;
  if (env.predictor !== undefined) {
    env.predictor.observe(call, record);
    if (call.prediction !== undefined) {
      feedback.predicted_failure = call.prediction;
      record.context_snapshot = { ...record.context_snapshot, predicted_failure: call.prediction };
    }
  }
  if (env.corrections !== undefined && record.failure_stage !== 'feedback') consultCorrections(env.corrections, call, d, feedback, record);
  // A failure the fallback answered is not one the agent will repeat.
  if (call.loopKey !== undefined && record.recovery !== 'auto_recovered') {
    env.loopGuard!.noteFailure(call, { category: d.classification.category, type: d.classification.type, code: d.classification.code, action: feedback.action });
  }
  const wait = env.emit(record);
  if (wait !== undefined) await wait;
  const c = d.classification;
  const error: CallError = {
    stage: c.stage,
    category: c.category,
    type: c.type,
    code: c.code,
    // A record at stage feedback describes faultline's failure; the agent is told about its call's.
    message: record.failure_stage === 'feedback' && c.stage !== 'feedback' ? (d.issues !== undefined ? `${c.message}: ${describeIssues(d.issues)}` : c.message) : (record.error_message ?? c.message),
    retryable: feedback.retryable,
  };
  if (feedback.retry_after_ms !== null) error.retryAfterMs = feedback.retry_after_ms;
  if (c.status !== undefined) error.status = c.status;
  if (d.issues !== undefined) error.issues = d.issues;
  if (c.category === 'auth' && !env.discloseAuthDetails) {
    error.message = authFailureMessage(call.toolName, c);
    const body = authFailureBody(c.body);
    if (body !== undefined) error.body = body;
  } else if (c.body !== undefined) error.body = found.length === 0 ? redactValue(env, c.body) : redactor!.scrub(redactValue(env, c.body, found), found);
  const callFeedback: CallFeedback = { action: feedback.action, hint: feedback.hint, retryable: feedback.retryable };
  if (feedback.retry_after_ms !== null) callFeedback.retryAfterMs = feedback.retry_after_ms;
  if (feedback.last_recovery !== undefined) callFeedback.lastRecovery = feedback.last_recovery;
  if (feedback.predicted_failure !== undefined) callFeedback.predictedFailure = feedback.predicted_failure;
  const result: ExecuteResult & { ok: false } = { ok: false, error, feedback: callFeedback, record };
  if (c.partial !== undefined) result.partial = c.partial;
  return result;
}

/** The error as `refreshCredential` is shown it: before any feedback decided whether it is retryable. */
export function toCallError(c: Classification): CallError {
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

/** Teaches the correction memory that a credential refresh answered this auth failure. */
export function learnRefresh(env: CallEnv, call: Call, c: Classification, endedAt: number): void {
  const corrections = env.corrections;
  if (corrections === undefined) return;
  const failed = {
    status: 'failure' as const,
    tool_name: call.toolName,
    failure_stage: c.stage,
    failure_category: c.category,
    failure_type: c.type,
    error_code: c.code,
    error_message: redactText(env, c.message),
    trace_id: call.traceId,
  };
  corrections.learn(failed, { action: 'refresh_credential' }, isoTime(endedAt));
}
