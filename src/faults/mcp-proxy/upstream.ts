/**
 * The proxy's side facing the real MCP server: an SDK Client over stdio (a child process), over
 * Streamable HTTP, or over any transport the caller made (in-process servers in tests and
 * benchmarks).
 */
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type ClientCapabilities, type Implementation } from '@modelcontextprotocol/sdk/types.js';
import { FaultlineError } from '../../core/errors.js';
import { useLineBuffer } from './stdio-lines.js';

/** Where the real server is. */
export type McpUpstream =
  | {
      /** Starts this command and speaks MCP over its stdin/stdout. */
      command: string;
      args?: readonly string[];
      /** The child's whole environment. Default: the SDK's safe subset (HOME, PATH, ...). */
      env?: Record<string, string>;
      cwd?: string;
      /**
       * Where the child's stderr goes: `inherit` (the default) is the proxy's own stderr, or give
       * a stream. What the child writes while starting is held back until the proxy is up, so a
       * server that fails to start leaves only the proxy's one-line error.
       */
      stderr?: 'inherit' | 'ignore' | NodeJS.WritableStream;
    }
  | {
      /** A Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
      url: string | URL;
      /** Sent with every request (an API key, say). */
      headers?: Record<string, string>;
    }
  | {
      /**
       * A transport the caller created and has not started, or a function that makes one per
       * connection. A transport can be connected once: the proxy's start-up connection, which only
       * a client that declares no capabilities can be given (see `startMcpProxy`); a function
       * serves every client, each on its own connection.
       */
      transport: Transport | (() => Transport);
    };

const UPSTREAM_MARKER = Symbol.for('faultline.error.McpUpstreamError');

/** The upstream server could not be started or reached, or did not complete the MCP handshake. */
export class McpUpstreamError extends FaultlineError {
  readonly [UPSTREAM_MARKER] = true;
  constructor(
    message: string,
    readonly upstream: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  static override isInstance(value: unknown): value is McpUpstreamError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[UPSTREAM_MARKER] === true;
  }
}

