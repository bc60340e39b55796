/**
 * The proxy's side facing the real MCP server: an SDK Client over stdio (a child process), over
 * Streamable HTTP, or over any transport the caller made (in-process servers in tests and
 * benchmarks).
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Implementation } from '@modelcontextprotocol/sdk/types.js';
import { FaultlineError } from '../../errors.js';

/** Where the real server is. */
export type McpUpstream =
  | {
      /** Starts this command and speaks MCP over its stdin/stdout. */
      command: string;
      args?: readonly string[];
      /** The child's whole environment. Default: the SDK's safe subset (HOME, PATH, ...). */
      env?: Record<string, string>;
      cwd?: string;
      /** Where the child's stderr goes. Default `inherit`: its logs appear in the proxy's. */
      stderr?: 'inherit' | 'ignore';
    }
  | {
      /** A Streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
      url: string | URL;
      /** Sent with every request (an API key, say). */
      headers?: Record<string, string>;
    }
  | {
      /** A transport the caller created and has not started. */
      transport: Transport;
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

function transportFor(upstream: McpUpstream): Transport {
  if ('command' in upstream) {
    return new StdioClientTransport({
      command: upstream.command,
      args: [...(upstream.args ?? [])],
      ...(upstream.env === undefined ? {} : { env: upstream.env }),
      ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
      stderr: upstream.stderr ?? 'inherit',
    });
  }
  if ('url' in upstream) {
    const url = typeof upstream.url === 'string' ? new URL(upstream.url) : upstream.url;
    return new StreamableHTTPClientTransport(url, upstream.headers === undefined ? {} : { requestInit: { headers: upstream.headers } });
  }
  return upstream.transport;
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

/**
 * Connects and completes the MCP handshake.
 * @throws McpUpstreamError (one line) when that fails.
 */
export async function connectUpstream(upstream: McpUpstream): Promise<Client> {
  // No client capabilities: requests the server would send to the client (sampling, elicitation,
  // roots) are not relayed, and a server must not send what the client did not offer.
  const client = new Client(PROXY_CLIENT_INFO, { capabilities: {} });
  const name = describeUpstream(upstream);
  try {
    await client.connect(transportFor(upstream));
  } catch (error) {
    await client.close().catch(() => undefined);
    throw new McpUpstreamError(`cannot connect to the upstream MCP server (${name}): ${reasonOf(error)}`, name, { cause: error });
  }
  return client;
}
