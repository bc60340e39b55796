/**
 * The PostgreSQL server tests run against: `FAULTLINE_TEST_PG_URL`, or the machine's local
 * server. When it cannot be reached, suites skip with the reason printed, except under CI=true,
 * where PostgreSQL is part of the environment and its absence is a failure.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe } from 'vitest';

export const PG_URL = process.env['FAULTLINE_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The URL without its password, for messages. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable FAULTLINE_TEST_PG_URL)';
  }
}

/** Why the server cannot be used, or null when it can. */
async function probe(url: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return error instanceof Error && error.message !== '' ? error.message : String((error as { code?: unknown }).code);
  } finally {
    await client.end().catch(() => undefined);
  }
}

let probed: Promise<string | null> | undefined;

/**
 * `describe` when PostgreSQL answers, `describe.skip` (with a printed reason) when it does not;
 * throws under CI=true instead of skipping. `what` names the suite in the message.
 */
export async function describePostgres(what: string): Promise<typeof describe> {
  probed ??= probe(PG_URL);
  const reason = await probed;
  if (reason === null) return describe;
  if (process.env['CI'] === 'true') throw new Error(`PostgreSQL at ${shownUrl(PG_URL)} is required when CI=true: ${reason}`);
  console.warn(`skipping ${what}: cannot reach PostgreSQL at ${shownUrl(PG_URL)}: ${reason}`);
  return describe.skip as unknown as typeof describe;
}

/**
 * A schema of its own for the suite it is called in (inside `describe`), dropped after the suite:
 * its name, and the store URL that selects it (`?schema=`).
 */
export function useTestSchema(prefix: string): { schema: string; url: string } {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await admin.end();
  });
  return { schema, url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}` };
}
