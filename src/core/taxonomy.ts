/**
 * The failure taxonomy (DESIGN.md "Taxonomy"): how a call ended, where it failed and why.
 * Everything that classifies, records, scores or exports a failure speaks these types.
 */

/** How one logical call ended. `rejected`: the runtime refused to run it (bad input, unknown tool, open circuit). */
export type CallStatus = 'success' | 'failure' | 'timeout' | 'rejected';

/** Where in the call's lifecycle it failed (seed 001, section 2.1). */
export type FailureStage = 'request_build' | 'param_validation' | 'execution' | 'result_parse' | 'feedback';

/**
 * Why it failed: the six categories of seed 001, section 2.3, plus two the runtime's own checks
 * produce: `semantic` (the call succeeded, but its result does not answer the request: a
 * post-condition failed) and `logic` (the call itself is fine, the course of calls is not: the
 * same failing call again, the same write twice).
 */
export type FailureCategory = 'parameter' | 'auth' | 'network' | 'rate_limit' | 'business' | 'system' | 'semantic' | 'logic';

export const CALL_STATUSES: readonly CallStatus[] = ['success', 'failure', 'timeout', 'rejected'];
export const FAILURE_STAGES: readonly FailureStage[] = ['request_build', 'param_validation', 'execution', 'result_parse', 'feedback'];
export const FAILURE_CATEGORIES: readonly FailureCategory[] = ['parameter', 'auth', 'network', 'rate_limit', 'business', 'system', 'semantic', 'logic'];

/** What the agent (or the runtime on its behalf) should do next. */
export type FeedbackAction =
  | 'retry_with_fixed_params'
  | 'refresh_credential'
  | 'escalate_to_user'
  | 'retry'
  | 'wait_and_retry'
  | 'use_fallback'
  | 'try_alternative'
  | 'use_partial'
  | 'verify_state'
  | 'skip'
  | 'abort';

/**
 * The known failure types and the category each belongs to. Types are low-cardinality strings;
 * a tool may report a type not listed here by throwing a `ToolError` with an explicit category.
 */
export const FAILURE_TYPES = {
  // parameter: the caller's own arguments are wrong; retrying unchanged cannot help.
  schema_mismatch: 'parameter',
  missing_required: 'parameter',
  type_mismatch: 'parameter',
  enum_mismatch: 'parameter',
  boundary_violation: 'parameter',
  unknown_tool: 'parameter',
  /** The model's tool-call arguments were not valid JSON (stage request_build). */
  malformed_arguments: 'parameter',
  // auth
  unauthorized: 'auth',
  forbidden: 'auth',
  credential_expired: 'auth',
  // network: transient transport failures.
  timeout: 'network',
  connection_refused: 'network',
  connection_reset: 'network',
  dns_failure: 'network',
  proxy_failed: 'network',
  // rate_limit
  rate_limited: 'rate_limit',
  quota_exhausted: 'rate_limit',
  // business: the tool worked and said "no".
  no_results: 'business',
  not_found: 'business',
  conflict: 'business',
  partial_result: 'business',
  precondition_failed: 'business',
  tool_reported_error: 'business',
  // system: the tool or its dependencies broke.
  server_error: 'system',
  runtime_error: 'system',
  output_schema_mismatch: 'system',
  circuit_open: 'system',
  dependency_down: 'system',
  cancelled: 'system',
  /** The runtime could not build a call's feedback or record (stage feedback): an override's hint threw, an output could not be read. */
  feedback_failed: 'system',
  /** The pre-flight failure predictor scored the call above its `refuseAbove` (stage request_build): not run. */
  predicted_failure: 'system',
  // semantic: a post-condition check failed (stage result_parse): the tool answered, but not what was asked.
  /** A response field does not echo the request field it must (another date, city, id). */
  result_mismatch: 'semantic',
  /** A timestamp in the result lies outside the window the request asked for. */
  out_of_window: 'semantic',
  /** The result is older than the tool's declared freshness. */
  stale_result: 'semantic',
  /** An empty result under a filter narrow enough that empty is suspect (an exact id, one day). */
  suspicious_empty: 'semantic',
  // logic: refused by the loop guard (stage request_build) before the call ran.
  /** The same call (tool and arguments) already failed the configured number of times in this session. */
  loop_detected: 'logic',
  /** The same non-idempotent write already succeeded in this session within the window, and carries no idempotency key. */
  duplicate_write: 'logic',
} as const satisfies Record<string, FailureCategory>;

