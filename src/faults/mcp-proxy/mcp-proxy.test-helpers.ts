/**
 * Shared by the MCP proxy tests: real MCP servers from npm as upstreams, a proxy in-process
 * with a real SQLite store in a temp directory, and a real SDK Client connected to it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { ToolExecutionRecord } from '../../record/types.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { createFaultPlan, type FaultPlan } from '../plan.js';
import type { FaultPlanSpec } from '../plan-spec.js';
import { startMcpProxy, type McpProxy, type McpProxyOptions } from './proxy.js';
import type { McpUpstream } from './upstream.js';

const modules = (path: string) => fileURLToPath(new URL(`../../../node_modules/${path}`, import.meta.url));

/** `@modelcontextprotocol/server-everything`'s entry point (pass `stdio`). */
export const EVERYTHING_SERVER = modules('@modelcontextprotocol/server-everything/dist/index.js');
/** `@modelcontextprotocol/server-filesystem`'s entry point (pass the allowed directories). */
export const FILESYSTEM_SERVER = modules('@modelcontextprotocol/server-filesystem/dist/index.js');
/** `@modelcontextprotocol/inspector-cli`'s bin. */
export const INSPECTOR_CLI = modules('.bin/mcp-inspector-cli');

export function everythingUpstream(): McpUpstream {
  return { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' };
}

export function filesystemUpstream(dir: string): McpUpstream {
  return { command: process.execPath, args: [FILESYSTEM_SERVER, dir], stderr: 'ignore' };
}

export async function tempDir(prefix = 'faultline-mcp-'): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** Every record in a SQLite store file, oldest first. */
export async function readRecords(dbPath: string): Promise<ToolExecutionRecord[]> {
  const store = createSqliteStore({ path: dbPath, readonly: true });
  try {
    return await store.query({ limit: 10_000 });
  } finally {
    await store.close();
  }
}

export interface TestProxy {
  proxy: McpProxy;
  plan: FaultPlan;
  client: Client;
  dbPath: string;
  /** Records written so far (flushes first). */
  records(): Promise<ToolExecutionRecord[]>;
  /** Waits until there are at least `count` records and returns the newest. */
  nthRecord(count: number, timeoutMs?: number): Promise<ToolExecutionRecord>;
  close(): Promise<void>;
}

/** A proxy in front of `upstream`, recording into a fresh SQLite file, with an SDK Client connected in-process. */
export async function startTestProxy(upstream: McpUpstream, spec: FaultPlanSpec, extra: Partial<McpProxyOptions> = {}): Promise<TestProxy> {
  const dir = await tempDir();
  const dbPath = join(dir.path, 'records.db');
  const plan = createFaultPlan(spec);
  const proxy = await startMcpProxy({ upstream, plan, store: dbPath, recording: { flushIntervalMs: 10 }, ...extra });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await proxy.connect(serverSide);
  const client = new Client({ name: 'faultline-test-agent', version: '1.2.3' });
  await client.connect(clientSide);
  const records = async () => {
    await proxy.flush();
    return readRecords(dbPath);
  };
  return {
    proxy,
    plan,
    client,
    dbPath,
    records,
    async nthRecord(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const all = await records();
        if (all.length >= count) return all[count - 1]!;
        if (Date.now() > deadline) throw new Error(`expected ${count} records, found ${all.length}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      await client.close();
      await proxy.close();
      await dir.remove();
    },
  };
}
