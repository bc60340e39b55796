/**
 * A proxied request as a tool call, the same on the fast path and the node:http path: it is
 * opened (named, given its trace and step), its arguments are worked out from the URL and the
 * body when first needed, and once the client has its answer it is closed and recorded.
 */
import { TraceSteps } from '../../core/trace-steps.js';
import { recordEmitter, type EmitFailureSite } from '../../record/record-emitter.js';
import { truncateText } from '../../record/truncate.js';
import type { RecordSink } from '../../core/record-sink.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { Clock } from '../../core/clock.js';
import { globMatcher } from '../glob.js';
import type { FaultPlanSpec } from '../plan-spec.js';
import type { FaultPlan } from '../plan.js';
import { buildExchangeRecord, type ExchangeOutcome, type ExchangeRecordOptions, type ProxyExchange } from './exchange-record.js';
import { bodyBuffer, EMPTY_BODY, type BodyPrefix } from './request-body.js';
import type { RouteMatch } from './routes.js';
import type { RequestHeaders } from './wire-headers.js';

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}/i;
const FORM = /^application\/x-www-form-urlencoded\b/i;
const TEXT_BODY = /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|yaml)\b)/i;

/** What every request carries while it is served, on either path: enough to work out its arguments and record it. */
export interface CallState {
  headers: RequestHeaders;
  /** The query string, without its `?`. */
  query: string;
  /** Path segments a configured route captured but did not put in the tool name. */
  pathParams: Record<string, string>;
  body: BodyPrefix;
  /** `exchange.args` has been worked out from the URL and body. */
  argsKnown: boolean;
  exchange: ProxyExchange;
}

/** The proxy's request counters, as `stats()` and the admin API show them. */
export interface ExchangeCounters {
  /** Requests proxied (admin requests excluded). */
  requests: number;
  /** Requests that got a fault. */
  injected: number;
  inFlight: number;
  /** Records handed to the sink. */
  recorded: number;
  /** Requests relayed on the fast path (fast-path.ts) rather than through node:http. */
  fastPath: number;
  /** Requests refused for a Host name the proxy does not answer to (not proxied, not recorded). */
  refusedHosts: number;
}

export interface ExchangeBookOptions {
  plan: FaultPlan;
  clock: Clock;
  /** The upstream's `host[:port]`, sent as the Host header. */
  targetHost: string;
  maxArgsBytes: number;
  maxOutputChars: number;
  record: ExchangeRecordOptions;
  sink: RecordSink | undefined;
  onRecord: ((record: ToolExecutionRecord) => void) | undefined;
  /** What `onRecord` or a custom sink threw or rejected with, and which of them. */
  onError: (error: unknown, where: EmitFailureSite) => void;
}

export interface ExchangeBook {
  readonly counters: ExchangeCounters;
  /** Names a request as a tool call and starts its exchange. */
  open(method: string, path: string, headers: RequestHeaders, match: RouteMatch): CallState;
  /** The client has its answer (or is gone): records the exchange. */
  close(call: CallState, outcome: ExchangeOutcome, proxyClosing: boolean): void;
  /** The call's arguments, from the URL and the body prefix; worked out once, when first needed. */
  argsOf(call: CallState): unknown;
  /** Whether some rule may look at this tool's arguments; only then are they needed before forwarding. */
  planLooksAt(toolName: string): boolean;
  /** Whether some stale rule may replay this tool's outputs later, so its successes must be observed. */
  watchesOutputs(toolName: string): boolean;
  /** The headers to send upstream, minus the ones that frame the body (`framing`, added here). */
  forwardedHeaders(h: RequestHeaders, remoteAddress: string | undefined, framing: readonly string[]): string[];
  /** Resolves once every opened exchange is closed. */
  allClosed(): Promise<void>;
}

/** Which tools the current plan has rules for, recompiled when the plan is swapped. */
interface RuleIndex {
  spec: FaultPlanSpec;
  any: ((name: string) => boolean)[];
  stale: ((name: string) => boolean)[];
}

