/**
 * Derives what the agent decided after each call from what it did next. Shared by the builder
 * (stored records, with timings) and the importers (conversations, usually without timings).
 */
import { paramsHash } from '../core/params-hash.js';
import { paramsDelta } from '../core/params-delta.js';
import type { AgentDecision } from '../core/trajectory-types.js';

/** What decision derivation needs to know about one call. */
export interface DecisionCall {
  tool_name: string;
  /** Equal hashes mean identical arguments (see `paramsHash`). Taken from `input_params` when left out, and only if compared. */
  params_hash?: string;
  input_params: unknown;
  failed: boolean;
  /** Epoch ms the call started, when known. */
  startMs?: number;
  /** Epoch ms the call's last attempt ended, when known. */
  endMs?: number;
  /**
   * The least wait that counts as honouring the failure's Retry-After or backoff. Without it (or
   * without times), a repeat of the same call is a plain `retry`.
   */
  requiredWaitMs?: number;
}

const hashOf = (call: DecisionCall): string => (call.params_hash ??= paramsHash(call.input_params));

/** The gap the agent left between `call` ending and `next` starting, when both times are known. */
function gapMs(call: DecisionCall, next: DecisionCall): number | undefined {
  if (call.endMs === undefined || next.startMs === undefined) return undefined;
  return Math.max(0, next.startMs - call.endMs);
}

/** The decision after `call`, given the call that followed it (or none). */
export function deriveDecision(call: DecisionCall, next: DecisionCall | undefined): AgentDecision {
  if (next === undefined) {
    return call.failed
      ? { action: 'abort', reasoning: 'no further call after the failure' }
      : { action: 'proceed', reasoning: 'last call succeeded' };
  }
  if (!call.failed) return { action: 'proceed' };
  if (next.tool_name !== call.tool_name) {
    return { action: 'switch_tool', next_tool: next.tool_name, reasoning: `called ${next.tool_name} after ${call.tool_name} failed` };
  }
  const gap = gapMs(call, next);
  const waited = gap !== undefined && call.requiredWaitMs !== undefined && gap >= call.requiredWaitMs && gap > 0;
  if (hashOf(next) !== hashOf(call)) {
    const decision: AgentDecision = { action: 'retry_with_params', params_delta: paramsDelta(call.input_params, next.input_params) };
    if (waited) decision.wait_seconds = gap / 1000;
    return decision;
  }
  if (waited) {
    return {
      action: 'wait_and_retry',
      wait_seconds: gap / 1000,
      reasoning: `repeated the call after ${gap} ms, at least the ${call.requiredWaitMs} ms the failure asked for`,
    };
  }
  return {
    action: 'retry',
    reasoning:
      gap === undefined || call.requiredWaitMs === undefined
        ? 'repeated the same call with the same arguments'
        : `repeated the same call after ${gap} ms, less than the ${call.requiredWaitMs} ms the failure asked for`,
  };
}

/** Decisions for a whole ordered list of calls. */
export function deriveDecisions(calls: readonly DecisionCall[]): AgentDecision[] {
  return calls.map((call, i) => deriveDecision(call, calls[i + 1]));
}
