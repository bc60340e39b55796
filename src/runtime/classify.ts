/**
 * Turns whatever a tool threw (or returned, for failure-shaped results) into the taxonomy:
 * stage, category, type and error code. Structured fields decide (HTTP status, errno code,
 * error name, JSON-RPC code, our own typed errors); message text never does.
 */
import { categoryOfType, type FailureCategory, type FailureStage } from '../core/taxonomy.js';
import { retryAfterFrom } from './retry-after.js';
import { ToolError } from './tool-errors.js';

export interface Classification {
  stage: FailureStage;
  category: FailureCategory;
  type: string;
  /** e.g. HTTP_429, ECONNREFUSED, MCP_-32602, TIMEOUT */
  code: string;
  message: string;
  stack: string | undefined;
  /** HTTP status when one was found. */
  status: number | undefined;
  /** Server-requested wait, from Retry-After or the error itself. */
  retryAfterMs: number | undefined;
  /**
   * The request may have taken effect although the call failed (timeout, connection reset,
   * gateway errors). A non-idempotent tool must not be retried blindly after such a failure.
   */
  ambiguous: boolean;
  /** The error body / details worth showing the agent (redacted before recording). */
  body: unknown;
  /** For business/partial_result: what the tool did return. */
  partial: unknown;
}

interface Shape {
  category: FailureCategory;
  type: string;
  ambiguous?: boolean;
}

/** HTTP status -> taxonomy. */
export function classifyHttpStatus(status: number): Shape {
  switch (status) {
    case 400:
    case 405:
    case 415:
    case 422:
      return { category: 'parameter', type: 'schema_mismatch' };
    case 413:
    case 414:
    case 416:
      return { category: 'parameter', type: 'boundary_violation' };
    case 401:
      return { category: 'auth', type: 'unauthorized' };
    case 403:
      return { category: 'auth', type: 'forbidden' };
    case 407:
      return { category: 'network', type: 'proxy_failed' };
    case 404:
    case 410:
      return { category: 'business', type: 'not_found' };
    case 408:
      return { category: 'network', type: 'timeout' };
    case 409:
      return { category: 'business', type: 'conflict' };
    case 412:
    case 428:
      return { category: 'business', type: 'precondition_failed' };
    case 429:
      return { category: 'rate_limit', type: 'rate_limited' };
    case 503:
      return { category: 'system', type: 'dependency_down' };
    // 500, 502 and 504 may come back after the upstream acted on the request.
    case 500:
    case 502:
    case 504:
      return { category: 'system', type: 'server_error', ambiguous: true };
  }
  if (status >= 500) return { category: 'system', type: 'server_error' };
  if (status >= 400) return { category: 'business', type: 'precondition_failed' };
  return { category: 'system', type: 'runtime_error' };
}

/** Node / undici errno-style codes -> taxonomy. */
const ERRNO: Record<string, Shape> = {
  ECONNREFUSED: { category: 'network', type: 'connection_refused' },
  EHOSTUNREACH: { category: 'network', type: 'connection_refused' },
  ENETUNREACH: { category: 'network', type: 'connection_refused' },
  EHOSTDOWN: { category: 'network', type: 'connection_refused' },
  ECONNRESET: { category: 'network', type: 'connection_reset', ambiguous: true },
  ECONNABORTED: { category: 'network', type: 'connection_reset', ambiguous: true },
  EPIPE: { category: 'network', type: 'connection_reset', ambiguous: true },
  UND_ERR_SOCKET: { category: 'network', type: 'connection_reset', ambiguous: true },
  UND_ERR_CLOSED: { category: 'network', type: 'connection_reset', ambiguous: true },
  ENOTFOUND: { category: 'network', type: 'dns_failure' },
  EAI_AGAIN: { category: 'network', type: 'dns_failure' },
  EAI_NONAME: { category: 'network', type: 'dns_failure' },
  ETIMEDOUT: { category: 'network', type: 'timeout', ambiguous: true },
  ESOCKETTIMEDOUT: { category: 'network', type: 'timeout', ambiguous: true },
  UND_ERR_CONNECT_TIMEOUT: { category: 'network', type: 'timeout' },
  UND_ERR_HEADERS_TIMEOUT: { category: 'network', type: 'timeout', ambiguous: true },
  UND_ERR_BODY_TIMEOUT: { category: 'network', type: 'timeout', ambiguous: true },
  ERR_TUNNEL_CONNECTION_FAILED: { category: 'network', type: 'proxy_failed' },
  insufficient_quota: { category: 'rate_limit', type: 'quota_exhausted' },
  rate_limit_exceeded: { category: 'rate_limit', type: 'rate_limited' },
};

