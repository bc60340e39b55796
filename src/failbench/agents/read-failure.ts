/**
 * How a reference agent reads a failed tool call: from what a real API client gets (status,
 * errno code, Retry-After, the error body) in raw mode, or from the runtime's classification in
 * assisted mode. Machine fields decide; message text never does.
 */
import type { FailureCategory } from '../../core/taxonomy.js';
import type { AgentToolResult } from '../types.js';

export interface Issue {
  path: string;
  code?: string;
  expected?: unknown;
  received?: unknown;
}

/** A failure as the agent understands it. */
export interface FailureView {
  category: FailureCategory;
  type: string;
  code: string;
  status?: number;
  /** How long the service asked us to wait, when it said. */
  retryAfterMs?: number;
  /** The request may have taken effect (timeouts, dropped connections, 500/502/504). */
  ambiguous: boolean;
  /** What the validator said about our arguments. */
  issues: Issue[];
  /** Structured details from the error body (valid ranges, suggestions, current state). */
  details: Record<string, unknown>;
  /** What the runtime already returned when a tool could do only part of the job. */
  partial?: unknown;
}

type Obj = Record<string, unknown>;

const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);

const ERRNO: Record<string, { type: string; ambiguous: boolean }> = {
  TIMEOUT: { type: 'timeout', ambiguous: true },
  ETIMEDOUT: { type: 'timeout', ambiguous: true },
  ESOCKETTIMEDOUT: { type: 'timeout', ambiguous: true },
  ECONNRESET: { type: 'connection_reset', ambiguous: true },
  EPIPE: { type: 'connection_reset', ambiguous: true },
  ECONNREFUSED: { type: 'connection_refused', ambiguous: false },
  EHOSTUNREACH: { type: 'connection_refused', ambiguous: false },
  ENOTFOUND: { type: 'dns_failure', ambiguous: false },
  EAI_AGAIN: { type: 'dns_failure', ambiguous: false },
};

function byStatus(status: number): { category: FailureCategory; type: string; ambiguous: boolean } | undefined {
  if (status === 400 || status === 422) return { category: 'parameter', type: 'schema_mismatch', ambiguous: false };
  if (status === 401) return { category: 'auth', type: 'unauthorized', ambiguous: false };
  if (status === 403) return { category: 'auth', type: 'forbidden', ambiguous: false };
  if (status === 404) return { category: 'business', type: 'not_found', ambiguous: false };
  if (status === 409) return { category: 'business', type: 'conflict', ambiguous: false };
  if (status === 412) return { category: 'business', type: 'precondition_failed', ambiguous: false };
  if (status === 429) return { category: 'rate_limit', type: 'rate_limited', ambiguous: false };
  if (status === 503) return { category: 'system', type: 'dependency_down', ambiguous: false };
  if (status === 500 || status === 502 || status === 504) return { category: 'system', type: 'server_error', ambiguous: true };
  if (status >= 500) return { category: 'system', type: 'server_error', ambiguous: false };
  if (status >= 400) return { category: 'business', type: 'precondition_failed', ambiguous: false };
  return undefined;
}

/**
 * Service error codes (the `code` an API puts in its error body, like `DATE_OUT_OF_RANGE`) read
 * the way an API client's error table reads them: by their conventional parts.
 */
function byServiceCode(code: string, details: Obj): { category: FailureCategory; type: string } | undefined {
  if (code === 'INVALID_ARGUMENTS') return { category: 'parameter', type: 'schema_mismatch' };
  if (code === 'OUTPUT_SCHEMA_MISMATCH') return { category: 'system', type: 'output_schema_mismatch' };
  if (code === 'NO_RESULTS') return { category: 'business', type: 'no_results' };
  if (/NOT_FOUND$/.test(code)) return { category: 'business', type: 'not_found' };
  if (/RATE_LIMITED$/.test(code)) return { category: 'rate_limit', type: 'rate_limited' };
  if (/READ_ONLY/.test(code)) return { category: 'auth', type: 'forbidden' };
  if (/^ALREADY_|_ALREADY_|OVERLAP|INSUFFICIENT_|CONFLICT/.test(code)) return { category: 'business', type: 'conflict' };
  if (/ARCHIVED|NOT_CAPTURED|EXPIRED|MISMATCH$|PRECONDITION/.test(code)) return { category: 'business', type: 'precondition_failed' };
  if (/OUT_OF_RANGE|TOO_|IN_PAST|BEFORE_|EXCEEDS|^INVALID_|^EMPTY_|REUSED/.test(code) || details['parameter'] !== undefined) {
    return { category: 'parameter', type: /OUT_OF_RANGE|TOO_|IN_PAST|BEFORE_|EXCEEDS/.test(code) ? 'boundary_violation' : 'schema_mismatch' };
  }
  return undefined;
}

