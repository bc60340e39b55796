/**
 * The MCP fault proxy (DESIGN.md "Fault plans and proxies"): an SDK Server per downstream client
 * (downstream-server.ts), each with its own SDK Client facing the real server, opened at the
 * client's `initialize` with exactly the capabilities it declared (initialize-gate.ts), so a
 * server offers each client through the proxy what it would offer it straight. Every tools/call
 * goes through the fault plan and is recorded (tool-call.ts); everything else passes through.
 *
 * At start the proxy connects once, declaring no capabilities, to check that the server starts and
 * to learn what it is; that connection is handed to the first client that also declares none, and
 * closed when the first client gets its own. A server that goes away leaves the proxy up
 * (upstream-loss.ts; with `restart`, upstream-link.ts starts a stdio server again).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type CallToolRequest, type ClientCapabilities, type Implementation, type ServerCapabilities, type ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { ConfigError } from '../../core/errors.js';
import type { RecorderOptions, RecorderStats, RecordingStats } from '../../record/recorder.js';
import { isoTime } from '../../record/iso-time.js';
import { createRedactor, type RedactOptions } from '../../record/redact.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from '../../record/truncate.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { uuidv7 } from '../../record/uuid-v7.js';
import { systemClock, type Clock } from '../../core/clock.js';
import type { Store } from '../../core/store-types.js';
import type { FaultPlan } from '../plan.js';
import { ClientRequestRelay } from './client-requests.js';
import { InitializeGate, type DeclaredClient } from './initialize-gate.js';
import { JsonRpcError } from './rpc-error.js';
import { recordEmitter } from '../../record/record-emitter.js';
import { checkRetention, openRecordingAndUpstream } from './proxy-recording.js';
import { mirroredCapabilities, serverFor, type DownstreamScope, type Session } from './downstream-server.js';
import type { CallSession, RecordSink } from './tool-call.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, describeUpstream, McpUpstreamError, reconnectable, type McpUpstream, type UpstreamConnection } from './upstream.js';
import { UpstreamLink, type LinkDownstream } from './upstream-link.js';
import type { RestartPolicy } from './upstream-state.js';
import type { UpstreamLoss } from './upstream-loss.js';

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
  /**
   * Retention of the store: records older than this are deleted with their share of the rollups,
   * once the store is open and then every hour (see `Store.prune`). A duration as the CLI writes
   * it (`'30d'`) or milliseconds. Default: kept for ever.
   */
  retention?: string | number;
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
 * Restarting a stdio server that exited. Attempt n of an outage waits `initialDelayMs * 2^n`, at
 * most `maxDelayMs`. The budget is per outage: once a restarted server has completed the
 * handshake and listed its tools, its next exit is a new outage with `maxRestarts` attempts
 * again; a server that exits before it answers uses the attempts up, which bounds a crash loop.
 */
export interface McpRestartOptions {
  /** Start attempts per outage; once an outage has used them up the server stays down. Default 5. */
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
  /** Upstream connections open now (one per initialized client, and the start-up one while it waits for a client). */
  upstreams: number;
  /** The recorder's counters, when the proxy created the recorder. */
  recorder: RecorderStats | null;
  /** Where the records are (stored, spooled, in memory, dropped), when the proxy created the recorder. */
  recording: RecordingStats | null;
  /**
   * Null while the newest client's server is there; how and when it went away once it has (until
   * it is restarted), also after that client left.
   */
  upstreamLost: { at: string; exitCode: number | null; signal: string | null } | null;
  /** Times a server was started again (successful restarts), over every client. */
  restarts: number;
  /** The newest client's stdio server's process id while it runs (the start-up one's before any client); null otherwise. */
  upstreamPid: number | null;
}

