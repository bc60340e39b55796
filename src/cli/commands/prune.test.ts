/**
 * Retention: `faultline prune` on a real SQLite file and a real PostgreSQL schema, the runtime's
 * and the proxies' `retention` option, and bad input (one line, exit 2).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_SERVER } from '../../faults/mcp-proxy/mcp-proxy.test-helpers.js';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { defineTool } from '../../runtime/define-tool.js';
import { createRuntime } from '../../runtime/runtime.js';
import { createMemoryStore } from '../../store/memory/memory-store.js';
import { openStore } from '../../store/open-store.js';
import { describePostgres, useTestSchema } from '../../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { StatsFilter, Store } from '../../core/store-types.js';
import { createToolCatalog } from '../../tools/catalog.js';
import { startMockToolServer, type MockToolServer } from '../../tools/http-server.js';
import { runCapture, startCli, waitFor, writeStoreFile } from '../run-cli.test-helpers.js';

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'faultline-prune-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Records 45, 20 and 0 days old, successes and failures of two tools, a few minutes apart. */
function datedRecords(now = Date.now()): ToolExecutionRecord[] {
  const out: ToolExecutionRecord[] = [];
  for (const [ageDays, n] of [[45, 30], [20, 20], [0, 10]] as const) {
    for (let i = 0; i < n; i++) {
      const created_at = new Date(now - ageDays * DAY - i * 60_000).toISOString();
      const tool_name = i % 2 === 0 ? 'get_weather' : 'search_orders';
      out.push(
        i % 3 === 0
          ? makeFailureRecord({ created_at, tool_name, duration_ms: 10 + i, error_message: `order ${i} not found`, failure_stage: 'execution', failure_category: 'business', failure_type: 'not_found', error_code: 'HTTP_404' })
          : makeRecord({ created_at, tool_name, duration_ms: 5 + i }),
      );
    }
  }
  return out;
}

const window = (now: number): StatsFilter => ({ since: now - 100 * DAY, until: now + DAY });

/** What the stats read: the same for the pruned store and a fresh store holding `kept`. */
async function statsOf(store: Store, filter: StatsFilter) {
  return {
    tools: (await store.toolStats(filter)).map((t) => ({ ...t, avg_ms: t.avg_ms === null ? null : Math.round(t.avg_ms * 1e6) / 1e6 })),
    breakdown: await store.failureBreakdown(filter),
    hourly: await store.hourly(filter),
    signatures: (await store.signatures(filter)).map(({ first_seen: _first, ...rest }) => rest),
  };
}

async function recomputed(kept: readonly ToolExecutionRecord[], filter: StatsFilter) {
  const reference = createMemoryStore();
  await reference.insert(kept);
  return statsOf(reference, filter);
}

async function expectOneLineError(argv: string[], message: RegExp): Promise<void> {
  const run = await runCapture(argv, dir);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(message);
  expect(run.stderr.split('\n')).toHaveLength(2);
  expect(run.code).toBe(2);
}

