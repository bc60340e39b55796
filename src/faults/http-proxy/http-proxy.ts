/**
 * The HTTP fault proxy: a reverse proxy (node:http) in front of tools faultline cannot wrap. It
 * injects a fault plan's faults on the wire and records every request as a tool call.
 *
 * Each request is named as a tool (routes.ts) and decided once: by its `X-Inject-Error` header
 * (the mock tool server's vocabulary) or else by the plan. Then it is forwarded, answered, held or
 * cut as the decision says. Bodies stream through untouched. A response is buffered only when a
 * fault rewrites it. A request body is buffered only up to `maxArgsBytes`, because the plan's
 * `when` conditions and the record's input_params need the arguments before anything is sent.
 * Admin endpoints under `/__faultline/` (admin-api.ts) read the plan and swap it while traffic flows.
 */
import { createServer, request as httpRequest, Agent as HttpAgent, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { finished } from 'node:stream/promises';
import { ConfigError } from '../../errors.js';
import { createRecorder, type RecorderOptions } from '../../record/recorder.js';
import { createRedactor, type RedactOptions } from '../../record/redact.js';
import { DEFAULT_MAX_OUTPUT_CHARS, truncateText } from '../../record/truncate.js';
import type { ToolExecutionRecord } from '../../record/types.js';
import { classifyError } from '../../runtime/classify.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { RecordSink } from '../../runtime/runtime.js';
import type { Store } from '../../store/types.js';
import { COMMIT_HEADER, INJECT_HEADER, parseInjectHeader } from '../../tools/inject-error.js';
import type { FaultDecision, FaultEffect } from '../decision.js';
import { globMatcher } from '../glob.js';
import type { FaultPlanSpec } from '../plan-spec.js';
import type { FaultPlan } from '../plan.js';
import { ADMIN_PREFIX, createAdminApi, type AdminHandler } from './admin-api.js';
import { buildExchangeRecord, type ExchangeOutcome, type ProxyExchange } from './exchange-record.js';
import { compileRoutes, type ProxyRoute } from './routes.js';

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
  /** Request-to-tool mapping, tried before the built-in rules (see routes.ts). */
  routes?: readonly ProxyRoute[];
  /** Records go to this store through a batching recorder the proxy owns. The store itself stays the caller's to close. */
  store?: Store;
  /** Options of that recorder (batching, spooling, durability). */
  recording?: Omit<RecorderOptions, 'store'>;
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
  /** Request bodies up to this size are read before forwarding, to know the arguments. Larger ones stream, with the arguments taken from the URL. Default 1 MiB. */
  maxArgsBytes?: number;
  /** The largest upstream body a rewriting fault buffers; a larger one passes through unchanged. Default 16 MiB. */
  maxRewriteBytes?: number;
  /** How long a `timeout` fault without its own delay holds a request before answering 504 itself. Default 30 s. */
  holdCapMs?: number;
}

export interface HttpFaultProxyStats {
  /** Requests proxied (admin requests excluded). */
  requests: number;
  /** Requests that got a fault. */
  injected: number;
  inFlight: number;
  /** Records handed to the sink. */
  recorded: number;
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
/** Marks the 502 that stands for an injected refused connection or failed DNS lookup. */
export const FAULT_HEADER = 'x-faultline-fault';

/** RFC 9110 section 7.6.1: headers that describe one connection, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);
const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json; charset=utf-8' };
/** Headers that would lie about a rewritten body. */
const BODY_HEADERS = ['content-length', 'content-encoding', 'etag', 'content-md5', 'digest', 'content-range'];
const MAX_TRACKED_TRACES = 10_000;
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}/i;

interface BodyPrefix {
  chunks: Buffer[];
  bytes: number;
  /** The whole body was read. */
  complete: boolean;
}

/** Keeps the first `limit` bytes of a stream, and counts all of them. */
class BodyCapture {
  bytes = 0;
  private kept = 0;
  private readonly chunks: Buffer[] = [];
  constructor(private readonly limit: number) {}
  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.kept >= this.limit) return;
    const part = this.kept + chunk.length > this.limit ? chunk.subarray(0, this.limit - this.kept) : chunk;
    this.chunks.push(part);
    this.kept += part.length;
  }
  get complete(): boolean {
    return this.kept === this.bytes;
  }
  text(): string | undefined {
    return this.bytes === 0 ? undefined : Buffer.concat(this.chunks).toString('utf8');
  }
}

