/**
 * Startup checks that an endpoint a command depends on accepts connections, so that a command
 * pointed at nothing fails at once with one line (exit 2) instead of failing every request it
 * makes afterwards: `proxy` checks its --target before it listens, `bench` the model endpoints of
 * its openai: and anthropic: agents before any scenario runs.
 */
import { connect } from 'node:net';
import type { ModelEndpointInfo } from '../failbench/types.js';
import { CliError } from './cli-error.js';
import { printable } from './io.js';

/** How long a startup check waits for an endpoint to accept a connection. */
export const PROBE_TIMEOUT_MS = 5000;

/**
 * Why `url`'s host does not accept a TCP connection (its name does not resolve, nothing listens,
 * no answer within `timeoutMs`), as an errno-style code such as `ECONNREFUSED`, or undefined when
 * it does. TCP only: no request is sent, so the check costs the endpoint nothing (no TLS
 * handshake, no billed call) and cannot be refused for the request it would have made.
 */
export async function connectFailure(url: URL, timeoutMs: number = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return new Promise<string | undefined>((done) => {
    const socket = connect({ host, port });
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      done(`ETIMEDOUT (no answer within ${timeoutMs / 1000} s)`);
    });
    socket.once('connect', () => {
      socket.destroy();
      done(undefined);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

/**
 * Checks that the target accepts a TCP connection (its name resolves, something listens), so that
 * a proxy in front of nothing fails at start with one line instead of answering every request 502.
 * @throws CliError `cannot reach --target http://127.0.0.1:1/: ECONNREFUSED` (exit 2).
 */
export async function probeTarget(target: URL): Promise<void> {
  const failure = await connectFailure(target);
  if (failure !== undefined) throw new CliError(`cannot reach --target ${target.href}: ${failure}`);
}

/**
 * Checks that the model endpoint of every agent that has one accepts a TCP connection, all at
 * once (each distinct endpoint once), so that `bench` against an endpoint that is down fails in
 * seconds with one line, before it opens its store or runs anything, rather than after every
 * scenario has retried it.
 * @throws CliError `cannot reach the openai endpoint http://127.0.0.1:9/v1 (ECONNREFUSED); set OPENAI_BASE_URL`
 * for the first agent, in order, whose endpoint does not answer.
 */
export async function probeModelEndpoints(endpoints: readonly (ModelEndpointInfo | undefined)[], timeoutMs: number = PROBE_TIMEOUT_MS): Promise<void> {
  const distinct = new Map<string, ModelEndpointInfo>();
  for (const endpoint of endpoints) if (endpoint !== undefined && !distinct.has(endpoint.url)) distinct.set(endpoint.url, endpoint);
  const checks = [...distinct.values()].map(async (endpoint) => {
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      return `the ${endpoint.provider} endpoint ${endpoint.url} is not a URL; set ${endpoint.urlEnv}`;
    }
    const failure = await connectFailure(url, timeoutMs);
    return failure === undefined ? undefined : `cannot reach the ${endpoint.provider} endpoint ${endpoint.url} (${failure}); set ${endpoint.urlEnv}`;
  });
  const failure = (await Promise.all(checks)).find((message) => message !== undefined);
  if (failure !== undefined) throw new CliError(printable(failure));
}
