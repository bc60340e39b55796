/**
 * What one reading of a logged tool result found, and how a cause becomes the taxonomy: every
 * stated code (HTTP status, errno, JSON-RPC code, exception class) goes through the runtime's own
 * classifier, so an imported 429 is labelled exactly as a live one would be.
 */
import { classifyError } from '../../runtime/classify.js';
import { categoryOfType, type FailureCategory, type FailureStage } from '../../core/taxonomy.js';

/**
 * What a signal says about why the call failed, in the runtime's own terms. The runtime
 * classifies thrown errors by these fields, so a cause is handed to it as the error it would have
 * seen live: `{ status }`, `{ code: errno }`, a JSON-RPC `{ code: -32602 }`, an error `name`.
 */
export type Cause =
  | { status: number; /** A refinement the status alone cannot tell (`credential_expired`, `quota_exhausted`). */ type?: string; retryAfter?: string }
  | { errno: string }
  | { rpc: number }
  | { name: string }
  /** A taxonomy type the source itself names (tau-bench's business rules). */
  | { type: string };

export interface Signal {
  /** `kind:detail`, as in {@link FailureEvidence} (`field:error.code=429`, `words:timed out`). */
  evidence: string;
  /** In [0, 1]; see `FailureEvidence.confidence`. */
  confidence: number;
  /** The signal alone shows the call failed (a flag, a failing status, an error object, a status line). */
  fails: boolean;
  /** Why it failed, when the signal tells. */
  cause?: Cause;
  /** Read from wording, not from a stated code or form. */
  wording?: boolean;
  /**
   * A stated class too broad to tell the cause by itself (`"type": "invalid_request_error"`, which
   * Stripe and OpenAI send with 400, 401 and 404; JSON-RPC's implementation-defined -32000..-32099):
   * the error's own message, even in words, says more, so it ranks below them.
   */
  broad?: boolean;
  /**
   * For wording: the words are a short statement of their own (no longer than a sentence or two,
   * not reporting success), so they may fail a result that states nothing else.
   */
  statement?: boolean;
}

/** Where signals go as a result is read. */
export type SignalSink = Signal[];

export interface CauseReading {
  category: FailureCategory;
  type: string;
  stage: FailureStage;
  code: string;
  status?: number;
  retryAfterMs?: number;
}

/** Causes are few and repeat across a log; their classification is a pure function of the key. */
const cache = new Map<string, CauseReading | null>();

/**
 * The runtime's classification of a cause, or null when the runtime has no class for it (an errno
 * or an exception name it does not know: its catch-all `system/runtime_error` is returned only
 * for `{ name }`, a crash the tool reported).
 */
export function classifyCause(cause: Cause): CauseReading | null {
  const key = causeKey(cause);
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const reading = classifyUncached(cause);
  if (cache.size < 4096) cache.set(key, reading);
  return reading;
}

function causeKey(cause: Cause): string {
  if ('status' in cause) return `s${cause.status}/${cause.type ?? ''}/${cause.retryAfter ?? ''}`;
  if ('errno' in cause) return `e${cause.errno}`;
  if ('rpc' in cause) return `r${cause.rpc}`;
  if ('name' in cause) return `n${cause.name}`;
  return `t${cause.type}`;
}

function classifyUncached(cause: Cause): CauseReading | null {
  if ('type' in cause && !('status' in cause)) {
    const category = categoryOfType(cause.type);
    return category === undefined ? null : { category, type: cause.type, stage: 'execution', code: cause.type.toUpperCase() };
  }
  const error: Record<string, unknown> = { message: '' };
  if ('status' in cause) {
    error['status'] = cause.status;
    if (cause.type === 'quota_exhausted') error['code'] = 'insufficient_quota';
    if (cause.retryAfter !== undefined) error['headers'] = { 'retry-after': cause.retryAfter };
  } else if ('errno' in cause) error['code'] = cause.errno;
  else if ('rpc' in cause) error['code'] = cause.rpc;
  else error['name'] = cause.name;
  const c = classifyError(error, 0);
  if (c.category === 'system' && c.type === 'runtime_error' && !('name' in cause)) return null;
  const reading: CauseReading = { category: c.category, type: c.type, stage: c.stage, code: c.code };
  if ('status' in cause && cause.type !== undefined && cause.type !== 'quota_exhausted') {
    const refined = categoryOfType(cause.type);
    if (refined !== undefined) {
      reading.category = refined;
      reading.type = cause.type;
    }
  }
  if (c.status !== undefined) reading.status = c.status;
  if (c.retryAfterMs !== undefined) reading.retryAfterMs = c.retryAfterMs;
  return reading;
}