/** One request while it is being served. */
interface Live {
  req: IncomingMessage;
  res: ServerResponse;
  /** Aborts when the client goes away or the proxy closes. */
  signal: AbortSignal;
  /** Resolves when the response is done or the connection is gone. */
  closed: Promise<void>;
  method: string;
  /** Path and query. */
  path: string;
  exchange: Omit<ProxyExchange, 'endedAt' | 'outcome'>;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function connectionTokens(headers: IncomingHttpHeaders): Set<string> {
  const value = headers.connection;
  if (value === undefined) return new Set();
  return new Set(value.split(',').map((t) => t.trim().toLowerCase()));
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

/**
 * Pipes a response through; resolves when the client has it all (undefined), or with the error
 * when either side broke off. Lighter than stream.pipeline, which allocates an AbortSignal and
 * a DOMException on every call.
 */
function relay(upstream: IncomingMessage, res: ServerResponse): Promise<Error | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      resolve(error);
    };
    upstream.once('error', (error) => {
      res.destroy();
      settle(error);
    });
    res.once('finish', () => settle(undefined));
    res.once('close', () => {
      if (res.writableFinished) return;
      upstream.destroy();
      settle(new Error('the client closed the connection'));
    });
    upstream.pipe(res);
  });
}

function readPrefix(req: IncomingMessage, limit: number, signal: AbortSignal): Promise<BodyPrefix> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      signal.removeEventListener('abort', onError);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes > limit) {
        cleanup();
        // The rest stays in the stream, to be piped to the upstream.
        req.pause();
        resolve({ chunks, bytes, complete: false });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve({ chunks, bytes, complete: true });
    };
    const onError = () => {
      cleanup();
      reject(new Error('the client went away while sending the request'));
    };
    if (signal.aborted) {
      onError();
      return;
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    signal.addEventListener('abort', onError, { once: true });
  });
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
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
  if (/^https?:\/\//i.test(raw)) {
    try {
      const url = new URL(raw);
      return url.pathname + url.search;
    } catch {
      return '/';
    }
  }
  return raw.startsWith('/') ? raw : `/${raw}`;
}

