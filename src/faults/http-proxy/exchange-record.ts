/**
 * One proxied request as a ToolExecutionRecord. The proxy only sees the wire, so it builds the
 * error the runtime would have seen from the same exchange (a status with headers and body, an
 * errno code, a call nobody answered) and runs it through the runtime's own classification and
 * feedback: a call recorded by the proxy and the same call recorded by the runtime agree.
 */
import { STATUS_CODES } from 'node:http';
import type { FoundSecrets, Redactor } from '../../record/redact.js';
import { DEFAULT_MAX_OUTPUT_CHARS, truncateText } from '../../record/truncate.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { uuidv7 } from '../../record/uuid-v7.js';
import { classifyError, timeoutClassification, type Classification } from '../../runtime/classify.js';
import type { CallStatus } from '../../core/taxonomy.js';
import type { DropCode, FaultDecision } from '../decision.js';
import { errnoError } from '../inprocess.js';
import { buildWireRecord } from '../wire-record.js';

export type HeaderValues = Record<string, string | string[] | number | undefined>;

/** How the exchange ended, as the client saw it. */
export type ExchangeOutcome =
  /** A response went out. `body` is what was kept of it (all of it when buffered, else a prefix). */
  | {
      kind: 'response';
      status: number;
      headers: HeaderValues;
      body: string | undefined;
      bodyBytes: number;
      /** The response stands for a connection failure to the upstream (a 502 naming the errno code). */
      errno?: DropCode | string;
      /** The client closed the connection before the whole body was sent. */
      cut?: boolean;
    }
  /** The proxy reset the client's connection (an injected drop, or commit-then-drop). */
  | { kind: 'reset' }
  /** The upstream failed after the response started; the client's connection was cut to match. `body` is what got through. */
  | { kind: 'broken'; code: string; message: string; status: number; headers: HeaderValues; body: string | undefined; bodyBytes: number }
  /** The client closed the connection before any response: it gave up waiting. */
  | { kind: 'gave_up' }
  /** The proxy refused the request itself (an invalid X-Inject-Error header, a chunked body that breaks its framing). */
  | { kind: 'refused'; status: number; code: string; message: string; body: unknown };

export interface ProxyExchange {
  toolName: string;
  args: unknown;
  idempotent: boolean;
  method: string;
  /** Path and query as the client sent them. */
  path: string;
  route: string;
  traceId: string | undefined;
  stepIndex: number;
  startedAt: number;
  endedAt: number;
  decision: FaultDecision | undefined;
  /** False when a decided fault could not be applied (an error answer has no output to rewrite). */
  faultApplied: boolean;
  upstreamStatus: number | null;
  upstreamError: string | null;
  outcome: ExchangeOutcome;
  /** Request facts worth keeping (idempotency key, traceparent, how the body was handled). */
  details: Record<string, unknown>;
}

export interface ExchangeRecordOptions {
  redactor: Redactor | undefined;
  maxOutputChars?: number;
  /** Added to every context_snapshot. */
  context?: Record<string, unknown>;
}

function detailOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.trim() === '' ? undefined : body.slice(0, 300);
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  const error = b['error'];
  if (typeof error === 'string') return error;
  if (error !== null && typeof error === 'object' && typeof (error as Record<string, unknown>)['message'] === 'string') {
    return (error as Record<string, unknown>)['message'] as string;
  }
  for (const key of ['message', 'detail', 'error_description']) if (typeof b[key] === 'string') return b[key];
  return undefined;
}

function parseBody(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function withoutStack(c: Classification): Classification {
  // The stack would be the proxy's own, which says nothing about the tool.
  return { ...c, stack: undefined };
}

function classify(ex: ProxyExchange): { status: CallStatus; c: Classification | undefined } {
  const o = ex.outcome;
  const elapsed = ex.endedAt - ex.startedAt;
  switch (o.kind) {
    case 'response': {
      if (o.errno !== undefined) {
        let c = withoutStack(classifyError(Object.assign(new Error(`upstream ${o.errno}`), { code: o.errno }), ex.endedAt));
        if (c.category === 'system' && c.type === 'runtime_error') {
          // A code the taxonomy does not know (an answer llhttp could not parse, HPE_*; a 101
          // nobody asked for): what the client got is the proxy's 502, classified as the runtime
          // classifies one, with the upstream's code kept as the error code.
          const status = o.status;
          c = { ...withoutStack(classifyError({ name: 'HttpError', message: `HTTP ${status}: upstream ${o.errno}`, status }, ex.endedAt)), code: o.errno };
        }
        return { status: c.type === 'timeout' ? 'timeout' : 'failure', c: { ...c, body: parseBody(o.body) } };
      }
      if (o.status < 400) return { status: 'success', c: undefined };
      if (o.status === 504 && ex.decision?.effect.type === 'timeout') {
        // The proxy's own 504 for an injected timeout or hang: the tool did not answer in time,
        // which is how the runtime and the MCP proxy record the same fault.
        const c = timeoutClassification(elapsed);
        return { status: 'timeout', c: { ...c, body: parseBody(o.body) } };
      }
      const body = parseBody(o.body);
      const detail = detailOf(body);
      const message = detail === undefined ? `HTTP ${o.status} ${STATUS_CODES[o.status] ?? ''}`.trim() : `HTTP ${o.status}: ${detail}`;
      // The same shape an HTTP client library throws, so the runtime's rules apply unchanged.
      const c = withoutStack(classifyError({ name: 'HttpError', message, status: o.status, headers: o.headers, body }, ex.endedAt));
      const effect = ex.decision?.effect;
      // A client that reads WWW-Authenticate knows the token expired; the in-process injector
      // reports the same fault as credential_expired, and both transports must agree.
      if (effect?.type === 'respond' && effect.authType === 'credential_expired' && o.status === 401) c.type = 'credential_expired';
      return { status: c.type === 'timeout' ? 'timeout' : 'failure', c };
    }
    case 'reset':
      return { status: 'failure', c: withoutStack(classifyError(errnoError('ECONNRESET'), ex.endedAt)) };
    case 'broken': {
      const c = withoutStack(classifyError(Object.assign(new Error(o.message), { code: o.code }), ex.endedAt));
      if (c.category === 'system' && c.type === 'runtime_error') {
        // An upstream that stopped mid-body without an errno the taxonomy knows (a broken chunk
        // framing, HPE_*) still cut the client's connection, which its HTTP client reports as a
        // reset; what the upstream did is the record's upstream_error.
        return { status: 'failure', c: withoutStack(classifyError(Object.assign(new Error(o.message), { code: 'ECONNRESET' }), ex.endedAt)) };
      }
      return { status: c.type === 'timeout' ? 'timeout' : 'failure', c };
    }
    case 'gave_up': {
      // Nothing tells a client's timeout from a cancel on the wire; waiting with no answer until
      // the client leaves is what a timeout looks like from the tool's side.
      const c = timeoutClassification(elapsed);
      return { status: 'timeout', c: { ...c, message: `no response within ${elapsed} ms: the client closed the connection` } };
    }
    case 'refused':
      return {
        status: 'rejected',
        c: {
          stage: 'request_build',
          category: 'parameter',
          type: 'schema_mismatch',
          code: o.code,
          message: o.message,
          stack: undefined,
          status: o.status,
          retryAfterMs: undefined,
          ambiguous: false,
          body: o.body,
          partial: undefined,
        },
      };
  }
}

const TEXTUAL = /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|javascript|x-www-form-urlencoded|x-ndjson|yaml)\b)/i;

