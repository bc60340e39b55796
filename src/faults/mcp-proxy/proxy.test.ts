/**
 * The proxy in front of a real MCP server from npm (server-everything over stdio), with a real SDK
 * Client on the other side and records in a real SQLite file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EVERYTHING_SERVER, everythingUpstream, readRecords, rpcError, startTestProxy, tempDir, writeDyingServer, type TestProxy } from './mcp-proxy.test-helpers.js';
import { waitFor } from '../../cli/run-cli.test-helpers.js';
import { connectUpstream, McpUpstreamError } from './upstream.js';

describe('mcp proxy in front of server-everything (stdio)', () => {
  let t: TestProxy;
  let direct: Client;

  beforeAll(async () => {
    t = await startTestProxy(everythingUpstream(), { version: 1, rules: [] });
    // Declaring what the proxied client declares (nothing): the proxy forwards exactly that.
    direct = new Client({ name: 'direct', version: '1' });
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' }));
  });
  afterAll(async () => {
    await direct?.close();
    await t?.close();
  });

  it('mirrors the upstream serverInfo, instructions and capabilities', () => {
    expect(t.client.getServerVersion()).toEqual(direct.getServerVersion());
    expect(t.client.getServerVersion()?.name).toBe('mcp-servers/everything');
    expect(t.client.getInstructions()).toBe(direct.getInstructions());
    const caps = t.client.getServerCapabilities();
    const upstream = direct.getServerCapabilities();
    expect(caps?.tools).toEqual(upstream?.tools);
    expect(caps?.resources).toEqual(upstream?.resources);
    expect(caps?.prompts).toEqual(upstream?.prompts);
    expect(caps?.logging).toEqual(upstream?.logging);
    // The experimental tasks API is not relayed, so it is not offered.
    expect(upstream?.tasks).toBeDefined();
    expect(caps?.tasks).toBeUndefined();
  });

  it('lists the same tools, annotations and schemas as the server itself', async () => {
    const [through, straight] = await Promise.all([t.client.listTools(), direct.listTools()]);
    expect(through.tools).toEqual(straight.tools);
    const echo = through.tools.find((tool) => tool.name === 'echo');
    expect(echo?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(through.tools.find((tool) => tool.name === 'get-structured-content')?.outputSchema).toBeDefined();
  });

  it('forwards a call and records it in SQLite', async () => {
    const before = (await t.records()).length;
    const result = await t.client.callTool({ name: 'echo', arguments: { message: 'hello through the proxy' } });
    expect(result).toEqual({ content: [{ type: 'text', text: 'Echo: hello through the proxy' }] });
    const record = await t.nthRecord(before + 1);
    expect(record).toMatchObject({
      tool_name: 'echo',
      status: 'success',
      failure_category: null,
      error_code: null,
      input_params: { message: 'hello through the proxy' },
      idempotent: true,
      fault: null,
      feedback: null,
      recovery: 'none',
      retry_count: 0,
      context_snapshot: { transport: 'mcp', mcp_server: 'mcp-servers/everything', agent: 'faultline-test-agent', agent_version: '1.2.3' },
    });
    expect(JSON.parse(record.raw_output ?? 'null')).toEqual([{ type: 'text', text: 'Echo: hello through the proxy' }]);
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]).toMatchObject({ outcome: 'success', fault_kind: null });
  });

  it('keeps one trace per client session, with step indexes in call order', async () => {
    const before = (await t.records()).length;
    await t.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    await t.client.callTool({ name: 'get-sum', arguments: { a: 4, b: 5 } });
    const records = await t.records();
    const [first, second] = records.slice(before);
    expect(first!.trace_id).toBe(second!.trace_id);
    expect(second!.step_index).toBe(first!.step_index + 1);
    expect(records[0]!.trace_id).toBe(first!.trace_id);
  });

  it('records a tool without idempotency hints as non-idempotent', async () => {
    const tools = await t.client.listTools();
    expect(tools.tools.find((tool) => tool.name === 'toggle-subscriber-updates')?.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    const before = (await t.records()).length;
    await t.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    await t.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    const records = (await t.records()).slice(before);
    expect(records.map((r) => [r.tool_name, r.idempotent])).toEqual([
      ['toggle-subscriber-updates', false],
      ['toggle-subscriber-updates', false],
    ]);
  });

  it('tells an isError result from the server apart and classifies it as tool_reported_error', async () => {
    const before = (await t.records()).length;
    const result = await t.client.callTool({ name: 'no-such-tool', arguments: {} });
    expect(result.isError).toBe(true);
    const record = await t.nthRecord(before + 1);
    expect(record).toMatchObject({
      tool_name: 'no-such-tool',
      status: 'failure',
      failure_stage: 'request_build',
      failure_category: 'parameter',
      failure_type: 'unknown_tool',
      error_code: 'MCP_-32602',
      idempotent: false,
      recovery: 'needs_decision',
    });
    expect(record.error_message).toContain('no-such-tool');
  });

  it('relays progress notifications to the caller', async () => {
    const progress: number[] = [];
    const result = await t.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.4, steps: 4 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    expect((result as CallToolResult).content[0]).toMatchObject({ type: 'text', text: expect.stringContaining('Long running operation completed') });
    // The server sends its last notification after it answers (an SDK ordering quirk), so not all four arrive.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.slice(0, 2)).toEqual([1, 2]);
  });

  it('records a call the client cancels as cancelled', async () => {
    const before = (await t.records()).length;
    const controller = new AbortController();
    const call = t.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 5, steps: 5 } }, undefined, { signal: controller.signal });
    setTimeout(() => controller.abort('the user pressed stop'), 150);
    await expect(call).rejects.toThrow();
    const record = await t.nthRecord(before + 1);
    expect(record).toMatchObject({ tool_name: 'trigger-long-running-operation', status: 'failure', failure_category: 'system', failure_type: 'cancelled', error_code: 'ABORTED' });
    expect(record.duration_ms).toBeLessThan(4000);
  });

  it('passes resources and prompts through', async () => {
    const [resources, straightResources] = await Promise.all([t.client.listResources(), direct.listResources()]);
    expect(resources).toEqual(straightResources);
    const first = resources.resources[0];
    expect(first).toBeDefined();
    expect(await t.client.readResource({ uri: first!.uri })).toEqual(await direct.readResource({ uri: first!.uri }));
    expect(await t.client.listResourceTemplates()).toEqual(await direct.listResourceTemplates());
    const prompts = await t.client.listPrompts();
    expect(prompts).toEqual(await direct.listPrompts());
    expect(prompts.prompts.map((p) => p.name)).toContain('simple-prompt');
    expect(await t.client.getPrompt({ name: 'simple-prompt' })).toEqual(await direct.getPrompt({ name: 'simple-prompt' }));
    // Resources and prompts are not tool calls: nothing is recorded for them.
    expect((await t.records()).every((r) => r.tool_name !== 'resources/read')).toBe(true);
  });

  it('relays the upstream error for a resource that does not exist', async () => {
    const error = await t.client.readResource({ uri: 'demo://resource/does-not-exist' }).catch((e: unknown) => e);
    const straight = await direct.readResource({ uri: 'demo://resource/does-not-exist' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe((straight as McpError).code);
    // Relayed once, not wrapped: the client's SDK adds its prefix a single time.
    expect((error as McpError).message).toBe((straight as McpError).message);
  });

  it('relays log notifications', async () => {
    const messages: LoggingMessageNotification[] = [];
    t.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n));
    await t.client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    const deadline = Date.now() + 3000;
    while (messages.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await t.client.callTool({ name: 'toggle-simulated-logging', arguments: {} });
    expect(messages.length).toBeGreaterThan(0);
    expect(messages[0]!.params.data).toEqual(expect.stringContaining('message'));
  });
});

describe('mcp proxy in front of an in-process SDK server', () => {
  it('relays tools/list_changed, relists, and cancels upstream when the client cancels', async () => {
    const server = new McpServer({ name: 'in-process', version: '9.9.9' }, { capabilities: { tools: { listChanged: true } } });
    let upstreamSawAbort!: () => void;
    const aborted = new Promise<void>((resolve) => (upstreamSawAbort = resolve));
    server.registerTool('wait', { description: 'waits until cancelled', annotations: { readOnlyHint: true } }, async (extra) => {
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve(), { once: true }));
      upstreamSawAbort();
      return { content: [{ type: 'text', text: 'cancelled' }] };
    });
    const [upstreamSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const t = await startTestProxy({ transport: upstreamSide }, { version: 1, rules: [] });
    try {
      expect(t.client.getServerVersion()).toEqual({ name: 'in-process', version: '9.9.9' });
      const changed = new Promise<void>((resolve) => t.client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      server.registerTool('added_later', { description: 'safe to repeat', inputSchema: { n: z.number() }, annotations: { idempotentHint: true } }, async ({ n }) => ({
        content: [{ type: 'text', text: JSON.stringify({ doubled: n * 2 }) }],
      }));
      await changed;
      // Called before anyone lists again: the proxy relists on its own after list_changed to learn the new tool's hints.
      expect(await t.client.callTool({ name: 'added_later', arguments: { n: 21 } })).toEqual({ content: [{ type: 'text', text: '{"doubled":42}' }] });
      const tools = await t.client.listTools();
      expect(tools.tools.map((tool) => tool.name).sort()).toEqual(['added_later', 'wait']);

      const controller = new AbortController();
      const call = t.client.callTool({ name: 'wait', arguments: {} }, undefined, { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await expect(call).rejects.toThrow();
      await aborted;

      const records = await t.records();
      expect(records.find((r) => r.tool_name === 'added_later')).toMatchObject({ status: 'success', idempotent: true, input_params: { n: 21 } });
      expect((await t.nthRecord(2)).tool_name).toBe('wait');
      expect((await t.nthRecord(2)).idempotent).toBe(true);
    } finally {
      await t.close();
      await server.close();
    }
  });

  it('records calls still hanging when the proxy closes, before it flushes', async () => {
    const server = new McpServer({ name: 'in-process', version: '1.0.0' });
    server.registerTool('book', { description: 'books a room' }, async () => ({ content: [{ type: 'text', text: 'booked' }] }));
    const [upstreamSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const t = await startTestProxy({ transport: upstreamSide }, { version: 1, rules: [{ id: 'never', tool: 'book', fault: 'hang' }] });
    try {
      const pending = t.client.callTool({ name: 'book', arguments: { room: 'A' } }).catch((e: unknown) => e);
      while (t.proxy.stats().calls === 0) await new Promise((r) => setTimeout(r, 5));
      await t.proxy.close();
      expect(await pending).toBeInstanceOf(McpError);
      expect(await readRecords(t.dbPath)).toEqual([
        expect.objectContaining({ tool_name: 'book', status: 'timeout', error_code: 'TIMEOUT', idempotent: false, fault: expect.objectContaining({ kind: 'hang' }) }),
      ]);
    } finally {
      await t.close();
      await server.close();
    }
  });
});

describe('an upstream server that dies mid-session', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let script: string;

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-dying-');
    script = await writeDyingServer(join(dir.path, 'dying-server.mjs'));
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it('fails the running call and every later one with -32000, records them, and goes on serving', async () => {
    const lines: string[] = [];
    const t = await startTestProxy({ command: process.execPath, args: [script, 'exit:7'], stderr: 'ignore' }, { version: 1, rules: [] }, { log: (line) => lines.push(line) });
    try {
      const tools = await t.client.listTools();
      expect(tools.tools.map((tool) => tool.name)).toEqual(['ping', 'slow_write']);
      expect(await t.client.callTool({ name: 'ping', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'pong' }] });

      const running = await rpcError(t.client.callTool({ name: 'slow_write', arguments: { row: 1 } }));
      expect(running.code).toBe(-32000);
      expect(running.message).toBe('MCP error -32000: Connection closed: the upstream MCP server exited with code 7 during the call');
      expect(running.data).toEqual({ code: 'ECONNRESET', exit_code: 7, signal: null });

      const later = await rpcError(t.client.callTool({ name: 'ping', arguments: {} }));
      expect(later.code).toBe(-32000);
      expect(later.data).toEqual({ code: 'UPSTREAM_EXITED', exit_code: 7, signal: null });
      expect(later.message).toContain('the call was not sent');

      // Still serving: tools/list from the last list, other requests with the same error.
      expect(await t.client.listTools()).toEqual(tools);
      expect((await rpcError(t.client.getPrompt({ name: 'greet' }))).data).toEqual({ code: 'UPSTREAM_EXITED', exit_code: 7, signal: null });
      expect(t.proxy.stats()).toMatchObject({ calls: 3, sessions: 1, upstreamLost: { exitCode: 7, signal: null } });

      const records = await t.records();
      expect(records.map((r) => [r.tool_name, r.status, r.failure_stage, r.failure_category, r.failure_type, r.error_code])).toEqual([
        ['ping', 'success', null, null, null, null],
        ['slow_write', 'failure', 'execution', 'network', 'connection_reset', 'ECONNRESET'],
        ['ping', 'failure', 'execution', 'system', 'dependency_down', 'UPSTREAM_EXITED'],
      ]);
      // The write may have happened before the server died, and the tool declares no hints: check before repeating it.
      expect(records[1]).toMatchObject({ idempotent: false, input_params: { row: 1 }, feedback: { action: 'verify_state' }, recovery: 'needs_decision' });
      expect(JSON.parse(records[1]!.raw_output ?? 'null')).toEqual({ code: 'ECONNRESET', exit_code: 7, signal: null });
      expect(records[1]!.error_message).toContain('exited with code 7 during the call');
      // Nothing was sent, so nothing is ambiguous: the idempotent ping is simply worth retrying once the server is back.
      expect(records[2]).toMatchObject({ idempotent: true, feedback: { retryable: true } });
      expect(records[2]!.feedback?.action).not.toBe('verify_state');

      expect(lines).toEqual([
        `the upstream MCP server (${process.execPath} ${script} exit:7) exited with code 7; tools/call now fails with -32000 and tools/list answers from the last list`,
      ]);
    } finally {
      await t.close();
    }
  });

  it('names the signal of a killed server, and applies no fault after it is gone', async () => {
    const t = await startTestProxy(
      { command: process.execPath, args: [script, 'kill:SIGKILL'], stderr: 'ignore' },
      { version: 1, rules: [{ id: 'slow-ping', tool: 'ping', fault: 'latency', params: { ms: 1 } }] },
    );
    try {
      await t.client.callTool({ name: 'ping', arguments: {} });
      expect((await rpcError(t.client.callTool({ name: 'slow_write', arguments: {} }))).data).toEqual({ code: 'ECONNRESET', exit_code: null, signal: 'SIGKILL' });
      const later = await rpcError(t.client.callTool({ name: 'ping', arguments: {} }));
      expect(later.message).toBe('MCP error -32000: Connection closed: the upstream MCP server was killed by SIGKILL; the call was not sent');
      const records = await t.records();
      expect(records.map((r) => [r.tool_name, r.error_code, r.fault?.rule_id ?? null])).toEqual([
        ['ping', null, 'slow-ping'],
        ['slow_write', 'ECONNRESET', null],
        // The dead server failed this call, not the rule: the ground truth must not say otherwise.
        ['ping', 'UPSTREAM_EXITED', null],
      ]);
      expect(t.proxy.stats().upstreamLost).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    } finally {
      await t.close();
    }
  });

  it('reports an upstream without a process that closes its end as UPSTREAM_CLOSED', async () => {
    const server = new McpServer({ name: 'in-process', version: '1.0.0' });
    server.registerTool('ping', { description: 'pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
    const [upstreamSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const lines: string[] = [];
    const t = await startTestProxy({ transport: upstreamSide }, { version: 1, rules: [] }, { log: (line) => lines.push(line) });
    try {
      await server.close();
      await t.proxy.upstreamClosed;
      const error = await rpcError(t.client.callTool({ name: 'ping', arguments: {} }));
      expect(error.data).toEqual({ code: 'UPSTREAM_CLOSED' });
      expect(error.message).toBe('MCP error -32000: Connection closed: the upstream MCP server closed the connection; the call was not sent');
      expect((await t.client.listTools()).tools.map((tool) => tool.name)).toEqual(['ping']);
      expect(await t.nthRecord(1)).toMatchObject({ failure_type: 'dependency_down', error_code: 'UPSTREAM_CLOSED' });
      expect(t.proxy.stats().upstreamLost).toMatchObject({ exitCode: null, signal: null });
      expect(lines).toEqual([expect.stringMatching(/^the upstream MCP server \(in-process transport\) closed the connection; /)]);
    } finally {
      await t.close();
    }
  });
});

describe('connecting upstream', () => {
  it('fails with one line when the server command does not exist', async () => {
    const error = await connectUpstream({ command: '/nonexistent/mcp-server', stderr: 'ignore' }).catch((e: unknown) => e);
    expect(McpUpstreamError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^cannot connect to the upstream MCP server \(\/nonexistent\/mcp-server\): ENOENT$/);
  });

  it('fails with one line when the server exits before the handshake', async () => {
    const error = await connectUpstream({ command: process.execPath, args: ['-e', 'process.exit(3)'], stderr: 'ignore' }).catch((e: unknown) => e);
    expect(McpUpstreamError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(`cannot connect to the upstream MCP server (${process.execPath} -e process.exit(3)): it exited with code 3 before the MCP handshake`);
  });

  it('fails with one line when the server starts but never completes the handshake, and stops it', async () => {
    const dir = await tempDir();
    const pidFile = join(dir.path, 'mute-server.pid');
    const code = `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)`;
    const started = Date.now();
    const error = await connectUpstream({ command: process.execPath, args: ['-e', code], stderr: 'ignore' }, 300).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(McpUpstreamError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/: it did not complete the MCP handshake within 300 ms$/);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    }, 'the server to be stopped');
    await dir.remove();
    // The SDK stops a server that ignores its closed stdin with SIGTERM after 2 s.
  }, 60_000);

  it('holds back what a server that fails to start wrote to stderr, and says how much there was', async () => {
    const written: string[] = [];
    const stderr = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written.push(String(chunk));
        callback();
      },
    });
    const code = "console.error('loading config'); console.error('Error: API_KEY is not set'); process.exit(1)";
    const error = await connectUpstream({ command: process.execPath, args: ['-e', code], stderr }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/: it exited with code 1 before the MCP handshake \(it wrote 2 lines to stderr: run the command directly to see them\)$/);
    expect(written).toEqual([]);
  });

  it("passes a started server's stderr on once it is connected", async () => {
    const written: string[] = [];
    const stderr = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        written.push(String(chunk));
        callback();
      },
    });
    const client = await connectUpstream({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr });
    try {
      const deadline = Date.now() + 5000;
      while (written.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(written.join('')).toContain('Starting');
    } finally {
      await client.close();
    }
  });
});