function retryAfterOf(headers: Record<string, string> | undefined, nowMs: number): number | undefined {
  const value = headers?.['retry-after'];
  if (value === undefined) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}

function issuesOf(body: Obj | undefined): Issue[] {
  const list = body?.['issues'] ?? asObject(body?.['error'])?.['issues'];
  if (!Array.isArray(list)) return [];
  return list.flatMap((item) => {
    const i = asObject(item);
    if (i === undefined || typeof i['path'] !== 'string') return [];
    const issue: Issue = { path: i['path'] };
    if (typeof i['code'] === 'string') issue.code = i['code'];
    if (i['expected'] !== undefined) issue.expected = i['expected'];
    if (i['received'] !== undefined) issue.received = i['received'];
    return [issue];
  });
}

/** The body's structured details: `{ error: { details } }`, or the body itself. */
function detailsOf(body: Obj | undefined): Obj {
  const error = asObject(body?.['error']);
  return asObject(error?.['details']) ?? (error === undefined ? (body ?? {}) : error);
}

/** The service's own error code, when the body carries one. */
function serviceCodeOf(body: Obj | undefined): string | undefined {
  const error = asObject(body?.['error']);
  const code = error?.['code'] ?? body?.['code'];
  return typeof code === 'string' ? code : undefined;
}

/**
 * Reads a failed call. `nowMs` resolves Retry-After dates. In assisted mode the runtime's
 * classification wins; the raw error still supplies issues and details.
 */
export function readFailure(result: Extract<AgentToolResult, { ok: false }>, nowMs: number): FailureView {
  const error = result.error;
  const body = asObject(error.body);
  const details = detailsOf(body);
  const issues = issuesOf(body);
  const view: FailureView = { category: 'system', type: 'runtime_error', code: error.code, ambiguous: false, issues, details };
  if (error.status !== undefined) view.status = error.status;
  const retryAfterMs = retryAfterOf(error.headers, nowMs);
  if (retryAfterMs !== undefined) view.retryAfterMs = retryAfterMs;
  if (body?.['partial'] !== undefined) view.partial = body['partial'];

  const assisted = result.assisted;
  if (assisted !== undefined) {
    view.category = assisted.category;
    view.type = assisted.type;
    view.ambiguous = assisted.action === 'verify_state' || ['timeout', 'connection_reset'].includes(assisted.type) || (assisted.type === 'server_error' && [500, 502, 504].includes(error.status ?? 0));
    if (assisted.retryAfterMs !== undefined) view.retryAfterMs = assisted.retryAfterMs;
    return view;
  }

  const errno = ERRNO[error.code];
  if (errno !== undefined) return { ...view, category: 'network', type: errno.type, ambiguous: errno.ambiguous };
  const fromStatus = error.status === undefined ? undefined : byStatus(error.status);
  const service = byServiceCode(serviceCodeOf(body) ?? error.code, details);
  if (fromStatus !== undefined) {
    // A body that names a more precise type of the same category (boundary_violation under a 400) refines it.
    const bodyType = asObject(body?.['error'])?.['type'];
    const type = typeof bodyType === 'string' ? bodyType : service?.category === fromStatus.category ? service.type : fromStatus.type;
    return { ...view, category: fromStatus.category, type, ambiguous: fromStatus.ambiguous };
  }
  if (service !== undefined) return { ...view, category: service.category, type: service.type };
  return view;
}
