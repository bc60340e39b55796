/**
 * The HTTP fault proxy: a reverse proxy in front of tools faultline cannot wrap. It
 * injects a fault plan's faults on the wire and records every request as a tool call.
 *
 * Each request is named as a tool (routes.ts) and decided once: by its `X-Inject-Error` header
 * (the mock tool server's vocabulary) or else by the plan. Then it is forwarded, answered, held or
 * cut as the decision says. Bodies stream through untouched. A response is buffered only when a
 * fault rewrites it. A request body is buffered only up to `maxArgsBytes`, so that the plan's
 * `when` conditions can see the arguments before anything is sent.
 * Admin endpoints under `/__faultline/` (admin-api.ts) read the plan and swap it while traffic flows.
 *
 * A request no fault touches (no X-Inject-Error, no plan rule for its tool) is relayed by the
 * fast path (fast-path.ts) over plain sockets, without node:http; it hands everything else, on
 * the request's head, to the node:http server below, and both paths open and record an exchange
 * the same way (openCall, closeCall). On the node:http path, too, the pass-through is kept short:
 * headers travel as raw lists (wire-headers.ts), nothing allocates an AbortSignal or a timer, the
 * arguments are parsed only when a plan rule for the tool needs them before forwarding (otherwise
 * after the answer is out), and the record is built and queued once the client has its response.
 */
import { createServer, request as httpRequest, Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { finished } from 'node:stream/promises';
import { ConfigError } from '../../core/errors.js';
import { createRecorder, type RecorderOptions, type RecordingStats } from '../../record/recorder.js';
import { createRedactor, type RedactOptions } from '../../record/redact.js';
import { DEFAULT_MAX_OUTPUT_CHARS, truncateText } from '../../record/truncate.js';
import { retentionFor } from '../../store/retention.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { systemClock, type Clock } from '../../core/clock.js';
import type { RecordSink } from '../../core/record-sink.js';
import type { Store } from '../../core/store-types.js';
import { parseInjectHeader } from '../inject-error.js';
import { sendAdminInternalError, sendAdminNoRoute } from '../admin-http.js';
import type { FaultDecision, FaultEffect } from '../decision.js';
import { DRY_RUN_HEADER } from '../dry-run.js';
import { droppedConnectionMessage, gatewayAnswer } from '../gateway-answer.js';
import { globMatcher } from '../glob.js';
import type { FaultPlanSpec } from '../plan-spec.js';
import type { FaultPlan } from '../plan.js';
import { ADMIN_PREFIX, createAdminApi, type AdminHandler } from './admin-api.js';
import { buildExchangeRecord, type ExchangeOutcome, type ProxyExchange } from './exchange-record.js';
import { bodyBuffer, BodyCapture, EMPTY_BODY, readBodyPrefix, type BodyPrefix } from './request-body.js';
import { BAD_REQUEST, createFastPath, unexpectedUpgrade, type FastPathHost } from './fast-path.js';
import { compileRoutes, type ProxyRoute, type RouteMatch } from './routes.js';
import { forwardableResponseHeaders, readRequestHeaders, responseHeaderObject, undecodedTransferCoding, type RequestHeaders } from './wire-headers.js';
import { hostAllowed, hostAllowlist, refusedHostMessage, type HostAllowlist } from '../../net/host-allowlist.js';
import { listen } from '../../net/listen.js';

/**
 * Records per batch of the recorder the proxy owns. Encoding a batch for the store runs on the
 * proxy's event loop, and every request in flight waits it out: 512 records (the recorder's
 * default) took about 1.25 ms, which showed up whole in the p99 latency the proxy adds at 32
 * connections. 32 records cost about 80 us a batch; the SQLite writer thread still commits the
 * batches that queue up together, so the store's cost per record barely moves (perf/RESULTS.md,
 * "HTTP fault proxy").
 */
export const PROXY_RECORDER_BATCH_SIZE = 32;

export interface HttpFaultProxyOptions {
  /** The upstream, `http://host:port` or `https://…`. A path in it is prefixed to every request path. */
  target: string | URL;
  /**
   * Decides the faults for requests that have no X-Inject-Error header. A request with the header
   * is not shown to the plan, so it does not count towards the plan's triggers.
   */
  plan: FaultPlan;
  /** 0 picks a free port (read it from `url`). */
  port: number;
  /** Default 127.0.0.1, so nothing outside this machine reaches the proxy unless asked. */
  host?: string;
  /**
   * Host names besides the loopback ones that requests may carry while the proxy is bound to
   * loopback (a reverse proxy or a name that fronts it deliberately). Any other name is refused
   * 403 on both paths and not recorded, against DNS rebinding (host-allowlist.ts). Default: none.
   */
  allowedHosts?: readonly string[];
  /** Request-to-tool mapping, tried before the built-in rules (see routes.ts). */
  routes?: readonly ProxyRoute[];
  /** Records go to this store through a batching recorder the proxy owns. The store itself stays the caller's to close. */
  store?: Store;
  /**
   * Options of that recorder (batching, spooling, durability). Its batches default to
   * {@link PROXY_RECORDER_BATCH_SIZE} records, smaller than the recorder's own default.
   */
  recording?: Omit<RecorderOptions, 'store'>;
  /**
   * Retention of `store`: records older than this are deleted with their share of the rollups,
   * when the proxy starts and then every hour (see `Store.prune`). A duration as the CLI writes it
   * (`'30d'`) or milliseconds. Default: kept for ever.
   */
  retention?: string | number;
  /** A sink used as is, instead of `store`. */
  recorder?: RecordSink;
  /** Sees every record; errors it throws are swallowed. */
  onRecord?: (record: ToolExecutionRecord) => void;
  /** Timestamps, durations, plan time and waits on the wire (latency, held requests). Default: real time. */
  clock?: Clock;
  /** The bearer token the admin API requires. */
  adminToken: string;
  /** Serve the admin API on its own port instead of under `/__faultline/` on the proxy's port. */
  adminPort?: number;
  /**
   * Where the admin API may be reached from besides loopback: with `adminPort`, the address that
   * port binds (default 127.0.0.1); without it, the local address admin requests must arrive on
   * (`0.0.0.0` or `::` for any).
   */
  adminHost?: string;
  /** Redaction of every record. `false` turns it off. */
  redact?: RedactOptions | false;
  /** Added to every record's context_snapshot (agent, deployment, ...). */
  context?: Record<string, unknown>;
  /** raw_output is cut to this many characters. Default 2000. */
  maxOutputChars?: number;
  /**
   * Request bodies up to this size are kept for the record's arguments (and, on the full path, read
   * before forwarding, so that the plan's `when` conditions see them). Larger ones stream, with the
   * arguments taken from the URL. Default 1 MiB.
   */
  maxArgsBytes?: number;
  /** The largest upstream body a rewriting fault buffers; a larger one passes through unchanged. Default 16 MiB. */
  maxRewriteBytes?: number;
  /** How long a `timeout` fault without its own delay holds a request before answering 504 itself. Default 30 s. */
  holdCapMs?: number;
  /**
   * Relay requests no fault or plan rule touches over plain sockets (fast-path.ts) instead of
   * node:http's server and client. Default true; `false` sends every request the full path.
   * Ignored for https upstreams, which always take the full path.
   */
  fastPath?: boolean;
}

export interface HttpFaultProxyStats {
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
  /** Where the records are (stored, spooled, in memory, dropped), when the proxy owns its recorder (`store`); else null. */
  recording: RecordingStats | null;
}

export interface HttpFaultProxy {
  /** e.g. `http://127.0.0.1:40123` */
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** The admin API's base, e.g. `http://127.0.0.1:40123/__faultline`. */
  readonly adminUrl: string;
  stats(): HttpFaultProxyStats;
  /** Stops listening, cuts open connections (held requests included), records them, and flushes the recorder. Safe to call twice. */
  close(): Promise<void>;
}

export const DEFAULT_MAX_ARGS_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REWRITE_BYTES = 16 * 1024 * 1024;
export const DEFAULT_HOLD_CAP_MS = 30_000;
export { FAULT_HEADER } from '../gateway-answer.js';

const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
/** Headers that would lie about a rewritten body. */
const BODY_HEADERS = ['content-length', 'content-encoding', 'etag', 'content-md5', 'digest', 'content-range'];
const MAX_TRACKED_TRACES = 10_000;
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}/i;
const FORM = /^application\/x-www-form-urlencoded\b/i;
const TEXT_BODY = /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|yaml)\b)/i;
/**
 * Upstream sockets kept open between requests. Enough for every client connection a busy agent
 * fleet holds: a socket closed for want of room is a new TCP handshake on a later request.
 */