export function parseJson(text: string): { value: unknown } | undefined {
  const start = text.trimStart()[0];
  // Only objects, arrays and strings: a bare number or word is more likely plain text.
  if (start !== '{' && start !== '[' && start !== '"') return undefined;
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of params) {
    const seen = out[key];
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

export function createExchangeBook(options: ExchangeBookOptions): ExchangeBook {
  const { plan, clock, maxArgsBytes, maxOutputChars } = options;
  const counters: ExchangeCounters = { requests: 0, injected: 0, inFlight: 0, recorded: 0, fastPath: 0, refusedHosts: 0 };
  const steps = new TraceSteps();
  /** Requests not yet recorded; close() waits for them. */
  let unfinished = 0;
  let allFinished: (() => void) | undefined;
  let ruleIndex: RuleIndex | undefined;

  function rulesNow(): RuleIndex {
    const spec = plan.spec;
    if (ruleIndex?.spec !== spec) {
      ruleIndex = {
        spec,
        any: spec.rules.map((r) => globMatcher(r.tool)),
        stale: spec.rules.filter((r) => r.fault === 'stale').map((r) => globMatcher(r.tool)),
      };
    }
    return ruleIndex;
  }

  function nextStep(traceId: string | undefined): number {
    return traceId === undefined ? 0 : steps.take(traceId);
  }

  // The request is already answered: what a listener or a custom sink throws or rejects goes to onError.
  const deliver = recordEmitter(options.onRecord, options.sink, options.onError);
  function emit(record: ToolExecutionRecord): void {
    counters.recorded++;
    void deliver(record);
  }

  function argsOf(live: CallState): unknown {
    if (live.argsKnown) return live.exchange.args;
    live.argsKnown = true;
    const { body, pathParams, query } = live;
    const hasParams = Object.keys(pathParams).length > 0;
    const fromUrl: Record<string, unknown> = query === '' ? { ...pathParams } : { ...pathParams, ...queryObject(new URLSearchParams(query)) };
    let args: unknown = fromUrl;
    if (!body.complete) {
      live.exchange.details['request_body'] = `streamed (over ${maxArgsBytes} bytes)`;
    } else if (body.bytes > 0) {
      const text = bodyBuffer(body)!.toString('utf8');
      const parsed = parseJson(text);
      const contentType = live.headers.contentType;
      if (parsed !== undefined) {
        args = isPlainObject(parsed.value) && hasParams ? { ...pathParams, ...parsed.value } : parsed.value;
      } else if (contentType !== undefined && FORM.test(contentType)) {
        args = { ...fromUrl, ...queryObject(new URLSearchParams(text)) };
      } else if (contentType !== undefined && !TEXT_BODY.test(contentType)) {
        args = { ...fromUrl, body: `[${body.bytes} bytes of ${contentType.split(';', 1)[0]}]` };
      } else {
        args = { ...fromUrl, body: truncateText(text, maxOutputChars) };
      }
    }
    live.exchange.args = args;
    return args;
  }

  return {
    counters,
    argsOf,
    planLooksAt: (toolName) => rulesNow().any.some((matches) => matches(toolName)),
    watchesOutputs: (toolName) => rulesNow().stale.some((matches) => matches(toolName)),

    forwardedHeaders(h, remoteAddress, framing) {
      const out = h.forward.slice();
      out.push('host', options.targetHost, ...framing);
      const client = remoteAddress ?? '';
      out.push('x-forwarded-for', h.forwardedFor === undefined ? client : `${h.forwardedFor}, ${client}`);
      const forwardedHost = h.host ?? h.forwardedHost;
      if (forwardedHost !== undefined) out.push('x-forwarded-host', forwardedHost);
      out.push('x-forwarded-proto', 'http');
      return out;
    },

    open(method, path, headers, match) {
      unfinished++;
      counters.requests++;
      counters.inFlight++;
      const startedAt = clock.now();
      const xTraceId = headers.traceId?.trim();
      const traceparent = headers.traceparent?.trim();
      const traceId = xTraceId !== undefined && xTraceId !== '' ? xTraceId : traceparent === undefined ? undefined : TRACEPARENT.exec(traceparent)?.[1]?.toLowerCase();
      const details: Record<string, unknown> = {};
      if (traceparent !== undefined) details['traceparent'] = traceparent;
      if (headers.idempotencyKey !== undefined) details['idempotency_key'] = headers.idempotencyKey;
      const q = path.indexOf('?');
      return {
        headers,
        query: q === -1 ? '' : path.slice(q + 1),
        pathParams: match.params,
        body: EMPTY_BODY,
        argsKnown: false,
        exchange: {
          toolName: match.toolName,
          args: {},
          idempotent: match.idempotent,
          method,
          path,
          route: match.route,
          traceId,
          stepIndex: nextStep(traceId),
          startedAt,
          endedAt: startedAt,
          decision: undefined,
          faultApplied: true,
          upstreamStatus: null,
          upstreamError: null,
          outcome: { kind: 'gave_up' },
          details,
        },
      };
    },

    close(call, outcome, proxyClosing) {
      try {
        counters.inFlight--;
        if (proxyClosing && outcome.kind === 'gave_up') call.exchange.details['proxy_closed'] = true;
        call.exchange.endedAt = clock.now();
        call.exchange.outcome = outcome;
        try {
          argsOf(call);
          emit(buildExchangeRecord(call.exchange, options.record));
        } catch {
          // A record that cannot be built is lost; the proxy and its other requests are not.
        }
      } finally {
        if (--unfinished === 0) allFinished?.();
      }
    },

    allClosed() {
      return unfinished === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allFinished = resolve));
    },
  };
}

/**
 * The path and query to forward. Taken as sent, not through `new URL`, which would read a
 * leading `//x` as a host name; absolute-form targets (`GET http://host/path`) keep their path.
 */
export function requestPath(raw: string | undefined): string {
  if (raw === undefined || raw === '') return '/';
  if (raw.charCodeAt(0) === 0x2f) return raw;
  if (/^https?:\/\//i.test(raw)) {
    try {
      const url = new URL(raw);
      return url.pathname + url.search;
    } catch {
      return '/';
    }
  }
  return `/${raw}`;
}

export function pathOnly(path: string): string {
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}
