import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { EVERYTHING_SERVER, MEMORY_SERVER } from '../faults/mcp-proxy/mcp-proxy.test-helpers.js';
import { createFaultPlan } from '../faults/plan.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { mcpClientTools } from './mcp-client.js';

let dir: string;
const clients: Client[] = [];
const runtimes: Runtime[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'faultline-mcp-client-'));
});
afterEach(async () => {
  for (const rt of runtimes.splice(0)) await rt.close();
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

/** A real server from npm over stdio, and an SDK Client connected to it. */
async function connect(args: string[], env: Record<string, string> = {}): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({ command: process.execPath, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'ignore' });
  const client = new Client({ name: 'faultline-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

function runtimeOver(tools: Awaited<ReturnType<typeof mcpClientTools>>, extra: Parameters<typeof createRuntime>[0] extends infer O ? Partial<O> : never = {}) {
  const records: ToolExecutionRecord[] = [];
  const rt = createRuntime({ tools, onRecord: (r) => records.push(r), seed: 1, ...extra });
  runtimes.push(rt);
  return { rt, records };
}

describe('mcpClientTools over server-memory (stdio, from npm)', () => {
  it('defines every listed tool with its schema and its idempotency from the annotations, and calls pass through', async () => {
    const { client } = await connect([MEMORY_SERVER], { MEMORY_FILE_PATH: join(dir, 'graph.jsonl') });
    const tools = await mcpClientTools(client, { prefix: 'memory_' });
    const listed = (await client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(listed.map((t) => `memory_${t.name}`));
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName['memory_create_entities']!.idempotent).toBe(false);
    expect(byName['memory_read_graph']!.idempotent).toBe(true);
    expect(byName['memory_delete_entities']!.idempotent).toBe(true);
    expect(byName['memory_create_entities']!.inputSchema).toEqual(listed.find((t) => t.name === 'create_entities')!.inputSchema);

    const { rt, records } = runtimeOver(tools);
    const created = await rt.execute('memory_create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] });
    expect(created.ok).toBe(true);
    const graph = await rt.execute('memory_read_graph', {});
    expect(graph.ok).toBe(true);
    if (!graph.ok) return;
    // The result is the server's CallToolResult, as a direct call returns it.
    expect(graph.output).toEqual(await client.callTool({ name: 'read_graph', arguments: {} }));
    expect(JSON.stringify(graph.output)).toContain('wrote the first program');
    expect(records.map((r) => [r.tool_name, r.status, r.idempotent])).toEqual([
      ['memory_create_entities', 'success', false],
      ['memory_read_graph', 'success', true],
    ]);
  });

  it('rejects arguments that break the server schema before the server sees them', async () => {
    const { client } = await connect([MEMORY_SERVER], { MEMORY_FILE_PATH: join(dir, 'graph.jsonl') });
    const { rt } = runtimeOver(await mcpClientTools(client));
    const r = await rt.execute('create_entities', { entities: [{ name: 'Ada' }] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'param_validation', category: 'parameter' });
    expect(r.feedback.hint).toMatch(/entityType/);
    const graph = await client.callTool({ name: 'read_graph', arguments: {} });
    expect(JSON.stringify(graph)).not.toContain('Ada');
  });

  it('classifies an isError result as a failure the tool reported, not retried, with its text as the message', async () => {
    const { client } = await connect([MEMORY_SERVER], { MEMORY_FILE_PATH: join(dir, 'graph.jsonl') });
    const { rt, records } = runtimeOver(await mcpClientTools(client));
    const r = await rt.execute('add_observations', { observations: [{ entityName: 'Nobody', contents: ['x'] }] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'execution', category: 'business', code: 'MCP_TOOL_ERROR' });
    expect(r.error.message).toMatch(/Nobody/);
    expect(records[0]).toMatchObject({ status: 'failure', retry_count: 0 });
  });

  it('takes faults from a plan like any tool: an injected 503 on an idempotent MCP tool is retried', async () => {
    const { client } = await connect([MEMORY_SERVER], { MEMORY_FILE_PATH: join(dir, 'graph.jsonl') });
    const faults = createFaultPlan({ version: 1, seed: 1, rules: [{ tool: 'read_graph', trigger: 'first_call_only', fault: 'http_status', params: { status: 503 } }] });
    const { rt, records } = runtimeOver(await mcpClientTools(client, { only: ['read_graph'], settings: { read_graph: { retry: { baseDelayMs: 1, maxDelayMs: 5 } } } }), { faults });
    const r = await rt.execute('read_graph', {});
    expect(r.ok).toBe(true);
    expect(records[0]).toMatchObject({ status: 'success', retry_count: 1, recovery: 'auto_recovered', fault: { kind: 'http_status' } });
  });

  it('refuses names the server does not list', async () => {
    const { client } = await connect([MEMORY_SERVER], { MEMORY_FILE_PATH: join(dir, 'graph.jsonl') });
    await expect(mcpClientTools(client, { only: ['read_grap'] })).rejects.toThrow(/no tool "read_grap"/);
    await expect(mcpClientTools(client, { settings: { nope: { idempotent: true } } })).rejects.toThrow(/no tool "nope"/);
  });
});

describe('mcpClientTools over server-everything (stdio, from npm)', () => {
  it("times out a call that outlives the tool's deadline and classifies it as a timeout", async () => {
    const { client } = await connect([EVERYTHING_SERVER, 'stdio']);
    const tools = await mcpClientTools(client, { only: ['trigger-long-running-operation', 'echo'], settings: { 'trigger-long-running-operation': { timeoutMs: 300, retry: { maxRetries: 0 } } } });
    const { rt, records } = runtimeOver(tools);
    const started = Date.now();
    const r = await rt.execute('trigger-long-running-operation', { duration: 5, steps: 5 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ type: 'timeout', category: 'network' });
    expect(records[0]).toMatchObject({ status: 'timeout' });
    // The session is still good for the next call.
    const echo = await rt.execute('echo', { message: 'still here' });
    expect(JSON.stringify(echo.ok ? echo.output : null)).toContain('still here');
  });

  it('records a server that dies mid-call as a connection failure (JSON-RPC -32000), not a crash', async () => {
    const { client, transport } = await connect([EVERYTHING_SERVER, 'stdio']);
    const { rt, records } = runtimeOver(await mcpClientTools(client, { only: ['trigger-long-running-operation'], settings: { 'trigger-long-running-operation': { timeoutMs: 10_000, retry: { maxRetries: 0 } } } }));
    const pending = rt.execute('trigger-long-running-operation', { duration: 5, steps: 5 });
    setTimeout(() => process.kill(transport.pid!, 'SIGKILL'), 200);
    const r = await pending;
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe('MCP_-32000');
    expect(r.error.category).toBe('network');
    expect(records[0]!.status).toBe('failure');
  });
});

describe('mcpClientTools: calls the server refuses are recorded as what they are', () => {
  it('arguments that pass the listed schema but fail the server (-32602, sent as an isError result) are param_validation, not a tool error', async () => {
    const { client } = await connect([EVERYTHING_SERVER, 'stdio']);
    const { rt, records } = runtimeOver(await mcpClientTools(client, { only: ['gzip-file-as-resource'] }));
    // A URI by the listed JSON Schema (format: uri), which the server's URL parser refuses (port out of range).
    const r = await rt.execute('gzip-file-as-resource', { name: 'x.gz', data: 'http://a:99999' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'param_validation', category: 'parameter', type: 'schema_mismatch', code: 'MCP_-32602' });
    expect(r.error.message).toMatch(/Invalid URL/);
    expect(r.feedback.action).toBe('retry_with_fixed_params');
    expect(records[0]).toMatchObject({ status: 'failure', failure_stage: 'param_validation', failure_type: 'schema_mismatch', retry_count: 0 });
  });

  it('a name the runtime does not have is rejected before the server sees it', async () => {
    const { client } = await connect([MEMORY_SERVER], { MEMORY_FILE_PATH: join(dir, 'graph.jsonl') });
    const { rt, records } = runtimeOver(await mcpClientTools(client, { prefix: 'memory_' }));
    const r = await rt.execute('memory_read_grap', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'request_build', type: 'unknown_tool' });
    expect(r.feedback.hint).toContain('memory_read_graph');
    expect(records[0]).toMatchObject({ status: 'rejected', failure_type: 'unknown_tool' });
  });

  /** A real SDK McpServer (in memory) whose tool list changes after the client listed it. */
  async function dynamicServer() {
    const server = new McpServer({ name: 'dynamic', version: '1.0.0' });
    const lookup = server.registerTool('lookup', { description: 'Looks a key up.', inputSchema: { key: z.string() } }, async ({ key }) => ({ content: [{ type: 'text', text: `value of ${key}` }] }));
    const legacy = server.registerTool('legacy_lookup', { description: 'Going away.', inputSchema: { key: z.string() } }, async ({ key }) => ({ content: [{ type: 'text', text: key }] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'faultline-test', version: '1.0.0' });
    await client.connect(clientSide);
    clients.push(client);
    return { client, server, lookup, legacy };
  }

  it('a tool the server stopped listing (removed or disabled after the listing) is unknown_tool, and a listed one keeps working', async () => {
    const { client, server, legacy, lookup } = await dynamicServer();
    const { rt, records } = runtimeOver(await mcpClientTools(client));
    legacy.remove();
    lookup.disable();
    const removed = await rt.execute('legacy_lookup', { key: 'k' });
    const disabled = await rt.execute('lookup', { key: 'k' });
    lookup.enable();
    const back = await rt.execute('lookup', { key: 'k' });
    expect(back.ok).toBe(true);
    for (const r of [removed, disabled]) {
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.error).toMatchObject({ stage: 'request_build', category: 'parameter', type: 'unknown_tool', code: 'MCP_-32602' });
    }
    expect(records.map((r) => [r.tool_name, r.failure_stage, r.failure_type])).toEqual([
      ['legacy_lookup', 'request_build', 'unknown_tool'],
      ['lookup', 'request_build', 'unknown_tool'],
      ['lookup', null, null],
    ]);
    await server.close();
  });

  it('the same holds when the server answers with a JSON-RPC error instead of an isError result', async () => {
    const server = new Server({ name: 'strict', version: '1.0.0' }, { capabilities: { tools: {} } });
    let listed = ['lookup', 'legacy_lookup'];
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: listed.map((name) => ({ name, inputSchema: { type: 'object' as const, properties: { key: { type: 'string' } }, required: ['key'] } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      if (!listed.includes(request.params.name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      if (String(request.params.arguments?.['key']).length > 3) throw new McpError(ErrorCode.InvalidParams, 'key: at most 3 characters');
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'faultline-test', version: '1.0.0' });
    await client.connect(clientSide);
    clients.push(client);
    const { rt } = runtimeOver(await mcpClientTools(client));
    const tooLong = await rt.execute('lookup', { key: 'abcdef' });
    listed = ['lookup'];
    const gone = await rt.execute('legacy_lookup', { key: 'k' });
    expect(tooLong.ok || gone.ok).toBe(false);
    if (tooLong.ok || gone.ok) return;
    expect(tooLong.error).toMatchObject({ stage: 'param_validation', type: 'schema_mismatch', code: 'MCP_-32602' });
    expect(tooLong.error.message).toContain('at most 3 characters');
    expect(gone.error).toMatchObject({ stage: 'request_build', type: 'unknown_tool', code: 'MCP_-32602' });
    await server.close();
  });
});
