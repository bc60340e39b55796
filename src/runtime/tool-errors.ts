/**
 * Errors a tool throws to say exactly how it failed. The runtime classifies them by their fields,
 * never by their message text. Plain errors with `status`, `code` and so on are classified too
 * (see classify.ts); these exist for failures no transport status can express.
 */
import { FaultlineError } from '../core/errors.js';
import { DEFAULT_STACK_FRAMES } from '../record/truncate.js';
import { categoryOfType, type FailureCategory, type FailureStage } from '../core/taxonomy.js';

const TOOL_ERROR_MARKER = Symbol.for('faultline.error.ToolError');

export interface ToolErrorOptions {
  /** A stable machine code, e.g. `ORDER_NOT_FOUND`. Defaults to the type in upper case. */
  code?: string;
  /** Where it failed; default `execution`. */
  stage?: FailureStage;
  /** For rate limits and temporary unavailability: how long to wait before trying again. */
  retryAfterMs?: number;
  /** HTTP status, if the failure came from one. */
  status?: number;
  /** Structured details for the agent (e.g. the valid range of a parameter). Redacted before recording. */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * Sets `Error.stackTraceLimit` for the construction of a classified failure and returns the value
 * to restore. The runtime records a stack only for system failures, and only the innermost
 * {@link DEFAULT_STACK_FRAMES} frames of it; any other classified failure (not found, conflict,
 * forbidden, rate limited...) is an answer, not a bug. Capturing a stack costs several
 * microseconds per throw (more than the rest of a failed call's bookkeeping, in perf
 * measurements), so these errors capture only what a record can keep.
 */
function limitStack(system: boolean): number {
  const limit = Error.stackTraceLimit;
  if (typeof limit === 'number') Error.stackTraceLimit = system ? Math.min(limit, DEFAULT_STACK_FRAMES) : 0;
  return limit;
}

/**
 * A classified tool failure. Prefer the subclasses; use this one for custom types. Only a
 * `system` failure carries a stack trace (its innermost 5 frames, what a record keeps).
 */
export class ToolError extends FaultlineError {
  readonly [TOOL_ERROR_MARKER] = true;
  readonly code: string;
  readonly stage: FailureStage;
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    readonly category: FailureCategory,
    readonly type: string,
    message: string,
    options: ToolErrorOptions = {},
  ) {
    const limit = limitStack(category === 'system');
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    Error.stackTraceLimit = limit;
    this.code = options.code ?? type.toUpperCase();
    this.stage = options.stage ?? 'execution';
    this.retryAfterMs = options.retryAfterMs;
    this.status = options.status;
    this.details = options.details;
  }

  static override isInstance(value: unknown): value is ToolError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TOOL_ERROR_MARKER] === true;
  }
}

export type BusinessFailureType = 'no_results' | 'not_found' | 'conflict' | 'partial_result' | 'precondition_failed';

/**
 * The tool worked and the answer is "no": nothing matched, the entity does not exist, the state
 * conflicts. Never retried automatically. For `partial_result`, put what you have in `partial`:
 * it is returned to the agent with the feedback `use_partial`.
 */
export class BusinessError extends ToolError {
  readonly partial: unknown;
  constructor(type: BusinessFailureType, message: string, options: ToolErrorOptions & { partial?: unknown } = {}) {
    super('business', type, message, options);
    this.partial = options.partial;
  }
}

export type ParameterFailureType = 'schema_mismatch' | 'missing_required' | 'type_mismatch' | 'enum_mismatch' | 'boundary_violation';

/** The arguments are well-formed but unacceptable, e.g. a date outside the data's range. */
export class ParameterError extends ToolError {
  constructor(type: ParameterFailureType, message: string, options: ToolErrorOptions = {}) {
    super('parameter', type, message, options);
  }
}

export type AuthFailureType = 'unauthorized' | 'forbidden' | 'credential_expired';

/** Credentials are missing, wrong, expired or insufficient. */
export class AuthError extends ToolError {
  constructor(type: AuthFailureType, message: string, options: ToolErrorOptions = {}) {
    super('auth', type, message, options);
  }
}

/**
 * An HTTP error response, for tools that call HTTP APIs with a client that does not throw on
 * error statuses. Classified by `status`, with `Retry-After` read from `headers`. As with
 * {@link ToolError}, only a status the runtime files as a system failure (5xx, and anything
 * outside 4xx) carries a stack trace, of at most 5 frames.
 */
export class HttpError extends FaultlineError {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> | Headers = {},
    readonly body?: unknown,
  ) {
    // classifyHttpStatus files every 4xx status under another category than system.
    const limit = limitStack(!(status >= 400 && status < 500));
    super(message);
    Error.stackTraceLimit = limit;
  }
}

/** Builds a ToolError of a known type, filling in its category from the taxonomy. */
export function toolError(type: string, message: string, options: ToolErrorOptions = {}): ToolError {
  const category = categoryOfType(type);
  if (category === undefined) throw new TypeError(`unknown failure type "${type}"; use new ToolError(category, type, ...)`);
  return new ToolError(category, type, message, options);
}
