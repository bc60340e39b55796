/**
 * What the commands that serve HTTP from the store (`metrics`, `dashboard`) share: reading
 * `--port`, listening with a taken port reported as one line, printing where they serve, and
 * stopping on Ctrl-C.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { hostAllowed, hostAllowlist, isLoopbackHost } from '../net/host-allowlist.js';
import { listen } from '../net/listen.js';
import type { Store } from '../core/store-types.js';
import { CliError } from './cli-error.js';
import { writeLine, type CliIo } from './io.js';

/** Loopback addresses: a server bound to one answers only to loopback names (see {@link loopbackHostAllowed}). */
export const isLoopback = isLoopbackHost;

/**
 * Whether a request to a server bound to `boundHost` names a host it answers to
 * (host-allowlist.ts): any, unless the server is on loopback.
 */
export function loopbackHostAllowed(req: IncomingMessage, boundHost: string): boolean {
  return hostAllowed(req.headers.host, hostAllowlist(boundHost));
}

/**
 * One `--allow-host <name>` (repeatable; commander's collector): a host name or address, with or
 * without a port, that a loopback-bound server also answers to.
 */
export function collectAllowedHost(value: string, previous: string[] = []): string[] {
  const name = value.trim();
  // Whatever a Host header can hold: a name, an IPv4 address or a bracketed IPv6 one, and a port.
  if (!/^(?:[a-z0-9](?:[a-z0-9_.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i.test(name)) {
    throw new CliError(`--allow-host must be a host name such as tools.internal or tools.internal:8080, got ${JSON.stringify(value)}`);
  }
  return [...previous, name];
}

/** `--port` (or another port flag): 0-65535, where 0 picks a free port. */
export function parsePort(text: string, flag = '--port'): number {
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65_535)) throw new CliError(`invalid ${flag} ${JSON.stringify(text)}: expected 0-65535 (0 picks a free port)`);
  return port;
}

/**
 * Listens and resolves with the bound port.
 * @throws CliError `cannot listen on host:port: EADDRINUSE` (and the like).
 */
async function listenOrFail(server: Server, port: number, host: string): Promise<number> {
  try {
    return (await listen(server, port, host)).port;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new CliError(`cannot listen on ${host}:${port}: ${e.code ?? e.message}`, 2, { cause: error });
  }
}

/** `http://host:port/path`, with an IPv6 host in brackets. */
function serverUrl(host: string, port: number, path: string): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
}

/** Closes a listening server, dropping idle keep-alive connections so it closes at once. */
async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

export interface ServeOptions {
  /** The command, for the line it prints: `faultline <name>: serving <url> (Ctrl-C stops)`. */
  name: string;
  /** The path the printed URL points at. */
  path: string;
  port: number;
  host: string;
  /** Print `{ url, host, port }` as JSON instead of the line. */
  json: boolean;
  /** More to say once listening (the dashboard's review address): lines after the first, fields of the JSON. */
  notes?: (url: string) => { lines: string[]; fields: Record<string, unknown> };
}

/**
 * Serves the handler `makeHandler` builds over `store` until the command is interrupted, then
 * closes the server and the store (also when building the handler or listening fails).
 * @throws CliError when it cannot listen.
 */
export async function serveUntilInterrupted(io: CliIo, store: Store, options: ServeOptions, makeHandler: () => RequestListener): Promise<void> {
  const server = createServer();
  try {
    server.on('request', makeHandler());
    const bound = await listenOrFail(server, options.port, options.host);
    const url = serverUrl(options.host, bound, options.path);
    const notes = options.notes?.(url) ?? { lines: [], fields: {} };
    if (options.json) writeLine(io.stdout, JSON.stringify({ url, host: options.host, port: bound, ...notes.fields }));
    else {
      writeLine(io.stdout, `faultline ${options.name}: serving ${url} (Ctrl-C stops)`);
      for (const line of notes.lines) writeLine(io.stdout, line);
    }
    // Without an interrupt signal (an embedding that never stops us) this serves forever.
    await (io.interrupted ?? new Promise<void>(() => undefined));
  } finally {
    await closeServer(server);
    await store.close();
  }
}
