/**
 * What the two proxies' admin APIs share (the HTTP proxy's under `/__faultline`, the MCP proxy's
 * on its own port): bearer-token checks, JSON answers, the `/plan` route (GET and HEAD answer the
 * plan, PUT replaces it and answers the plan now in force), the `/state` route (`{ plan, proxy }`),
 * the 404 that lists those routes, and one error shape,
 * `{ "error": { "code": "INVALID_PLAN", "message": "…" } }`, so a script that drives either one
 * reads answers and failures the same way.
 */
import { notify, warnListenerError } from '../core/notify.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../core/errors.js';
import type { FaultPlan, FaultPlanState } from './plan.js';
import { parseFaultPlan } from './plan-validate.js';

const onUpdateFailed = warnListenerError('onUpdate');

/** Plan bodies larger than this are refused (413 PLAN_TOO_LARGE). */
export const ADMIN_MAX_PLAN_BYTES = 1024 * 1024;

/** The codes of admin errors. */
export type AdminErrorCode =
  | 'ADMIN_LOOPBACK_ONLY'
  | 'UNAUTHORIZED'
  | 'METHOD_NOT_ALLOWED'
  | 'NO_ROUTE'
  | 'PLAN_TOO_LARGE'
  | 'INVALID_PLAN'
  | 'INTERNAL_ERROR';

export function sendAdminJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  });
  res.end(text);
}

export function sendAdminError(res: ServerResponse, status: number, code: AdminErrorCode, message: string, headers: Record<string, string> = {}): void {
  sendAdminJson(res, status, { error: { code, message } }, headers);
}

/** The 401 both admin APIs answer without the right `Authorization: Bearer <token>`. */
export function sendAdminUnauthorized(res: ServerResponse): void {
  sendAdminError(res, 401, 'UNAUTHORIZED', 'the faultline admin API needs "Authorization: Bearer <admin token>"', {
    'www-authenticate': 'Bearer realm="faultline"',
  });
}

/** Where both proxies' commands read the admin token from when no `--admin-token` is given. */
export const ADMIN_TOKEN_ENV = 'FAULTLINE_ADMIN_TOKEN';

/**
 * The admin token a command was given: `--admin-token`'s value, else `$FAULTLINE_ADMIN_TOKEN`'s,
 * trimmed; undefined when neither holds one (the command then generates one). A bearer token
 * never holds whitespace, so a token read with `$(cat token)` or from a secrets file that ends in
 * a newline could otherwise never be matched.
 */
export function configuredAdminToken(flag: string | undefined, env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const given of [flag, env[ADMIN_TOKEN_ENV]]) {
    const token = given?.trim();
    if (token !== undefined && token !== '') return token;
  }
  return undefined;
}

/** What {@link bearerTokenMatches} compares against: a digest of the configured token. */
export function adminTokenDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Compares digests, so neither the length nor a common prefix of the token leaks through timing. */
export function bearerTokenMatches(header: string | undefined, expected: Buffer): boolean {
  if (header === undefined) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) return false;
  return timingSafeEqual(adminTokenDigest(match[1]!), expected);
}

/** The request body as text, or undefined when it is larger than `limit` bytes (the rest is drained). */
export function readAdminBody(req: IncomingMessage, limit: number = ADMIN_MAX_PLAN_BYTES): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * The 404 both admin APIs answer: the request, then the routes there are, below `prefix` (the
 * HTTP proxy's `/__faultline`; the MCP proxy's own port serves them at its root).
 */
export function sendAdminNoRoute(req: IncomingMessage, res: ServerResponse, path: string, prefix = ''): void {
  const routes = `GET ${prefix}/plan, PUT ${prefix}/plan or GET ${prefix}/state`;
  sendAdminError(res, 404, 'NO_ROUTE', `no admin route ${req.method ?? 'GET'} ${path}; use ${routes}`);
}

/** The 500 both admin APIs answer when serving a request failed. */
export function sendAdminInternalError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) res.end();
  else sendAdminError(res, 500, 'INTERNAL_ERROR', error instanceof Error ? error.message : String(error));
}

