/**
 * A logical call from name and arguments to result: the checks that reject it before any attempt
 * (unknown tool, malformed or invalid arguments, an open circuit), its attempts, and the fallback
 * tool that takes over when the circuit opens or the rate limit is exhausted.
 */
import type { FallbackLink } from '../core/record-types.js';
import { truncateText } from '../record/truncate.js';
import { MalformedArguments, newCall, type Call, type CallEnv } from './call.js';
import { runAttempts } from './call-loop.js';
import { redactText } from './call-record.js';
import { finishFailure, finishSuccess, type FailureDetails } from './call-result.js';
import { rejection } from './classify.js';
import type { RegisteredTool, ToolRegistry } from './registry.js';
import { refusalOf } from './loop-guard.js';
import { predictedRefusal } from './failure-prediction.js';
import { closestNames } from './suggest.js';
import type { TraceSteps } from '../core/trace-steps.js';
import type { ExecuteOptions, ExecuteResult } from './types.js';
import { failureTypeOf } from './validate.js';

/** How much of a tool name the model made up is kept (registered names are not cut). */
const MAX_UNKNOWN_TOOL_NAME = 128;

export interface CallScope {
  env: CallEnv;
  registry: ToolRegistry;
  steps: TraceSteps;
}

/** `depth` 1 is a fallback's call, which has no fallback of its own. */
export async function executeCall(
  scope: CallScope,
  toolName: string,
  args: unknown,
  opts: ExecuteOptions,
  depth: number,
  fallbackOf: FallbackLink | null,
  snapshot?: Call['snapshot'],
): Promise<ExecuteResult> {
  const { env, registry } = scope;
  const startedAt = env.clock.now();
  const call = newCall(env, scope.steps, toolName, args, opts, startedAt, snapshot);
  call.fallback = fallbackOf;

  const entry = registry.get(toolName);
  if (entry === undefined) {
    const suggestions = closestNames(toolName, registry.names());
    // The model made this name up: it may hold anything (a pasted key, a whole prompt), and it
    // goes into the record, the stats and the hint, so it is redacted and cut like any text.
    // Redacted before it is cut: a key cut in half no longer matches its rule, and its first
    // half would be stored. The first cut only bounds the redactor's work; whatever a secret
    // across it leaves lies beyond the final cut.
    call.toolName = truncateText(redactText(env, toolName.slice(0, 4096)), MAX_UNKNOWN_TOOL_NAME);
    return finishFailure(env, call, {
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
    return finishFailure(env, call, {
      status: 'rejected',
      classification: rejection('request_build', 'parameter', 'malformed_arguments', 'MALFORMED_ARGUMENTS', args.reason),
      entry,
      stopReason: undefined,
    });
  }

  const loopGuard = env.loopGuard;
  if (loopGuard !== undefined && depth === 0) {
    call.loopKey = loopGuard.keyOf(opts.sessionId ?? opts.traceId, toolName, args);
    const verdict = loopGuard.check(call, startedAt, !tool.idempotent, opts.idempotencyKey !== undefined, tool.fallback);
    if (verdict !== undefined && (verdict.kind === 'loop' || verdict.refuse)) {
      return finishFailure(env, call, { status: 'rejected', classification: refusalOf(verdict), entry, stopReason: undefined, ...(verdict.kind === 'loop' ? { action: verdict.action } : {}) });
    }
    if (verdict !== undefined) call.notice = verdict.message;
  }

  const validated = tool.validateInput(args);
  if (!validated.ok) {
    const type = failureTypeOf(validated.issues);
    return finishFailure(env, call, {
      status: 'rejected',
      classification: rejection('param_validation', 'parameter', type, 'INVALID_ARGUMENTS', `invalid arguments for ${toolName}`),
      issues: validated.issues,
      entry,
      stopReason: undefined,
    });
  }

  // After the checks that know for certain: an invalid call is told what to fix, not that it would fail.
  const predictor = env.predictor;
  if (predictor !== undefined && depth === 0) {
    const prediction = (call.prediction = predictor.predict(call));
    if (predictor.refuses(prediction)) {
      return finishFailure(env, call, { status: 'rejected', classification: predictedRefusal(toolName, prediction, predictor.refuseAbove!), entry, stopReason: undefined });
    }
  }

  const breaker = entry.breaker;
  if (breaker.admit(startedAt) === 'reject') {
    env.prober?.opened(entry, validated.value);
    const state = breaker.snapshot();
    const remaining = state.openedAt === null ? undefined : Math.max(0, state.openedAt + breaker.options.cooldownMs - startedAt);
    const failure: FailureDetails = {
      status: 'rejected',
      classification: rejection('execution', 'system', 'circuit_open', 'CIRCUIT_OPEN', `the circuit for ${toolName} is open`),
      entry,
      stopReason: 'circuit_open',
      ...(remaining !== undefined ? { retryAfterMs: remaining } : {}),
    };
    if (tool.fallback !== undefined && depth === 0) return viaFallback(scope, call, entry, failure, 'circuit_open', depth);
    return finishFailure(env, call, failure);
  }

  const ending = await runAttempts(env, call, entry, validated.value);
  if (ending.kind === 'success') return finishSuccess(env, call, entry, ending.output, ending.recovered, ending.endedAt);
  if (ending.fallbackReason !== undefined && tool.fallback !== undefined && depth === 0) {
    return viaFallback(scope, call, entry, ending.failure, ending.fallbackReason, depth);
  }
  return finishFailure(env, call, ending.failure);
}

async function viaFallback(scope: CallScope, call: Call, entry: RegisteredTool, failure: FailureDetails, reason: string, depth: number): Promise<ExecuteResult> {
  const { env } = scope;
  const fallbackName = entry.tool.fallback!;
  call.fallback = { role: 'primary', to: fallbackName, reason };
  const fallbackResult = await executeCall(scope, fallbackName, call.args, call.options, depth + 1, {
    role: 'fallback',
    from: call.toolName,
    primary_execution_id: call.id,
    reason,
  });
  const primary = await finishFailure(env, call, {
    ...failure,
    fallbackTool: fallbackName,
    fallbackUsed: { tool: fallbackName, reason },
    recovery: fallbackResult.ok ? 'auto_recovered' : 'needs_decision',
  });
  if (fallbackResult.ok && env.corrections !== undefined) {
    env.corrections.learn(primary.record, { action: 'switch_tool', tool: fallbackName, note: `runtime fallback (${reason.replace(/_/g, ' ')})` }, fallbackResult.record.created_at);
  }
  return { ...fallbackResult, fallbackFrom: { tool: call.toolName, reason, record: primary.record } };
}