function isAdminPath(path: string): boolean {
  return path === ADMIN_PREFIX || path.startsWith(`${ADMIN_PREFIX}/`);
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
  const ownedRecorder = options.store === undefined ? undefined : createRecorder({ ...options.recording, store: options.store });
  const sink: RecordSink | undefined = options.recorder ?? ownedRecorder;

  const secure = target.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  const targetHost = target.hostname.replace(/^\[|\]$/g, '');
  const targetPort = target.port === '' ? undefined : Number(target.port);
  const basePath = target.pathname.replace(/\/+$/, '');

  let closingProxy = false;
  /** One controller per request in flight, aborted when its client goes away or the proxy closes. */
  const inFlight = new Set<AbortController>();
  const counters: HttpFaultProxyStats = { requests: 0, injected: 0, inFlight: 0, recorded: 0 };
  const serving = new Set<Promise<void>>();
  const steps = new Map<string, number>();

  const admin: AdminHandler = createAdminApi({
    plan,
    token: options.adminToken,
    proxyState: () => ({ ...counters, target: target.href }),
    ...(options.adminHost === undefined ? {} : { adminHost: options.adminHost }),
  });

  let staleWatch: { spec: FaultPlanSpec; matchers: ((name: string) => boolean)[] } | undefined;
  /** Whether some stale rule may replay this tool's outputs later, so its successes must be observed. */
  function watchesOutputs(toolName: string): boolean {
    const spec = plan.spec;
    if (staleWatch?.spec !== spec) staleWatch = { spec, matchers: spec.rules.filter((r) => r.fault === 'stale').map((r) => globMatcher(r.tool)) };
    return staleWatch.matchers.some((matches) => matches(toolName));
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

  function argsOf(prefix: BodyPrefix, params: Record<string, string>, query: URLSearchParams, contentType: string | undefined): { args: unknown; note?: string } {
    const fromUrl: Record<string, unknown> = { ...params, ...queryObject(query) };
    if (!prefix.complete) return { args: fromUrl, note: `streamed (over ${maxArgsBytes} bytes)` };
    if (prefix.bytes === 0) return { args: fromUrl };
    const text = Buffer.concat(prefix.chunks).toString('utf8');
    const parsed = parseJson(text);
    if (parsed !== undefined) {
      return { args: isPlainObject(parsed.value) && Object.keys(params).length > 0 ? { ...params, ...parsed.value } : parsed.value };
    }
    if (contentType !== undefined && /^application\/x-www-form-urlencoded\b/i.test(contentType)) {
      return { args: { ...fromUrl, ...queryObject(new URLSearchParams(text)) } };
    }
    if (contentType !== undefined && !/^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|yaml)\b)/i.test(contentType)) {
      return { args: { ...fromUrl, body: `[${prefix.bytes} bytes of ${contentType.split(';', 1)[0]}]` } };
    }
    return { args: { ...fromUrl, body: truncateText(text, maxOutputChars) } };
  }

  function forwardHeaders(live: Live, prefix: BodyPrefix): OutgoingHttpHeaders {
    const req = live.req;
    const listed = connectionTokens(req.headers);
    const out: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
      // accept-encoding: identity bodies can be recorded and rewritten; compression buys little on the hop to a local tool.
      if (name === 'host' || name === INJECT_HEADER || name === COMMIT_HEADER || name === 'accept-encoding') continue;
      out[name] = value;
    }
    if (prefix.complete) {
      // The body is already here in full: no 100-continue dance, and an exact length.
      delete out['expect'];
      if (prefix.bytes > 0 || req.headers['content-length'] !== undefined) out['content-length'] = prefix.bytes;
    }
    out['host'] = target.host;
    const client = req.socket.remoteAddress ?? '';
    const forwardedFor = first(req.headers['x-forwarded-for']);
    out['x-forwarded-for'] = forwardedFor === undefined ? client : `${forwardedFor}, ${client}`;
    if (req.headers.host !== undefined) out['x-forwarded-host'] = req.headers.host;
    out['x-forwarded-proto'] = 'http';
    return out;
  }

  function sendUpstream(live: Live, prefix: BodyPrefix): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const upstream = send(
        {
          protocol: target.protocol,
          hostname: targetHost,
          ...(targetPort === undefined ? {} : { port: targetPort }),
          method: live.method,
          path: basePath + live.path,
          headers: forwardHeaders(live, prefix),
          agent,
        },
        resolve,
      );
      // By hand rather than the `signal` option: that one costs an AbortSignal per request.
      const onAbort = () => upstream.destroy(new Error('the client went away'));
      live.signal.addEventListener('abort', onAbort, { once: true });
      upstream.once('close', () => live.signal.removeEventListener('abort', onAbort));
      upstream.on('error', reject);
      if (prefix.complete) {
        // One end() call: headers and body leave in a single write.
        upstream.end(prefix.chunks.length <= 1 ? prefix.chunks[0] : Buffer.concat(prefix.chunks, prefix.bytes));
      } else {
        for (const chunk of prefix.chunks) upstream.write(chunk);
        live.req.pipe(upstream);
      }
    });
  }

  function responseHeaders(upstream: IncomingMessage): OutgoingHttpHeaders {
    const listed = connectionTokens(upstream.headers);
    const out: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(upstream.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name) && !listed.has(name)) out[name] = value;
    }
    return out;
  }

  async function wait(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }

  async function reply(live: Live, status: number, headers: OutgoingHttpHeaders, body: string | Buffer): Promise<ExchangeOutcome> {
    if (live.signal.aborted || live.res.destroyed) return { kind: 'gave_up' };
    const bytes = Buffer.byteLength(body);
    live.res.writeHead(status, { ...headers, 'content-length': bytes });
    live.res.end(body);
    await live.closed;
    const text = typeof body === 'string' ? body : body.toString('utf8');
    return { kind: 'response', status, headers, body: bytes === 0 ? undefined : text, bodyBytes: bytes, ...(live.res.writableFinished ? {} : { cut: true }) };
  }

  function reset(live: Live): ExchangeOutcome {
    if (live.signal.aborted) return { kind: 'gave_up' };
    // An RST rather than a FIN: clients report ECONNRESET (undici: UND_ERR_SOCKET), as when a server dies mid-request.
    live.res.socket?.resetAndDestroy();
    return { kind: 'reset' };
  }

  /**
   * The client's connection is to the proxy and has already been accepted, so the proxy cannot
   * make it fail with ECONNREFUSED, nor make the client's DNS lookup fail. It answers the way a
   * gateway answers when its own upstream is refused or does not resolve: 502, with the errno code
   * in the JSON body. For an injected failure, X-Faultline-Fault tells a harness it was not real.
   */
  async function gatewayError(live: Live, code: string, message: string, faultKind?: string): Promise<ExchangeOutcome> {
    const type = classifyError(Object.assign(new Error(message), { code }), clock.now()).type;
    const headers: OutgoingHttpHeaders = faultKind === undefined ? JSON_HEADERS : { ...JSON_HEADERS, [FAULT_HEADER]: faultKind };
    const outcome = await reply(live, 502, headers, JSON.stringify({ error: { type, code, message } }));
    return outcome.kind === 'response' ? { ...outcome, errno: code } : outcome;
  }

  /** Sends the request on and waits for the upstream to finish, discarding its answer: the write happens, the client gets the fault. */
  async function forwardAndDrain(live: Live, prefix: BodyPrefix): Promise<void> {
    try {
      const upstream = await sendUpstream(live, prefix);
      live.exchange.upstreamStatus = upstream.statusCode ?? null;
      upstream.resume();
      await finished(upstream);
    } catch (error) {
      if (!live.signal.aborted) live.exchange.upstreamError = errorCode(error);
    }
  }

  async function upstreamFailed(live: Live, error: unknown): Promise<ExchangeOutcome> {
    if (live.signal.aborted) return { kind: 'gave_up' };
    const code = errorCode(error);
    live.exchange.upstreamError = code;
    return gatewayError(live, code, `upstream ${target.host}: ${errorMessage(error)}`);
  }

  /** Pipes the upstream's answer to the client, keeping a prefix (or, when a stale rule needs it, all) for the record. */
  async function streamBack(live: Live, upstream: IncomingMessage, already: readonly Buffer[] = []): Promise<ExchangeOutcome> {
    const status = upstream.statusCode ?? 502;
    const headers = responseHeaders(upstream);
    // A stale fault records what it replaces itself; every other real answer may be replayed later.
    const observe = live.exchange.decision?.kind !== 'stale' && watchesOutputs(live.exchange.toolName);
    const capture = new BodyCapture(observe ? maxRewriteBytes : captureBytes);
    live.res.writeHead(status, headers);
    for (const chunk of already) {
      capture.add(chunk);
      live.res.write(chunk);
    }
    upstream.on('data', (chunk: Buffer) => capture.add(chunk));
    const error = await relay(upstream, live.res);
    if (error !== undefined) {
      if (live.signal.aborted) return { kind: 'response', status, headers, body: capture.text(), bodyBytes: capture.bytes, cut: true };
      live.exchange.upstreamError = errorCode(error);
      return { kind: 'broken', code: errorCode(error), message: `the upstream response broke off: ${errorMessage(error)}`, status, headers, body: capture.text(), bodyBytes: capture.bytes };
    }
    const text = capture.text();
    if (observe && capture.complete && status >= 200 && status < 300 && text !== undefined) {
      const parsed = parseJson(text);
      if (parsed !== undefined) plan.observe({ toolName: live.exchange.toolName, args: live.exchange.args, output: parsed.value, now: clock.now() });
    }
    return { kind: 'response', status, headers, body: text, bodyBytes: capture.bytes };
  }

  async function passThrough(live: Live, prefix: BodyPrefix): Promise<ExchangeOutcome> {
    let upstream: IncomingMessage;
    try {
      upstream = await sendUpstream(live, prefix);
    } catch (error) {
      return upstreamFailed(live, error);
    }
    live.exchange.upstreamStatus = upstream.statusCode ?? null;
    return streamBack(live, upstream);
  }

  /** Buffers the upstream's body, applies a malformed or rewrite effect to a 2xx JSON answer, and sends it with its new length. */
  async function rewriteThrough(live: Live, prefix: BodyPrefix, effect: Extract<FaultEffect, { type: 'malformed' | 'rewrite' }>): Promise<ExchangeOutcome> {
    let upstream: IncomingMessage;
    try {
      upstream = await sendUpstream(live, prefix);
    } catch (error) {
      live.exchange.faultApplied = false;
      return upstreamFailed(live, error);
    }
    const status = upstream.statusCode ?? 502;
    live.exchange.upstreamStatus = status;
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
      upstream.once('end', () => resolve(true));
      upstream.once('error', (error) => resolve(error));
    });
    if (complete instanceof Error) {
      live.exchange.faultApplied = false;
      return upstreamFailed(live, complete);
    }
    if (!complete) {
      live.exchange.faultApplied = false;
      return streamBack(live, upstream, chunks);
    }
    const raw = Buffer.concat(chunks);
    const headers = responseHeaders(upstream);
    if (status < 200 || status >= 300) {
      // An error answer carries no result to corrupt: it goes to the client as it came.
      live.exchange.faultApplied = false;
      return reply(live, status, withoutHeaders(headers, ['content-length']), raw);
    }
    const text = raw.toString('utf8');
    const parsed = parseJson(text);
    if (parsed !== undefined && live.exchange.decision?.kind !== 'stale' && watchesOutputs(live.exchange.toolName)) {
      plan.observe({ toolName: live.exchange.toolName, args: live.exchange.args, output: parsed.value, now: clock.now() });
    }
    if (effect.type === 'malformed') {
      return reply(live, status, withoutHeaders(headers, BODY_HEADERS), effect.render(parsed === undefined ? text : parsed.value));
    }
    if (parsed === undefined) {
      live.exchange.faultApplied = false;
      return reply(live, status, withoutHeaders(headers, ['content-length']), raw);
    }
    const rewritten = JSON.stringify(effect.rewrite(parsed.value)) ?? 'null';
    return reply(live, status, { ...withoutHeaders(headers, BODY_HEADERS), 'content-type': 'application/json; charset=utf-8' }, rewritten);
  }

  async function refuse(live: Live, message: string): Promise<ExchangeOutcome> {
    const body = { error: { type: 'schema_mismatch', code: 'INVALID_INJECTION', message } };
    const outcome = await reply(live, 400, JSON_HEADERS, JSON.stringify(body));
    return outcome.kind === 'response' ? { kind: 'refused', status: 400, code: 'INVALID_INJECTION', message, body } : outcome;
  }

  async function applyDecision(live: Live, prefix: BodyPrefix, d: FaultDecision): Promise<ExchangeOutcome> {
    if (d.delayMs > 0 && !(await wait(d.delayMs, live.signal))) return { kind: 'gave_up' };
    const effect = d.effect;
    // In process this hangs after the write; on the wire the brief outage is a dropped connection,
    // which is what makes a client wonder whether its write landed.
    if (d.kind === 'commit_then_drop') {
      await forwardAndDrain(live, prefix);
      return reset(live);
    }
    switch (effect.type) {
      case 'pass':
        return passThrough(live, prefix);
      case 'respond':
        if (d.forward) await forwardAndDrain(live, prefix);
        return reply(live, effect.status, effect.headers, JSON.stringify(effect.body ?? null));
      case 'drop':
        if (d.forward) await forwardAndDrain(live, prefix);
        if (effect.code === 'ECONNRESET') return reset(live);
        return gatewayError(
          live,
          effect.code,
          effect.code === 'ENOTFOUND' ? `getaddrinfo ENOTFOUND ${targetHost}` : `connect ECONNREFUSED ${target.host}`,
          d.kind,
        );
      case 'timeout': {
        if (d.forward) await forwardAndDrain(live, prefix);
        const waitMs = effect.afterMs ?? holdCapMs;
        if (!(await wait(waitMs, live.signal))) return { kind: 'gave_up' };
        const body = { error: { type: 'timeout', code: 'HTTP_504', message: `Gateway Timeout: ${live.exchange.toolName} did not answer within ${waitMs} ms` } };
        return reply(live, 504, JSON_HEADERS, JSON.stringify(body));
      }
      case 'malformed':
      case 'rewrite':
        return rewriteThrough(live, prefix, effect);
    }
  }

  async function serve(live: Live): Promise<ExchangeOutcome> {
    const { req, exchange } = live;
    let prefix: BodyPrefix;
    try {
      prefix = await readPrefix(req, maxArgsBytes, live.signal);
    } catch {
      return { kind: 'gave_up' };
    }
    const pathname = live.path.split('?', 1)[0]!;
    const match = routes.resolve(live.method, pathname);
    const query = new URLSearchParams(live.path.slice(pathname.length + 1));
    const { args, note } = argsOf(prefix, match.params, query, first(req.headers['content-type']));
    Object.assign(exchange, { toolName: match.toolName, route: match.route, idempotent: match.idempotent, args });
    if (note !== undefined) exchange.details['request_body'] = note;

    const header = first(req.headers[INJECT_HEADER]);
    if (header !== undefined && header.trim() !== '') {
      const parsed = parseInjectHeader(header, first(req.headers[COMMIT_HEADER]));
      if (!parsed.ok) return refuse(live, parsed.message);
      exchange.decision = parsed.decision;
    } else {
      exchange.decision = plan.decide({ toolName: match.toolName, args, now: clock.now(), transport: 'http' });
    }
    if (exchange.decision === undefined) return passThrough(live, prefix);
    counters.injected++;
    return applyDecision(live, prefix, exchange.decision);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    counters.requests++;
    counters.inFlight++;
    const startedAt = clock.now();
    const gone = new AbortController();
    inFlight.add(gone);
    const closed = new Promise<void>((resolve) => {
      res.once('close', () => {
        if (!res.writableFinished) gone.abort(new Error('the client closed the connection'));
        resolve();
      });
    });
    const method = (req.method ?? 'GET').toUpperCase();
    const path = requestPath(req.url);
    const xTraceId = first(req.headers['x-trace-id'])?.trim();
    const traceparent = first(req.headers['traceparent'])?.trim();
    const traceId = xTraceId !== undefined && xTraceId !== '' ? xTraceId : traceparent === undefined ? undefined : TRACEPARENT.exec(traceparent)?.[1]?.toLowerCase();
    const details: Record<string, unknown> = {};
    if (traceparent !== undefined) details['traceparent'] = traceparent;
    const idempotencyKey = first(req.headers['idempotency-key']);
    if (idempotencyKey !== undefined) details['idempotency_key'] = idempotencyKey;
    const live: Live = {
      req,
      res,
      signal: gone.signal,
      closed,
      method,
      path,
      exchange: {
        toolName: `${method} ${path.split('?', 1)[0]!}`,
        args: {},
        idempotent: false,
        method,
        path,
        route: '',
        traceId,
        stepIndex: nextStep(traceId),
        startedAt,
        decision: undefined,
        faultApplied: true,
        upstreamStatus: null,
        upstreamError: null,
        details,
      },
    };
    let outcome: ExchangeOutcome = { kind: 'gave_up' };
    try {
      outcome = await serve(live);
    } catch (error) {
      details['proxy_error'] = errorMessage(error);
      outcome = res.headersSent ? { kind: 'reset' } : await gatewayError(live, 'PROXY_ERROR', `faultline proxy error: ${errorMessage(error)}`);
      if (!res.writableFinished) res.destroy();
    } finally {
      counters.inFlight--;
      inFlight.delete(gone);
    }
    // A body left unread (answered without forwarding it) would stall the next request on this connection.
    if (!req.readableEnded && !req.destroyed) req.resume();
    if (closingProxy && outcome.kind === 'gave_up') details['proxy_closed'] = true;
    emit(buildExchangeRecord({ ...live.exchange, endedAt: clock.now(), outcome }, recordOptions));
  }

  function onRequest(req: IncomingMessage, res: ServerResponse, serveAdmin: boolean): void {
    const path = requestPath(req.url).split('?', 1)[0]!;
    if (serveAdmin && isAdminPath(path)) {
      admin(req, res, path).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, JSON_HEADERS).end(JSON.stringify({ error: { code: 'ADMIN_ERROR', message: errorMessage(error) } }));
      });
      return;
    }
    const done: Promise<void> = handle(req, res).finally(() => serving.delete(done));
    serving.add(done);
  }

  const server = createServer((req, res) => onRequest(req, res, options.adminPort === undefined));
  server.on('clientError', (_error, socket) => socket.destroy());
  const release = async () => {
    agent.destroy();
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
      const path = requestPath(req.url).split('?', 1)[0]!;
      if (isAdminPath(path)) onRequest(req, res, true);
      else res.writeHead(404, JSON_HEADERS).end(JSON.stringify({ error: { code: 'NO_ROUTE', message: `the admin port serves only ${ADMIN_PREFIX}/plan and ${ADMIN_PREFIX}/state` } }));
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
    stats: () => ({ ...counters }),
    close() {
      closing ??= (async () => {
        closingProxy = true;
        for (const controller of inFlight) controller.abort(new Error('the proxy is closing'));
        await Promise.all([stop(server), adminServer === undefined ? undefined : stop(adminServer)]);
        await Promise.allSettled([...serving]);
        await release();
        await options.recorder?.flush?.();
      })();
      return closing;
    },
  };
}
