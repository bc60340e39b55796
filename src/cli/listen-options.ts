/**
 * What the commands that serve HTTP from the store (`metrics`, `dashboard`) share: reading
 * `--port`, listening with a bad port or a taken one reported as one line, and the URL to print.
 */
import type { Server } from 'node:http';
import { listen } from '../listen.js';
import { CliError } from './cli-error.js';

/** `--port`: 0-65535, where 0 picks a free port. */
export function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65_535)) throw new CliError(`invalid --port ${JSON.stringify(text)}: expected 0-65535 (0 picks a free port)`);
  return port;
}

/**
 * Listens and resolves with the bound port.
 * @throws CliError `cannot listen on host:port: EADDRINUSE` (and the like).
 */
export async function listenOrFail(server: Server, port: number, host: string): Promise<number> {
  try {
    return (await listen(server, port, host)).port;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new CliError(`cannot listen on ${host}:${port}: ${e.code ?? e.message}`, 2, { cause: error });
  }
}

/** `http://host:port/path`, with an IPv6 host in brackets. */
export function serverUrl(host: string, port: number, path: string): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
}

/** Closes a listening server, dropping idle keep-alive connections so it closes at once. */
export async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
