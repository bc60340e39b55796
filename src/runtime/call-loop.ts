/**
 * A call's attempts: run, classify, then retry after a backoff, refresh the credential once, or
 * stop. The loop returns how the call ended; the caller turns that into a result (or a fallback).
 */
import { isoTime } from '../record/iso-time.js';
import { countsAgainstBreaker } from '../core/taxonomy.js';
import { AttemptContext, planFault, runAttempt, type AttemptResult } from './attempt.js';
import type { Call, CallEnv } from './call.js';
import { learnRefresh, toCallError, type FailureDetails } from './call-result.js';
import { classifyError, classifyOutput, rejection, timeoutClassification, type Classification } from './classify.js';
import type { Tool } from './define-tool.js';
import type { RegisteredTool } from './registry.js';
import { decideRetry, type StopReason } from './retry-policy.js';
import type { ValidationIssue } from './validate.js';

/** Why a fallback tool may take the call over. */
export type FallbackReason = 'circuit_open' | 'rate_limit_exhausted';

export type CallEnding =
  | { kind: 'success'; output: unknown; recovered: boolean; endedAt: number }
  /** `fallbackReason`: set when the tool's fallback (if it has one) takes over. */
  | { kind: 'failure'; failure: FailureDetails; fallbackReason?: FallbackReason };

interface AttemptVerdict {
  /** Undefined: the attempt succeeded. */
  classification: Classification | undefined;
  issues?: ValidationIssue[];
  output?: unknown;
}

function judgeAttempt(env: CallEnv, tool: Tool, args: unknown, result: AttemptResult, endedAt: number, timeoutMs = tool.timeoutMs): AttemptVerdict {
  switch (result.kind) {
    case 'ok': {
      const output = result.value;
      const classification = classifyOutput(output, endedAt);
      if (classification !== undefined) return { classification, output };
      if (tool.validateOutput === undefined) return { classification: checkPostConditions(env, tool, args, output, endedAt), output };
      const checked = tool.validateOutput(output);
      if (checked.ok) return { classification: checkPostConditions(env, tool, args, output, endedAt), output };
      const mismatch = rejection('result_parse', 'system', 'output_schema_mismatch', 'OUTPUT_SCHEMA_MISMATCH', `${tool.name} returned output that does not match its schema`);
      mismatch.body = output;
      return { classification: mismatch, issues: checked.issues, output };
    }
    case 'error':
      return { classification: classifyError(result.error, endedAt) };
    case 'timeout':
      return { classification: timeoutClassification(timeoutMs) };
    case 'cancelled':
      return { classification: cancelled(tool.name) };
  }
}

/** A failed post-condition (`semantic`), or undefined; nothing to do for a tool that declares none. */
function checkPostConditions(env: CallEnv, tool: Tool, args: unknown, output: unknown, now: number): Classification | undefined {
  return tool.postConditions?.check(args, output, { toolName: tool.name, now, clock: env.clock });
}

function cancelled(toolName: string): Classification {
  return rejection('execution', 'system', 'cancelled', 'ABORTED', `the call to ${toolName} was cancelled`);
}

/** Runs the attempts of a call the breaker admitted, `args` already validated. */
export async function runAttempts(env: CallEnv, call: Call, entry: RegisteredTool, args: unknown): Promise<CallEnding> {
  const { clock, faults } = env;
  const { tool, breaker } = entry;
  const signal = call.options.signal;
  const safeToRepeat = tool.idempotent || tool.idempotencyKey;
  let canRefresh = env.refreshCredential !== undefined;
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
        return { kind: 'failure', failure: { status: 'failure', classification: cancelled(tool.name), entry, stopReason: 'cancelled' } };
      }
    }
    // Another call opened the circuit while this one was waiting to retry.
    if (attempt > 0 && breaker.currentState === 'open') return openedDuringRetries(call, entry);
    const attemptStart = attempt === 0 ? call.startedAt : clock.now();
    const ctx = new AttemptContext(call, attempt, clock);
    const planned = faults === undefined ? undefined : planFault(env, call, entry, attempt, attemptStart);
    const limit = entry.adaptiveTimeout?.current();
    const result = await runAttempt(env, entry, args, ctx, signal, attemptStart, planned, limit?.ms);
    const attemptEnd = clock.now();
    // `fault` is ground truth: a fault that met the tool's own failure left it as it was, as the proxies record it.
    const skipped = planned?.onlyOnSuccess === true && result.kind === 'error' && result.fromTool === true;
    const applied = skipped ? undefined : planned;
    if (applied !== undefined) call.fault ??= applied.fault;
    else if (skipped) call.faultNotApplied ??= planned.fault;

    const { classification, issues, output } = judgeAttempt(env, tool, args, result, attemptEnd, limit?.ms);
    call.attempts.push({
      attempt,
      started_at: isoTime(attemptStart),
      duration_ms: attemptEnd - attemptStart,
      outcome: classification === undefined ? 'success' : result.kind === 'timeout' ? 'timeout' : 'failure',
      failure_type: classification?.type ?? null,
      error_code: classification?.code ?? null,
      delay_before_ms: delay,
      ...(faults !== undefined ? { fault_kind: applied?.fault.kind ?? null } : {}),
      ...(limit !== undefined ? { timeout: limit } : {}),
    });

    if (classification === undefined) {
      breaker.onSuccess();
      entry.adaptiveTimeout?.observe(attemptEnd - attemptStart);
      if (refreshedAfter !== undefined) learnRefresh(env, call, refreshedAfter, attemptEnd);
      return { kind: 'success', output, recovered: attempt > 0 || refreshed, endedAt: attemptEnd };
    }

    let tripped = false;
    if (countsAgainstBreaker(classification.category, classification.type)) tripped = breaker.onFailure(attemptEnd);
    else breaker.onNeutral();
    if (tripped) env.prober?.opened(entry, args);

    const decision: ReturnType<typeof decideRetry> = tripped
      ? { kind: 'stop', reason: 'circuit_open' }
      : decideRetry(classification, { attempt, safeToRepeat, canRefresh }, entry.retry, env.random);

    if (decision.kind === 'refresh_credential') {
      canRefresh = false;
      if (await refreshCredential(env, call, classification)) {
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
    if (tripped) return { kind: 'failure', failure, fallbackReason: 'circuit_open' };
    if (classification.category === 'rate_limit') return { kind: 'failure', failure, fallbackReason: 'rate_limit_exhausted' };
    return { kind: 'failure', failure };
  }
}

/** True when the runtime's refresher says the credential was refreshed; a refresher that throws did not. */
async function refreshCredential(env: CallEnv, call: Call, classification: Classification): Promise<boolean> {
  try {
    return (await env.refreshCredential!({ toolName: call.toolName, error: toCallError(classification) })) !== false;
  } catch (error) {
    env.reportListenerError(error, 'refreshCredential');
    return false;
  }
}

function openedDuringRetries(call: Call, entry: RegisteredTool): CallEnding {
  const last = call.attempts[call.attempts.length - 1]!;
  const classification = rejection(
    'execution',
    'system',
    'circuit_open',
    'CIRCUIT_OPEN',
    `the circuit for ${call.toolName} opened during retries (last failure: ${last.failure_type ?? 'unknown'})`,
  );
  return { kind: 'failure', failure: { status: 'failure', classification, entry, stopReason: 'circuit_open' }, fallbackReason: 'circuit_open' };
}
