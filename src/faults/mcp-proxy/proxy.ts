/**
 * The MCP fault proxy: an SDK Client facing the real server and one SDK Server per downstream
 * connection, so that any MCP client can be pointed at any MCP server through a fault plan.
 *
 * Downstream clients see the upstream as it is: the same serverInfo (name and version unchanged,
 * so client configs and FailBench agents cannot tell the proxy is there), the same instructions,
 * and the same capabilities for tools, resources, prompts, logging and completions. The
 * experimental `tasks` capability and `experimental` entries are not mirrored. Requests the
 * server sends its client (sampling, elicitation, roots) go to one of the proxy's clients and
 * the answer comes back (client-requests.ts).
 *
 * tools/list, resources (list, templates, read, subscribe), prompts (list, get), completions and
 * logging levels pass through untouched; progress notifications and cancellations are relayed in
 * both directions, and list_changed / resources/updated / log notifications go to every
 * connected client (updates only to the clients subscribed to that resource). Every tools/call
 * goes through the fault plan and is recorded (tool-call.ts). The one upstream connection has one
 * logging level for every client: the last one a client set, which a restarted server or a new
 * session is given again before anything else.
 *
 * A Streamable HTTP server that answers a request with "unknown session" (it restarted) gets a new
 * session, as the spec asks of a client, and the request once more (it did not run there); the
 * clients keep theirs and hear of a changed tool list.
 *
 * When the upstream goes away on its own (the server exits or is killed), the proxy stays up:
 * calls that were upstream and every later tools/call get a JSON-RPC error and are recorded as
 * failures (upstream-loss.ts), tools/list answers from the last list, and other requests get the
 * same connection-closed error. It logs one line; its clients decide when the session ends.
 * With `restart` (stdio servers only), it starts the server again after a capped exponential
 * backoff, for a bounded number of attempts: once the new server has completed the handshake,
 * calls go to it, its tools and annotations are listed again, resource subscriptions are renewed,
 * and clients get notifications/tools/list_changed if the list differs from the last one.
 *
 * A SQLite file store is created only after the upstream handshake succeeded, so a server that
 * cannot be started leaves no empty database behind. Any other store (PostgreSQL, memory) is
 * opened first, so that a bad store spec or an unreachable database is reported without starting
 * the server.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CompleteRequestSchema,
  CompleteResultSchema,
  EmptyResultSchema,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListPromptsResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  ToolListChangedNotificationSchema,
  UnsubscribeRequestSchema,
  type CallToolRequest,
  type Implementation,
  type LoggingLevel,
  type ServerCapabilities,
  type ServerNotification,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../../errors.js';
import { createRecorder, type Recorder, type RecorderOptions, type RecorderStats } from '../../record/recorder.js';
import { isoTime } from '../../record/iso-time.js';
import { createRedactor, type RedactOptions } from '../../record/redact.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from '../../record/truncate.js';
import type { ToolExecutionRecord } from '../../record/types.js';
import { uuidv7 } from '../../record/uuid-v7.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import { openStore, sqlitePathOf } from '../../store/open-store.js';
import type { Store } from '../../store/types.js';
import type { FaultPlan } from '../plan.js';
import { ClientRequestRelay, RELAYED_CLIENT_CAPABILITIES, type RelayPeer } from './client-requests.js';
import { relayedError } from './rpc-error.js';
import { ToolCatalog } from './tool-catalog.js';
import { proxyToolCall, type CallSession, type HandlerExtra, type RecordSink, type ToolCallDeps } from './tool-call.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, describeUpstream, openUpstream, sessionGone, type McpUpstream, type UpstreamClientOptions, type UpstreamConnection } from './upstream.js';
import { describeLoss, isConnectionClosed, lostBeforeCall, lostDuringCall, lostRequestError, UpstreamLostError, type UpstreamLoss } from './upstream-loss.js';

export interface McpProxyOptions {
  upstream: McpUpstream;
  /** Decides the fault for every tools/call; `plan.update()` changes it live. */
  plan: FaultPlan;
  /**
   * Where records go: a store spec (SQLite path, `postgres://` URL, `:memory:`) or a Store.
   * Default: SQLite at `.faultline/faultline.db` under `cwd`. A spec is opened and closed by the
   * proxy (a SQLite file only once the upstream handshake succeeded, so a server that cannot
   * start leaves no file); a Store object stays the caller's.
   */
  store?: string | Store;
  /** Base for a relative SQLite path. Default `process.cwd()`. */
  cwd?: string;
  /** Records go here instead of a store (the caller flushes and closes it). */
  recorder?: RecordSink;
  /** Options for the recorder the proxy creates in front of the store. */
  recording?: Omit<RecorderOptions, 'store' | 'onError'>;
  /** Delays and durations. Default: the system clock. */
  clock?: Clock;
  /** Default: the built-in rules. `false` stores arguments and outputs as they are. */
  redact?: RedactOptions | false;
  /** Raw output kept per record. Default 2000 characters. */
  maxOutputChars?: number;
  /** Added to every record's context_snapshot (agent, model, deployment, ...). */
  context?: Record<string, unknown>;
  /** How long an upstream request may go without an answer or progress. Default 300 000 ms. The MCP handshake gets this or 60 s, whichever is shorter. */
  upstreamTimeoutMs?: number;
  /** Called with every record; errors it throws are logged and ignored. */
  onRecord?: (record: ToolExecutionRecord) => void;
  /** Diagnostics, one line each (the CLI sends them to stderr). Default: dropped. */
  log?: (line: string) => void;
  /** Start a stdio server again when it exits on its own. Default: it stays down. */
  restart?: McpRestartOptions;
  /**
   * Picks the plan, clock and session (trace, steps, context) of a tools/call, so that one proxy
   * serves many isolated runs at once (FailBench's mcp transport routes by the call's `_meta`).
   * Undefined for a call: the proxy's own plan and clock and the connection's session.
   */
  route?: (request: CallToolRequest) => McpCallRoute | undefined;
}

