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
 * the request's head, to the node:http server (node-path.ts), and both paths open and record an
 * exchange the same way (exchange.ts). On the node:http path, too, the pass-through is kept short:
 * headers travel as raw lists (wire-headers.ts), nothing allocates an AbortSignal or a timer, the
 * arguments are parsed only when a plan rule for the tool needs them before forwarding (otherwise
 * after the answer is out), and the record is built and queued once the client has its response.
 */
import { createServer, request as httpRequest, Agent as HttpAgent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError } from '../../core/errors.js';
import { warnListenerError } from '../../core/notify.js';
import { openRecording } from '../../record/open-recording.js';
import type { RecorderOptions, RecordingStats } from '../../record/recorder.js';
import { createRedactor, type RedactOptions } from '../../record/redact.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from '../../record/truncate.js';
import { retentionFor } from '../../store/retention.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { systemClock, type Clock } from '../../core/clock.js';
import type { RecordSink } from '../../core/record-sink.js';
import type { Store } from '../../core/store-types.js';
import { sendAdminInternalError, sendAdminNoRoute } from '../admin-http.js';
import type { FaultPlan } from '../plan.js';
import { ADMIN_PREFIX, createAdminApi, type AdminHandler } from './admin-api.js';
import { createExchangeBook, pathOnly, requestPath, type CallState, type ExchangeCounters } from './exchange.js';
import { createFastPath, type FastPath, type FastPathHost } from './fast-path.js';
import { clientErrorAnswer, errorCode, errorMessage, gatewayReply, handleOnNodePath, JSON_HEADERS, markGone, type Live, type NodePathEnv } from './node-path.js';
import { compileRoutes, type ProxyRoute } from './routes.js';
import { readRequestHeaders } from './wire-headers.js';
import { hostAllowed, hostAllowlist, refusedHostMessage, type HostAllowlist } from '../../net/host-allowlist.js';
import { listen } from '../../net/listen.js';

/**
 * Records per batch of the recorder the proxy owns, well below the recorder's default: encoding a
 * batch for the store runs on the proxy's event loop, and every request in flight waits it out,
 * so a large batch shows up whole in the latency the proxy adds. The SQLite writer thread still
 * commits the small batches that queue up together, so the store's cost per record barely moves
 * (figures: perf/RESULTS.md, "HTTP fault proxy").
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
  /** Sees every record; what it throws (or a custom `recorder` throws or rejects with) goes to `recording.onError`, else a process warning. */
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

export interface HttpFaultProxyStats extends ExchangeCounters {
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

/**
 * Upstream sockets kept open between requests. Enough for every client connection a busy agent
 * fleet holds: a socket closed for want of room is a new TCP handshake on a later request.
 */
const MAX_FREE_UPSTREAM_SOCKETS = 1024;

function baseUrl(address: AddressInfo): string {
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
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
  const { plan } = options;
  const clock = options.clock ?? systemClock;
  const host = options.host ?? '127.0.0.1';
  const routes = compileRoutes(options.routes ?? []);
  const maxOutputChars = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const maxArgsBytes = options.maxArgsBytes ?? DEFAULT_MAX_ARGS_BYTES;
  // Enough of a streamed body to fill raw_output even after multi-byte characters and redaction.
  const captureBytes = Math.max(8192, maxOutputChars * 4);
  const redactor = options.redact === false ? undefined : createRedactor(options.redact ?? {});
  const recording = openRecording({ store: options.store, recorder: options.recorder, recording: { batchSize: PROXY_RECORDER_BATCH_SIZE, ...options.recording } });
  const retention = retentionFor(options.retention, options.store, {
    onError: options.recording?.onError ?? ((error) => process.emitWarning(`faultline proxy: retention: ${error instanceof Error ? error.message : String(error)}`)),
    now: () => clock.now(),
  });
  const book = createExchangeBook({
    plan,
    clock,
    targetHost: target.host,
    maxArgsBytes,
    maxOutputChars,
    record: {
      redactor,
      maxOutputChars,
      ...(options.context === undefined ? {} : { context: options.context }),
    },
    sink: recording.sink,
    onRecord: options.onRecord,
    onError: (error, where) => (options.recording?.onError ?? warnListenerError(where))(error),
  });
  const { counters } = book;

  const secure = target.protocol === 'https:';
  const agentOptions = { keepAlive: true, maxFreeSockets: MAX_FREE_UPSTREAM_SOCKETS, scheduling: 'lifo' as const };
  const np: NodePathEnv = {
    plan,
    clock,
    book,
    routes,
    target,
    targetHost: target.hostname.replace(/^\[|\]$/g, ''),
    targetPort: target.port === '' ? undefined : Number(target.port),
    basePath: target.pathname.replace(/\/+$/, ''),
    send: secure ? httpsRequest : httpRequest,
    agent: secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions),
    maxArgsBytes,
    maxRewriteBytes: options.maxRewriteBytes ?? DEFAULT_MAX_REWRITE_BYTES,
    holdCapMs: options.holdCapMs ?? DEFAULT_HOLD_CAP_MS,
    captureBytes,
    inFlight: new Set<Live>(),
    closing: false,
  };
  const allowedHosts = hostAllowlist(host, options.allowedHosts);
  const adminAllowedHosts = hostAllowlist(options.adminHost ?? '127.0.0.1', options.allowedHosts);