const MAX_FREE_UPSTREAM_SOCKETS = 1024;

/** What every request carries while it is served, on either path: enough to work out its arguments and record it. */
interface CallState {
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

/** One request on the full (node:http) path while it is being served. */
interface Live extends CallState {
  req: IncomingMessage;
  res: ServerResponse;
  /** The client went away, or the proxy is closing: nothing more will reach the client. */
  gone: boolean;
  /** The response emitted 'close' (delivered or not). */
  closed: boolean;
  /** Cancels what the request waits on when it is gone. One wait at a time, so one slot. */
  onGone: (() => void) | undefined;
  onClosed: (() => void) | undefined;
  method: string;
  /** Path and query. */
  path: string;
  /** The code of node:http's parser error that ended the request mid-body (a broken chunked framing). */
  parseError: string | undefined;
  /**
   * What broke the upstream's answer after its head. node's client ends a body read until the
   * close at a reset as if it were whole, and reports a broken chunk only as 'aborted'
   * (ECONNRESET): whatever reads the answer takes this error instead.
   */
  brokeOff: Error | undefined;
}

function parseJson(text: string): { value: unknown } | undefined {
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

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code !== '' ? code : 'UPSTREAM_ERROR';
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function withoutHeaders(headers: OutgoingHttpHeaders, names: readonly string[]): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...headers };
  for (const name of names) delete out[name];
  return out;
}

/** Marks the request gone and cancels what it was waiting on. */
function markGone(live: Live): void {
  if (live.gone) return;
  live.gone = true;
  const cancel = live.onGone;
  live.onGone = undefined;
  cancel?.();
}

/** Installs `cancel` as the request's gone handler; the returned function uninstalls it. */
function whileWaiting(live: Live, cancel: () => void): () => void {
  live.onGone = cancel;
  return () => {
    if (live.onGone === cancel) live.onGone = undefined;
  };
}

