/**
 * `X-Inject-Error`: per-request fault injection for the mock tool server, as in seed 004's mock
 * service, expressed as the same FaultDecision a fault plan produces, so the server applies
 * both through one path.
 *
 *   400 | 401 | 403 | 404 | 409 | 500 | 502 | 504   that status, with a JSON error body (400: invalid parameters)
 *   429[:s] | 503[:s]                                that status, with Retry-After: s (429 default 2 s)
 *   timeout                                          no answer until the client gives up (or the server's cap: then 504)
 *   reset                                            the connection is reset (TCP RST)
 *   partial | empty | malformed                      200 with a rewritten body: fields and items missing / no data / cut-off JSON
 *   slow:<ms>                                        the real answer, <ms> late
 *
 * By default the tool does not run when the fault replaces its answer (statuses, timeout,
 * reset). `X-Inject-Commit: true` runs it first, so the side effect happens and only the
 * response is lost: the ambiguous case that makes retrying a write dangerous.
 */
import type { FaultDecision } from './decision.js';
import { emptyOutput, malformedText, partialOutput } from './output-rewrites.js';
import { DEFAULT_RETRY_AFTER_S, type FaultKind } from './plan-spec.js';

export const INJECT_HEADER = 'x-inject-error';
export const COMMIT_HEADER = 'x-inject-commit';
export const INJECT_RULE_ID = 'x-inject-error';
/** The longest `slow:<ms>` accepted. */
export const MAX_SLOW_MS = 600_000;

const ERRORS: Readonly<Record<number, { type: string; message: string; headers?: Record<string, string> }>> = {
  // The arguments are wrong, as an API's validation says so: the taxonomy's schema_mismatch, which no retry fixes.
  400: { type: 'schema_mismatch', message: "Bad Request: invalid parameters: the arguments do not match the tool's input schema" },
  401: { type: 'unauthorized', message: 'Unauthorized: token expired', headers: { 'www-authenticate': 'Bearer error="invalid_token", error_description="The access token expired"' } },
  403: { type: 'forbidden', message: 'Forbidden: the token lacks permission for this tool' },
  404: { type: 'not_found', message: 'Not Found: the requested resource does not exist' },
  409: { type: 'conflict', message: 'Conflict: the resource was modified by another request' },
  429: { type: 'rate_limited', message: 'Rate limit exceeded' },
  500: { type: 'server_error', message: 'Internal Server Error' },
  502: { type: 'server_error', message: 'Bad Gateway: the upstream service returned an invalid response' },
  503: { type: 'dependency_down', message: 'Service Unavailable: the upstream database is down' },
  504: { type: 'timeout', message: 'Gateway Timeout: the upstream service did not answer in time' },
};

export type InjectParse = { ok: true; decision: FaultDecision } | { ok: false; message: string };

function decision(kind: FaultKind, params: Record<string, unknown>, rest: Pick<FaultDecision, 'delayMs' | 'forward' | 'effect'>): FaultDecision {
  return {
    kind,
    ruleId: INJECT_RULE_ID,
    params,
    fault: { kind, rule_id: INJECT_RULE_ID, params, transport: 'http' },
    ...rest,
  };
}

/** Drops the second half of an object's scalar fields and halves its arrays, noting what is missing. */
function halfOutput(output: unknown): unknown {
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return partialOutput(output, { drop_fraction: 0.5 });
  const scalars = Object.entries(output as Record<string, unknown>)
    .filter(([, value]) => !Array.isArray(value))
    .map(([key]) => key);
  const hasArrays = scalars.length < Object.keys(output).length;
  // With arrays to halve, the scalars (totals, paging) stay; a lone object loses its tail fields.
  const dropFields = hasArrays ? [] : scalars.slice(Math.ceil(scalars.length / 2));
  return partialOutput(output, { drop_fields: dropFields, drop_fraction: 0.5, note: `partial result: upstream timeout${dropFields.length > 0 ? ` on ${dropFields.join(', ')}` : ''}` });
}

function parseCommit(value: string | undefined): boolean | string {
  if (value === undefined || value === '') return false;
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  return `${COMMIT_HEADER} must be true or false, got "${value}"`;
}