function packageVersion(): string {
  try {
    // The same relative path from src/ and from dist/.
    const pkg = createRequire(import.meta.url)('../../../package.json') as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/** How the proxy introduces itself to the upstream server. */
export const PROXY_CLIENT_INFO: Implementation = { name: 'faultline-mcp-proxy', version: packageVersion() };

/** A short name for logs and errors. */
export function describeUpstream(upstream: McpUpstream): string {
  if ('command' in upstream) return [upstream.command, ...(upstream.args ?? [])].join(' ');
  if ('url' in upstream) return String(upstream.url);
  return 'in-process transport';
}

/** How a child server process ended: an exit code, or the signal that killed it. */
export interface UpstreamExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** "exited with code 3", "was killed by SIGKILL": for messages. */
export function describeExit(exit: UpstreamExit): string {
  if (exit.signal !== null) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? 'unknown'}`;
}

/** The SDK's stdio transport, plus the child's exit status, which the SDK reads and drops, and a larger, linear read buffer. */
class ChildServerTransport extends StdioClientTransport {
  exit: UpstreamExit | undefined;

  constructor(params: StdioServerParameters) {
    super(params);
    useLineBuffer(this);
  }

  override async start(): Promise<void> {
    await super.start();
    // The SDK keeps the child private. Reading it here keeps the SDK's own spawning (cross-spawn,
    // the stdin-end / SIGTERM / SIGKILL shutdown) instead of a second copy of it; if a later SDK
    // renames the field, exits are reported without their status, and the tests that pin the
    // status fail.
    const child = (this as unknown as { _process?: ChildProcess })._process;
    // 'exit' always comes before 'close', which is what ends the connection: the status is known
    // by the time anyone asks why the connection ended.
    child?.once('exit', (code, signal) => {
      this.exit = { code, signal };
    });
  }
}

/**
 * Holds the child's stderr back until the handshake is done, then passes it on. A bounded tail is
 * kept: servers say a line or two at start-up, and one that floods stderr must not grow the proxy.
 */
class HeldStderr {
  private chunks: Buffer[] = [];
  private size = 0;
  private lines = 0;
  private done = false;
  private static readonly MAX_BYTES = 256 * 1024;

  constructor(
    private readonly source: Readable,
    private readonly destination: NodeJS.WritableStream,
  ) {
    source.on('data', this.hold);
  }

  private readonly hold = (chunk: Buffer | string): void => {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.chunks.push(buffer);
    this.size += buffer.length;
    for (const byte of buffer) if (byte === 0x0a) this.lines++;
    while (this.size > HeldStderr.MAX_BYTES && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  };

  /** Lines held back so far (a last line without its newline counts). */
  get heldLines(): number {
    const last = this.chunks.at(-1);
    return this.lines + (last !== undefined && last.length > 0 && last[last.length - 1] !== 0x0a ? 1 : 0);
  }

  /** Writes what was held and streams the rest. */
  release(): void {
    if (this.done) return;
    this.done = true;
    this.source.off('data', this.hold);
    for (const chunk of this.chunks) this.destination.write(chunk);
    this.chunks = [];
    this.source.pipe(this.destination, { end: false });
  }

  /** Drops what was held: the caller reports the failure in one line of its own. */
  discard(): void {
    if (this.done) return;
    this.done = true;
    this.source.off('data', this.hold);
    this.chunks = [];
    this.source.resume();
  }
}

interface OpenedTransport {
  transport: Transport;
  child?: ChildServerTransport;
  stderr?: HeldStderr;
}

function transportFor(upstream: McpUpstream): OpenedTransport {
  if ('command' in upstream) {
    const target = upstream.stderr ?? 'inherit';
    const child = new ChildServerTransport({
      command: upstream.command,
      args: [...(upstream.args ?? [])],
      ...(upstream.env === undefined ? {} : { env: upstream.env }),
      ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
      stderr: target === 'ignore' ? 'ignore' : 'pipe',
    });
    // With 'pipe' the SDK hands out its PassThrough at once, before the child starts.
    const source = child.stderr as Readable | null;
    if (target === 'ignore' || source === null) return { transport: child, child };
    return { transport: child, child, stderr: new HeldStderr(source, target === 'inherit' ? process.stderr : target) };
  }
  if ('url' in upstream) {
    const url = typeof upstream.url === 'string' ? new URL(upstream.url) : upstream.url;
    return { transport: new StreamableHTTPClientTransport(url, upstream.headers === undefined ? {} : { requestInit: { headers: upstream.headers } }) };
  }
  return { transport: typeof upstream.transport === 'function' ? upstream.transport() : upstream.transport };
}

/** Whether the proxy can open more connections to `upstream` than its first. */
export function reconnectable(upstream: McpUpstream): boolean {
  return !('transport' in upstream) || typeof upstream.transport === 'function';
}

/** The most specific reason: fetch hides the socket's errno in `cause`. */
function reasonOf(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}

/** A connected upstream. */
export interface UpstreamConnection {
  client: Client;
  /** How the child server ended; undefined while it runs, and always for URL and transport upstreams. */
  exit(): UpstreamExit | undefined;
  /** The child server's process id; undefined for URL and transport upstreams. */
  readonly pid: number | undefined;
  /** Passes on the child's stderr held back so far, and streams the rest: call once the proxy is up. */
  releaseStderr(): void;
  /** Drops the child's stderr held back so far: for a start that failed after the handshake. */
  discardStderr(): void;
}

/** How the proxy presents itself to the server as a client. */
export interface UpstreamClientOptions {
  /** Offered in the handshake. Default: none. */
  capabilities?: ClientCapabilities;
  /** Called before the handshake, to install handlers for the requests the capabilities allow the server to send. */
  prepare?: (client: Client) => void;
}

/** How long the MCP handshake may take by default: the SDK's own request timeout. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 60_000;

/**
 * Connects and completes the MCP handshake, keeping hold of the child's exit status. A server
 * that starts but never answers `initialize` fails after `handshakeTimeoutMs`.
 * @throws McpUpstreamError (one line) when that fails; a child that was started is stopped.
 */
export async function openUpstream(upstream: McpUpstream, handshakeTimeoutMs = DEFAULT_HANDSHAKE_TIMEOUT_MS, as: UpstreamClientOptions = {}): Promise<UpstreamConnection> {
  // Without capabilities a server must not send requests of its own (sampling, elicitation, roots).
  const client = new Client(PROXY_CLIENT_INFO, { capabilities: as.capabilities ?? {} });
  as.prepare?.(client);
  const name = describeUpstream(upstream);
  const opened = transportFor(upstream);
  try {
    await client.connect(opened.transport, { timeout: handshakeTimeoutMs });
  } catch (error) {
    // Read before closing: closing stops a child that is still running, and that is not why it failed.
    const exit = opened.child?.exit;
    await client.close().catch(() => undefined);
    const held = opened.stderr?.heldLines ?? 0;
    opened.stderr?.discard();
    let reason =
      exit !== undefined
        ? `it ${describeExit(exit)} before the MCP handshake`
        : isRequestTimeout(error)
          ? `it did not complete the MCP handshake within ${handshakeTimeoutMs} ms`
          : reasonOf(error);
    if (held > 0) reason += ` (it wrote ${held} line${held === 1 ? '' : 's'} to stderr: run the command directly to see them)`;
    throw new McpUpstreamError(`cannot connect to the upstream MCP server (${name}): ${reason}`, name, { cause: error });
  }
  return {
    client,
    exit: () => opened.child?.exit,
    pid: opened.child?.pid ?? undefined,
    releaseStderr: () => opened.stderr?.release(),
    discardStderr: () => opened.stderr?.discard(),
  };
}

/**
 * Connects and completes the MCP handshake.
 * @throws McpUpstreamError (one line) when that fails.
 */
export async function connectUpstream(upstream: McpUpstream, handshakeTimeoutMs?: number): Promise<Client> {
  const connection = await openUpstream(upstream, handshakeTimeoutMs);
  connection.releaseStderr();
  return connection.client;
}

/**
 * A Streamable HTTP server refused a request because it does not know the client's session: 404,
 * as the spec has it, or the 400 that servers written after the SDK's examples answer (server-
 * everything: "No valid session ID provided"; a transport made for the request: "Server not
 * initialized"). The request was not processed.
 */
export function sessionGone(client: Client, error: unknown): boolean {
  const transport = client.transport;
  if (!(transport instanceof StreamableHTTPClientTransport) || transport.sessionId === undefined) return false;
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session|not initialized/i.test(error.message));
}

/** The SDK's error for a request that got no answer in time. */
function isRequestTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}