export type KnownFailureType = keyof typeof FAILURE_TYPES;

/** The category a type belongs to, or undefined for a type this table does not know. */
export function categoryOfType(type: string): FailureCategory | undefined {
  return Object.hasOwn(FAILURE_TYPES, type) ? FAILURE_TYPES[type as KnownFailureType] : undefined;
}

/**
 * Failure categories that count against a tool's circuit breaker: failures of the tool itself,
 * never of the caller's arguments or credentials (DESIGN.md, "Circuit breaker").
 */
export function countsAgainstBreaker(category: FailureCategory, type: string): boolean {
  if (type === 'cancelled' || type === 'circuit_open' || type === 'predicted_failure') return false;
  return category === 'network' || category === 'system' || category === 'rate_limit';
}

// ---------------------------------------------------------------------------------------------
// Seed 000's training taxonomy. Trajectories carry both; this is where the two meet.
// ---------------------------------------------------------------------------------------------

/** Seed 000 section 1: the top level of the training taxonomy. */
export type TrainingFailureType = 'infrastructure' | 'parameter' | 'logic';

/** Seed 000 section 1: its subtypes. `cascade` comes only from annotators; `semantic`, `loop` and `idempotency` also from the runtime's checks. */
export type TrainingFailureSubtype =
  | 'timeout'
  | 'authz'
  | '5xx'
  | 'rate_limit'
  | 'syntactic'
  | 'boundary'
  | 'semantic'
  | 'loop'
  | 'idempotency'
  | 'cascade';

export interface TrainingLabel {
  failure_type: TrainingFailureType;
  failure_subtype: TrainingFailureSubtype;
}

/**
 * Maps one call's runtime classification to seed 000's taxonomy.
 *
 * - Infrastructure failures are the ones the agent did not cause: network (timeout and the
 *   transport errors, which seed 000 files under "timeout"), auth ("authz"), rate limits, and
 *   system failures ("5xx").
 * - Parameter failures are the agent's arguments: boundary violations are "boundary", every other
 *   parameter type is "syntactic".
 * - Business failures (no results, not found, conflict, ...) are not failures of the tool, and a
 *   single call cannot tell whether they are the agent's fault; they map to nothing here. Whether
 *   they were "semantic" (wrong filter) or "logic" (loop, cascade, idempotency) is decided by the
 *   annotators, which see the whole trajectory.
 */
export function toTrainingLabel(category: FailureCategory, type: string): TrainingLabel | null {
  switch (category) {
    case 'network':
      return { failure_type: 'infrastructure', failure_subtype: 'timeout' };
    case 'auth':
      return { failure_type: 'infrastructure', failure_subtype: 'authz' };
    case 'rate_limit':
      return { failure_type: 'infrastructure', failure_subtype: 'rate_limit' };
    case 'system':
      // A call the predictor refused never reached the tool: no failure of it to learn from.
      return type === 'cancelled' || type === 'predicted_failure' ? null : { failure_type: 'infrastructure', failure_subtype: '5xx' };
    case 'parameter':
      return { failure_type: 'parameter', failure_subtype: type === 'boundary_violation' ? 'boundary' : 'syntactic' };
    case 'business':
      return null;
    // Seed 000 files a result that misses the intent under parameter / semantic (its example: the
    // wrong date sent, a 200 with the wrong day's weather).
    case 'semantic':
      return { failure_type: 'parameter', failure_subtype: 'semantic' };
    case 'logic':
      return { failure_type: 'logic', failure_subtype: type === 'duplicate_write' ? 'idempotency' : 'loop' };
  }
}