export interface McpProxy {
  /** What the server said it is at the start-up handshake. Each client is told what its own connection was told. */
  readonly serverInfo: Implementation;
  readonly capabilities: ServerCapabilities;
  readonly instructions: string | undefined;
  readonly plan: FaultPlan;
  /**
   * Serves one downstream client on `transport` (stdio, Streamable HTTP, in-memory, ...).
   * Resolves once the transport is started; its upstream connection is opened at its `initialize`.
   */
  connect(transport: Transport): Promise<void>;
  /** Resolves when a client's server ends for good (it exited and is not restarted), or the proxy closed. */
  readonly upstreamClosed: Promise<void>;
  stats(): McpProxyStats;
  /** Writes the records made so far to the store (a no-op with a caller's recorder). */
  flush(): Promise<void>;
  /**
   * Closes the downstream connections (calls still waiting are recorded as abandoned), then the
   * upstream ones (child servers are stopped), then flushes the records. Idempotent.
   */
  close(): Promise<void>;
}

const DEFAULT_UPSTREAM_TIMEOUT_MS = 300_000;

function restartPolicyOf(options: McpRestartOptions): RestartPolicy {
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

/** Capabilities compared as declared: the same keys and values, whatever their order. */
function sameCapabilities(a: ClientCapabilities, b: ClientCapabilities): boolean {
  const canonical = (value: unknown): string =>
    JSON.stringify(value, (_key, v: unknown) =>
      v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) : v,
    );
  return canonical(a) === canonical(b);
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Connects to the upstream server once (the start-up check) and returns a proxy ready to serve
 * downstream clients.
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

  checkRetention(options);
  const { recording, startup } = await openRecordingAndUpstream(options, log, clock, Math.min(upstreamTimeoutMs, DEFAULT_HANDSHAKE_TIMEOUT_MS));
  const { sink, recorder } = recording;
  /** The start-up connection, until a client takes it or gets its own. */
  let spare: UpstreamConnection | undefined = startup;

  const serverInfo: Implementation = startup.client.getServerVersion() ?? { name: describeUpstream(options.upstream), version: '0.0.0' };
  const capabilities = mirroredCapabilities(startup.client.getServerCapabilities());
  const instructions = startup.client.getInstructions();

  let closing: Promise<void> | undefined;
  let resolveUpstreamClosed!: () => void;
  const upstreamClosed = new Promise<void>((resolve) => (resolveUpstreamClosed = resolve));
  const sessions = new Set<Session>();
  const links = new Set<UpstreamLink>();
  /** The link of the newest initialized client, which the stats describe. */
  let newest: UpstreamLink | undefined;
  let restartsOfClosedLinks = 0;

  const redactor = options.redact === false ? undefined : createRedactor(options.redact ?? {});
  const shaping = { redactor, maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS };
  const emit = recordEmitter(options.onRecord, sink, (error, where) =>
    log(where === 'onRecord' ? `onRecord threw: ${errorText(error)}` : `recording failed: ${errorText(error)}`),
  );
  const scope: DownstreamScope = {
    plan,
    clock,
    log,
    upstreamTimeoutMs,
    shaping,
    emit,
    serverInfo,
    route: options.route,
    counters: { calls: 0 },
  };

  /** The connection a client's `initialize` gets: the start-up one when it declared none, else its own. */
  async function openLink(session: Session, declared: DeclaredClient): Promise<UpstreamLink> {
    if (closing !== undefined) throw new McpUpstreamError('the proxy is closing', describeUpstream(options.upstream));
    const wanted = declared.capabilities as ClientCapabilities;
    const downstream: LinkDownstream = {
      notify: (notification) => {
        void session.ready
          .then((server) => server.notification(notification as ServerNotification))
          .catch((error: unknown) => log(`notifying a client failed: ${errorText(error)}`));
      },
      request: async (request, extra) => {
        await session.ready;
        if (session.relay === undefined) throw new JsonRpcError(ErrorCode.MethodNotFound, 'Method not found');
        return session.relay.relay(request, extra as never);
      },
      toolsChanged: () => void session.ready.then((server) => server.sendToolListChanged()).catch((error: unknown) => log(`notifying a client failed: ${errorText(error)}`)),
    };
    const linkOptions = { upstream: options.upstream, capabilities: wanted, downstream, timeoutMs: upstreamTimeoutMs, clock, log, restart: restartPolicy };
    const adopt = spare !== undefined && sameCapabilities(wanted, {}) ? spare : undefined;
    if (adopt !== undefined) spare = undefined;
    else if (!reconnectable(options.upstream)) {
      throw new McpUpstreamError(
        'the upstream is one transport, connected at start with no client capabilities: it can serve one client that declares none; pass transport: () => Transport to serve others',
        describeUpstream(options.upstream),
      );
    }
    const link = await UpstreamLink.open(adopt === undefined ? linkOptions : { ...linkOptions, adopt });
    // The start-up connection is not needed once a client has its own.
    if (spare !== undefined) {
      const idle = spare;
      spare = undefined;
      void idle.client.close().catch(() => undefined);
    }
    return link;
  }

  function endSession(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    sessions.delete(session);
    const link = session.link;
    if (link === undefined) return;
    // Its calls unwind first (the client's leaving cancels them), so that they record being abandoned, not a lost server.
    void Promise.allSettled([...session.inflight]).then(async () => {
      await link.close();
      links.delete(link);
      restartsOfClosedLinks += link.restarts;
    });
  }

  async function connect(transport: Transport): Promise<void> {
    let markReady!: (server: Server) => void;
    const ready = new Promise<Server>((resolve) => (markReady = resolve));
    let step = 0;
    const session: Session = {
      link: undefined,
      server: undefined,
      relay: undefined,
      ready,
      markReady,
      inflight: new Set(),
      closed: false,
      close: () => (session.server === undefined ? gate.close() : session.server.close()),
      traceId: uuidv7(),
      nextStep: () => step++,
      context: () => {
        const client = session.server?.getClientVersion();
        const sessionId = gate.sessionId;
        return {
          ...options.context,
          transport: 'mcp',
          mcp_server: serverInfo.name,
          ...(client === undefined ? {} : { agent: client.name, agent_version: client.version }),
          ...(sessionId === undefined ? {} : { session_id: sessionId }),
        };
      },
    };
    const gate: InitializeGate = new InitializeGate(transport, async (declared) => {
      let link: UpstreamLink;
      try {
        link = await openLink(session, declared);
      } catch (error) {
        log(`a client could not be given an upstream connection: ${errorText(error)}`);
        throw error;
      }
      if (session.closed || closing !== undefined) {
        await link.close();
        throw new McpUpstreamError('the client or the proxy closed', describeUpstream(options.upstream));
      }
      links.add(link);
      newest = link;
      void link.ended.then(() => resolveUpstreamClosed());
      const server = serverFor(scope, session, link);
      session.link = link;
      session.server = server;
      session.relay = new ClientRequestRelay(server, declared.capabilities as ClientCapabilities, { timeoutMs: upstreamTimeoutMs });
      await server.connect(gate);
    });
    // Chained by the Server's connect: called however the connection ends, before or after initialize.
    gate.onclose = () => endSession(session);
    sessions.add(session);
    await gate.start();
  }

  startup.releaseStderr();
  return {
    serverInfo,
    capabilities,
    instructions,
    plan,
    upstreamClosed,
    connect,
    stats: () => {
      const loss: UpstreamLoss | undefined = newest?.loss;
      let restarts = restartsOfClosedLinks;
      for (const link of links) restarts += link.restarts;
      const pid = newest === undefined ? spare?.pid : newest.pid;
      return {
        calls: scope.counters.calls,
        sessions: sessions.size,
        upstreams: links.size + (spare === undefined ? 0 : 1),
        recorder: recorder?.stats() ?? null,
        recording: recorder?.recording() ?? null,
        upstreamLost: loss === undefined ? null : { at: isoTime(loss.at), exitCode: loss.exit?.code ?? null, signal: loss.exit?.signal ?? null },
        restarts,
        upstreamPid: pid ?? null,
      };
    },
    flush: async () => {
      await recorder?.flush();
    },
    close() {
      closing ??= (async () => {
        const open = [...sessions];
        await Promise.allSettled(open.map((s) => s.close()));
        // Abandoned calls record themselves as their handlers unwind; wait for those records.
        await Promise.allSettled(open.flatMap((s) => [...s.inflight]));
        await Promise.allSettled([...links].map((link) => link.close()));
        await spare?.client.close().catch((error: unknown) => log(`closing the upstream failed: ${errorText(error)}`));
        await recording.close();
        resolveUpstreamClosed();
      })();
      return closing;
    },
  };
}