/**
 * JSON-RPC / MCP error codes -> taxonomy and stage. -32000..-32099 are implementation-defined;
 * the MCP SDK uses -32000 for "connection closed" and -32001 for "request timeout".
 */
function classifyJsonRpc(code: number): Shape & { stage: FailureStage } {
  switch (code) {
    case -32700:
      return { stage: 'request_build', category: 'parameter', type: 'schema_mismatch' };
    case -32600:
      return { stage: 'request_build', category: 'parameter', type: 'schema_mismatch' };
    case -32601:
      return { stage: 'request_build', category: 'parameter', type: 'unknown_tool' };
    case -32602:
      return { stage: 'param_validation', category: 'parameter', type: 'schema_mismatch' };
    case -32603:
      return { stage: 'execution', category: 'system', type: 'server_error', ambiguous: true };
    case -32000:
      return { stage: 'execution', category: 'network', type: 'connection_reset', ambiguous: true };
    case -32001:
      return { stage: 'execution', category: 'network', type: 'timeout', ambiguous: true };
    case -32002:
      return { stage: 'execution', category: 'business', type: 'not_found' };
  }
  return { stage: 'execution', category: 'system', type: 'server_error' };
}

type Loose = Record<string, unknown>;

function asObject(value: unknown): Loose | undefined {
  return value !== null && typeof value === 'object' ? (value as Loose) : undefined;
}

function httpStatusOf(error: Loose): number | undefined {
  const candidates = [error['status'], error['statusCode'], asObject(error['response'])?.['status'], asObject(error['response'])?.['statusCode']];
  for (const c of candidates) {
    if (typeof c === 'number' && Number.isInteger(c) && c >= 100 && c <= 599) return c;
  }
  return undefined;
}