/** Where {@link McpProxyOptions.route} sends one tools/call. */
export interface McpCallRoute {
  plan: FaultPlan;
  clock: Clock;
  session: CallSession;
}

/**
 * Restarting a stdio server that exited. Attempt n (counting from 0 since the server last
 * completed a handshake) waits `initialDelayMs * 2^n`, at most `maxDelayMs`; a server that starts
 * but exits again starts the count over, so `maxRestarts` is what bounds a crash loop.
 */
export interface McpRestartOptions {
  /** Start attempts over the proxy's life; once they are used up the server stays down. Default 5. */
  maxRestarts?: number;
  /** Default 500 ms. */
  initialDelayMs?: number;
  /** Default 30 000 ms. */
  maxDelayMs?: number;
}

export const DEFAULT_MAX_RESTARTS = 5;
const DEFAULT_RESTART_INITIAL_DELAY_MS = 500;
const DEFAULT_RESTART_MAX_DELAY_MS = 30_000;

export interface McpProxyStats {
  /** tools/call requests handled so far, answered or not. */
  calls: number;
  /** Downstream connections open now. */
  sessions: number;
  /** The recorder's counters, when the proxy created the recorder. */
  recorder: RecorderStats | null;
  /** Null while the upstream is there; how and when it went away once it has (until it is restarted). */
  upstreamLost: { at: string; exitCode: number | null; signal: string | null } | null;
  /** Times the server was started again (successful restarts). */
  restarts: number;
  /** The stdio server's process id while it runs; null otherwise. */
  upstreamPid: number | null;
}

