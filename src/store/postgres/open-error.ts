/**
 * Turns the many ways opening a PostgreSQL connection can fail (refused, DNS, auth, missing
 * database, TLS) into one-line ConfigErrors that a CLI can print without a stack trace.
 */
import { ConfigError } from '../../core/errors.js';

/** Where a store connects, for messages. Never carries credentials. */
export interface ConnectionTarget {
  host: string;
  port: number;
}

const DEFAULT_PORT = 5432;

/**
 * Parses and checks a `postgres://` URL before any socket is opened, so a typo fails fast and
 * the password in the URL never reaches an error message.
 * @throws ConfigError for anything that is not a postgres:// or postgresql:// URL.
 */
export function parsePostgresUrl(url: string): ConnectionTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('invalid PostgreSQL URL: expected postgres://user@host:port/database', 'url');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError(
      `invalid PostgreSQL URL: scheme must be postgres:// or postgresql://, got ${parsed.protocol}//`,
      'url',
    );
  }
  // `?host=/var/run/postgresql` selects a Unix socket; report that rather than the URL's host.
  const socketHost = parsed.searchParams.get('host');
  const host = socketHost ?? (parsed.hostname.length > 0 ? parsed.hostname : 'localhost');
  const port = parsed.port.length > 0 ? Number(parsed.port) : DEFAULT_PORT;
  return { host, port };
}

/** A short reason for an error thrown while connecting: the errno code, or the server's message. */
export function connectionFailureReason(error: unknown): string {
  if (typeof error !== 'object' || error === null) return firstLine(String(error));
  const { code, message, errors } = error as { code?: unknown; message?: unknown; errors?: unknown };
  // Socket errors carry an errno name (ECONNREFUSED, ENOTFOUND, ETIMEDOUT...). Node's dual-stack
  // connect wraps one error per address in an AggregateError with an empty message.
  if (typeof code === 'string' && /^E[A-Z0-9_]+$/.test(code)) return code;
  if (Array.isArray(errors) && errors.length > 0) return connectionFailureReason(errors[0]);
  if (typeof message === 'string' && message.length > 0) return firstLine(message);
  return 'unknown error';
}

/** The ConfigError reported when a store cannot connect at all. */
export function connectionError(target: ConnectionTarget, error: unknown): ConfigError {
  return new ConfigError(
    `could not connect to PostgreSQL at ${target.host}:${target.port}: ${connectionFailureReason(error)}`,
    'url',
    { cause: error },
  );
}

function firstLine(text: string): string {
  const newline = text.indexOf('\n');
  return newline === -1 ? text : text.slice(0, newline);
}