/**
 * Whether `req`'s method is one `route` (as the client wrote it) takes; answers 405 with `Allow`
 * when not. HEAD goes wherever GET does: node sends a HEAD answer's headers without its body.
 */
export function adminMethodAllowed(req: IncomingMessage, res: ServerResponse, route: string, allowed: readonly ('GET' | 'PUT')[]): boolean {
  const method = req.method ?? 'GET';
  const methods: string[] = allowed.includes('GET') ? ['GET', 'HEAD', ...allowed.filter((m) => m !== 'GET')] : [...allowed];
  if (methods.includes(method)) return true;
  // Drained, so the client reads the 405 rather than a reset connection.
  req.resume();
  sendAdminError(res, 405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${route}; use ${methods.join(', ')}`, { allow: methods.join(', ') });
  return false;
}

export interface AdminPlanOptions {
  plan: Pick<FaultPlan, 'spec' | 'update'>;
  /** The route as the client wrote it, for messages. */
  route: string;
  /** Default {@link ADMIN_MAX_PLAN_BYTES}. */
  maxBodyBytes?: number;
  /** Called after the plan was replaced. */
  onUpdate?: () => void;
}

/**
 * The `/plan` route of either admin API: GET (and HEAD) answer the plan; PUT takes a YAML or JSON
 * plan, validated as a plan file is, and answers the plan now in force (400 INVALID_PLAN with the
 * one-line error, 413 PLAN_TOO_LARGE; the plan in force stays as it was).
 */
export async function serveAdminPlan(req: IncomingMessage, res: ServerResponse, options: AdminPlanOptions): Promise<void> {
  const { plan } = options;
  if (!adminMethodAllowed(req, res, options.route, ['GET', 'PUT'])) return;
  if (req.method === 'PUT') {
    const limit = options.maxBodyBytes ?? ADMIN_MAX_PLAN_BYTES;
    const text = await readAdminBody(req, limit);
    if (text === undefined) return sendAdminError(res, 413, 'PLAN_TOO_LARGE', `the plan exceeds ${limit} bytes`);
    const json = /\bjson\b/i.test(req.headers['content-type'] ?? '');
    try {
      // The source name decides the parser: JSON for a JSON body, YAML (a superset) otherwise.
      plan.update(parseFaultPlan(text, json ? 'plan.json' : 'plan'));
    } catch (error) {
      if (ConfigError.isInstance(error)) return sendAdminError(res, 400, 'INVALID_PLAN', error.message);
      throw error;
    }
    // The plan is in force already: a listener that throws must not turn that into an error answer.
    if (options.onUpdate !== undefined) notify(options.onUpdate, undefined, onUpdateFailed);
  }
  sendAdminJson(res, 200, plan.spec);
}

/** What `GET /state` answers on either admin API. */
export interface AdminState {
  /** The plan's counters: calls per tool, and per rule the calls it matched and the faults it injected. */
  plan: FaultPlanState;
  /** The proxy's own counters. */
  proxy: Record<string, unknown>;
}

export interface AdminStateOptions {
  plan: Pick<FaultPlan, 'state'>;
  /** The route as the client wrote it, for messages. */
  route: string;
  proxyState: () => Record<string, unknown>;
  /**
   * Also puts the proxy's counters at the top level of the answer, beside `plan` and `proxy`:
   * the MCP proxy answered `{ ...counters, plan }` before both answered alike, and scripts read it so.
   */
  proxyFieldsAtTopLevel?: boolean;
}

/** The `/state` route of either admin API: GET (and HEAD) answer {@link AdminState}. */
export function serveAdminState(req: IncomingMessage, res: ServerResponse, options: AdminStateOptions): void {
  if (!adminMethodAllowed(req, res, options.route, ['GET'])) return;
  const state: AdminState = { plan: options.plan.state(), proxy: options.proxyState() };
  sendAdminJson(res, 200, options.proxyFieldsAtTopLevel === true ? { ...state.proxy, ...state } : state);
}