/** Parses the header (and X-Inject-Commit). */
export function parseInjectHeader(value: string, commitHeader?: string): InjectParse {
  const commit = parseCommit(commitHeader);
  if (typeof commit === 'string') return { ok: false, message: commit };
  const raw = value.trim().toLowerCase();
  const [head = '', arg] = raw.split(':', 2) as [string, string | undefined];

  const status = /^\d{3}$/.test(head) ? Number(head) : undefined;
  if (status !== undefined) {
    const known = ERRORS[status];
    if (known === undefined) return { ok: false, message: `${INJECT_HEADER}: unsupported status ${status} (use 400, 401, 403, 404, 409, 429, 500, 502, 503 or 504)` };
    const headers: Record<string, string> = { 'content-type': 'application/json', ...known.headers };
    const params: Record<string, unknown> = { status, commit };
    if (arg !== undefined || status === 429) {
      if (status !== 429 && status !== 503) return { ok: false, message: `${INJECT_HEADER}: only 429 and 503 take a Retry-After (":<seconds>")` };
      // Digits only: Number() reads "" as 0 and "1e3" or "0x10" as numbers, which no client would send on purpose.
      const seconds = arg === undefined ? DEFAULT_RETRY_AFTER_S : /^\d{1,6}$/.test(arg) ? Number(arg) : Number.NaN;
      if (!Number.isInteger(seconds) || seconds < 0 || seconds > 86_400) return { ok: false, message: `${INJECT_HEADER}: Retry-After must be 0-86400 seconds, got "${arg}"` };
      headers['retry-after'] = String(seconds);
      params['retry_after'] = seconds;
    }
    const message = status === 429 ? `${known.message}, retry after ${headers['retry-after']}s` : known.message;
    return {
      ok: true,
      decision: decision('http_status', params, {
        delayMs: 0,
        forward: commit,
        effect: { type: 'respond', status, headers, body: { error: { type: known.type, code: `HTTP_${status}`, message } }, message: `HTTP ${status}: ${message}` },
      }),
    };
  }
  if (arg !== undefined && head !== 'slow') return { ok: false, message: `${INJECT_HEADER}: "${head}" takes no argument` };
  switch (head) {
    case 'timeout':
      // A commit means the request landed and then the response never came: commit_then_drop.
      return { ok: true, decision: decision(commit ? 'commit_then_drop' : 'timeout', { commit }, { delayMs: 0, forward: commit, effect: { type: 'timeout', afterMs: null } }) };
    case 'reset':
      return { ok: true, decision: decision('connection_reset', { commit }, { delayMs: 0, forward: commit, effect: { type: 'drop', code: 'ECONNRESET' } }) };
    case 'partial':
      return { ok: true, decision: decision('partial', {}, { delayMs: 0, forward: true, effect: { type: 'rewrite', rewrite: halfOutput } }) };
    case 'empty':
      return { ok: true, decision: decision('empty', {}, { delayMs: 0, forward: true, effect: { type: 'rewrite', rewrite: emptyOutput } }) };
    case 'malformed':
      return { ok: true, decision: decision('malformed_json', {}, { delayMs: 0, forward: true, effect: { type: 'malformed', render: malformedText } }) };
    case 'slow': {
      const ms = arg !== undefined && /^\d{1,7}$/.test(arg) ? Number(arg) : Number.NaN;
      if (!Number.isInteger(ms) || ms < 0 || ms > MAX_SLOW_MS) return { ok: false, message: `${INJECT_HEADER}: slow needs a delay in ms, 0-${MAX_SLOW_MS} (e.g. "slow:1500")` };
      return { ok: true, decision: decision('latency', { ms }, { delayMs: ms, forward: true, effect: { type: 'pass' } }) };
    }
  }
  return {
    ok: false,
    message: `${INJECT_HEADER}: unknown value "${value}" (use 400, 401, 403, 404, 409, 429, 500, 502, 503, 504, timeout, reset, partial, empty, malformed or slow:<ms>)`,
  };
}