export interface McpProxy {
  /** What downstream clients are told the server is: the upstream's own serverInfo. */
  readonly serverInfo: Implementation;
  readonly capabilities: ServerCapabilities;
  readonly instructions: string | undefined;
  readonly plan: FaultPlan;
  /** A new downstream Server (one per client connection); connect it to a transport. */
  createServer(): Server;
  /** Serves one downstream client on `transport` (stdio, in-memory, ...). */
  connect(transport: Transport): Promise<Server>;
  /**
   * Resolves when the upstream connection ends for good: the server exited and will not be
   * restarted (the proxy keeps serving, and tools/call fails from then on), or the proxy closed.
   */
  readonly upstreamClosed: Promise<void>;
  stats(): McpProxyStats;
  /** Writes the records made so far to the store (a no-op with a caller's recorder). */
  flush(): Promise<void>;
  /**
   * Closes the downstream connections (calls still waiting are recorded as abandoned), then the
   * upstream (a child server is stopped), then flushes the records. Idempotent.
   */
  close(): Promise<void>;
}

interface Session extends CallSession {
  server: Server;
  peer: RelayPeer;
  subscriptions: Set<string>;
}

const DEFAULT_UPSTREAM_TIMEOUT_MS = 300_000;

/** Any request's params, as far as progress relaying reads them. */
type ParamsWithMeta = { _meta?: { progressToken?: string | number | undefined } | undefined } | undefined;

/** Only what the proxy relays; see the module comment. */
function mirroredCapabilities(upstream: ServerCapabilities | undefined): ServerCapabilities {
  const caps: ServerCapabilities = {};
  if (upstream?.tools !== undefined) caps.tools = upstream.tools;
  if (upstream?.resources !== undefined) caps.resources = upstream.resources;
  if (upstream?.prompts !== undefined) caps.prompts = upstream.prompts;
  if (upstream?.logging !== undefined) caps.logging = upstream.logging;
  if (upstream?.completions !== undefined) caps.completions = upstream.completions;
  return caps;
}

function restartPolicyOf(options: McpRestartOptions): Required<McpRestartOptions> {
  const policy = {
    maxRestarts: options.maxRestarts ?? DEFAULT_MAX_RESTARTS,
    initialDelayMs: options.initialDelayMs ?? DEFAULT_RESTART_INITIAL_DELAY_MS,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_RESTART_MAX_DELAY_MS,
  };
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isSafeInteger(value) || value < 0) throw new ConfigError(`restart.${name} must be a whole number of at least 0, got ${value}`, `restart.${name}`);
  }
  return policy;
}

