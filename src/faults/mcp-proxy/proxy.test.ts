/**
 * The proxy in front of a real MCP server from npm (server-everything over stdio), with a real SDK
 * Client on the other side and records in a real SQLite file.
 */
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
import { EVERYTHING_SERVER, everythingUpstream, readRecords, startTestProxy, type TestProxy } from './mcp-proxy.test-helpers.js';
import { connectUpstream, McpUpstreamError } from './upstream.js';

describe('mcp proxy in front of server-everything (stdio)', () => {
  let t: TestProxy;
  let direct: Client;

  beforeAll(async () => {
    t = await startTestProxy(everythingUpstream(), { version: 1, rules: [] });
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
      failure_stage: 'execution',
      failure_category: 'business',
      failure_type: 'tool_reported_error',
      error_code: 'MCP_TOOL_ERROR',
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

describe('connecting upstream', () => {
  it('fails with one line when the server command does not exist', async () => {
    const error = await connectUpstream({ command: '/nonexistent/mcp-server', stderr: 'ignore' }).catch((e: unknown) => e);
    expect(McpUpstreamError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^cannot connect to the upstream MCP server \(\/nonexistent\/mcp-server\): ENOENT$/);
  });

  it('fails with one line when the server exits before the handshake', async () => {
    const error = await connectUpstream({ command: process.execPath, args: ['-e', 'process.exit(3)'], stderr: 'ignore' }).catch((e: unknown) => e);
    expect(McpUpstreamError.isInstance(error)).toBe(true);
    expect((error as Error).message).not.toContain('\n');
  });
});
