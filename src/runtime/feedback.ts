/**
 * Feedback: what the agent should do about a failure, as data (seed 001 section 3.5).
 *
 * The default table is keyed by failure type, then category. Users override entries per
 * category or type, runtime-wide or per tool; the most specific entry wins:
 * tool.type > tool.category > runtime.type > runtime.category > default.type > default.category.
 * When the correction memory knows a recovery for the failure, `lastRecoveryHint` adds it.
 */
import type { CorrectionRecovery, LastRecovery } from '../core/record-types.js';
import type { FailureCategory, FeedbackAction } from '../core/taxonomy.js';
import type { Classification } from './classify.js';
import { describeIssues, type ValidationIssue } from './validate.js';

export interface Feedback {
  action: FeedbackAction;
  hint: string;
  /** Whether calling again (after doing what the action says) can succeed. */
  retryable: boolean;
  /** How long to wait before calling again, when known. */
  retryAfterMs: number | undefined;
}

/** What a hint template can use. */
export interface FeedbackContext {
  toolName: string;
  classification: Classification;
  issues: readonly ValidationIssue[] | undefined;
  /** Attempts the runtime made, including the first. */
  attempts: number;
  /** The runtime stopped retrying because of the idempotency rule. */
  ambiguousWrite: boolean;
  /**
   * A non-idempotent tool ran and its answer failed a post-condition: the write took effect, but
   * what it did is in doubt, so the state comes before any other step.
   */
  mismatchedWrite?: boolean;
  /** A credential refresher is configured. */
  canRefreshCredential: boolean;
  fallbackTool: string | undefined;
  /** For unknown_tool: the closest registered names. */
  suggestions: readonly string[];
  retryAfterMs: number | undefined;
  /** What the runtime check that refused or failed the call advises (the loop guard knows what failed before). */
  suggestedAction?: FeedbackAction | undefined;
}

export interface FeedbackOverride {
  action?: FeedbackAction;
  /** A fixed hint, or one computed from the failure. */
  hint?: string | ((context: FeedbackContext) => string);
  retryable?: boolean;
}

/** Overrides keyed by failure type (`rate_limited`) or category (`rate_limit`). */
export type FeedbackOverrides = Readonly<Record<string, FeedbackOverride>>;

interface Entry {
  action: (c: FeedbackContext) => FeedbackAction;
  retryable: (c: FeedbackContext) => boolean;
  hint: (c: FeedbackContext) => string;
}

const always =
  <T>(value: T) =>
  (): T =>
    value;

const fixParams: Entry = {
  action: always('retry_with_fixed_params'),
  retryable: always(true),
  hint: (c) =>
    c.issues !== undefined && c.issues.length > 0
      ? `Fix the arguments and call ${c.toolName} again: ${describeIssues(c.issues)}.`
      : `${c.toolName} rejected the arguments (${c.classification.message}). Fix them and call again; do not retry them unchanged.`,
};