describe('faultline prune on a SQLite store', () => {
  it('deletes records older than --older-than, leaving stats equal to those of the records that remain', async () => {
    const now = Date.now();
    const records = datedRecords(now);
    const db = await writeStoreFile(join(dir, 'prune.db'), records);
    const kept = records.filter((r) => Date.parse(r.created_at) >= now - 30 * DAY);

    const dry = await runCapture(['prune', '--older-than', '30d', '--db', db, '--dry-run', '--json'], dir);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, deleted: 30, remaining: 30 });

    const run = await runCapture(['prune', '--older-than', '30d', '--db', db], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^faultline prune: deleted 30 records created before \\S+Z from ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; 30 remain\\n$`));

    const store = createSqliteStore({ path: db, readonly: true });
    try {
      expect(await store.count()).toBe(kept.length);
      expect(await statsOf(store, window(now))).toEqual(await recomputed(kept, window(now)));
    } finally {
      await store.close();
    }

    const again = await runCapture(['prune', '--older-than', new Date(now - 10 * DAY).toISOString(), '--db', db, '--json'], dir);
    expect(again.code).toBe(0);
    const result = JSON.parse(again.stdout) as Record<string, unknown>;
    expect(result).toEqual({ store: db, older_than: new Date(now - 10 * DAY).toISOString(), cutoff: new Date(now - 10 * DAY).toISOString(), dry_run: false, deleted: 20, remaining: 10 });
  });

  it('answers a bad --older-than, a missing one, a missing store and a store that is down with one line and exit 2', async () => {
    const db = await writeStoreFile(join(dir, 'bad.db'), datedRecords());
    await expectOneLineError(['prune', '--older-than', '3x', '--db', db], /^faultline: invalid --older-than "3x": expected a duration like 90m, 24h or 7d, or an ISO date/);
    await expectOneLineError(['prune', '--older-than', '0d', '--db', db], /^faultline: invalid --older-than "0d": the duration must be positive/);
    await expectOneLineError(['prune', '--db', db], /^faultline: --older-than is required/);
    const missing = join(dir, 'missing.db');
    await expectOneLineError(['prune', '--older-than', '30d', '--db', missing], /^faultline: no faultline store at /);
    expect(existsSync(missing)).toBe(false);
    // Nothing listens on port 9: the server is down.
    await expectOneLineError(['prune', '--older-than', '30d', '--db', 'postgres://postgres@127.0.0.1:9/test'], /^faultline: .*127\.0\.0\.1:9/);
    const store = createSqliteStore({ path: db, readonly: true });
    expect(await store.count()).toBe(60);
    await store.close();
  });
});

const describePg = await describePostgres('prune on PostgreSQL');

describePg('faultline prune on a PostgreSQL store', () => {
  const target = useTestSchema('faultline_prune');

  it('deletes the old records and their share of the rollups', async () => {
    const now = Date.now();
    const records = datedRecords(now);
    const writer = await openStore(target.url);
    await writer.insert(records);
    await writer.close();
    const kept = records.filter((r) => Date.parse(r.created_at) >= now - 30 * DAY);

    const run = await runCapture(['prune', '--older-than', '30d', '--db', target.url, '--json'], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ deleted: 30, remaining: 30, dry_run: false });

    const store = await openStore(target.url, { readonly: true });
    try {
      expect(await store.count()).toBe(kept.length);
      expect(await statsOf(store, window(now))).toEqual(await recomputed(kept, window(now)));
    } finally {
      await store.close();
    }
  });
});

describe('retention while running', () => {
  let upstream: MockToolServer;
  beforeAll(async () => {
    upstream = await startMockToolServer({ catalog: createToolCatalog({ seed: 1 }), port: 0 });
  });
  afterAll(async () => {
    await upstream.close();
  });

  const countOf = async (db: string) => {
    const store = createSqliteStore({ path: db, readonly: true });
    try {
      return await store.count();
    } finally {
      await store.close();
    }
  };
  const until = async (db: string, n: number) => {
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
      if ((await countOf(db)) === n) return;
    }
    throw new Error(`the store never came down to ${n} records (it holds ${await countOf(db)})`);
  };

  it('createRuntime({ retention }) prunes the store it records to when it starts, and keeps new records', async () => {
    const db = await writeStoreFile(join(dir, 'runtime.db'), datedRecords());
    const echo = defineTool({ name: 'echo', description: 'Echoes.', input: { type: 'object' }, execute: async (args) => args });
    const rt = createRuntime({ tools: [echo], store: `sqlite:${db}`, retention: '30d', recording: { spool: { path: join(dir, 'runtime-spool', 'spool.jsonl') } } });
    await rt.execute('echo', { a: 1 });
    await until(db, 31);
    await rt.close();
    expect(await countOf(db)).toBe(31);
    expect(rt.stats()).toMatchObject({ offered: 1, stored: 1, dropped: 0 });
  });

  it('createRuntime refuses a bad retention, and retention without a store', () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes.', input: { type: 'object' }, execute: async (args) => args });
    expect(() => createRuntime({ tools: [echo], store: ':memory:', retention: '3x' })).toThrow(/invalid retention "3x": expected a duration like 90m, 24h or 30d/);
    expect(() => createRuntime({ tools: [echo], store: ':memory:', retention: -5 })).toThrow(/invalid retention -5/);
    expect(() => createRuntime({ tools: [echo], retention: '30d' })).toThrow(/retention needs a store/);
  });

  it('proxy --retention prunes its --db at start; a bad one is one line, exit 2', async () => {
    const db = await writeStoreFile(join(dir, 'proxy.db'), datedRecords());
    await expectOneLineError(['proxy', '--target', upstream.url, '--port', '0', '--db', db, '--retention', '3x'], /^faultline: invalid --retention "3x"/);
    const proxy = startCli(['proxy', '--target', upstream.url, '--port', '0', '--db', db, '--retention', '30d'], dir);
    try {
      await waitFor(() => (proxy.captured.stdout().includes('\n') ? true : undefined), 'the proxy to listen', 10_000);
      await until(db, 30);
    } finally {
      proxy.stop();
      expect(await proxy.exit).toBe(0);
    }
  });

  it('mcp-proxy --retention prunes its --db once the server is up; a bad one is one line, exit 2', { timeout: 60_000 }, async () => {
    const db = await writeStoreFile(join(dir, 'mcp.db'), datedRecords());
    await expectOneLineError(['mcp-proxy', '--db', db, '--retention', '0d', '--', process.execPath, EVERYTHING_SERVER], /^faultline: invalid --retention "0d": the duration must be positive/);
    const proxy = startCli(['mcp-proxy', '--db', db, '--retention', '30d', '--port', '0', '--', process.execPath, EVERYTHING_SERVER], dir);
    try {
      await until(db, 30);
    } finally {
      proxy.stop();
      expect(await proxy.exit).toBe(0);
    }
  });
});
