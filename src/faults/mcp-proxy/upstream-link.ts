/**
 * One downstream client's upstream connection, for the life of its session: initialized with the
 * capabilities that client declared, so the server lists and offers that client what it would on
 * a direct connection. It keeps what the session set (its logging level, its resource
 * subscriptions) and puts it back on a new connection: a stdio server started again after it
 * exited (with `restart`), or a new session with a Streamable HTTP server that forgot the old one.
 * Requests and notifications the server sends its client go to `downstream`, whatever their method.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  EmptyResultSchema,
  ListToolsResultSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type ClientNotification,
  type ClientRequest,
  type JSONRPCRequest,
  type LoggingLevel,
  type Notification,
  type Result,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../../core/clock.js';
import { ToolCatalog } from './tool-catalog.js';
import { DEFAULT_HANDSHAKE_TIMEOUT_MS, describeUpstream, openUpstream, sessionGone, type McpUpstream, type UpstreamConnection } from './upstream.js';
import { describeLoss, isConnectionClosed, type UpstreamLoss } from './upstream-loss.js';
import {
  closed,
  connectedTo,
  connectionLost,
  lossOf,
  nextRestart,
  reconnected,
  restartAttempted,
  restartsExhausted,
  serverAnswered,
  type RestartPolicy,
  type UpstreamState,
} from './upstream-state.js';

/** Where the server's own requests and notifications for its client go: the session's client. */
export interface LinkDownstream {
  notify(notification: Notification): void;
  request(request: JSONRPCRequest, extra: RequestHandlerExtra<ClientRequest, ClientNotification>): Promise<Result>;
  /** The server's tool list changed (told by it, or found after a restart or a new session). */
  toolsChanged(): void;
}

