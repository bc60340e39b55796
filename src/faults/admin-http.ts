/**
 * What the two proxies' admin APIs share (the HTTP proxy's under `/__faultline`, the MCP proxy's
 * on its own port): bearer-token checks, JSON answers, and one error shape,
 * `{ "error": { "code": "INVALID_PLAN", "message": "…" } }`, so a script that drives either one
 * reads failures the same way.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

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
