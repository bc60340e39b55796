/**
 * Requests the upstream server sends its client (sampling/createMessage, elicitation/create,
 * roots/list, tasks/*, and any method to come), relayed to the proxy's client as they came, and the
 * client's answer relayed back as it came.
 *
 * Each client of the proxy has its own upstream connection, initialized with what that client
 * declared (upstream-link.ts), so the server asks only what it would ask that client on a direct
 * connection, and the request has one place to go. A request for a capability the client did not
 * declare is answered here as an SDK client without it answers (-32601 Method not found), without
 * reaching the client; a method tied to no capability the proxy knows is the client's to answer.
 * Nothing is parsed on the way: the client's SDK, not the proxy's, checks what it receives.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, ResultSchema, type ClientCapabilities, type JSONRPCRequest, type RequestId, type Result, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { JsonRpcError, relayedError } from './rpc-error.js';

/** The client capability a server-to-client method needs, by method prefix (the spec's). */
const CAPABILITY_OF_PREFIX: ReadonlyArray<readonly [string, string]> = [
  ['sampling/', 'sampling'],
  ['elicitation/', 'elicitation'],
  ['roots/', 'roots'],
  ['tasks/', 'tasks'],
];

/** The capability `method` needs, or undefined when the proxy knows of none. */
export function capabilityOf(method: string): string | undefined {
  return CAPABILITY_OF_PREFIX.find(([prefix]) => method.startsWith(prefix))?.[1];
}

export interface ClientRequestRelayOptions {
  /** How long a relayed request may wait for the client; the server's own timeout usually ends it first. */
  timeoutMs: number;
}

/** One session's relay: what its client declared, and its own requests out at the server (for Streamable HTTP's streams). */
export class ClientRequestRelay {
  /** Request ids of the client's requests out at the upstream, with the tick each started at. */
  private readonly pending = new Map<RequestId, number>();
  private tick = 0;

  constructor(
    private readonly server: Server,
    private readonly declared: ClientCapabilities,
    private readonly options: ClientRequestRelayOptions,
  ) {}

  /** Marks `requestId` as out at the upstream until `work` settles; returns `work`. */
  track<T>(requestId: RequestId, work: Promise<T>): Promise<T> {
    this.pending.set(requestId, ++this.tick);
    const done = () => this.pending.delete(requestId);
    work.then(done, done);
    return work;
  }

  /** Relays a request of the server's to the client; the client's answer or error comes back. */
  async relay(request: JSONRPCRequest, extra: RequestHandlerExtra<never, never>): Promise<Result> {
    const capability = capabilityOf(request.method);
    if (capability !== undefined && (this.declared as Record<string, unknown>)[capability] === undefined) {
      throw new JsonRpcError(ErrorCode.MethodNotFound, 'Method not found');
    }
    // Nothing on the wire ties a server's request to the call that caused it; over Streamable
    // HTTP it goes on the stream of the client's newest request out at the server, if any.
    let related: RequestId | undefined;
    let newest = -1;
    for (const [id, at] of this.pending) {
      if (at > newest) [related, newest] = [id, at];
    }
    try {
      const outgoing = { method: request.method, ...(request.params === undefined ? {} : { params: request.params }) } as ServerRequest;
      return await this.server.request(outgoing, ResultSchema, { signal: extra.signal, timeout: this.options.timeoutMs, ...(related === undefined ? {} : { relatedRequestId: related }) });
    } catch (error) {
      throw relayedError(error);
    }
  }
}
