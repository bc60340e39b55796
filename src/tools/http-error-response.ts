/**
 * How the mock tool server turns a tool's failure into the HTTP response a real API would send.
 * The status comes from the typed error (its own `status`, else its failure type), so a client
 * classifying the response by status lands on the same category the tool meant; the body says
 * the type, code and details in `{ error: { ... } }`, and Retry-After carries the wait.
 */
import { classifyError } from '../runtime/classify.js';
import { HttpError } from '../runtime/tool-errors.js';
import type { ValidationIssue } from '../runtime/validate.js';
import type { FailureCategory } from '../core/taxonomy.js';

export interface HttpReply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The status a failure type is answered with when the error does not carry one. */
export const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  schema_mismatch: 400,
  missing_required: 400,
  type_mismatch: 400,
  enum_mismatch: 400,
  boundary_violation: 400,
  unknown_tool: 404,
  unauthorized: 401,
  credential_expired: 401,
  forbidden: 403,
  not_found: 404,
  no_results: 404,
  conflict: 409,
  precondition_failed: 412,
  // A tool that could only do part of the job still answered: 206 with what it has.
  partial_result: 206,
  tool_reported_error: 422,
  rate_limited: 429,
  quota_exhausted: 429,
  timeout: 504,
  connection_refused: 502,
  connection_reset: 502,
  dns_failure: 502,
  proxy_failed: 502,
  server_error: 500,
  runtime_error: 500,
  output_schema_mismatch: 502,
  circuit_open: 503,
  dependency_down: 503,
  cancelled: 500,
};

const STATUS_BY_CATEGORY: Readonly<Record<FailureCategory, number>> = {
  parameter: 400,
  auth: 401,
  network: 502,
  rate_limit: 429,
  business: 409,
  system: 500,
  semantic: 502,
  logic: 409,
};

function headerRecord(headers: Record<string, string> | Headers): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((value, key) => (out[key] = value));
  else for (const [key, value] of Object.entries(headers)) out[key.toLowerCase()] = value;
  return out;
}

/** The reply for arguments that fail the tool's input schema. */
export function invalidArgumentsReply(toolName: string, type: string, message: string, issues: readonly ValidationIssue[]): HttpReply {
  return { status: 400, headers: {}, body: { error: { type, code: 'INVALID_ARGUMENTS', message: `invalid arguments for ${toolName}: ${message}`, issues } } };
}

/** The reply for whatever a tool threw. */
export function errorReply(error: unknown, nowMs: number): HttpReply {
  const c = classifyError(error, nowMs);
  const status = c.status ?? STATUS_BY_TYPE[c.type] ?? STATUS_BY_CATEGORY[c.category];
  const headers: Record<string, string> = {};
  if (error instanceof HttpError) Object.assign(headers, headerRecord(error.headers));
  if (c.retryAfterMs !== undefined && headers['retry-after'] === undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(c.retryAfterMs / 1000)));
  if (status === 401 && headers['www-authenticate'] === undefined) headers['www-authenticate'] = `Bearer error="invalid_token"`;
  if (error instanceof HttpError && error.body !== undefined) return { status, headers, body: error.body };
  const detail: Record<string, unknown> = { type: c.type, code: c.code, message: c.message };
  if (c.body !== undefined) detail['details'] = c.body;
  const body: Record<string, unknown> = { error: detail };
  if (c.partial !== undefined) body['partial'] = c.partial;
  return { status, headers, body };
}
