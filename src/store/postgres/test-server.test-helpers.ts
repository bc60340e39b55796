/**
 * The PostgreSQL server tests run against: `FAULTLINE_TEST_PG_URL`, or the machine's local
 * server. When it cannot be reached, suites skip with the reason printed, except under CI=true,
 * where PostgreSQL is part of the environment and its absence is a failure.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
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
 * Schemas of their own for the tests of the suite it is called in (inside `describe`), all dropped
 * after the suite: each call of the function returned names a new one, and the store URL that
 * selects it (`?schema=`).
 */
export function useTestSchemas(prefix: string): () => { schema: string; url: string } {
  const made: string[] = [];
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    for (const schema of made) await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await admin.end();
  });
  return () => {
    const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
    made.push(schema);
    return { schema, url: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}` };
  };
}

/**
 * A schema of its own for the suite it is called in (inside `describe`), dropped after the suite:
 * its name, and the store URL that selects it (`?schema=`).
 */
export function useTestSchema(prefix: string): { schema: string; url: string } {
  return useTestSchemas(prefix)();
}

/** Every table of a faultline store. */
const STORE_TABLES = ['tool_executions', 'rollup_hourly', 'rollup_duration', 'rollup_failures', 'failure_signatures', 'trajectories', 'corrections'];

/**
 * Another session holding ACCESS EXCLUSIVE locks on the tables of the store in `schema`, in an
 * open transaction, until released: every read and write of them waits, with no error. With
 * `mode: 'EXCLUSIVE'`, only writes wait: reads go on.
 */
export async function lockStoreTables(schema: string, mode: 'ACCESS EXCLUSIVE' | 'EXCLUSIVE' = 'ACCESS EXCLUSIVE'): Promise<{ release: () => Promise<void> }> {
  const locker = new pg.Client({ connectionString: PG_URL });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${STORE_TABLES.map((t) => `${pg.escapeIdentifier(schema)}.${t}`).join(', ')} IN ${mode} MODE`);
  let released: Promise<void> | undefined;
  return { release: () => (released ??= locker.query('ROLLBACK').then(() => locker.end())) };
}

export interface PostgresProxy {
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Keeps every connection open, and accepts new ones, but passes nothing more either way: a server that stopped answering. */
  freeze(): void;
  /** How many connections `silenceOn` has silenced so far. */
  readonly silenced: number;
}

/**
 * A TCP forwarder to the server whose stop() cuts every live connection, to simulate the server
 * going away. With `silenceOn`, a connection whose client sends that text (a statement naming a
 * table) is frozen from that message on, as freeze() freezes them all: the server stops
 * answering one reader after it has opened the store.
 */
export async function startPostgresProxy(targetHost: string, targetPort: number, options: { silenceOn?: string } = {}): Promise<PostgresProxy> {
  const sockets = new Set<net.Socket>();
  const silencers = new Set<() => void>();
  let frozen = false;
  let silenced = 0;
  let server: net.Server | undefined;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = net.createServer((client) => {
        const upstream = net.connect(targetPort, targetHost);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        let silent = frozen;
        const silence = () => {
          silent = true;
          upstream.unpipe(client);
        };
        if (!silent) upstream.pipe(client);
        client.on('data', (chunk: Buffer) => {
          if (!silent && options.silenceOn !== undefined && chunk.includes(options.silenceOn)) {
            silence();
            silenced++;
          }
          if (!silent) upstream.write(chunk);
        });
        silencers.add(silence);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as net.AddressInfo).port;
        server = s;
        resolve();
      });
    });
  await listen();
  return {
    get port() {
      return port;
    },
    get silenced() {
      return silenced;
    },
    async stop() {
      const s = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      if (s !== undefined) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
    restart: listen,
    freeze() {
      frozen = true;
      for (const silence of silencers) silence();
    },
  };
}
