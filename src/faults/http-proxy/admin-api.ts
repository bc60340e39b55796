/**
 * The proxy's admin API: read the fault plan, swap it while traffic flows, read its counters.
 * Changing the plan changes what every client of the proxy gets, so it takes a bearer token,
 * and by default it is served to loopback clients only.
 *
 *   GET /__faultline/plan    the current plan (JSON)
 *   PUT /__faultline/plan    a new plan (YAML or JSON body); 400 with the one-line error if it is invalid
 *   GET /__faultline/state   the plan's counters and the proxy's own
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../../errors.js';
import type { FaultPlan } from '../plan.js';
import { parseFaultPlan } from '../plan-validate.js';

export const ADMIN_PREFIX = '/__faultline';
const MAX_PLAN_BYTES = 1024 * 1024;

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

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

function problem(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { code, message } }, headers);
}

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

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Compares digests, so neither the length nor a common prefix of the token leaks through timing. */
function tokenMatches(header: string | undefined, expected: Buffer): boolean {
  if (header === undefined) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) return false;
  return timingSafeEqual(digest(match[1]!), expected);
}

function readText(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(undefined);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * The admin handler. `path` is the request path below the proxy, starting with {@link ADMIN_PREFIX}.
 * @example
 * const admin = createAdminApi({ plan, token, proxyState: () => ({ requests }) });
 * if (path.startsWith(ADMIN_PREFIX)) return admin(req, res, path);
 */
export function createAdminApi(options: AdminApiOptions): AdminHandler {
  if (options.token === '') throw new ConfigError('the admin token must not be empty', 'adminToken');
  const expected = digest(options.token);
  const { plan } = options;

  return async (req, res, path) => {
    if (!adminClientAllowed(req.socket.remoteAddress, req.socket.localAddress, options.adminHost)) {
      problem(res, 403, 'ADMIN_LOOPBACK_ONLY', 'the faultline admin API is only served to loopback clients (see --admin-host)');
      return;
    }
    if (!tokenMatches(req.headers.authorization, expected)) {
      problem(res, 401, 'UNAUTHORIZED', 'the faultline admin API needs "Authorization: Bearer <admin token>"', { 'www-authenticate': 'Bearer realm="faultline"' });
      return;
    }
    const method = req.method ?? 'GET';
    const route = path.slice(ADMIN_PREFIX.length).replace(/\/+$/, '');
    const only = (allowed: string[]): boolean => {
      if (allowed.includes(method)) return true;
      problem(res, 405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${ADMIN_PREFIX}${route}; use ${allowed.join(' or ')}`, { allow: allowed.join(', ') });
      return false;
    };
    if (route === '/plan') {
      if (!only(['GET', 'PUT'])) return;
      if (method === 'GET') {
        sendJson(res, 200, plan.spec);
        return;
      }
      const text = await readText(req, MAX_PLAN_BYTES);
      if (text === undefined) {
        problem(res, 413, 'PLAN_TOO_LARGE', `the plan exceeds ${MAX_PLAN_BYTES} bytes`);
        return;
      }
      const json = /\bjson\b/i.test(req.headers['content-type'] ?? '');
      try {
        // The source name decides the parser: JSON for a JSON body, YAML (a superset) otherwise.
        plan.update(parseFaultPlan(text, json ? 'plan.json' : 'plan'));
      } catch (error) {
        if (!ConfigError.isInstance(error)) throw error;
        problem(res, 400, 'INVALID_PLAN', error.message);
        return;
      }
      sendJson(res, 200, plan.spec);
      return;
    }
    if (route === '/state') {
      if (only(['GET'])) sendJson(res, 200, { plan: plan.state(), proxy: options.proxyState() });
      return;
    }
    problem(res, 404, 'NO_ROUTE', `no admin route ${method} ${path}; try ${ADMIN_PREFIX}/plan or ${ADMIN_PREFIX}/state`);
  };
}