function headerText(headers: HeaderValues, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value === undefined ? undefined : String(value);
}

/** What raw_output keeps of a response body: text as is, anything else as a description. */
function shownBody(o: Extract<ExchangeOutcome, { kind: 'response' | 'broken' }>): string | undefined {
  if (o.body === undefined) return o.bodyBytes > 0 ? `[${o.bodyBytes} bytes not captured]` : undefined;
  const encoding = headerText(o.headers, 'content-encoding');
  if (encoding !== undefined && encoding !== 'identity') return `[${o.bodyBytes} bytes, ${encoding}-encoded]`;
  const type = headerText(o.headers, 'content-type');
  if (type !== undefined && !TEXTUAL.test(type)) return `[${o.bodyBytes} bytes of ${type.split(';', 1)[0]}]`;
  return o.body;
}

/**
 * The record for one exchange: the runtime's record shape, classification and feedback.
 * @example
 * recorder.enqueue(buildExchangeRecord(exchange, { redactor: createRedactor() }));
 */
export function buildExchangeRecord(ex: ProxyExchange, options: ExchangeRecordOptions): ToolExecutionRecord {
  const { redactor } = options;
  const found: FoundSecrets = [];
  const value = <T>(v: T): T => (redactor === undefined ? v : redactor.value(v, found));
  const text = (t: string): string => (redactor === undefined ? t : redactor.text(t, found));
  const { status, c } = classify(ex);
  const o = ex.outcome;

  let rawOutput: string | null = null;
  let outputLength: number | null = null;
  const shown = o.kind === 'response' || o.kind === 'broken' ? shownBody(o) : o.kind === 'refused' ? JSON.stringify(o.body) : undefined;
  if (shown !== undefined) {
    const redacted = text(shown);
    // Bytes on the wire: a streamed body is only partly captured, and its byte count is what is known.
    outputLength = o.kind === 'response' || o.kind === 'broken' ? o.bodyBytes : Buffer.byteLength(shown);
    rawOutput = truncateText(redacted, options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS);
  }

  if (c !== undefined) c.message = text(c.message);

  const snapshot: Record<string, unknown> = { ...options.context, transport: 'http', method: ex.method, path: ex.path, route: ex.route, upstream_status: ex.upstreamStatus };
  if (ex.upstreamError !== null) snapshot['upstream_error'] = ex.upstreamError;
  snapshot['response_status'] = o.kind === 'response' || o.kind === 'refused' || o.kind === 'broken' ? o.status : null;
  if (o.kind === 'response' && o.cut === true) snapshot['client_closed_early'] = true;
  // A rewrite that found no output to rewrite (an error answer) injected nothing: the record's
  // `fault` is ground truth, so it stays null, and what was decided is kept here.
  const injected = ex.decision !== undefined && ex.faultApplied;
  if (ex.decision !== undefined && !ex.faultApplied) snapshot['fault_not_applied'] = value(ex.decision.fault);
  Object.assign(snapshot, ex.details);

  const executionId = uuidv7(ex.startedAt);
  return buildWireRecord({
    executionId,
    traceId: ex.traceId ?? executionId,
    stepIndex: ex.stepIndex,
    toolName: ex.toolName,
    params: value(ex.args),
    status,
    classification: c,
    rawOutput,
    outputLength,
    startedAt: ex.startedAt,
    endedAt: ex.endedAt,
    idempotent: ex.idempotent,
    fault: injected ? ex.decision!.fault : null,
    context: value(snapshot),
    redactor,
    found,
  });
}
