/**
 * The proxy's admin API: read the fault plan, swap it while traffic flows, read its counters.
 * Changing the plan changes what every client of the proxy gets, so it takes a bearer token,
 * and by default it is served to loopback clients only.
 *
 *   GET /__faultline/plan    the current plan (JSON; HEAD as well)
 *   PUT /__faultline/plan    a new plan (YAML or JSON body), answered with the plan now in force; 400 with the one-line error if it is invalid
 *   GET /__faultline/state   `{ plan, proxy }`: the plan's counters and the proxy's own (HEAD as well)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../../core/errors.js';
import {
  adminTokenDigest,
  bearerTokenMatches,
  sendAdminError as problem,
  sendAdminNoRoute,
  sendAdminUnauthorized,
  serveAdminPlan,
  serveAdminState,
} from '../admin-http.js';
import type { FaultPlan } from '../plan.js';

export const ADMIN_PREFIX = '/__faultline';

export interface AdminApiOptions {
  plan: Pick<FaultPlan, 'spec' | 'state' | 'update'>;
  token: string;
  /** The proxy's own counters, served beside the plan's by `GET /state`. */
  proxyState: () => Record<string, unknown>;
  /**
   * Where the admin API may be used from besides loopback: a local address requests must arrive
   * on (`0.0.0.0` / `::` for any). Default: loopback clients only.
   */
  adminHost?: string;
}

export type AdminHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

/** 127.0.0.0/8, ::1, and IPv4 loopback seen through an IPv6 socket. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/**
 * Whether an admin request from `remote`, arriving on local address `local`, is served. Loopback
 * clients always are; others only when `adminHost` names the address they came in on, or is a
 * wildcard.
 */
export function adminClientAllowed(remote: string | undefined, local: string | undefined, adminHost: string | undefined): boolean {
  if (isLoopbackAddress(remote)) return true;
  if (adminHost === undefined) return false;
  if (adminHost === '0.0.0.0' || adminHost === '::' || adminHost === '*') return true;
  const strip = (a: string | undefined) => (a?.startsWith('::ffff:') ? a.slice('::ffff:'.length) : a);
  return strip(local) === strip(adminHost);
}

/**
 * The admin handler. `path` is the request path below the proxy, starting with {@link ADMIN_PREFIX}.
 * @example
 * const admin = createAdminApi({ plan, token, proxyState: () => ({ requests }) });
 * if (path.startsWith(ADMIN_PREFIX)) return admin(req, res, path);
 */
export function createAdminApi(options: AdminApiOptions): AdminHandler {
  if (options.token === '') throw new ConfigError('the admin token must not be empty', 'adminToken');
  const expected = adminTokenDigest(options.token);
  const { plan } = options;

  return async (req, res, path) => {
    if (!adminClientAllowed(req.socket.remoteAddress, req.socket.localAddress, options.adminHost)) {
      problem(res, 403, 'ADMIN_LOOPBACK_ONLY', 'the faultline admin API is only served to loopback clients (see --admin-host)');
      return;
    }
    if (!bearerTokenMatches(req.headers.authorization, expected)) {
      sendAdminUnauthorized(res);
      return;
    }
    const route = path.slice(ADMIN_PREFIX.length).replace(/\/+$/, '');
    if (route === '/plan') {
      await serveAdminPlan(req, res, { plan, route: `${ADMIN_PREFIX}${route}` });
      return;
    }
    if (route === '/state') {
      serveAdminState(req, res, { plan, route: `${ADMIN_PREFIX}${route}`, proxyState: options.proxyState });
      return;
    }
    sendAdminNoRoute(req, res, path, ADMIN_PREFIX);
  };
}
