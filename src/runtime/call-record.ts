/** The runtime's record of a call: each piece redacted, laid out by execution-record.ts. */
import { redactFault } from '../record/redact-fault.js';
import type { FoundSecrets } from '../record/redact.js';
import { toJsonText, trimStack, truncateText } from '../record/truncate.js';
import type { RecordFeedback, RecoveryMode, ToolExecutionRecord } from '../core/record-types.js';
import type { CallStatus } from '../core/taxonomy.js';
import type { Breaker } from './breaker.js';
import type { Call, CallEnv } from './call.js';
import type { Classification } from './classify.js';
import { recordContext } from './context-snapshot.js';
import { executionRecord } from './execution-record.js';
import { describeIssues, type ValidationIssue } from './validate.js';

export interface Ending {
  status: CallStatus;
  classification?: Classification;
  issues?: ValidationIssue[];
  output?: unknown;
  feedback?: RecordFeedback;
  recovery: RecoveryMode;
  breaker: Breaker | undefined;
  idempotent: boolean;
  /** When the call ended, if the caller already read the clock. */
  endedAt?: number;
}

export function redactValue<T>(env: CallEnv, value: T, found?: FoundSecrets): T {
  return env.redactor === undefined ? value : env.redactor.value(value, found);
}

export function redactText(env: CallEnv, text: string, found?: FoundSecrets): string {
  return env.redactor === undefined ? text : env.redactor.text(text, found);
}

/** `record` with each secret found in one of its fields scrubbed from all of them (see FoundSecrets). */
export function scrubbed(env: CallEnv, record: ToolExecutionRecord, found: FoundSecrets): ToolExecutionRecord {
  return env.redactor === undefined || found.length === 0 ? record : env.redactor.scrubRecord(record, found);
}

/** The call's record, each piece redacted and what was secret in it added to `found` (the caller scrubs). */
export function buildRecord(env: CallEnv, call: Call, end: Ending, found: FoundSecrets): ToolExecutionRecord {
  const params = redactValue(env, call.args, found);
  const c = end.classification;
  let rawOutput: string | null = null;
  let outputLength: number | null = null;
  const shown = end.output !== undefined ? end.output : c?.body;
  if (shown !== undefined) {
    const text = toJsonText(redactValue(env, shown, found));
    outputLength = text.length;
    rawOutput = truncateText(text, env.maxOutputChars);
  }
  const endedAt = end.endedAt ?? env.clock.now();
  // The classification's message and issues arrive redacted (see finishFailure).
  const errorMessage = c === undefined ? null : end.issues !== undefined ? `${c.message}: ${describeIssues(end.issues)}` : c.message;
  const errorStack = c?.stack === undefined ? null : redactText(env, trimStack(c.stack) ?? '', found);
  const fault = redactFault(call.fault, env.redactor, found);
  return executionRecord({
    executionId: call.id,
    traceId: call.traceId,
    stepIndex: call.stepIndex,
    toolName: call.toolName,
    status: end.status,
    classification: c,
    params,
    rawOutput,
    outputLength,
    errorMessage,
    errorStack,
    startedAt: call.startedAt,
    endedAt,
    attempts: call.attempts,
    breakerState: end.breaker?.currentState ?? 'closed',
    idempotent: end.idempotent,
    fault,
    feedback: end.feedback ?? null,
    recovery: end.recovery,
    fallback: call.fallback,
    context: recordContext(env, call, found),
  });
}