async function listAllTools(client: Client, timeout: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.request({ method: 'tools/list', ...(cursor === undefined ? {} : { params: { cursor } }) }, ListToolsResultSchema, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/**
 * Connects to the upstream server and returns a proxy ready to serve downstream clients.
 *
 * @throws ConfigError when the store cannot be opened, McpUpstreamError when the upstream cannot be
 * started or reached (nothing is left running in either case).
 * @example
 * const plan = createFaultPlan(await loadFaultPlan('faults.yaml'));
 * const proxy = await startMcpProxy({ upstream: { command: 'npx', args: ['mcp-server-everything'] }, plan });
 * await proxy.connect(new StdioServerTransport());
 */
export async function startMcpProxy(options: McpProxyOptions): Promise<McpProxy> {
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  const plan = options.plan;
  const upstreamTimeoutMs = options.upstreamTimeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  if (options.restart !== undefined && !('command' in options.upstream)) {
    throw new ConfigError('restart applies to a stdio server (a command); a URL or transport upstream cannot be restarted by the proxy', 'restart');
  }
  const restartPolicy = options.restart === undefined ? undefined : restartPolicyOf(options.restart);

  interface Recording {
    sink: RecordSink;
    recorder?: Recorder;
    ownedStore?: Store;
  }
  const openRecording = async (): Promise<Recording> => {
    if (options.recorder !== undefined) return { sink: options.recorder };
    const store = typeof options.store === 'object' ? options.store : await openStore(options.store, options.cwd === undefined ? {} : { cwd: options.cwd });
    const recorder = createRecorder({
      ...options.recording,
      store,
      onError: (error) => log(`recording: ${error instanceof Error ? error.message : String(error)}`),
    });
    return { sink: recorder, recorder, ...(typeof options.store === 'object' ? {} : { ownedStore: store }) };
  };
  const closeRecording = async (r: Recording | undefined) => {
    await r?.recorder?.close();
    await r?.ownedStore?.close();
  };

  // Opening a SQLite store creates its file: that waits for the handshake (see the module comment).
  const createsFile = options.recorder === undefined && typeof options.store !== 'object' && sqlitePathOf(options.store, options.cwd) !== undefined;
  let recording = createsFile ? undefined : await openRecording();
  // Made before the upstream: a server may ask for roots as soon as the handshake is done.
  const clientRequests = new ClientRequestRelay({ upstream: () => client, timeoutMs: upstreamTimeoutMs, log });
  const asClient: UpstreamClientOptions = { capabilities: RELAYED_CLIENT_CAPABILITIES, prepare: (c) => clientRequests.attach(c) };
  let upstream: UpstreamConnection;
  try {
    upstream = await openUpstream(options.upstream, Math.min(upstreamTimeoutMs, DEFAULT_HANDSHAKE_TIMEOUT_MS), asClient);
  } catch (error) {
    await closeRecording(recording);
    throw error;
  }
  /** The connection calls go to now: replaced when a restarted server is up. */
  let client: Client = upstream.client;

  let resolveUpstreamClosed!: () => void;
  const upstreamClosed = new Promise<void>((resolve) => (resolveUpstreamClosed = resolve));
  let closing: Promise<void> | undefined;
  /** Set while the current connection is gone. */
  let loss: UpstreamLoss | undefined;
  /** How each connection that ended ended: a call answered late by an old connection still reads its own loss. */
  const losses = new WeakMap<Client, UpstreamLoss>();
  const catalog = new ToolCatalog(
    () => listAllTools(client, upstreamTimeoutMs),
    (error) => {
      if (loss === undefined) log(`listing upstream tools failed: ${error instanceof Error ? error.message : String(error)}`);
    },
  );
  const restarter = restartPolicy === undefined ? undefined : new AbortController();
  let restarting: Promise<void> | undefined;
  let restarts = 0;
  let restartAttempts = 0;

  function watch(connection: UpstreamConnection): void {
    const watched = connection.client;
    // The SDK calls this before it fails the requests still waiting, so they see `loss` set.
    watched.onclose = () => {
      if (watched !== client) return;
      if (closing === undefined) {
        loss = { exit: connection.exit(), at: clock.now() };
        losses.set(watched, loss);
        catalog.settle();
        const name = `the upstream MCP server (${describeUpstream(options.upstream)}) ${describeLoss(loss)}`;
        if (restartPolicy !== undefined && restartAttempts < restartPolicy.maxRestarts) {
          log(`${name}; restarting it (tools/call fails with -32000 until it is back)`);
          restarting ??= restartUpstream().finally(() => (restarting = undefined));
          return;
        }
        log(`${name}; tools/call now fails with -32000 and tools/list answers from the last list`);
      }
      resolveUpstreamClosed();
    };
    watched.onerror = (error) => {
      // A write that raced the server's exit: the exit itself is reported, once, when the connection closes.
      if ((error as { code?: unknown }).code === 'EPIPE') return;
      // Once the proxy is closing, an answer to a request the server sent meanwhile (roots at start-up, say) has nowhere to go.
      if (closing !== undefined) return;
      // A session the server forgot: the request that met it starts a new one and says so.
      if (sessionGone(watched, error)) return;
      log(`upstream: ${error.message}`);
    };
  }
  watch(upstream);

  /**
   * Starts the server again until one completes the handshake, attempts run out, or the proxy
   * closes; then points calls at it, lists its tools again, and tells clients if they changed.
   */
  async function restartUpstream(): Promise<void> {
    const policy = restartPolicy!;
    let failedInARow = 0;
    while (loss !== undefined && closing === undefined) {
      if (restartAttempts >= policy.maxRestarts) {
        // After a server that exited again, its exit line said so already.
        if (failedInARow > 0) log(`giving up after ${restartAttempts} restart attempt(s); tools/call now fails with -32000 and tools/list answers from the last list`);
        resolveUpstreamClosed();
        return;
      }
      const delayMs = Math.min(policy.initialDelayMs * 2 ** failedInARow, policy.maxDelayMs);
      try {
        await clock.sleep(delayMs, restarter!.signal);
      } catch {
        return; // the proxy is closing
      }
      restartAttempts++;
      let next: UpstreamConnection;
      try {
        next = await openUpstream(options.upstream, Math.min(upstreamTimeoutMs, DEFAULT_HANDSHAKE_TIMEOUT_MS), asClient);
      } catch (error) {
        failedInARow++;
        log(`restart ${restartAttempts} of ${policy.maxRestarts} failed: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      if (closing !== undefined) {
        next.discardStderr();
        await next.client.close().catch(() => undefined);
        return;
      }
      failedInARow = 0;
      const before = JSON.stringify(catalog.snapshot());
      switchTo(next);
      restarts++;
      log(`restarted the upstream MCP server (attempt ${restartAttempts} of ${policy.maxRestarts})`);
      await catchUp(next, before);
    }
  }

  /** Points calls at a new connection (a restarted server, a new session). */
  function switchTo(next: UpstreamConnection): void {
    client = next.client;
    upstream = next;
    watch(next);
    attachNotifications(next.client);
    loss = undefined;
    next.releaseStderr();
  }

  /** Brings a new connection up to what the clients hold: their logging level, the tool list (telling them if it changed) and their subscriptions. */
  async function catchUp(next: UpstreamConnection, toolsBefore: string): Promise<void> {
    // First, so that what the server logs from now on (server-everything logs each subscription,
    // renewed below) and a request sent again in a new session find the level set.
    const level = logLevel;
    if (level !== undefined) {
      await next.client
        .setLoggingLevel(level, { timeout: upstreamTimeoutMs })
        .catch((error: unknown) => log(`setting the logging level ${level} again failed: ${error instanceof Error ? error.message : String(error)}`));
    }
    if (capabilities.tools !== undefined) {
      catalog.resume();
      await catalog.refresh();
      if (loss === undefined && JSON.stringify(catalog.snapshot()) !== toolsBefore) broadcast({ method: 'notifications/tools/list_changed' });
    }
    // Subscriptions lived in the old server or session; the clients still hold theirs.
    for (const uri of subscribers.keys()) {
      next.client
        .request({ method: 'resources/subscribe', params: { uri } }, EmptyResultSchema, { timeout: upstreamTimeoutMs })
        .catch((error: unknown) => log(`renewing the subscription to ${uri} failed: ${error instanceof Error ? error.message : String(error)}`));
    }
  }

  let renewing: Promise<boolean> | undefined;
  /**
   * Starts a new session with a Streamable HTTP server that forgot `stale`'s (requests that met
   * the same 404 share one). False when the server cannot be reached for one.
   */
  function renewSession(stale: Client): Promise<boolean> {
    if (client !== stale) return Promise.resolve(true);
    renewing ??= (async () => {
      let next: UpstreamConnection;
      try {
        next = await openUpstream(options.upstream, Math.min(upstreamTimeoutMs, DEFAULT_HANDSHAKE_TIMEOUT_MS), asClient);
      } catch (error) {
        log(`the upstream MCP server no longer knows the proxy's session, and a new one failed: ${error instanceof Error ? error.message : String(error)}`);
        return false;
      }
      if (closing !== undefined) {
        await next.client.close().catch(() => undefined);
        return false;
      }
      const before = JSON.stringify(catalog.snapshot());
      switchTo(next);
      log(`the upstream MCP server (${describeUpstream(options.upstream)}) no longer knows the proxy's session (it restarted); started a new session`);
      // Closing the old connection after the switch: its end is not the upstream's.
      await Promise.all([catchUp(next, before), stale.close().catch(() => undefined)]);
      return true;
    })().finally(() => (renewing = undefined));
    return renewing;
  }

  if (recording === undefined) {
    try {
      recording = await openRecording();
    } catch (error) {
      // Set before the child stops, so that its exit is not reported as the server going away.
      closing = client.close().catch(() => undefined);
      await closing;
      upstream.discardStderr();
      throw error;
    }
  }
  const { sink, recorder, ownedStore } = recording;

  const upstreamInfo = client.getServerVersion();
  const serverInfo: Implementation = upstreamInfo ?? { name: describeUpstream(options.upstream), version: '0.0.0' };
  const capabilities = mirroredCapabilities(client.getServerCapabilities());
  const instructions = client.getInstructions();
  if (capabilities.tools !== undefined) await catalog.refresh();

  const sessions = new Set<Session>();
  const subscribers = new Map<string, number>();
  /** The last level a client set with logging/setLevel, which the upstream has (the SDK's default, none, until one does). */
  let logLevel: LoggingLevel | undefined;
  const inflight = new Set<Promise<unknown>>();
  let calls = 0;

  const redactor = options.redact === false ? undefined : createRedactor(options.redact ?? {});
  const onRecord = options.onRecord;
  const deps: ToolCallDeps = {
    plan,
    clock,
    catalog,
    forward: async (params, extra) => {
      if (loss !== undefined) throw new UpstreamLostError(lostBeforeCall(loss));
      const options = requestOptions(params, extra);
      return sendUpstream((c) => c.request({ method: 'tools/call', params }, CallToolResultSchema, options), (lost) => new UpstreamLostError(lostDuringCall(lost)));
    },
    upstreamGone: () => loss !== undefined,
    shaping: { redactor, maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS },
    emit: (record) => {
      if (onRecord !== undefined) {
        try {
          onRecord(record);
        } catch (error) {
          log(`onRecord threw: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      // Telemetry must not break the call: a sink that throws or rejects is logged, never relayed.
      try {
        return sink.enqueue(record)?.catch((error: unknown) => log(`recording failed: ${error instanceof Error ? error.message : String(error)}`));
      } catch (error) {
        log(`recording failed: ${error instanceof Error ? error.message : String(error)}`);
        return undefined;
      }
    },
    log,
  };

  function requestOptions(params: ParamsWithMeta, extra: HandlerExtra): RequestOptions {
    const token = params?._meta?.progressToken;
    return {
      signal: extra.signal,
      timeout: upstreamTimeoutMs,
      resetTimeoutOnProgress: true,
      ...(token === undefined
        ? {}
        : {
            onprogress: (progress) => {
              extra
                .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
                .catch((error: unknown) => log(`relaying progress failed: ${error instanceof Error ? error.message : String(error)}`));
            },
          }),
    };
  }

  /**
   * Sends on the current connection. A Streamable HTTP server that no longer knows the session
   * (it restarted) did not run the request: the proxy starts a new session, as the spec asks a
   * client to, and sends the request once more. A connection that ended under the request fails
   * it with `lostError`.
   */
  async function sendUpstream<T>(send: (c: Client) => Promise<T>, lostError: (loss: UpstreamLoss) => Error): Promise<T> {
    let used = client;
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(used);
      } catch (error) {
        const lost = losses.get(used);
        if (lost !== undefined && isConnectionClosed(error)) throw lostError(lost);
        if (attempt > 0 || !sessionGone(used, error)) throw error;
        if (!(await renewSession(used))) throw error;
        used = client;
      }
    }
  }

  /** Sends a downstream request upstream as it is and hands back the answer, or the upstream's error. */
  async function relay<T>(session: Session, send: (c: Client, options: RequestOptions) => Promise<T>, params: ParamsWithMeta, extra: HandlerExtra): Promise<T> {
    if (loss !== undefined) throw lostRequestError(loss);
    const options = requestOptions(params, extra);
    try {
      return await clientRequests.track(session.peer, extra.requestId, sendUpstream((c) => send(c, options), lostRequestError));
    } catch (error) {
      throw relayedError(error);
    }
  }

  function broadcast(notification: ServerNotification, to: (session: Session) => boolean = () => true): void {
    for (const session of sessions) {
      if (!to(session)) continue;
      session.server.notification(notification).catch((error: unknown) => log(`notifying a client failed: ${error instanceof Error ? error.message : String(error)}`));
    }
  }

  /** Relays the server's notifications to the clients (the capabilities are the first server's, which the clients were shown). */
  function attachNotifications(c: Client): void {
    if (capabilities.tools !== undefined) {
      c.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
        catalog.invalidate();
        broadcast(notification);
      });
    }
    if (capabilities.resources !== undefined) {
      c.setNotificationHandler(ResourceListChangedNotificationSchema, (notification) => broadcast(notification));
      c.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => broadcast(notification, (s) => s.subscriptions.has(notification.params.uri)));
    }
    if (capabilities.prompts !== undefined) {
      c.setNotificationHandler(PromptListChangedNotificationSchema, (notification) => broadcast(notification));
    }
    if (capabilities.logging !== undefined) {
      c.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => broadcast(notification));
    }
  }
  attachNotifications(client);

  function createServer(): Server {
    const server = new Server(serverInfo, { capabilities, ...(instructions === undefined ? {} : { instructions }) });
    let step = 0;
    const session: Session = {
      server,
      peer: clientRequests.add(server),
      subscriptions: new Set(),
      traceId: uuidv7(),
      nextStep: () => step++,
      context: () => {
        const client = server.getClientVersion();
        const sessionId = server.transport?.sessionId;
        return {
          ...options.context,
          transport: 'mcp',
          mcp_server: serverInfo.name,
          ...(client === undefined ? {} : { agent: client.name, agent_version: client.version }),
          ...(sessionId === undefined ? {} : { session_id: sessionId }),
        };
      },
    };

    if (capabilities.tools !== undefined) {
      server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
        // A later page would not line up with pages the upstream cut, so only a first page is served from memory.
        if (loss !== undefined && request.params?.cursor === undefined) return { tools: catalog.snapshot() };
        const result = await relay(session, (c, o) => c.request(request, ListToolsResultSchema, o), request.params, extra);
        // A complete list seen in passing saves the catalog a request of its own.
        if (request.params?.cursor === undefined && result.nextCursor === undefined) catalog.replace(result.tools);
        return result;
      });
      server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
        calls++;
        const routed = options.route?.(request);
        const call = clientRequests.track(
          session.peer,
          extra.requestId,
          routed === undefined ? proxyToolCall(deps, session, request, extra) : proxyToolCall({ ...deps, plan: routed.plan, clock: routed.clock }, routed.session, request, extra),
        );
        inflight.add(call);
        const done = () => inflight.delete(call);
        call.then(done, done);
        return call;
      });
    }
    if (capabilities.resources !== undefined) {
      server.setRequestHandler(ListResourcesRequestSchema, (request, extra) => relay(session, (c, o) => c.request(request, ListResourcesResultSchema, o), request.params, extra));
      server.setRequestHandler(ListResourceTemplatesRequestSchema, (request, extra) =>
        relay(session, (c, o) => c.request(request, ListResourceTemplatesResultSchema, o), request.params, extra),
      );
      server.setRequestHandler(ReadResourceRequestSchema, (request, extra) => relay(session, (c, o) => c.request(request, ReadResourceResultSchema, o), request.params, extra));
      if (capabilities.resources.subscribe === true) {
        server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
          const uri = request.params.uri;
          if (!session.subscriptions.has(uri)) {
            const count = subscribers.get(uri) ?? 0;
            // One upstream subscription per resource, however many clients watch it.
            if (count === 0) await relay(session, (c, o) => c.request(request, EmptyResultSchema, o), request.params, extra);
            subscribers.set(uri, count + 1);
            session.subscriptions.add(uri);
          }
          return {};
        });
        server.setRequestHandler(UnsubscribeRequestSchema, async (request, extra) => {
          const uri = request.params.uri;
          if (session.subscriptions.delete(uri)) await releaseSubscription(uri, (r) => relay(session, (c, o) => c.request(r, EmptyResultSchema, o), request.params, extra));
          return {};
        });
      }
    }
    if (capabilities.prompts !== undefined) {
      server.setRequestHandler(ListPromptsRequestSchema, (request, extra) => relay(session, (c, o) => c.request(request, ListPromptsResultSchema, o), request.params, extra));
      server.setRequestHandler(GetPromptRequestSchema, (request, extra) => relay(session, (c, o) => c.request(request, GetPromptResultSchema, o), request.params, extra));
    }
    if (capabilities.completions !== undefined) {
      server.setRequestHandler(CompleteRequestSchema, (request, extra) => relay(session, (c, o) => c.request(request, CompleteResultSchema, o), request.params, extra));
    }
    if (capabilities.logging !== undefined) {
      // Replaces the SDK's local handler: the level is the upstream's to apply (shared by every client).
      server.setRequestHandler(SetLevelRequestSchema, async (request, extra) => {
        const result = await relay(session, (c, o) => c.request(request, EmptyResultSchema, o), request.params, extra);
        logLevel = request.params.level;
        return result;
      });
    }

    // A client's roots are what the server's roots/list answers (client-requests.ts).
    server.oninitialized = () => {
      if (server.getClientCapabilities()?.roots !== undefined) clientRequests.rootsChanged();
    };
    server.setNotificationHandler(RootsListChangedNotificationSchema, () => clientRequests.rootsChanged());
    server.onclose = () => {
      sessions.delete(session);
      clientRequests.remove(session.peer);
      for (const uri of session.subscriptions) {
        void releaseSubscription(uri, (r) => client.request(r, EmptyResultSchema, { timeout: upstreamTimeoutMs })).catch(() => undefined);
      }
      session.subscriptions.clear();
    };
    server.onerror = (error) => log(`downstream: ${error.message}`);
    sessions.add(session);
    return server;
  }

  async function releaseSubscription(uri: string, send: (request: { method: 'resources/unsubscribe'; params: { uri: string } }) => Promise<unknown>): Promise<void> {
    const count = (subscribers.get(uri) ?? 1) - 1;
    if (count > 0) {
      subscribers.set(uri, count);
      return;
    }
    subscribers.delete(uri);
    await send({ method: 'resources/unsubscribe', params: { uri } });
  }

  upstream.releaseStderr();
  return {
    serverInfo,
    capabilities,
    instructions,
    plan,
    upstreamClosed,
    createServer,
    async connect(transport) {
      const server = createServer();
      await server.connect(transport);
      return server;
    },
    stats: () => ({
      calls,
      sessions: sessions.size,
      recorder: recorder?.stats() ?? null,
      upstreamLost: loss === undefined ? null : { at: isoTime(loss.at), exitCode: loss.exit?.code ?? null, signal: loss.exit?.signal ?? null },
      restarts,
      upstreamPid: loss === undefined ? (upstream.pid ?? null) : null,
    }),
    flush: async () => {
      await recorder?.flush();
    },
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...sessions].map((s) => s.server.close()));
        // Abandoned calls record themselves as their handlers unwind; wait for those records.
        await Promise.allSettled([...inflight]);
        restarter?.abort();
        await restarting;
        await renewing;
        await client.close().catch((error: unknown) => log(`closing the upstream failed: ${error instanceof Error ? error.message : String(error)}`));
        await recorder?.close();
        await ownedStore?.close();
        resolveUpstreamClosed();
      })();
      return closing;
    },
  };
}
