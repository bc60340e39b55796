/**
 * What an agent is told about a 401 or 403 (seed 000 section 1.1: stop retrying, escalate, and
 * leak no sensitive paths). An upstream's auth message often names what the agent has no
 * business seeing: internal paths, hostnames, principals, the scopes it lacks. None of that helps
 * the agent: escalating needs only which tool refused and how (401 or 403, the code). So the
 * agent's error message is rebuilt from those, and of the upstream's body only the RFC 6750
 * error code of a `WWW-Authenticate` challenge is kept (`invalid_token` tells a refresh from a
 * missing grant; its realm and scope would name internals); the record keeps the (redacted)
 * upstream message for the operators who read it.
 */
import type { Classification } from './classify.js';

const WHAT: Record<string, string> = {
  unauthorized: 'the credentials were rejected',
  credential_expired: 'the credentials have expired',
  forbidden: 'permission was denied',
};

/** The agent-facing message of an auth failure: the tool, what happened, the status and code. */
export function authFailureMessage(toolName: string, c: Classification): string {
  const what = WHAT[c.type] ?? 'access was refused';
  const status = c.status === undefined ? '' : `HTTP ${c.status}, `;
  return `${toolName}: ${what} (${status}${c.code}); the upstream's details are withheld from the agent and kept in the record for the operators`;
}

const CHALLENGE_ERROR = /\berror="([A-Za-z0-9_.-]{1,64})"/;

/** What of an auth failure's body the agent may see: the challenge's error code, or nothing. */
export function authFailureBody(body: unknown): { auth_error: string } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const challenge = (body as Record<string, unknown>)['www_authenticate'];
  const code = typeof challenge === 'string' ? CHALLENGE_ERROR.exec(challenge)?.[1] : undefined;
  return code === undefined ? undefined : { auth_error: code };
}
