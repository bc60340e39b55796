/**
 * The admin endpoint: read and replace the fault plan while the proxy runs, and read its counters.
 * Loopback only, and every request needs `Authorization: Bearer <token>`, since whoever can change
 * the plan can make every tool call fail.
 *
 * - `GET /plan`: the current plan (JSON).
 * - `PUT /plan`: a new plan, JSON or YAML; validated like a plan file, applied at once. Rule
 *   counters follow rule ids (see `FaultPlan.update`). 400 with `{ error }` when invalid.
 * - `GET /state`: the plan's counters, plus whatever `state` adds (the proxy's stats).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError } from '../../errors.js';
import { parseFaultPlan } from '../plan-validate.js';
import type { FaultPlan } from '../plan.js';
import { listen } from '../../listen.js';

export interface AdminServerOptions {
  plan: FaultPlan;
  /** The bearer token clients must send. */
  token: string;
  /** On 127.0.0.1; 0 (the default) picks a free port. */
  port?: number;
  /** Extra fields for `GET /state`. */
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

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers }).end(`${JSON.stringify(body)}\n`);
}

function authorized(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match === null) return false;
  const given = Buffer.from(match[1]!, 'utf8');
  // Constant time, so the token cannot be guessed a byte at a time from response timings.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

class BodyTooLarge extends Error {}

async function readText(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLarge(`plan over ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
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
  const expected = Buffer.from(options.token, 'utf8');
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const { plan } = options;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!authorized(req, expected)) {
      // Drain the body so the client sees the 401 rather than a reset connection.
      req.resume();
      return sendJson(res, 401, { error: 'unauthorized: send Authorization: Bearer <admin token>' }, { 'www-authenticate': 'Bearer realm="faultline-admin"' });
    }
    const route = `${req.method ?? 'GET'} ${new URL(req.url ?? '/', 'http://localhost').pathname}`;
    switch (route) {
      case 'GET /plan':
        return sendJson(res, 200, plan.spec);
      case 'PUT /plan': {
        let text: string;
        try {
          text = await readText(req, maxBodyBytes);
        } catch (error) {
          if (error instanceof BodyTooLarge) return sendJson(res, 413, { error: error.message });
          throw error;
        }
        try {
          // YAML is a superset of JSON: one parser takes both.
          plan.update(parseFaultPlan(text, 'PUT /plan'));
        } catch (error) {
          if (ConfigError.isInstance(error)) return sendJson(res, 400, { error: error.message });
          throw error;
        }
        options.onUpdate?.(plan);
        return sendJson(res, 200, { ok: true, rules: plan.spec.rules.map((rule) => rule.id) });
      }
      case 'GET /state':
        return sendJson(res, 200, { ...options.state?.(), plan: plan.state() });
    }
    const known = ['/plan', '/state'].includes(route.slice(route.indexOf(' ') + 1));
    if (known) return sendJson(res, 405, { error: `${route} is not supported; use GET /plan, PUT /plan or GET /state` }, { allow: route.endsWith('/plan') ? 'GET, PUT' : 'GET' });
    return sendJson(res, 404, { error: 'not found; use GET /plan, PUT /plan or GET /state' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: error instanceof Error ? error.message : String(error) });
      else res.end();
    });
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