const BY_TYPE: Record<string, Entry> = {
  unknown_tool: {
    action: always('retry_with_fixed_params'),
    retryable: always(true),
    hint: (c) =>
      `There is no tool named "${c.toolName}".` + (c.suggestions.length > 0 ? ` Did you mean ${c.suggestions.map((s) => `"${s}"`).join(' or ')}?` : ''),
  },
  malformed_arguments: {
    action: always('retry_with_fixed_params'),
    retryable: always(true),
    hint: (c) => `The arguments for ${c.toolName} are not valid JSON (${c.classification.message}). Send them again as one JSON object that matches the tool's schema.`,
  },
  unauthorized: {
    action: (c) => (c.canRefreshCredential ? 'refresh_credential' : 'escalate_to_user'),
    retryable: always(false),
    hint: (c) =>
      `${c.toolName} rejected the credentials (${c.classification.code}). Changing the arguments will not help; ` +
      (c.canRefreshCredential ? 'the credential refresh did not fix it, so ask the user to sign in again.' : 'ask the user to provide valid credentials.'),
  },
  credential_expired: {
    action: (c) => (c.canRefreshCredential ? 'refresh_credential' : 'escalate_to_user'),
    retryable: always(false),
    hint: (c) => `The credentials for ${c.toolName} have expired. Ask the user to renew them; do not retry with other arguments.`,
  },
  forbidden: {
    action: always('escalate_to_user'),
    retryable: always(false),
    hint: (c) => `${c.toolName} denied permission (${c.classification.code}). Retrying will not help; tell the user which action was refused.`,
  },
  quota_exhausted: {
    action: (c) => (c.fallbackTool !== undefined ? 'use_fallback' : 'escalate_to_user'),
    retryable: always(false),
    hint: (c) =>
      `The quota for ${c.toolName} is exhausted; waiting a few seconds will not help.` +
      (c.fallbackTool !== undefined ? ` Use ${c.fallbackTool} instead.` : ' Tell the user.'),
  },
  no_results: {
    action: always('try_alternative'),
    retryable: always(true),
    hint: (c) => `${c.toolName} found nothing. Check that the filters match the request (dates, spelling, scope) and broaden them, or try another source.`,
  },
  not_found: {
    action: always('try_alternative'),
    retryable: always(false),
    hint: (c) => `${c.toolName}: the requested item does not exist (${c.classification.message}). Check the identifier, or look it up with a search/list tool.`,
  },
  conflict: {
    action: always('verify_state'),
    retryable: always(false),
    hint: (c) => `${c.toolName}: the request conflicts with the current state (${c.classification.message}). Read the current state before deciding what to do.`,
  },
  partial_result: {
    action: always('use_partial'),
    retryable: always(false),
    hint: (c) => `${c.toolName} returned only part of the result (${c.classification.message}). Use what came back and tell the user what is missing.`,
  },
  precondition_failed: {
    action: always('try_alternative'),
    retryable: always(false),
    hint: (c) => `${c.toolName}: a precondition failed (${c.classification.message}). Satisfy it first or choose another approach.`,
  },
  tool_reported_error: {
    action: always('try_alternative'),
    retryable: always(false),
    hint: (c) => `${c.toolName} reported an error: ${c.classification.message}`,
  },
  output_schema_mismatch: {
    action: always('skip'),
    retryable: always(false),
    hint: (c) =>
      `${c.toolName} returned data that does not match its declared output` +
      (c.issues !== undefined ? ` (${describeIssues(c.issues, 3)})` : '') +
      '. Do not rely on it; skip this step or use another tool.',
  },
  circuit_open: {
    action: (c) => (c.fallbackTool !== undefined ? 'use_fallback' : 'skip'),
    retryable: always(true),
    hint: (c) =>
      `${c.toolName} is failing repeatedly and is paused` +
      (c.retryAfterMs !== undefined ? ` for about ${Math.ceil(c.retryAfterMs / 1000)} s` : '') +
      (c.fallbackTool !== undefined ? `; use ${c.fallbackTool} instead.` : '; skip it or continue without it.'),
  },
  runtime_error: {
    action: always('skip'),
    retryable: always(false),
    hint: (c) => `${c.toolName} crashed (${c.classification.message}). Retrying the same call is unlikely to help; skip it or use another tool.`,
  },
  // The loop guard writes the whole hint: how often this exact call failed, and why, and what to do.
  loop_detected: {
    action: (c) => c.suggestedAction ?? 'skip',
    retryable: always(false),
    hint: (c) => c.classification.message,
  },
  // The refusal's message says how likely the failure is and why, and what to change.
  predicted_failure: {
    action: (c) => (c.fallbackTool !== undefined ? 'use_fallback' : 'try_alternative'),
    retryable: always(true),
    hint: (c) => c.classification.message + (c.fallbackTool !== undefined ? ` ${c.fallbackTool} may serve instead.` : ''),
  },
  duplicate_write: {
    action: always('verify_state'),
    retryable: always(false),
    hint: (c) => c.classification.message,
  },
  stale_result: {
    action: always('retry'),
    retryable: always(true),
    hint: (c) => `${c.toolName} returned an old result: ${c.classification.message}. Do not use it as current; call again, or tell the user how old it is.`,
  },
  suspicious_empty: {
    action: always('verify_state'),
    retryable: always(true),
    hint: (c) => `${c.toolName} returned nothing for a narrow request: ${c.classification.message}. Check the identifier or filter against another source before concluding that nothing exists.`,
  },
  cancelled: {
    action: always('abort'),
    retryable: always(false),
    hint: (c) => `The call to ${c.toolName} was cancelled.`,
  },
};

