/**
 * The admin endpoint: read and replace the fault plan while the proxy runs, and read its counters.
 * Loopback only, and every request needs `Authorization: Bearer <token>`, since whoever can change
 * the plan can make every tool call fail.
 *
 * - `GET /plan`: the current plan (JSON; HEAD as well).
 * - `PUT /plan`: a new plan, JSON or YAML; validated like a plan file, applied at once, and
 *   answered with the plan now in force. Rule counters follow rule ids (see `FaultPlan.update`).
 *   400 when invalid.
 * - `GET /state`: `{ plan, proxy }`, the plan's counters and whatever `state` gives (the proxy's
 *   stats); those are also at the top level, where they were before both admin APIs answered alike.
 *
 * The `/plan` and `/state` routes, the answers and the error shape `{ error: { code, message } }`
 * are the HTTP proxy's admin API's (`../admin-http.ts`).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../../core/errors.js';
import type { FaultPlan } from '../plan.js';
import { listen } from '../../net/listen.js';
import {
  ADMIN_MAX_PLAN_BYTES,
  adminTokenDigest,
  bearerTokenMatches,
  sendAdminInternalError,
  sendAdminNoRoute,
  sendAdminUnauthorized,
  serveAdminPlan,
  serveAdminState,
} from '../admin-http.js';

export interface AdminServerOptions {
  plan: FaultPlan;
  /** The bearer token clients must send. */
  token: string;
  /** On 127.0.0.1; 0 (the default) picks a free port. */
  port?: number;
  /** The proxy's counters, `proxy` in `GET /state` (and, as before, at its top level). */
  state?: () => Record<string, unknown>;
  /** Called after a plan was replaced. */
  onUpdate?: (plan: FaultPlan) => void;
  /** Plan bodies larger than this are refused. Default 1 MiB. */
  maxBodyBytes?: number;
}

export interface AdminServer {
  /** e.g. `http://127.0.0.1:41235`. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** A token for when none was configured: 192 random bits. */
export function generateAdminToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Starts the admin endpoint.
 * @throws ConfigError for an empty token.
 * @example
 * const admin = await startAdminServer({ plan, token: generateAdminToken(), port: 9901 });
 * // curl -H "Authorization: Bearer $TOKEN" -X PUT --data-binary @outage.yaml http://127.0.0.1:9901/plan
 */
export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  if (options.token.trim() === '') throw new ConfigError('the admin token must not be empty', 'token');
  const expected = adminTokenDigest(options.token);
  const maxBodyBytes = options.maxBodyBytes ?? ADMIN_MAX_PLAN_BYTES;
  const { plan } = options;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!bearerTokenMatches(req.headers.authorization, expected)) {
      // Drain the body so the client sees the 401 rather than a reset connection.
      req.resume();
      return sendAdminUnauthorized(res);
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/plan') return serveAdminPlan(req, res, { plan, route: path, maxBodyBytes, onUpdate: () => options.onUpdate?.(plan) });
    if (path === '/state') return serveAdminState(req, res, { plan, route: path, proxyState: () => ({ ...options.state?.() }), proxyFieldsAtTopLevel: true });
    return sendAdminNoRoute(req, res, path);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendAdminInternalError(res, error));
  });
  const host = '127.0.0.1';
  await listen(server, options.port ?? 0, host);
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
}
