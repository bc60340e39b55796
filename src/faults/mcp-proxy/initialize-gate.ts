/**
 * A downstream transport as the proxy's per-client SDK Server sees it, held back at the client's
 * `initialize` until the proxy has an upstream connection initialized with exactly what the client
 * declared. The SDK Server parses `initialize` with its schema, which keeps only the capabilities it
 * knows; the raw message is read here, before that, so that experimental and future capabilities
 * reach the upstream server as the client wrote them.
 *
 * Messages that arrive while the upstream is being opened wait, in order, and are delivered once
 * the Server is attached. If the upstream cannot be opened, the client's `initialize` is answered
 * with that error (and the Server never sees it), as a server that cannot start would answer.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/** What a client's `initialize` request declared, as it came over the wire. */
export interface DeclaredClient {
  /** The `capabilities` object, unparsed. */
  capabilities: Record<string, unknown>;
  protocolVersion: unknown;
  clientInfo: unknown;
}

type Held = { message: JSONRPCMessage; extra: MessageExtraInfo | undefined };

function initializeOf(message: JSONRPCMessage): { id: RequestId; declared: DeclaredClient } | undefined {
  if (!('method' in message) || message.method !== 'initialize' || !('id' in message)) return undefined;
  const params = (message.params ?? {}) as Record<string, unknown>;
  const capabilities = params['capabilities'];
  return {
    id: message.id,
    declared: {
      capabilities: typeof capabilities === 'object' && capabilities !== null && !Array.isArray(capabilities) ? (capabilities as Record<string, unknown>) : {},
      protocolVersion: params['protocolVersion'],
      clientInfo: params['clientInfo'],
    },
  };
}

export class InitializeGate implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  private state: 'waiting' | 'opening' | 'open' = 'waiting';
  /** What arrived while the upstream was being opened, the initialize first. */
  private held: Held[] = [];
  private started: Promise<void> | undefined;

  /**
   * @param inner the downstream transport, not yet started.
   * @param open called with the client's `initialize`: resolves once a Server is connected to
   *   this gate, or rejects with the error to answer the client with.
   */
  constructor(
    private readonly inner: Transport,
    private readonly open: (declared: DeclaredClient) => Promise<void>,
  ) {
    inner.onmessage = (message, extra) => this.receive(message, extra);
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /** Starts the downstream transport once (the Server's own start() then does nothing). */
  start(): Promise<void> {
    this.started ??= this.inner.start();
    return this.started;
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private receive(message: JSONRPCMessage, extra: MessageExtraInfo | undefined): void {
    if (this.state === 'open') {
      this.onmessage?.(message, extra);
      return;
    }
    if (this.state === 'opening') {
      this.held.push({ message, extra });
      return;
    }
    const init = initializeOf(message);
    if (init === undefined) {
      this.refuse(message, 'the first request must be initialize');
      return;
    }
    this.state = 'opening';
    this.held.push({ message, extra });
    this.open(init.declared).then(
      () => {
        this.state = 'open';
        for (const h of this.held.splice(0)) this.onmessage?.(h.message, h.extra);
      },
      (error: unknown) => {
        // The next initialize on this connection tries again.
        this.state = 'waiting';
        const [first, ...rest] = this.held.splice(0);
        this.refuse(first!.message, error instanceof Error ? error.message : String(error), ErrorCode.InternalError);
        for (const h of rest) this.refuse(h.message, 'the server was not initialized');
      },
    );
  }

  /** Answers a request with an error (a notification is dropped). */
  private refuse(message: JSONRPCMessage, text: string, code: number = ErrorCode.InvalidRequest): void {
    if (!('method' in message) || !('id' in message)) return;
    this.inner
      .send({ jsonrpc: '2.0', id: message.id, error: { code, message: text } })
      .catch((error: unknown) => this.onerror?.(error instanceof Error ? error : new Error(String(error))));
  }
}
