/**
 * The PostgreSQL schema a store lives in. Every statement names its tables through the quoted
 * form, so a schema name is never interpolated raw into SQL.
 */
import { ConfigError } from '../../core/errors.js';

/** PostgreSQL truncates identifiers longer than NAMEDATALEN - 1 bytes; two names could then collide. */
const MAX_IDENTIFIER_BYTES = 63;

/**
 * Validates a schema name and returns it as a double-quoted SQL identifier.
 * @throws ConfigError when the name is empty, too long, or contains a NUL character.
 */
export function quoteSchemaName(name: string): string {
  if (name.length === 0) throw new ConfigError('PostgreSQL schema name must not be empty', 'schema');
  if (name.includes('\u0000')) throw new ConfigError('PostgreSQL schema name must not contain NUL', 'schema');
  if (Buffer.byteLength(name, 'utf8') > MAX_IDENTIFIER_BYTES) {
    throw new ConfigError(`PostgreSQL schema name is longer than ${MAX_IDENTIFIER_BYTES} bytes`, 'schema');
  }
  return `"${name.replaceAll('"', '""')}"`;
}