export interface UpstreamLinkOptions {
  upstream: McpUpstream;
  /** What the client declared, as it declared it. */
  capabilities: ClientCapabilities;
  downstream: LinkDownstream;
  timeoutMs: number;
  clock: Clock;
  log: (line: string) => void;
  restart: RestartPolicy | undefined;
  /** A connection already made with the same capabilities (the proxy's start-up one), used instead of opening one. */
  adopt?: UpstreamConnection;
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

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class UpstreamLink {
  /** The server as its first connection described itself; what the session's client is shown. */
  readonly serverCapabilities: ServerCapabilities;
  readonly catalog: ToolCatalog;
  /** Times the server was started again and answered. */
  restarts = 0;
  /** Resolves when the connection ends for good: the server exited and is not started again, or the link closed. */
  readonly ended: Promise<void>;

  /** Connected, restarting, lost or closed, with the connection requests go to (see upstream-state.ts). */
  #state: UpstreamState;
  /** How each connection that ended ended: a call answered late by an old connection still reads its own loss. */
  readonly #losses = new WeakMap<Client, UpstreamLoss>();
  #end!: () => void;
  readonly #restarter = new AbortController();
  // The work in flight that close() waits for.
  #closing: Promise<void> | undefined;
  #restarting: Promise<void> | undefined;
  #renewing: Promise<boolean> | undefined;
  #logLevel: LoggingLevel | undefined;
  readonly #subscriptions = new Set<string>();

  private constructor(
    private readonly options: UpstreamLinkOptions,
    connection: UpstreamConnection,
  ) {
    this.#state = connectedTo(connection);
    this.ended = new Promise<void>((resolve) => (this.#end = resolve));
    this.serverCapabilities = connection.client.getServerCapabilities() ?? {};
    this.catalog = new ToolCatalog(
      () => listAllTools(this.client, options.timeoutMs),
      (error) => {
        if (this.loss === undefined) options.log(`listing upstream tools failed: ${errorText(error)}`);
      },
    );
    this.#attach(connection);
  }

  /**
   * Opens the connection (or takes `adopt`) and lists the server's tools.
   * @throws McpUpstreamError when the server cannot be started or reached.
   */
  static async open(options: UpstreamLinkOptions): Promise<UpstreamLink> {
    const connection = options.adopt ?? (await UpstreamLink.#connect(options));
    const link = new UpstreamLink(options, connection);
    connection.releaseStderr();
    if (link.serverCapabilities.tools !== undefined) await link.catalog.refresh();
    return link;
  }

  static #connect(options: UpstreamLinkOptions): Promise<UpstreamConnection> {
    return openUpstream(options.upstream, Math.min(options.timeoutMs, DEFAULT_HANDSHAKE_TIMEOUT_MS), {
      capabilities: options.capabilities,
      // Before the handshake: a server may ask its client something as soon as it is initialized.
      prepare: (client) => {
        client.fallbackRequestHandler = (request, extra) => options.downstream.request(request, extra);
      },
    });
  }

  /** The connection requests go to now. */
  get client(): Client {
    return this.#state.connection.client;
  }

  get serverInfo() {
    return this.client.getServerVersion();
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  /** Set while the current connection is gone (until a restart is up). */
  get loss(): UpstreamLoss | undefined {
    return lossOf(this.#state);
  }

  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    return this.loss === undefined ? this.#state.connection.pid : undefined;
  }

  /** How `client` ended, if it did (a connection replaced since then included). */
  lossOf(client: Client): UpstreamLoss | undefined {
    return this.#losses.get(client);
  }

  /**
   * Sends on the current connection. A Streamable HTTP server that no longer knows the session (it
   * restarted) did not run the request: a new session is started, as the spec asks a client to,
   * and the request sent once more. A connection that ended under the request fails it with
   * `lostError`.
   */
  async send<T>(send: (c: Client) => Promise<T>, lostError: (loss: UpstreamLoss) => Error): Promise<T> {
    let used = this.client;
    for (let attempt = 0; ; attempt++) {
      try {
        return await send(used);
      } catch (error) {
        const lost = this.#losses.get(used);
        if (lost !== undefined && isConnectionClosed(error)) throw lostError(lost);
        if (attempt > 0 || !sessionGone(used, error)) throw error;
        if (!(await this.#renewSession(used))) throw error;
        used = this.client;
      }
    }
  }

  /** Remembers the level the client set, for a new connection. */
  levelSet(level: LoggingLevel): void {
    this.#logLevel = level;
  }

  subscribed(uri: string): void {
    this.#subscriptions.add(uri);
  }

  unsubscribed(uri: string): void {
    this.#subscriptions.delete(uri);
  }

  /** Passes a notification from the client on (roots changed, and whatever else it sends). */
  notify(notification: Notification): void {
    if (this.loss !== undefined) return;
    this.client.notification(notification as ClientNotification).catch((error: unknown) => this.options.log(`passing ${notification.method} upstream failed: ${errorText(error)}`));
  }

  /** Stops the server (a child) or ends the session; a restart waiting is cancelled. Idempotent. */
  close(): Promise<void> {
    this.#state = closed(this.#state);
    this.#closing ??= (async () => {
      this.#restarter.abort();
      await this.#restarting;
      await this.#renewing;
      await this.client.close().catch((error: unknown) => this.options.log(`closing the upstream failed: ${errorText(error)}`));
      this.#end();
    })();
    return this.#closing;
  }

  #describe(): string {
    return `the upstream MCP server (${describeUpstream(this.options.upstream)})`;
  }

  /** Watches a connection and relays its notifications to the client. */
  #attach(connection: UpstreamConnection): void {
    const watched = connection.client;
    const { downstream, log } = this.options;
    watched.fallbackRequestHandler = (request, extra) => downstream.request(request, extra);
    watched.fallbackNotificationHandler = async (notification) => downstream.notify(notification);
    if (this.serverCapabilities.tools !== undefined) {
      watched.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
        this.catalog.invalidate();
        downstream.notify(notification);
      });
    }
    // The SDK calls this before it fails the requests still waiting, so they see the loss set.
    watched.onclose = () => {
      if (watched !== this.client) return;
      if (this.#state.kind === 'closed') {
        this.#end();
        return;
      }
      const loss: UpstreamLoss = { exit: connection.exit(), at: this.options.clock.now() };
      const policy = this.options.restart;
      this.#state = connectionLost(this.#state, loss, policy);
      this.#losses.set(watched, loss);
      this.catalog.settle();
      const name = `${this.#describe()} ${describeLoss(loss)}`;
      if (this.#state.kind === 'restarting') {
        log(`${name}; restarting it (tools/call fails with -32000 until it is back)`);
        this.#restarting ??= this.#restart(policy!).finally(() => (this.#restarting = undefined));
        return;
      }
      log(`${name}; tools/call now fails with -32000 and tools/list answers from the last list`);
      this.#end();
    };
    watched.onerror = (error) => {
      // A write that raced the server's exit: the exit itself is reported, once, when the connection closes.
      if ((error as { code?: unknown }).code === 'EPIPE') return;
      // Once closing, an answer to a request the server sent meanwhile has nowhere to go.
      if (this.#state.kind === 'closed') return;
      // A session the server forgot: the request that met it starts a new one and says so.
      if (sessionGone(watched, error)) return;
      log(`upstream: ${error.message}`);
    };
  }

  /**
   * Starts the server again until one completes the handshake and lists its tools, the attempts
   * of this outage run out, or the link closes. The budget is per outage: a server that came back
   * and answered has its next exit counted from 0, so a long-running proxy does not run out of
   * restarts, while a server that exits before it answers uses the attempts up.
   */
  async #restart(policy: RestartPolicy): Promise<void> {
    const { log, clock } = this.options;
    for (let state = this.#state; state.kind === 'restarting'; state = this.#state) {
      const next = nextRestart(state, policy);
      if (next.giveUp) {
        log(`giving up after ${state.attempts} restart attempt(s); tools/call now fails with -32000 and tools/list answers from the last list`);
        this.#state = restartsExhausted(state);
        this.#end();
        return;
      }
      try {
        await clock.sleep(next.delayMs, this.#restarter.signal);
      } catch {
        return; // closing
      }
      this.#state = restartAttempted(this.#state);
      const attempt = state.attempts + 1;
      let started: UpstreamConnection;
      try {
        started = await UpstreamLink.#connect(this.options);
      } catch (error) {
        log(`restart ${attempt} of ${policy.maxRestarts} failed: ${errorText(error)}`);
        continue;
      }
      if (this.#state.kind === 'closed') {
        started.discardStderr();
        await started.client.close().catch(() => undefined);
        return;
      }
      const before = JSON.stringify(this.catalog.snapshot());
      this.#switchTo(started);
      this.restarts++;
      log(`restarted the upstream MCP server (attempt ${attempt} of ${policy.maxRestarts})`);
      if (await this.#catchUp(started, before)) this.#state = serverAnswered(this.#state);
    }
  }

  /**
   * Starts a new session with a Streamable HTTP server that forgot `stale`'s (requests that met
   * the same 404 share one). False when the server cannot be reached for one.
   */
  #renewSession(stale: Client): Promise<boolean> {
    if (this.client !== stale) return Promise.resolve(true);
    this.#renewing ??= (async () => {
      let next: UpstreamConnection;
      try {
        next = await UpstreamLink.#connect(this.options);
      } catch (error) {
        this.options.log(`the upstream MCP server no longer knows the proxy's session, and a new one failed: ${errorText(error)}`);
        return false;
      }
      if (this.#state.kind === 'closed') {
        await next.client.close().catch(() => undefined);
        return false;
      }
      const before = JSON.stringify(this.catalog.snapshot());
      this.#switchTo(next);
      this.options.log(`${this.#describe()} no longer knows the proxy's session (it restarted); started a new session`);
      // Closing the old connection after the switch: its end is not the upstream's.
      await Promise.all([this.#catchUp(next, before), stale.close().catch(() => undefined)]);
      return true;
    })().finally(() => (this.#renewing = undefined));
    return this.#renewing;
  }

  #switchTo(next: UpstreamConnection): void {
    this.#state = reconnected(this.#state, next);
    this.#attach(next);
    next.releaseStderr();
  }

  /**
   * Brings a new connection up to what the client holds: its logging level, the tool list (telling
   * it if the list changed) and its subscriptions. True when the server answered the tool list.
   */
  async #catchUp(next: UpstreamConnection, toolsBefore: string): Promise<boolean> {
    const { log, timeoutMs } = this.options;
    // First, so that what the server logs from now on (server-everything logs each subscription,
    // renewed below) and a request sent again in a new session find the level set.
    const level = this.#logLevel;
    if (level !== undefined) {
      await next.client.setLoggingLevel(level, { timeout: timeoutMs }).catch((error: unknown) => log(`setting the logging level ${level} again failed: ${errorText(error)}`));
    }
    let answered = true;
    if (this.serverCapabilities.tools !== undefined) {
      this.catalog.resume();
      answered = await this.catalog.refresh();
      if (this.loss === undefined && JSON.stringify(this.catalog.snapshot()) !== toolsBefore) this.options.downstream.toolsChanged();
    }
    // Subscriptions lived in the old server or session; the client still holds them.
    for (const uri of this.#subscriptions) {
      next.client
        .request({ method: 'resources/subscribe', params: { uri } }, EmptyResultSchema, { timeout: timeoutMs })
        .catch((error: unknown) => log(`renewing the subscription to ${uri} failed: ${errorText(error)}`));
    }
    return answered && this.loss === undefined;
  }
}
