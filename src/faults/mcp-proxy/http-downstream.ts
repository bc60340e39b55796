/**
 * Serves the proxy over Streamable HTTP on the loopback interface: one MCP session (and one SDK
 * Server, and one upstream connection) per client.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { McpProxy } from './proxy.js';
import { hostAllowed, hostAllowlist, refusedHostMessage } from '../../net/host-allowlist.js';
import { listen } from '../../net/listen.js';

export interface McpHttpOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Default `127.0.0.1`. */
  host?: string;
  /** The MCP endpoint. Default `/mcp`. */
  path?: string;
  /**
   * Host names besides the loopback ones that requests may carry while bound to loopback (a
   * reverse proxy that fronts it deliberately). Default: none (host-allowlist.ts).
   */
  allowedHosts?: readonly string[];
  /** Request bodies larger than this are refused. Default 4 MiB. */
  maxBodyBytes?: number;
  log?: (line: string) => void;
}

export interface McpHttpServer {
  /** The endpoint to point clients at, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  readonly port: number;
  /** Ends every session and stops listening. */
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

class BodyTooLarge extends Error {}

async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLarge(`request body over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

/**
 * Starts the HTTP endpoint.
 * @example
 * const http = await serveMcpOverHttp(proxy, { port: 8931 });
 * // point an MCP client at http.url
 */
export async function serveMcpOverHttp(proxy: Pick<McpProxy, 'connect'>, options: McpHttpOptions = {}): Promise<McpHttpServer> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const log = options.log ?? (() => undefined);
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const allowedHosts = hostAllowlist(host, options.allowedHosts);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return sendJson(res, 404, { error: `not found; the MCP endpoint is ${path}` });
    if (!hostAllowed(req.headers.host, allowedHosts)) return sendJson(res, 403, { error: refusedHostMessage(req.headers.host, 'MCP proxy') });
    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (sessionId !== undefined) {
      const transport = sessions.get(sessionId);
      if (transport === undefined) return rpcError(res, 404, ErrorCode.ConnectionClosed, 'Session not found');
      return transport.handleRequest(req, res);
    }
    if (req.method !== 'POST') return rpcError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: no session; start one with an initialize request');
    let body: unknown;
    try {
      body = await readJson(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLarge) return rpcError(res, 413, ErrorCode.InvalidRequest, error.message);
      return rpcError(res, 400, ErrorCode.ParseError, 'Parse error');
    }
    if (!isInitializeRequest(body)) return rpcError(res, 400, ErrorCode.InvalidRequest, 'Bad Request: no session; start one with an initialize request');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await proxy.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`mcp http: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) rpcError(res, 500, ErrorCode.InternalError, 'Internal error');
      else res.end();
    });
  });
  await listen(server, options.port ?? 0, host);
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostPart}:${port}${path}`,
    port,
    close() {
      closing ??= (async () => {
        await Promise.allSettled([...sessions.values()].map((t) => t.close()));
        sessions.clear();
        // Open SSE streams would keep close() waiting for ever.
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closing;
    },
  };
}
