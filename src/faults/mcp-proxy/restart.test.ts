/**
 * `restart`: a stdio server that dies mid-session is started again. Real servers as child
 * processes (server-memory from npm, killed with SIGKILL; a small SDK server that exits in the
 * middle of a call), a real SDK Client, records in a real SQLite file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type Clock } from '../../core/clock.js';
import { createFaultPlan } from '../plan.js';
import { everythingUpstream, logsAtWarning, memoryUpstream, rpcError, startTestProxy, tempDir, writeDyingServer, type TestProxy } from './mcp-proxy.test-helpers.js';
import { startMcpProxy } from './proxy.js';

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The system clock, noting every wait the proxy asks of it (the plans here inject no delays). */
function notingClock(): { clock: Clock; waits: number[] } {
  const waits: number[] = [];
  return { waits, clock: { now: () => systemClock.now(), sleep: (ms, signal) => (waits.push(ms), systemClock.sleep(ms, signal)) } };
}

const EMPTY_PLAN = { version: 1 as const, rules: [] };

describe('restarting a stdio server that dies mid-session', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let script: string;

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-restart-');
    script = await writeDyingServer(join(dir.path, 'dying-server.mjs'));
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it('server-memory killed with SIGKILL: the call made while it is down fails and is recorded, the next one reaches the restarted server', async () => {
    const lines: string[] = [];
    const t: TestProxy = await startTestProxy(memoryUpstream(join(dir.path, 'graph.jsonl')), EMPTY_PLAN, { restart: { initialDelayMs: 1000 }, log: (line) => lines.push(line) });
    let listChanged = 0;
    t.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanged++);
    try {
      const tools = await t.client.listTools();
      const entity = { name: 'Ada Lovelace', entityType: 'person', observations: ['wrote the first program'] };
      expect(await t.client.callTool({ name: 'create_entities', arguments: { entities: [entity] } })).toMatchObject({ structuredContent: { entities: [entity] } });

      const firstPid = t.proxy.stats().upstreamPid!;
      expect(firstPid).toBeGreaterThan(0);
      process.kill(firstPid, 'SIGKILL');
      await until('the proxy to see the server go', () => t.proxy.stats().upstreamLost !== null);
      expect(t.proxy.stats()).toMatchObject({ upstreamLost: { exitCode: null, signal: 'SIGKILL' }, upstreamPid: null, restarts: 0 });

      // Within the backoff: the server is down, the call is answered and recorded as a failure.
      const down = await rpcError(t.client.callTool({ name: 'read_graph', arguments: {} }));
      expect(down.code).toBe(-32000);
      expect(down.data).toEqual({ code: 'UPSTREAM_EXITED', exit_code: null, signal: 'SIGKILL' });
      expect(await t.client.listTools()).toEqual(tools);

      await until('the restart', () => t.proxy.stats().restarts === 1);
      expect(t.proxy.stats()).toMatchObject({ upstreamLost: null, restarts: 1 });
      expect(t.proxy.stats().upstreamPid).not.toBe(firstPid);
      // A new process on the same graph file: what was written before the kill is still there.
      expect(await t.client.callTool({ name: 'read_graph', arguments: {} })).toMatchObject({ structuredContent: { entities: [entity], relations: [] } });
      expect(await t.client.listTools()).toEqual(tools);
      // Same tools, same annotations: nothing to tell the client.
      expect(listChanged).toBe(0);

      const records = await t.records();
      expect(records.map((r) => [r.tool_name, r.status, r.failure_category, r.failure_type, r.error_code])).toEqual([
        ['create_entities', 'success', null, null, null],
        ['read_graph', 'failure', 'system', 'dependency_down', 'UPSTREAM_EXITED'],
        ['read_graph', 'success', null, null, null],
      ]);
      expect(lines).toEqual([
        expect.stringMatching(/^the upstream MCP server \(.*\) was killed by SIGKILL; restarting it \(tools\/call fails with -32000 until it is back\)$/),
        'restarted the upstream MCP server (attempt 1 of 5)',
      ]);
    } finally {
      await t.close();
    }
  });

  it('a server that exits during a call: the call fails as ECONNRESET, the restarted server lists new tools and the client is told', async () => {
    const counter = join(dir.path, 'starts-changing.txt');
    const t = await startTestProxy({ command: process.execPath, args: [script, 'exit:3', counter], stderr: 'ignore' }, EMPTY_PLAN, { restart: { initialDelayMs: 20 } });
    let notified!: () => void;
    const listChanged = new Promise<void>((resolve) => (notified = resolve));
    t.client.setNotificationHandler(ToolListChangedNotificationSchema, () => notified());
    try {
      expect((await t.client.listTools()).tools.map((tool) => tool.name)).toEqual(['ping', 'slow_write', 'generation_1']);
      const running = await rpcError(t.client.callTool({ name: 'slow_write', arguments: { row: 1 } }));
      expect(running.data).toEqual({ code: 'ECONNRESET', exit_code: 3, signal: null });

      await listChanged;
      expect((await t.client.listTools()).tools.map((tool) => tool.name)).toEqual(['ping', 'slow_write', 'generation_2']);
      expect(await t.client.callTool({ name: 'generation_2', arguments: {} })).toEqual({ content: [{ type: 'text', text: '2' }] });
      expect(await t.client.callTool({ name: 'ping', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'pong' }] });

      const records = await t.records();
      expect(records.map((r) => [r.tool_name, r.status, r.error_code])).toEqual([
        ['slow_write', 'failure', 'ECONNRESET'],
        ['generation_2', 'success', null],
        ['ping', 'success', null],
      ]);
      // The catalog was read again: ping's annotations (readOnlyHint) still make it idempotent.
      expect(records[2]!.idempotent).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('server-everything killed: the restarted server gets the logging level a client set, and the client no logs below it', async () => {
    const t = await startTestProxy(everythingUpstream(), EMPTY_PLAN, { restart: { initialDelayMs: 20 } });
    try {
      const { logs, uris: [first, second, third] } = await logsAtWarning(t.client);
      // server-everything acknowledges a subscription with an info log, sent before its answer.
      await t.client.subscribeResource({ uri: first });
      expect(logs).toEqual([]);

      process.kill(t.proxy.stats().upstreamPid!, 'SIGKILL');
      await until('the restart', () => t.proxy.stats().restarts === 1);
      // The level holds back this log (and that of the first subscription, which the proxy renews there).
      await t.client.subscribeResource({ uri: second });
      expect(logs).toEqual([]);

      // Logs do reach the client from the restarted server, at the level it asks for.
      await t.client.setLoggingLevel('info');
      await t.client.subscribeResource({ uri: third });
      expect(logs).toContain(`info: Received Subscribe Resource request for URI: ${third} `);
    } finally {
      await t.close();
    }
  });

  it('gives up after maxRestarts attempts with doubling waits, and then answers like a proxy without restart', async () => {
    const counter = join(dir.path, 'starts-once.txt');
    const lines: string[] = [];
    const { clock, waits } = notingClock();
    const t = await startTestProxy({ command: process.execPath, args: [script, 'exit:3', counter, 'once'], stderr: 'ignore' }, EMPTY_PLAN, {
      restart: { maxRestarts: 3, initialDelayMs: 10, maxDelayMs: 25 },
      clock,
      log: (line) => lines.push(line),
    });
    try {
      await rpcError(t.client.callTool({ name: 'slow_write', arguments: {} }));
      await t.proxy.upstreamClosed;
      expect(waits).toEqual([10, 20, 25]);
      expect(t.proxy.stats()).toMatchObject({ restarts: 0, upstreamLost: { exitCode: 3 }, upstreamPid: null });
      expect(lines).toHaveLength(5);
      expect(lines[0]).toMatch(/exited with code 3; restarting it/);
      for (const n of [1, 2, 3]) expect(lines[n]).toMatch(new RegExp(`^restart ${n} of 3 failed: cannot connect to the upstream MCP server \\(.*\\): it exited with code 5 before the MCP handshake$`));
      expect(lines[4]).toBe('giving up after 3 restart attempt(s); tools/call now fails with -32000 and tools/list answers from the last list');
      expect((await rpcError(t.client.callTool({ name: 'ping', arguments: {} }))).data).toEqual({ code: 'UPSTREAM_EXITED', exit_code: 3, signal: null });
    } finally {
      await t.close();
    }
  });

  it('counts the restart budget per outage: a server that came back and answered gets the whole budget at its next exit', async () => {
    const counter = join(dir.path, 'starts-per-outage.txt');
    const lines: string[] = [];
    const { clock, waits } = notingClock();
    const t = await startTestProxy({ command: process.execPath, args: [script, 'exit:3', counter], stderr: 'ignore' }, EMPTY_PLAN, {
      restart: { maxRestarts: 1, initialDelayMs: 10 },
      clock,
      log: (line) => lines.push(line),
    });
    try {
      for (let outage = 1; outage <= 3; outage++) {
        // slow_write makes the server exit half way; a budget of one restart over the proxy's life would end at the second.
        await rpcError(t.client.callTool({ name: 'slow_write', arguments: {} }));
        await until(`restart ${outage}`, () => t.proxy.stats().restarts === outage && t.proxy.stats().upstreamLost === null);
        expect(await t.client.callTool({ name: 'ping', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'pong' }] });
      }
      expect(waits).toEqual([10, 10, 10]);
      expect(lines.filter((line) => line.startsWith('restarted the upstream MCP server'))).toEqual(Array(3).fill('restarted the upstream MCP server (attempt 1 of 1)'));
      expect(lines.filter((line) => line.startsWith('giving up'))).toEqual([]);
      expect(await readFile(counter, 'utf8')).toBe('4');
    } finally {
      await t.close();
    }
  });

  it('closing while a restart waits stops it: no server is left running', async () => {
    const counter = join(dir.path, 'starts-closing.txt');
    const t = await startTestProxy({ command: process.execPath, args: [script, 'exit:3', counter], stderr: 'ignore' }, EMPTY_PLAN, { restart: { initialDelayMs: 60_000 } });
    await rpcError(t.client.callTool({ name: 'slow_write', arguments: {} }));
    const started = Date.now();
    await t.close();
    expect(Date.now() - started).toBeLessThan(10_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await readFile(counter, 'utf8')).toBe('1');
  });

  it('refuses restart for an upstream that is not a command', async () => {
    await expect(startMcpProxy({ upstream: { url: 'http://127.0.0.1:9/mcp' }, plan: createFaultPlan(EMPTY_PLAN), store: ':memory:', restart: {} })).rejects.toThrow(
      'restart applies to a stdio server (a command)',
    );
  });
});
