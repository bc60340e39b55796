/**
 * What a fault looks like on the MCP wire. The plan speaks HTTP (statuses, Retry-After, dropped
 * connections); an MCP client sees either a JSON-RPC error response or a result with
 * `isError: true`, and the two mean different things to it: a JSON-RPC error says the request
 * itself failed, an `isError` result says the tool ran and reported a failure the model should
 * read. Each status goes to the form a real MCP server would use for it:
 *
 * | plan fault                              | the MCP client sees                                             | the record (classified from what was sent)          |
 * |-----------------------------------------|-----------------------------------------------------------------|-----------------------------------------------------|
 * | http_status 400                         | JSON-RPC error -32602 Invalid params, data `{status, body}`     | MCP_-32602 param_validation/parameter/schema_mismatch |
 * | http_status 401, auth_expiry            | `isError` result, structuredContent `{status: 401, ...}`        | HTTP_401 auth/unauthorized (credential_expired for auth_expiry) |
 * | http_status 403                         | `isError` result `{status: 403}`                                | HTTP_403 auth/forbidden                             |
 * | http_status 404                         | `isError` result `{status: 404}`                                | HTTP_404 business/not_found                         |
 * | http_status 409                         | `isError` result `{status: 409}`                                | HTTP_409 business/conflict                          |
 * | http_status 429, rate_limit_burst       | `isError` result `{status: 429, retry_after}`, the wait in text | HTTP_429 rate_limit/rate_limited, retry_after_ms    |
 * | http_status 503                         | `isError` result `{status: 503, retry_after?}`                  | HTTP_503 system/dependency_down (nothing ran)       |
 * | http_status 500, 502, 504               | JSON-RPC error -32603 Internal error, data `{status, body}`     | MCP_-32603 system/server_error, ambiguous           |
 * | connection_refused, dns_failure         | JSON-RPC error -32000, data `{code: 'ECONNREFUSED'}` etc.       | the errno: ECONNREFUSED / ENOTFOUND, network        |
 * | connection_reset                        | JSON-RPC error -32000, data `{code: 'ECONNRESET'}`              | ECONNRESET network/connection_reset, ambiguous      |
 * | timeout with delay_ms                   | after the delay, JSON-RPC error -32001 Request timed out        | MCP_-32001 network/timeout, ambiguous               |
 * | hang, timeout without delay             | no answer: the client's own request timeout fires               | TIMEOUT network/timeout, status timeout             |
 * | commit_then_drop                        | the upstream runs the call, then no answer                      | TIMEOUT network/timeout, status timeout             |
 * | latency                                 | the real answer, late                                           | as the real answer                                  |
 * | malformed_json                          | the real result as one text block that is not JSON              | success: a 200 that is wrong (*)                    |
 * | partial, empty, schema/semantic drift, stale | the real result with its output rewritten                  | success: a 200 that is wrong (*)                    |
 *
 * A fault that needs the call's result (commit_then_drop, a status with `commit: true`, the
 * rewrites) leaves a server's own failure as it came, with no fault in the record (tool-call.ts).
 *
 * (*) Unless the tool declares an `outputSchema` and the rewritten result no longer fits it (or
 * has no structured content): a client refuses that result, so the record says
 * OUTPUT_SCHEMA_MISMATCH result_parse/system/output_schema_mismatch, as the runtime does.
 *
 * Only 400 maps to -32602: MCP uses it for bad arguments, which the caller must fix. 503 stays an
 * `isError` result rather than -32603 because -32603 may come after the tool acted (ambiguous),
 * while a 503 says the request was not processed. A drop cannot close a stdio pipe for one call,
 * so it is the error an MCP client reports when its connection fails (-32000), with the errno in
 * `data`; the record names the errno, as the proxy stands in for the broken connection.
 *
 * Tools that declare an `outputSchema` get `isError` results without structuredContent (the same
 * JSON is in the text): SDK clients validate structuredContent against the schema even on error
 * results and would turn the injected failure into a schema error of their own.
 */
import { ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { getHeader } from '../../runtime/retry-after.js';
import type { DropCode, FaultEffect } from '../decision.js';
import { errnoError } from '../inprocess.js';
import { JsonRpcError } from './rpc-error.js';

type RespondEffect = Extract<FaultEffect, { type: 'respond' }>;

/** What the client is sent instead of the upstream's answer. */
export type FaultAnswer =
  | {
      form: 'error';
      error: JsonRpcError;
      /** What the record classifies when it is not the error itself (a drop names its errno). */
      classifyAs?: unknown;
    }
  | {
      form: 'result';
      /** What goes on the wire. */
      served: CallToolResult;
      /** The same failure with its status in structuredContent, for classification. */
      classified: CallToolResult;
      /** Set for auth_expiry, which a status alone cannot tell from any other 401. */
      type?: string;
    };

/** Statuses answered with JSON-RPC errors (see the table above); every other status is an `isError` result. */
function rpcCodeFor(status: number): number | undefined {
  if (status === 400) return ErrorCode.InvalidParams;
  if (status >= 500 && status !== 503) return ErrorCode.InternalError;
  return undefined;
}

/** Retry-After as sent: delay-seconds as a number, an HTTP-date as the string. */
function retryAfterValue(headers: Record<string, string>): number | string | undefined {
  const raw = getHeader(headers, 'retry-after');
  if (raw === undefined) return undefined;
  return /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
}

export function respondAnswer(effect: RespondEffect, hasOutputSchema: boolean): FaultAnswer {
  const retryAfter = retryAfterValue(effect.headers);
  const code = rpcCodeFor(effect.status);
  if (code !== undefined) {
    return { form: 'error', error: new JsonRpcError(code, effect.message, { status: effect.status, body: effect.body }) };
  }
  const details: Record<string, unknown> = { status: effect.status, message: effect.message };
  if (retryAfter !== undefined) details['retry_after'] = retryAfter;
  const authenticate = getHeader(effect.headers, 'www-authenticate');
  if (authenticate !== undefined) details['www_authenticate'] = authenticate;
  details['body'] = effect.body;
  const wait = retryAfter === undefined ? '' : typeof retryAfter === 'number' ? `; retry after ${retryAfter} s` : `; retry after ${retryAfter}`;
  const text = `${effect.message}${wait}\n${JSON.stringify(details)}`;
  const classified: CallToolResult = { content: [{ type: 'text', text }], structuredContent: details, isError: true };
  const served: CallToolResult = hasOutputSchema ? { content: [{ type: 'text', text }], isError: true } : classified;
  return {
    form: 'result',
    served,
    classified,
    ...(effect.authType === undefined ? {} : { type: effect.authType }),
  };
}

export function dropAnswer(code: DropCode): FaultAnswer {
  const cause = errnoError(code);
  return {
    form: 'error',
    error: new JsonRpcError(ErrorCode.ConnectionClosed, `upstream connection failed: ${cause.message}`, { code }),
    classifyAs: cause,
  };
}

/** What a gateway says when the upstream took too long: the SDK's own request-timeout error. */
export function timeoutAnswer(afterMs: number): FaultAnswer {
  return { form: 'error', error: new JsonRpcError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: afterMs }) };
}