/** Walks `cause` links (fetch wraps socket errors as `TypeError: fetch failed` with a cause). */
function errnoOf(error: Loose): string | undefined {
  let current: Loose | undefined = error;
  for (let depth = 0; current !== undefined && depth < 4; depth++) {
    const code = current['code'];
    if (typeof code === 'string' && Object.hasOwn(ERRNO, code)) return code;
    const nested = asObject(current['error'])?.['code'];
    if (typeof nested === 'string' && Object.hasOwn(ERRNO, nested)) return nested;
    current = asObject(current['cause']);
  }
  return undefined;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const obj = asObject(error);
  if (obj !== undefined && typeof obj['message'] === 'string') return obj['message'];
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

function stackOf(error: unknown): string | undefined {
  return error instanceof Error ? error.stack : undefined;
}

function bodyOf(error: Loose): unknown {
  return error['body'] ?? asObject(error['response'])?.['data'] ?? asObject(error['response'])?.['body'] ?? error['details'];
}

function base(stage: FailureStage, shape: Shape, code: string, error: unknown): Classification {
  return {
    stage,
    category: shape.category,
    type: shape.type,
    code,
    message: messageOf(error),
    // Formatting a stack costs microseconds (V8 builds it lazily, on first read). Failures the
    // classification already explains (a status, an errno, a typed business error) do not need
    // it; the tool's own crashes and system failures keep theirs.
    stack: shape.category === 'system' ? stackOf(error) : undefined,
    status: undefined,
    retryAfterMs: undefined,
    ambiguous: shape.ambiguous ?? false,
    body: undefined,
    partial: undefined,
  };
}

/** Classifies a thrown value from the execution stage. `nowMs` resolves HTTP-date Retry-After values. */
export function classifyError(error: unknown, nowMs: number, stage: FailureStage = 'execution'): Classification {
  if (ToolError.isInstance(error)) {
    const c = base(error.stage, { category: error.category, type: error.type, ambiguous: error.type === 'timeout' }, error.code, error);
    c.status = error.status;
    c.retryAfterMs = error.retryAfterMs;
    c.body = error.details;
    c.partial = (error as { partial?: unknown }).partial;
    return c;
  }
  const obj = asObject(error);
  if (obj === undefined) return base(stage, { category: 'system', type: 'runtime_error' }, 'THROWN_VALUE', error);

  const name = typeof obj['name'] === 'string' ? obj['name'] : '';
  if (name === 'TimeoutError') return base(stage, { category: 'network', type: 'timeout', ambiguous: true }, 'TIMEOUT', error);

  const status = httpStatusOf(obj);
  if (status !== undefined) {
    const c = base(stage, classifyHttpStatus(status), `HTTP_${status}`, error);
    c.status = status;
    c.retryAfterMs = retryAfterFrom(obj, nowMs);
    c.body = bodyOf(obj);
    const errno = errnoOf(obj);
    if (status === 429 && errno === 'insufficient_quota') c.type = 'quota_exhausted';
    return c;
  }

  const errno = errnoOf(obj);
  if (errno !== undefined) return base(stage, ERRNO[errno]!, errno, error);

  // JSON-RPC errors (the MCP SDK's McpError, or raw `{ code, message }` error objects).
  const rpcCode = obj['code'];
  if (typeof rpcCode === 'number' && Number.isInteger(rpcCode) && rpcCode <= -32000 && rpcCode >= -32768) {
    const shape = classifyJsonRpc(rpcCode);
    const c = base(shape.stage, shape, `MCP_${rpcCode}`, error);
    c.body = obj['data'];
    return c;
  }

  if (name === 'AbortError') return base(stage, { category: 'system', type: 'cancelled' }, 'ABORTED', error);

  const c = base(stage, { category: 'system', type: 'runtime_error' }, name !== '' && name !== 'Error' ? name : 'RUNTIME_ERROR', error);
  return c;
}

/** The message format of the MCP SDK's McpError (`MCP error -32602: Tool x not found`). */
const MCP_ERROR_TEXT = /^MCP error (-32\d{3}): /;

/**
 * The JSON-RPC error code an MCP `isError` result carries in its text, when the server turned a
 * protocol error into a result: the TypeScript SDK's `McpServer` answers what it throws while
 * handling `tools/call` (an unknown tool, arguments its schema rejects, an McpError from the
 * handler) with a result whose only content is the McpError's message. That fixed format is the
 * only place the code survives, so it is read from there.
 */
export function mcpErrorCodeOf(output: unknown): number | undefined {
  const obj = asObject(output);
  if (obj?.['isError'] !== true || !Array.isArray(obj['content']) || obj['content'].length !== 1) return undefined;
  const part = asObject(obj['content'][0]);
  if (part?.['type'] !== 'text' || typeof part['text'] !== 'string') return undefined;
  const match = MCP_ERROR_TEXT.exec(part['text']);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Some tools report failure in what they return rather than by throwing: a fetch `Response`
 * that is not ok, or an MCP `CallToolResult` with `isError: true` (classified by its JSON-RPC
 * code when it carries a protocol error, see {@link mcpErrorCodeOf}). Returns undefined for
 * ordinary outputs.
 */
export function classifyOutput(output: unknown, nowMs: number): Classification | undefined {
  const obj = asObject(output);
  if (obj === undefined) return undefined;
  if (obj['isError'] === true && Array.isArray(obj['content'])) {
    const text = (obj['content'] as unknown[])
      .map((part) => asObject(part))
      .filter((part) => part?.['type'] === 'text' && typeof part['text'] === 'string')
      .map((part) => part!['text'] as string)
      .join('\n');
    const rpcCode = mcpErrorCodeOf(obj);
    if (rpcCode !== undefined) {
      const shape = classifyJsonRpc(rpcCode);
      const c = base(shape.stage, shape, `MCP_${rpcCode}`, text);
      c.body = obj['content'];
      return c;
    }
    const structured = asObject(obj['structuredContent']);
    const status = structured !== undefined ? httpStatusOf(structured) : undefined;
    const shape: Shape = status !== undefined ? classifyHttpStatus(status) : { category: 'business', type: 'tool_reported_error' };
    const c = base('execution', shape, status !== undefined ? `HTTP_${status}` : 'MCP_TOOL_ERROR', text || 'the tool reported an error');
    c.status = status;
    c.body = structured ?? obj['content'];
    return c;
  }
  if (typeof Response !== 'undefined' && output instanceof Response && !output.ok) {
    const c = base('execution', classifyHttpStatus(output.status), `HTTP_${output.status}`, `HTTP ${output.status} ${output.statusText}`.trim());
    c.status = output.status;
    c.retryAfterMs = retryAfterFrom(output, nowMs);
    return c;
  }
  return undefined;
}

/** The classification of a call the runtime itself stopped at its deadline. */
export function timeoutClassification(timeoutMs: number): Classification {
  return base('execution', { category: 'network', type: 'timeout', ambiguous: true }, 'TIMEOUT', `timed out after ${timeoutMs} ms`);
}

/** A failure faultline itself found (a rejected call, an output that breaks its schema): nothing thrown, nothing ambiguous. */
export function rejection(stage: FailureStage, category: FailureCategory, type: string, code: string, message: string): Classification {
  return { stage, category, type, code, message, stack: undefined, status: undefined, retryAfterMs: undefined, ambiguous: false, body: undefined, partial: undefined };
}

/** Fills in the category for a ToolError-like type the taxonomy knows, for callers that only have a type. */
export function categoryFor(type: string, fallback: FailureCategory): FailureCategory {
  return categoryOfType(type) ?? fallback;
}