function responseClosed(live: Live): Promise<void> | undefined {
  if (live.closed) return undefined;
  return new Promise((resolve) => (live.onClosed = resolve));
}

/**
 * Relays an upstream response body to the client, keeping what `capture` wants of it. Resolves
 * when the client has it all (undefined), or with the error when either side broke off. By hand
 * rather than pipe() or stream.pipeline, which cost several listeners (pipeline also an
 * AbortSignal) per response.
 */
function relay(live: Live, upstream: IncomingMessage, capture: BodyCapture): Promise<Error | undefined> {
  const { res } = live;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      done();
      resolve(error);
    };
    const done = whileWaiting(live, () => {
      upstream.destroy();
      settle(new Error('the client closed the connection'));
    });
    const resume = () => upstream.resume();
    upstream.on('data', (chunk: Buffer) => {
      capture.add(chunk);
      if (!res.write(chunk)) {
        upstream.pause();
        res.once('drain', resume);
      }
    });
    upstream.once('end', () => {
      if (live.brokeOff === undefined) {
        res.end();
        return;
      }
      cutResponse(res, upstream);
      settle(live.brokeOff);
    });
    upstream.once('error', (error) => {
      cutResponse(res, upstream);
      settle(live.brokeOff ?? error);
    });
    res.once('finish', () => settle(undefined));
  });
}

/**
 * Ends a response whose upstream body broke off so that the client cannot take it for whole, as
 * the fast path does: a body the client reads until the close (an HTTP/1.0 client, no length)
 * ends in a reset, which a FIN would not be; otherwise the head goes out (node holds it back
 * until the first body byte) and the connection closes with the body short.
 */
function cutResponse(res: ServerResponse, upstream: IncomingMessage): void {
  const socket = res.socket;
  if (socket !== null && !res.chunkedEncoding && upstream.headers['content-length'] === undefined) {
    socket.resetAndDestroy();
    return;
  }
  if (!res.destroyed) res.flushHeaders();
  res.destroy();
}

/** node:http's answer to a request its parser refuses, by the error's code. */
function clientErrorAnswer(code: string | undefined): string {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';
    default:
      return BAD_REQUEST;
  }
}

function baseUrl(address: AddressInfo): string {
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * The path and query to forward. Taken as sent, not through `new URL`, which would read a
 * leading `//x` as a host name; absolute-form targets (`GET http://host/path`) keep their path.
 */
function requestPath(raw: string | undefined): string {
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

function pathOnly(path: string): string {
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}

function isAdminPath(path: string): boolean {
  return path.startsWith(ADMIN_PREFIX) && (path.length === ADMIN_PREFIX.length || path.charCodeAt(ADMIN_PREFIX.length) === 0x2f);
}

function parseTarget(target: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(target));
  } catch {
    throw new ConfigError(`invalid target ${JSON.stringify(String(target))}: expected an http:// or https:// URL`, 'target');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`invalid target ${JSON.stringify(String(target))}: expected an http:// or https:// URL`, 'target');
  }
  return url;
}

/** Which tools the current plan has rules for, recompiled when the plan is swapped. */
interface RuleIndex {
  spec: FaultPlanSpec;
  any: ((name: string) => boolean)[];
  stale: ((name: string) => boolean)[];
}

/**
 * Starts the proxy.
 *
 * @example
 * const plan = createFaultPlan(await loadFaultPlan('faults.yaml'));
 * const store = await openStore('.faultline/faultline.db');
 * const proxy = await startHttpFaultProxy({ target: 'http://127.0.0.1:8787', plan, port: 8080, store, adminToken: 'secret' });
 * // agents call http://127.0.0.1:8080/... instead of the upstream; every call is a record
 * await fetch(`${proxy.adminUrl}/plan`, { method: 'PUT', headers: { authorization: 'Bearer secret' }, body: yamlText });
 * await proxy.close();
 * await store.close();
 */
