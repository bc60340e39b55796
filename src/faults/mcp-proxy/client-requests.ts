/**
 * Requests the upstream server sends its client — sampling/createMessage, elicitation/create,
 * roots/list — relayed to one of the proxy's own clients, and the answer relayed back.
 *
 * The proxy holds one upstream connection for all its clients, made before any of them
 * connects, so it offers the server every client capability it can relay
 * ({@link RELAYED_CLIENT_CAPABILITIES}); a server that adds tools for capable clients (sampling,
 * elicitation, roots) lists them to every client of the proxy.
 *
 * Over stdio nothing on the wire ties a server's request to the call that caused it, so the
 * request goes to a client that has a request of its own out at the server (the most recent one
 * first, preferring a client with the capability); when none has, to the most recently connected
 * client that has the capability. It is sent through that client's SDK Server, which refuses
 * what the server's own SDK refuses on a direct connection, with the same words (URL or form
 * elicitation the client did not offer, sampling with tools, a form answer that does not match
 * its schema; -32601 when the capability is missing, -32602 otherwise). A client that did not
 * offer sampling or elicitation at all is asked anyway, as the SDK asks it straight, and answers
 * as it would (an SDK client: -32601 Method not found). roots/list with no client offering roots
 * is answered with no roots; a client with roots connecting or leaving, or telling the proxy its
 * roots changed, sends the server notifications/roots/list_changed, so that it asks again.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  type ClientCapabilities,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcError, relayedError } from './rpc-error.js';

/** What the proxy offers the upstream server as its client: everything it relays. */
export const RELAYED_CLIENT_CAPABILITIES: ClientCapabilities = {
  sampling: { tools: {} },
  elicitation: { form: {}, url: {} },
  roots: { listChanged: true },
};

type Capability = 'sampling' | 'elicitation' | 'roots';

/** One downstream connection, as the relay sees it. */
export interface RelayPeer {
  readonly server: Server;
}

interface Peer extends RelayPeer {
  /** When it connected (relay ticks). */
  readonly since: number;
  /** Its requests out at the upstream, by request id, with the tick each started at. */
  readonly pending: Map<RequestId, number>;
}

export interface ClientRequestRelayOptions {
  /** The upstream connection notifications go to now (it changes when the server is restarted). */
  upstream: () => Client;
  /** How long a relayed request may wait for the client; the server's own timeout usually ends it first. */
  timeoutMs: number;
  log: (line: string) => void;
}

function supports(peer: Peer, capability: Capability): boolean {
  return peer.server.getClientCapabilities()?.[capability] !== undefined;
}

export class ClientRequestRelay {
  private readonly peers = new Set<Peer>();
  private tick = 0;

  constructor(private readonly options: ClientRequestRelayOptions) {}

  /** Registers a downstream connection; call {@link remove} when it closes. */
  add(server: Server): RelayPeer {
    const peer: Peer = { server, since: ++this.tick, pending: new Map() };
    this.peers.add(peer);
    return peer;
  }

  remove(handle: RelayPeer): void {
    const peer = handle as Peer;
    if (!this.peers.delete(peer)) return;
    if (supports(peer, 'roots')) this.rootsChanged();
  }

  /** Marks `requestId` of `peer` as out at the upstream until `work` settles; returns `work`. */
  track<T>(handle: RelayPeer, requestId: RequestId, work: Promise<T>): Promise<T> {
    const peer = handle as Peer;
    peer.pending.set(requestId, ++this.tick);
    const done = () => peer.pending.delete(requestId);
    work.then(done, done);
    return work;
  }

  /** Tells the server to list roots again (a client with roots came, left, or changed them). */
  rootsChanged(): void {
    this.options
      .upstream()
      .sendRootsListChanged()
      // An upstream that is gone hears nothing; a restarted one asks for roots when it starts.
      .catch((error: unknown) => this.options.log(`telling the upstream its roots changed failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  /** Installs the handlers on an upstream connection; before it connects, so that a request at start-up finds them. */
  attach(client: Client): void {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
      this.relay('sampling', request.method, extra.signal, (server, options) => server.createMessage(request.params, options)),
    );
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      this.relay('elicitation', request.method, extra.signal, (server, options) => server.elicitInput(request.params, options)),
    );
    client.setRequestHandler(ListRootsRequestSchema, async (request, extra) => {
      if (this.pick('roots') === undefined) return { roots: [] };
      return this.relay('roots', request.method, extra.signal, (server, options) => server.listRoots(request.params, options));
    });
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
      for (const peer of this.peers) {
        if (peer.server.getClientCapabilities()?.elicitation?.url === undefined) continue;
        peer.server.notification(notification).catch((error: unknown) => this.options.log(`notifying a client failed: ${error instanceof Error ? error.message : String(error)}`));
      }
    });
  }

  /**
   * The client to ask: among the clients with requests out (else among all), one with the
   * capability, most recent first; a client without it when none has it, so that its SDK
   * refuses as it would on a direct connection. Roots are asked only of a client that has them.
   */
  private pick(capability: Capability): { peer: Peer; related: RequestId | undefined } | undefined {
    const initialized = [...this.peers].filter((peer) => peer.server.getClientCapabilities() !== undefined);
    const busy = initialized.filter((peer) => peer.pending.size > 0);
    const latest = (peer: Peer) => (peer.pending.size > 0 ? Math.max(...peer.pending.values()) : peer.since);
    const candidates = (busy.length > 0 && capability !== 'roots' ? busy : initialized).sort((a, b) => latest(b) - latest(a));
    const peer = candidates.find((p) => supports(p, capability)) ?? (capability === 'roots' ? undefined : candidates[0]);
    if (peer === undefined) return undefined;
    let related: RequestId | undefined;
    let newest = -1;
    for (const [id, at] of peer.pending) {
      if (at > newest) [related, newest] = [id, at];
    }
    return { peer, related };
  }

  private async relay<T>(capability: Capability, method: string, signal: AbortSignal, send: (server: Server, options: RequestOptions) => Promise<T>): Promise<T> {
    const picked = this.pick(capability);
    if (picked === undefined) throw new JsonRpcError(ErrorCode.MethodNotFound, `no client is connected to the proxy to answer ${method}`);
    try {
      // On the stream of the client's own request when it has one (Streamable HTTP sends it there).
      return await send(picked.peer.server, { signal, timeout: this.options.timeoutMs, ...(picked.related === undefined ? {} : { relatedRequestId: picked.related }) });
    } catch (error) {
      if (error instanceof McpError) throw relayedError(error);
      // The SDK's own checks, made before anything is sent: what the server's SDK would have said.
      const message = error instanceof Error ? error.message : String(error);
      throw new JsonRpcError(/does not support/.test(message) ? ErrorCode.MethodNotFound : ErrorCode.InvalidParams, message);
    }
  }
}