const BY_CATEGORY: Record<FailureCategory, Entry> = {
  parameter: fixParams,
  auth: BY_TYPE['unauthorized']!,
  network: {
    action: (c) => (c.ambiguousWrite ? 'verify_state' : 'retry'),
    retryable: always(true),
    hint: (c) =>
      c.ambiguousWrite
        ? `${c.toolName} failed with ${c.classification.code} and may have completed anyway. Check the current state (list or get) before calling it again, so nothing happens twice.`
        : `${c.toolName} could not be reached (${c.classification.code})` +
          (c.attempts > 1 ? ` after ${c.attempts} attempts` : '') +
          '. Try again later or use another tool.',
  },
  rate_limit: {
    action: always('wait_and_retry'),
    retryable: always(true),
    hint: (c) =>
      `${c.toolName} is rate limited.` +
      (c.retryAfterMs !== undefined ? ` Wait ${Math.ceil(c.retryAfterMs / 1000)} s before calling again.` : ' Wait before calling again.') +
      (c.fallbackTool !== undefined ? ` Or use ${c.fallbackTool}.` : ''),
  },
  business: BY_TYPE['precondition_failed']!,
  system: {
    action: (c) => (c.ambiguousWrite ? 'verify_state' : c.fallbackTool !== undefined ? 'use_fallback' : 'skip'),
    retryable: always(true),
    hint: (c) =>
      c.ambiguousWrite
        ? `${c.toolName} failed with ${c.classification.code} and may have completed anyway. Check the current state before calling it again.`
        : `${c.toolName}'s service is failing (${c.classification.code})` +
          (c.attempts > 1 ? ` after ${c.attempts} attempts` : '') +
          (c.fallbackTool !== undefined ? `. Use ${c.fallbackTool} instead.` : '. Skip this step or try again later.'),
  },
  semantic: {
    action: (c) => (c.mismatchedWrite === true ? 'verify_state' : 'try_alternative'),
    retryable: always(true),
    hint: (c) =>
      c.mismatchedWrite === true
        ? `${c.toolName} ran, but its answer does not match the request: ${c.classification.message}. Read the current state to see what was written before calling it again, so nothing happens twice.`
        : `${c.toolName} answered, but not what was asked: ${c.classification.message}. Do not use this result as the answer; check the arguments against the request and call again, or use another source.`,
  },
  logic: BY_TYPE['loop_detected']!,
};

function applyOverride(base: Feedback, override: FeedbackOverride | undefined, context: FeedbackContext): Feedback {
  if (override === undefined) return base;
  return {
    action: override.action ?? base.action,
    hint: override.hint === undefined ? base.hint : typeof override.hint === 'function' ? override.hint(context) : override.hint,
    retryable: override.retryable ?? base.retryable,
    retryAfterMs: base.retryAfterMs,
  };
}

/** Builds the feedback for a failure; `overrides` are most specific first (tool, then runtime). */
export function buildFeedback(context: FeedbackContext, overrides: readonly (FeedbackOverrides | undefined)[]): Feedback {
  const { type, category } = context.classification;
  // An ambiguous write outranks the type's own advice: knowing the state comes before anything else.
  const entry = context.ambiguousWrite ? BY_CATEGORY[category] : (BY_TYPE[type] ?? BY_CATEGORY[category]);
  let feedback: Feedback = {
    action: entry.action(context),
    hint: entry.hint(context),
    retryable: entry.retryable(context),
    retryAfterMs: context.retryAfterMs,
  };
  for (let i = overrides.length - 1; i >= 0; i--) {
    const table = overrides[i];
    if (table === undefined) continue;
    feedback = applyOverride(feedback, table[category], context);
    feedback = applyOverride(feedback, table[type], context);
  }
  return feedback;
}

const MAX_DESCRIBED_ARGS = 3;
const MAX_DESCRIBED_VALUE = 40;

function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length <= MAX_DESCRIBED_VALUE ? text : `${text.slice(0, MAX_DESCRIBED_VALUE - 1)}…`;
}

/** A recovery in words, for hints: "changing unit to \"celsius\"", "waiting 2 s and calling again". */
export function describeRecovery(recovery: CorrectionRecovery): string {
  switch (recovery.action) {
    case 'retry_with_fixed_params': {
      const changes = Object.entries(recovery.params_delta ?? {});
      if (changes.length === 0) return 'calling again with fixed arguments';
      const shown = changes.slice(0, MAX_DESCRIBED_ARGS).map(([key, value]) => (value === null ? `dropping ${key}` : `setting ${key} to ${shortJson(value)}`));
      return shown.join(', ') + (changes.length > MAX_DESCRIBED_ARGS ? ` (and ${changes.length - MAX_DESCRIBED_ARGS} more)` : '');
    }
    case 'wait_and_retry':
      return recovery.wait_ms === undefined ? 'waiting and calling again' : `waiting ${Math.max(1, Math.round(recovery.wait_ms / 1000))} s and calling again`;
    case 'retry':
      return 'calling again unchanged';
    case 'switch_tool':
      return recovery.tool === undefined ? 'using another tool' : `calling ${recovery.tool} instead`;
    case 'refresh_credential':
      return 'refreshing the credential';
  }
}

/** The hint sentence that points at the last recovery: appended to the failure's own hint. */
export function lastRecoveryHint(last: LastRecovery): string {
  return `The last time this failure happened, ${describeRecovery(last)} fixed it (${last.recovered_at}${last.uses > 1 ? `, worked ${last.uses} times` : ''}).`;
}