  const admin: AdminHandler = createAdminApi({
    plan,
    token: options.adminToken,
    proxyState: () => ({ ...counters, target: target.href }),
    ...(options.adminHost === undefined ? {} : { adminHost: options.adminHost }),
  });

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
    void handleOnNodePath(np, req, res, path, headers);
  }

  const serveAdmin = options.adminPort === undefined;
  const server = createServer((req, res) => onRequest(req, res, serveAdmin, allowedHosts));
  server.on('clientError', (error: Error & { code?: string }, socket: Socket) => answerClientError(np, error, socket));
  const fast = secure || options.fastPath === false ? undefined : putFastPathInFront(server, np, { serveAdmin, allowedHosts, maxArgsBytes, captureBytes });
  const release = async () => {
    fast?.closeAll();
    np.agent.destroy();
    await retention?.stop();
    await recording.close();
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
    stats: () => ({ ...counters, recording: recording.recorder?.recording() ?? null }),
    close() {
      closing ??= (async () => {
        np.closing = true;
        for (const live of np.inFlight) markGone(live);
        fast?.closeAll();
        await Promise.all([stop(server), adminServer === undefined ? undefined : stop(adminServer)]);
        await book.allClosed();
        await release();
        await options.recorder?.flush?.();
      })();
      return closing;
    },
  };
}

/** node:http's parser refused a request: answered as node:http would, the fast path answering the same. */
function answerClientError(np: NodePathEnv, error: Error & { code?: string }, socket: Socket): void {
  // Bytes after a request that asked to close the connection: node:http reads no more of them,
  // and the answer to that request still goes out (node's own handler would send a 400 instead).
  if (error.code === 'HPE_CLOSED_CONNECTION') return;
  let live: Live | undefined;
  for (const l of np.inFlight) {
    if (l.req.socket === socket) {
      live = l;
      l.parseError = error.code?.startsWith('HPE_') === true ? error.code : undefined;
      break;
    }
  }
  // As node:http's server answers when it has no clientError listener: the fast path answers the same.
  if (socket.writable && live?.res.headersSent !== true) socket.write(clientErrorAnswer(error.code));
  socket.destroy();
}

/**
 * Puts the fast path in front of node:http's server, which has one 'connection' listener, its
 * own: the fast path takes each connection and hands node:http those it does not serve.
 * Undefined when the server's listeners are not as expected.
 */
function putFastPathInFront(
  server: Server,
  np: NodePathEnv,
  o: { serveAdmin: boolean; allowedHosts: HostAllowlist; maxArgsBytes: number; captureBytes: number },
): FastPath | undefined {
  const nodeListeners = server.listeners('connection');
  if (nodeListeners.length !== 1) return undefined;
  const { book, plan, clock, target } = np;
  const nodeConnection = nodeListeners[0] as (socket: Socket) => void;
  const fastHost: FastPathHost<CallState> = {
    open(head) {
      const path = requestPath(head.target);
      if (o.serveAdmin && isAdminPath(pathOnly(path))) return undefined;
      const headers = readRequestHeaders(head.raw);
      if (!hostAllowed(headers.host, o.allowedHosts)) return undefined;
      if (headers.inject !== undefined && headers.inject.trim() !== '') return undefined;
      const match = np.routes.resolve(head.method, pathOnly(path));
      if (book.planLooksAt(match.toolName)) return undefined;
      const call = book.open(head.method, path, headers, match);
      book.counters.fastPath++;
      // No rule names this tool, so the plan decides nothing for it; it still counts the call.
      plan.decide({ toolName: match.toolName, args: undefined, now: clock.now(), transport: 'http' });
      return call;
    },
    upstreamHead(call, head, remoteAddress) {
      const h = call.headers;
      const framing = head.framing === 'chunked' ? ['transfer-encoding', 'chunked'] : h.contentLength === undefined ? [] : ['content-length', h.contentLength];
      const list = book.forwardedHeaders(h, remoteAddress, framing);
      let text = `${head.method} ${np.basePath}${call.exchange.path} HTTP/1.1\r\n`;
      for (let i = 0; i < list.length; i += 2) text += `${list[i]!}: ${list[i + 1]!}\r\n`;
      return `${text}\r\n`;
    },
    gatewayError(_call, error) {
      const code = errorCode(error);
      return { status: 502, ...gatewayReply(code, `upstream ${target.host}: ${errorMessage(error)}`), code };
    },
    finish: (call, outcome) => book.close(call, outcome, np.closing),
    handOff: (socket) => nodeConnection.call(server, socket),
  };
  const fast = createFastPath(fastHost, {
    upstreamHost: np.targetHost,
    upstreamPort: np.targetPort ?? 80,
    maxFreeUpstreamSockets: MAX_FREE_UPSTREAM_SOCKETS,
    maxArgsBytes: o.maxArgsBytes,
    captureBytes: o.captureBytes,
    keepAliveTimeoutMs: server.keepAliveTimeout,
    headersTimeoutMs: server.headersTimeout,
  });
  server.removeListener('connection', nodeConnection);
  server.on('connection', (socket: Socket) => fast.accept(socket));
  return fast;
}
