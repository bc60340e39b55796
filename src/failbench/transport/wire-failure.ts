/**
 * What the FailBench client of the http and mcp transports throws for a failure it received on
 * the wire: the shapes the in-process transport throws (faults/inprocess.ts), so that the runtime
 * classifies, and the agent reads, the same thing whichever way the call went.
 *
 * - an error status: an HttpError with the status, the headers that matter and the parsed body;
 * - a 401 whose WWW-Authenticate says the token expired: credential_expired, as an OAuth client
 *   reports it (and as the proxies' records classify it);
 * - a gateway's 504 whose body says `timeout` (the proxy held the request and gave up): the
 *   TimeoutError a client's own request timeout raises, since the request timed out either way;
 * - a gateway's 502 marked X-Faultline-Fault that stands for a refused connection or a failed DNS
 *   lookup (a proxy cannot refuse a connection it already accepted): the errno error itself;
 * - an error body naming a more precise failure type of the status's own category (`no_results`
 *   under a 404, `boundary_violation` under a 400): a ToolError of that type, as a service's
 *   typed client library throws, with the same status, code, Retry-After and body. Classifying
 *   by the status alone would turn "nothing matched" into "does not exist" in assisted mode.
 */
import { errnoError } from '../../faults/inprocess.js';
import type { DropCode } from '../../faults/decision.js';
import { classifyHttpStatus } from '../../runtime/classify.js';
import { retryAfterFrom } from '../../runtime/retry-after.js';
import { AuthError, HttpError, ToolError } from '../../runtime/tool-errors.js';
import { categoryOfType } from '../../core/taxonomy.js';

const DROP_CODES: ReadonlySet<string> = new Set<DropCode>(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND']);

type Obj = Record<string, unknown>;
const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);

/** `{ error: { ... } }`'s inner object, when the body has one. */
function errorDetail(body: unknown): Obj | undefined {
  return asObject(asObject(body)?.['error']);
}

/** The TimeoutError `fetch(url, { signal: AbortSignal.timeout(ms) })` rejects with. */
export function timeoutError(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

/** An errno error when `code` is one a dropped connection has. */
export function dropError(code: unknown): Error | undefined {
  return typeof code === 'string' && DROP_CODES.has(code) ? errnoError(code as DropCode) : undefined;
}

export interface WireFailure {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: unknown;
  /** The proxy marked the answer as standing for an injected network failure. */
  injectedDrop?: boolean;
}

/** The error an HTTP client throws for this answer. `nowMs` resolves a Retry-After date. */
export function failureError(failure: WireFailure, nowMs: number): Error {
  const { status, headers, body } = failure;
  const detail = errorDetail(body);
  if (failure.injectedDrop === true) {
    const dropped = dropError(detail?.['code']);
    if (dropped !== undefined) return dropped;
  }
  if (status === 504 && detail?.['type'] === 'timeout') return timeoutError();
  const described = typeof detail?.['message'] === 'string' ? detail['message'] : typeof asObject(body)?.['error_description'] === 'string' ? String(asObject(body)!['error_description']) : undefined;
  const message = described === undefined ? `HTTP ${status}` : `HTTP ${status}: ${described}`;
  const authenticate = headers['www-authenticate'];
  if (status === 401 && authenticate !== undefined && /invalid_token/i.test(authenticate) && /expired/i.test(authenticate)) {
    return new AuthError('credential_expired', message, { status, code: `HTTP_${status}`, details: { www_authenticate: authenticate, body } });
  }
  const kept: Record<string, string> = {};
  for (const name of ['retry-after', 'www-authenticate', 'content-type']) if (headers[name] !== undefined) kept[name] = headers[name]!;
  const shape = classifyHttpStatus(status);
  const bodyType = detail?.['type'];
  if (typeof bodyType === 'string' && bodyType !== shape.type && categoryOfType(bodyType) === shape.category) {
    const retryAfterMs = retryAfterFrom({ headers: kept }, nowMs);
    return new ToolError(shape.category, bodyType, message, {
      status,
      code: `HTTP_${status}`,
      details: asObject(body) ?? { body },
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  return new HttpError(status, message, kept, body);
}