export async function startHttpFaultProxy(options: HttpFaultProxyOptions): Promise<HttpFaultProxy> {
  const target = parseTarget(options.target);
  if (options.store !== undefined && options.recorder !== undefined) throw new ConfigError('pass either store or recorder, not both', 'store');
  const { plan } = options;
  const clock = options.clock ?? systemClock;
  const host = options.host ?? '127.0.0.1';
  const routes = compileRoutes(options.routes ?? []);
  const maxOutputChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const maxArgsBytes = options.maxArgsBytes ?? DEFAULT_MAX_ARGS_BYTES;
  const maxRewriteBytes = options.maxRewriteBytes ?? DEFAULT_MAX_REWRITE_BYTES;
  const holdCapMs = options.holdCapMs ?? DEFAULT_HOLD_CAP_MS;
  // Enough of a streamed body to fill raw_output even after multi-byte characters and redaction.
  const captureBytes = Math.max(8192, maxOutputChars * 4);
  const recordOptions = {
    redactor: options.redact === false ? undefined : createRedactor(options.redact ?? {}),
    maxOutputChars,
    ...(options.context === undefined ? {} : { context: options.context }),
  };
  const ownedRecorder =
    options.store === undefined ? undefined : createRecorder({ batchSize: PROXY_RECORDER_BATCH_SIZE, ...options.recording, store: options.store });
  const sink: RecordSink | undefined = options.recorder ?? ownedRecorder;
  const retention = retentionFor(options.retention, options.store, {
    onError: options.recording?.onError ?? ((error) => process.emitWarning(`faultline proxy: retention: ${error instanceof Error ? error.message : String(error)}`)),
    now: () => clock.now(),
  });

  const secure = target.protocol === 'https:';
  const agentOptions = { keepAlive: true, maxFreeSockets: MAX_FREE_UPSTREAM_SOCKETS, scheduling: 'lifo' as const };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const send = secure ? httpsRequest : httpRequest;
  const targetHost = target.hostname.replace(/^\[|\]$/g, '');
  const targetPort = target.port === '' ? undefined : Number(target.port);
  const basePath = target.pathname.replace(/\/+$/, '');

  let closingProxy = false;
  /** Requests in flight, marked gone when the proxy closes. */
  const inFlight = new Set<Live>();
  const counters: Omit<HttpFaultProxyStats, 'recording'> = { requests: 0, injected: 0, inFlight: 0, recorded: 0, fastPath: 0, refusedHosts: 0 };
  const allowedHosts = hostAllowlist(host, options.allowedHosts);
  const adminAllowedHosts = hostAllowlist(options.adminHost ?? '127.0.0.1', options.allowedHosts);
  /** Requests not yet recorded; close() waits for them. */
  let unfinished = 0;
  let allFinished: (() => void) | undefined;
  const steps = new Map<string, number>();

  const admin: AdminHandler = createAdminApi({
    plan,
    token: options.adminToken,
    proxyState: () => ({ ...counters, target: target.href }),
    ...(options.adminHost === undefined ? {} : { adminHost: options.adminHost }),
  });

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
  /** Whether some rule may look at this tool's arguments; only then are they needed before forwarding. */
  function planLooksAt(toolName: string): boolean {
    return rulesNow().any.some((matches) => matches(toolName));
  }
  /** Whether some stale rule may replay this tool's outputs later, so its successes must be observed. */
  function watchesOutputs(toolName: string): boolean {
    return rulesNow().stale.some((matches) => matches(toolName));
  }

  function nextStep(traceId: string | undefined): number {
    if (traceId === undefined) return 0;
    const step = steps.get(traceId) ?? 0;
    steps.delete(traceId);
    steps.set(traceId, step + 1);
    if (steps.size > MAX_TRACKED_TRACES) steps.delete(steps.keys().next().value!);
    return step;
  }

  function emit(record: ToolExecutionRecord): void {
    counters.recorded++;
    if (options.onRecord !== undefined) {
      try {
        options.onRecord(record);
      } catch {
        // A listener must not break the proxy.
      }
    }
    try {
      sink?.enqueue(record)?.catch(() => undefined);
    } catch {
      // The recorder never throws by contract; a custom sink might, and the request is already answered.
    }
  }

  /** The call's arguments, from the URL and the body prefix; worked out once, when first needed. */
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

  /** The headers to send upstream, minus the ones that frame the body (`framing`, added here). */
  function forwardedHeaders(h: RequestHeaders, remoteAddress: string | undefined, framing: readonly string[]): string[] {
    const out = h.forward.slice();
    out.push('host', target.host, ...framing);
    const client = remoteAddress ?? '';
    out.push('x-forwarded-for', h.forwardedFor === undefined ? client : `${h.forwardedFor}, ${client}`);
    const forwardedHost = h.host ?? h.forwardedHost;
    if (forwardedHost !== undefined) out.push('x-forwarded-host', forwardedHost);
    out.push('x-forwarded-proto', 'http');
    return out;
  }

  function upstreamHeaders(live: Live, body: BodyPrefix): string[] {
    const h = live.headers;
    const framing: string[] = [];
    if (live.exchange.decision?.effect.type === 'dry_run') framing.push(DRY_RUN_HEADER, '1');
    if (body.complete) {
      // The body is already here in full: no 100-continue dance, and an exact length.
      if (body.bytes > 0 || h.contentLength !== undefined) framing.push('content-length', String(body.bytes));
    } else {
      if (h.contentLength !== undefined) framing.push('content-length', h.contentLength);
      if (h.expect !== undefined) framing.push('expect', h.expect);
    }
    return forwardedHeaders(h, live.req.socket.remoteAddress, framing);
  }

  function sendUpstream(live: Live, body: BodyPrefix): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      let answer: IncomingMessage | undefined;
      const upstream = send(
        {
          protocol: target.protocol,
          hostname: targetHost,
          ...(targetPort === undefined ? {} : { port: targetPort }),
          method: live.method,
          path: basePath + live.path,
          headers: upstreamHeaders(live, body),
          setHost: false,
          agent,
        },
        (response) => {
          done();
          if (response.statusCode === 101) {
            // No Upgrade is forwarded, so no request asked for it: a 502, as on the fast path, and
            // the socket, which speaks another protocol now, is not used again.
            upstream.destroy();
            reject(unexpectedUpgrade());
            return;
          }
          answer = response;
          resolve(response);
        },
      );
      const done = whileWaiting(live, () => upstream.destroy(new Error('the client went away')));
      upstream.on('error', (error) => {
        if (answer !== undefined) {
          // Emitted before the answer's 'end' (a reset) or its 'aborted' (a broken chunk).
          if (!answer.readableEnded) live.brokeOff ??= error;
          return;
        }
        done();
        reject(error);
      });
      // A 101 with an Upgrade header: without this listener node's client closes the socket and
      // says nothing, and the request would wait for ever.
      upstream.once('upgrade', (_response: IncomingMessage, socket: Socket) => {
        socket.destroy();
        done();
        reject(unexpectedUpgrade());
      });
      if (body.complete) {
        // One end() call: headers and body leave in a single write.
        upstream.end(bodyBuffer(body));
      } else {
        for (const chunk of body.chunks) upstream.write(chunk);
        live.req.pipe(upstream);
      }
    });
  }

  async function wait(live: Live, ms: number): Promise<boolean> {
    if (live.gone) return false;
    // Only holds and delays get here, so only they pay for an AbortSignal.
    const controller = new AbortController();
    const done = whileWaiting(live, () => controller.abort(new Error('the request is gone')));
    try {
      await clock.sleep(ms, controller.signal);
      return true;
    } catch {
      return false;
    } finally {
      done();
    }
  }

  /** A refused or unresolved upstream, real or injected, as a gateway answers it (see gateway-answer.ts). */
  function gatewayReply(code: string, message: string, faultKind?: string): { headers: Record<string, string>; body: string } {
    const answer = gatewayAnswer(code, message, faultKind);
    return { headers: { ...JSON_HEADERS, ...answer.headers }, body: JSON.stringify(answer.body) };
  }

  async function reply(live: Live, status: number, headers: OutgoingHttpHeaders, body: string | Buffer): Promise<ExchangeOutcome> {
    if (live.gone || live.res.destroyed) return { kind: 'gave_up' };
    const bytes = Buffer.byteLength(body);
    live.res.writeHead(status, { ...headers, 'content-length': bytes });
    live.res.end(body);
    await responseClosed(live);
    const text = typeof body === 'string' ? body : body.toString('utf8');
    return { kind: 'response', status, headers, body: bytes === 0 ? undefined : text, bodyBytes: bytes, ...(live.res.writableFinished ? {} : { cut: true }) };
  }

  function reset(live: Live): ExchangeOutcome {
    if (live.gone) return { kind: 'gave_up' };
    // An RST rather than a FIN: clients report ECONNRESET (undici: UND_ERR_SOCKET), as when a server dies mid-request.
    live.res.socket?.resetAndDestroy();
    return { kind: 'reset' };
  }

  async function gatewayError(live: Live, code: string, message: string, faultKind?: string): Promise<ExchangeOutcome> {
    const { headers, body } = gatewayReply(code, message, faultKind);
    const outcome = await reply(live, 502, headers, body);
    return outcome.kind === 'response' ? { ...outcome, errno: code } : outcome;
  }

  /**
   * Sends the request on and waits for the upstream to finish, discarding its answer: the write
   * happens, the client gets the fault. A fault after the write only follows a write that landed:
   * when the upstream refuses it (an error status, or no connection) its answer goes to the client
   * as it came, with no fault in the record, and that outcome is returned.
   */
  async function forwardAndDrain(live: Live): Promise<ExchangeOutcome | undefined> {
    let upstream: IncomingMessage;
    try {
      upstream = await sendUpstream(live, live.body);
    } catch (error) {
      live.exchange.faultApplied = false;
      return upstreamFailed(live, error);
    }
    const status = upstream.statusCode ?? 502;
    live.exchange.upstreamStatus = status;
    if (status < 200 || status >= 300) {
      live.exchange.faultApplied = false;
      return streamBack(live, upstream);
    }
    try {
      const done = whileWaiting(live, () => upstream.destroy());
      upstream.resume();
      try {
        await finished(upstream);
      } finally {
        done();
      }
      if (live.brokeOff !== undefined) throw live.brokeOff;
    } catch (error) {
      if (!live.gone) live.exchange.upstreamError = errorCode(live.brokeOff ?? error);
    }
    return undefined;
  }

  async function upstreamFailed(live: Live, error: unknown): Promise<ExchangeOutcome> {
    if (live.gone) return { kind: 'gave_up' };
    const code = errorCode(error);
    live.exchange.upstreamError = code;
    return gatewayError(live, code, `upstream ${target.host}: ${errorMessage(error)}`);
  }

  /** Relays the upstream's answer to the client, keeping a prefix (or, when a stale rule needs it, all) for the record. */
  async function streamBack(live: Live, upstream: IncomingMessage, already: readonly Buffer[] = []): Promise<ExchangeOutcome> {
    const status = upstream.statusCode ?? 502;
    if (live.gone) {
      upstream.destroy();
      return { kind: 'gave_up' };
    }
    const { exchange } = live;
    // A stale fault records what it replaces itself; every other real answer may be replayed later.
    const observe = exchange.decision?.kind !== 'stale' && watchesOutputs(exchange.toolName);
    const capture = new BodyCapture(observe ? maxRewriteBytes : captureBytes);
    live.res.writeHead(status, forwardableResponseHeaders(upstream.rawHeaders));
    for (const chunk of already) {
      capture.add(chunk);
      live.res.write(chunk);
    }
    const error = await relay(live, upstream, capture);
    // The record reads a few of these (content type, Retry-After); node builds the object on first use.
    const headers = upstream.headers;
    if (error !== undefined) {
      if (live.gone) return { kind: 'response', status, headers, body: capture.text(), bodyBytes: capture.bytes, cut: true };
      exchange.upstreamError = errorCode(error);
      return { kind: 'broken', code: errorCode(error), message: `the upstream response broke off: ${errorMessage(error)}`, status, headers, body: capture.text(), bodyBytes: capture.bytes };
    }
    const text = capture.text();
    if (observe && capture.complete && status >= 200 && status < 300 && text !== undefined) {
      const parsed = parseJson(text);
      if (parsed !== undefined) plan.observe({ toolName: exchange.toolName, args: argsOf(live), output: parsed.value, now: clock.now() });
    }
    return { kind: 'response', status, headers, body: text, bodyBytes: capture.bytes };
  }

  async function passThrough(live: Live): Promise<ExchangeOutcome> {
    let upstream: IncomingMessage;
    try {
      upstream = await sendUpstream(live, live.body);
    } catch (error) {
      return upstreamFailed(live, error);
    }
    live.exchange.upstreamStatus = upstream.statusCode ?? null;
    return streamBack(live, upstream);
  }

  /** Buffers the upstream's body, applies a malformed or rewrite effect to a 2xx JSON answer, and sends it with its new length. */
  async function rewriteThrough(live: Live, effect: Extract<FaultEffect, { type: 'malformed' | 'rewrite' }>): Promise<ExchangeOutcome> {
    const { exchange } = live;
    let upstream: IncomingMessage;
    try {
      upstream = await sendUpstream(live, live.body);
    } catch (error) {
      exchange.faultApplied = false;
      return upstreamFailed(live, error);
    }
    const status = upstream.statusCode ?? 502;
    exchange.upstreamStatus = status;
    const chunks: Buffer[] = [];
    let bytes = 0;
    const complete = await new Promise<boolean | Error>((resolve) => {
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes > maxRewriteBytes) {
          upstream.off('data', onData);
          upstream.pause();
          resolve(false);
        }
      };
      upstream.on('data', onData);
      upstream.once('end', () => resolve(live.brokeOff ?? true));
      upstream.once('error', (error) => resolve(live.brokeOff ?? error));
    });
    if (complete instanceof Error) {
      exchange.faultApplied = false;
      return upstreamFailed(live, complete);
    }
    if (!complete) {
      exchange.faultApplied = false;
      return streamBack(live, upstream, chunks);
    }
    const raw = Buffer.concat(chunks);
    const headers = responseHeaderObject(upstream.rawHeaders);
    if (status < 200 || status >= 300) {
      // An error answer carries no result to corrupt: it goes to the client as it came.
      exchange.faultApplied = false;
      return reply(live, status, withoutHeaders(headers, ['content-length']), raw);
    }
    const text = raw.toString('utf8');
    const parsed = parseJson(text);
    if (parsed !== undefined && exchange.decision?.kind !== 'stale' && watchesOutputs(exchange.toolName)) {
      plan.observe({ toolName: exchange.toolName, args: argsOf(live), output: parsed.value, now: clock.now() });
    }
    if (effect.type === 'malformed') {
      return reply(live, status, withoutHeaders(headers, BODY_HEADERS), effect.render(parsed === undefined ? text : parsed.value));
    }
    if (parsed === undefined) {
      exchange.faultApplied = false;
      return reply(live, status, withoutHeaders(headers, ['content-length']), raw);
    }
    const rewritten = JSON.stringify(effect.rewrite(parsed.value)) ?? 'null';
    return reply(live, status, { ...withoutHeaders(headers, BODY_HEADERS), 'content-type': 'application/json; charset=utf-8' }, rewritten);
  }

  async function refuse(live: Live, status: number, code: string, message: string): Promise<ExchangeOutcome> {
    const body = { error: { type: 'schema_mismatch', code, message } };
    const outcome = await reply(live, status, JSON_HEADERS, JSON.stringify(body));
    return outcome.kind === 'response' ? { kind: 'refused', status, code, message, body } : outcome;
  }

  async function applyDecision(live: Live, d: FaultDecision): Promise<ExchangeOutcome> {
    if (d.delayMs > 0 && !(await wait(live, d.delayMs))) return { kind: 'gave_up' };
    const effect = d.effect;
    // commit_then_drop is a timeout effect that forwards first: the write lands upstream, and the
    // client is held with no answer until it gives up (or gets the 504 at holdCapMs), as a hang.
    switch (effect.type) {
      case 'pass':
        return passThrough(live);
      case 'respond':
        if (d.forward) {
          const refused = await forwardAndDrain(live);
          if (refused !== undefined) return refused;
        }
        return reply(live, effect.status, effect.headers, JSON.stringify(effect.body ?? null));
      case 'drop':
        if (d.forward) {
          const refused = await forwardAndDrain(live);
          if (refused !== undefined) return refused;
        }
        if (effect.code === 'ECONNRESET') return reset(live);
        return gatewayError(live, effect.code, droppedConnectionMessage(effect.code, target.host, targetHost), d.kind);
      case 'timeout': {
        if (d.forward) {
          const refused = await forwardAndDrain(live);
          if (refused !== undefined) return refused;
        }
        const waitMs = effect.afterMs ?? holdCapMs;
        if (!(await wait(live, waitMs))) return { kind: 'gave_up' };
        const body = { error: { type: 'timeout', code: 'HTTP_504', message: `Gateway Timeout: ${live.exchange.toolName} did not answer within ${waitMs} ms` } };
        return reply(live, 504, JSON_HEADERS, JSON.stringify(body));
      }
      case 'malformed':
      case 'rewrite':
        return rewriteThrough(live, effect);
      case 'dry_run':
        // The upstream's own answer, to a request marked as a dry run (upstreamHeaders adds the
        // marker); an error answer goes out as it came, and is no fault.
        return passThrough(live).then((outcome) => {
          const status = live.exchange.upstreamStatus;
          if (status === null || status < 200 || status >= 300) live.exchange.faultApplied = false;
          return outcome;
        });
    }
  }

  async function serve(live: Live): Promise<ExchangeOutcome> {
    const { req, exchange, headers } = live;
    // A body with no Content-Length is chunked (llhttp refuses both): chunked must be its only
    // coding, as the proxy decodes no other and would pass the rest on as plain bytes (RFC 9112
    // section 6.1: 501). Chunked comes last (llhttp refuses it elsewhere), so the body's end is
    // known: it is read and dropped, and the connection serves the next request.
    const coding = headers.hasBody && headers.contentLength === undefined ? undecodedTransferCoding(req.rawHeaders) : undefined;
    if (coding !== undefined) {
      return refuse(live, 501, 'UNSUPPORTED_TRANSFER_CODING', `the proxy decodes no transfer coding but chunked, and the request body is sent with ${JSON.stringify(coding)}`);
    }
    if (headers.hasBody) {
      try {
        live.body = await readBodyPrefix(req, maxArgsBytes);
      } catch {
        // A body node:http's parser refused was answered 400 (clientError below), as the fast path answers and records it.
        if (live.parseError !== undefined) return { kind: 'refused', status: 400, code: live.parseError, message: 'the request body breaks the chunked framing', body: undefined };
        return { kind: 'gave_up' };
      }
    }

    const inject = headers.inject;
    if (inject !== undefined && inject.trim() !== '') {
      const parsed = parseInjectHeader(inject, headers.commit);
      if (!parsed.ok) return refuse(live, 400, 'INVALID_INJECTION', parsed.message);
      exchange.decision = parsed.decision;
    } else {
      // The plan counts every call, but reads the arguments only of tools it has rules for.
      const args = planLooksAt(exchange.toolName) ? argsOf(live) : undefined;
      exchange.decision = plan.decide({ toolName: exchange.toolName, args, now: clock.now(), transport: 'http' });
    }
    if (exchange.decision === undefined) return passThrough(live);
    counters.injected++;
    return applyDecision(live, exchange.decision);
  }

  /** Names a request as a tool call and starts its exchange; the same on both paths. */
  function openCall(method: string, path: string, headers: RequestHeaders, match: RouteMatch): CallState {
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
  }

  /** The client has its answer (or is gone): what is left is bookkeeping. */
  function closeCall(call: CallState, outcome: ExchangeOutcome): void {
    try {
      counters.inFlight--;
      if (closingProxy && outcome.kind === 'gave_up') call.exchange.details['proxy_closed'] = true;
      call.exchange.endedAt = clock.now();
      call.exchange.outcome = outcome;
      try {
        argsOf(call);
        emit(buildExchangeRecord(call.exchange, recordOptions));
      } catch {
        // A record that cannot be built is lost; the proxy and its other requests are not.
      }
    } finally {
      if (--unfinished === 0) allFinished?.();
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string, headers: RequestHeaders): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    const live: Live = Object.assign(openCall(method, path, headers, routes.resolve(method, pathOnly(path))), {
      req,
      res,
      gone: false,
      closed: false,
      onGone: undefined,
      onClosed: undefined,
      method,
      path,
      parseError: undefined,
      brokeOff: undefined,
    });
    let outcome: ExchangeOutcome = { kind: 'gave_up' };
    try {
      inFlight.add(live);
      res.once('close', () => {
        live.closed = true;
        if (!res.writableFinished) markGone(live);
        live.onClosed?.();
      });
      try {
        outcome = await serve(live);
      } catch (error) {
        live.exchange.details['proxy_error'] = errorMessage(error);
        outcome = res.headersSent ? { kind: 'reset' } : await gatewayError(live, 'PROXY_ERROR', `faultline proxy error: ${errorMessage(error)}`);
        if (!res.writableFinished) res.destroy();
      } finally {
        inFlight.delete(live);
      }
      // A body left unread (answered without forwarding it) would stall the next request on this connection.
      if (headers.hasBody && !req.readableEnded && !req.destroyed) req.resume();
    } finally {
      closeCall(live, outcome);
    }
  }

  function onRequest(req: IncomingMessage, res: ServerResponse, serveAdmin: boolean, hosts: HostAllowlist): void {
    const path = requestPath(req.url);
    const headers = readRequestHeaders(req.rawHeaders);
    if (!hostAllowed(headers.host, hosts)) {
      // The fast path hands such a request here, so both paths refuse it with these bytes.
      counters.refusedHosts++;
      const body = JSON.stringify({ error: { type: 'forbidden', code: 'FORBIDDEN_HOST', message: refusedHostMessage(headers.host, 'faultline proxy') } });
      res.writeHead(403, { ...JSON_HEADERS, 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    if (serveAdmin && path.startsWith(ADMIN_PREFIX) && isAdminPath(pathOnly(path))) {
      admin(req, res, pathOnly(path)).catch((error: unknown) => sendAdminInternalError(res, error));
      return;
    }
    void handle(req, res, path, headers);
  }

  const serveAdmin = options.adminPort === undefined;
  const server = createServer((req, res) => onRequest(req, res, serveAdmin, allowedHosts));
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => {
    // Bytes after a request that asked to close the connection: node:http reads no more of them,
    // and the answer to that request still goes out (node's own handler would send a 400 instead).
    if (error.code === 'HPE_CLOSED_CONNECTION') return;
    let live: Live | undefined;
    for (const l of inFlight) {
      if (l.req.socket === socket) {
        live = l;
        l.parseError = error.code?.startsWith('HPE_') === true ? error.code : undefined;
        break;
      }
    }
    // As node:http's server answers when it has no clientError listener: the fast path answers the same.
    if (socket.writable && live?.res.headersSent !== true) socket.write(clientErrorAnswer(error.code));
    socket.destroy();
  });

  const fastHost: FastPathHost<CallState> = {
    open(head) {
      const path = requestPath(head.target);
      if (serveAdmin && isAdminPath(pathOnly(path))) return undefined;
      const headers = readRequestHeaders(head.raw);
      if (!hostAllowed(headers.host, allowedHosts)) return undefined;
      if (headers.inject !== undefined && headers.inject.trim() !== '') return undefined;
      const match = routes.resolve(head.method, pathOnly(path));
      if (planLooksAt(match.toolName)) return undefined;
      const call = openCall(head.method, path, headers, match);
      counters.fastPath++;
      // No rule names this tool, so the plan decides nothing for it; it still counts the call.
      plan.decide({ toolName: match.toolName, args: undefined, now: clock.now(), transport: 'http' });
      return call;
    },
    upstreamHead(call, head, remoteAddress) {
      const h = call.headers;
      const framing = head.framing === 'chunked' ? ['transfer-encoding', 'chunked'] : h.contentLength === undefined ? [] : ['content-length', h.contentLength];
      const list = forwardedHeaders(h, remoteAddress, framing);
      let text = `${head.method} ${basePath}${call.exchange.path} HTTP/1.1\r\n`;
      for (let i = 0; i < list.length; i += 2) text += `${list[i]!}: ${list[i + 1]!}\r\n`;
      return `${text}\r\n`;
    },
    gatewayError(_call, error) {
      const code = errorCode(error);
      return { status: 502, ...gatewayReply(code, `upstream ${target.host}: ${errorMessage(error)}`), code };
    },
    finish: closeCall,
    // Set below, once the fast path is in front of node:http.
    handOff: () => undefined,
  };
  // node:http's server has one 'connection' listener, its own. The fast path goes in front of it
  // and hands it the connections it does not serve. https upstreams always take node:http's path.
  const nodeListeners = server.listeners('connection');
  const fast =
    secure || options.fastPath === false || nodeListeners.length !== 1
      ? undefined
      : createFastPath(fastHost, {
          upstreamHost: targetHost,
          upstreamPort: targetPort ?? 80,
          maxFreeUpstreamSockets: MAX_FREE_UPSTREAM_SOCKETS,
          maxArgsBytes,
          captureBytes,
          keepAliveTimeoutMs: server.keepAliveTimeout,
          headersTimeoutMs: server.headersTimeout,
        });
  if (fast !== undefined) {
    const nodeConnection = nodeListeners[0] as (socket: Socket) => void;
    fastHost.handOff = (socket) => nodeConnection.call(server, socket);
    server.removeListener('connection', nodeConnection);
    server.on('connection', (socket: Socket) => fast.accept(socket));
  }
  const release = async () => {
    fast?.closeAll();
    agent.destroy();
    await retention?.stop();
    await ownedRecorder?.close();
  };
  let address: AddressInfo;
  try {
    address = await listen(server, options.port, host);
  } catch (error) {
    await release();
    throw error;
  }
  let adminServer: Server | undefined;
  let adminUrl = `${baseUrl(address)}${ADMIN_PREFIX}`;
  if (options.adminPort !== undefined) {
    adminServer = createServer((req, res) => {
      const path = pathOnly(requestPath(req.url));
      if (isAdminPath(path)) onRequest(req, res, true, adminAllowedHosts);
      else sendAdminNoRoute(req, res, path, ADMIN_PREFIX);
    });
    try {
      adminUrl = `${baseUrl(await listen(adminServer, options.adminPort, options.adminHost ?? '127.0.0.1'))}${ADMIN_PREFIX}`;
    } catch (error) {
      server.close();
      await release();
      throw error;
    }
  }

  const stop = (s: Server) =>
    new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  let closing: Promise<void> | undefined;
  return {
    url: baseUrl(address),
    port: address.port,
    host: address.address,
    adminUrl,
    stats: () => ({ ...counters, recording: ownedRecorder?.recording() ?? null }),
    close() {
      closing ??= (async () => {
        closingProxy = true;
        for (const live of inFlight) markGone(live);
        fast?.closeAll();
        await Promise.all([stop(server), adminServer === undefined ? undefined : stop(adminServer)]);
        if (unfinished > 0) await new Promise<void>((resolve) => (allFinished = resolve));
        await release();
        await options.recorder?.flush?.();
      })();
      return closing;
    },
  };
}
