/**
 * Streamable HTTP on both sides: a small real SDK server over StreamableHTTPServerTransport as the
 * upstream (`--upstream` mode), and the proxy's own HTTP endpoint (`--port` mode) for clients.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request as httpRequest, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultPlan } from '../plan.js';
import { createFaultPlan } from '../plan.js';
import { serveMcpOverHttp, type McpHttpServer } from './http-downstream.js';
import { freePort, logsAtWarning, readRecords, rpcError, startEverythingHttp, startTestProxy, tempDir } from './mcp-proxy.test-helpers.js';
import { startMcpProxy, type McpProxy } from './proxy.js';
import { connectUpstream, McpUpstreamError } from './upstream.js';
import { refusedPort } from '../../refused-port.test-helpers.js';

/** An order-lookup MCP server: one tool without annotations, one that rejects bad arguments with a JSON-RPC error, one that reports failure in its result. */
function orderServer(): Server {
  const server = new Server({ name: 'orders-http', version: '0.3.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: 'lookup_order', description: 'Looks an order up', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } },
      {
        name: 'strict_lookup',
        description: 'Like lookup_order, but id is checked',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
        annotations: { readOnlyHint: true },
      },
      { name: 'warehouse_status', description: 'Reports the warehouse', inputSchema: { type: 'object' } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'lookup_order':
        return { content: [{ type: 'text', text: JSON.stringify({ id: args['id'], status: 'shipped', updated_at: '2026-03-01T10:00:00Z' }) }] };
      case 'strict_lookup':
        // A plain error with a code: the SDK sends its message as is (an McpError's would carry the SDK's prefix).
        if (typeof args['id'] !== 'string') throw Object.assign(new Error('id is required'), { code: ErrorCode.InvalidParams, data: { field: 'id' } });
        return { content: [{ type: 'text', text: JSON.stringify({ id: args['id'], status: 'shipped' }) }] };
      case 'warehouse_status':
        return { content: [{ type: 'text', text: 'warehouse offline' }], isError: true };
    }
    throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}`);
  });
  return server;
}

async function startUpstream(makeServer: () => Server = orderServer, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const http: HttpServer = createServer((req, res) => {
    const header = req.headers['mcp-session-id'];
    const existing = typeof header === 'string' ? transports.get(header) : undefined;
    void (async () => {
      let transport = existing;
      if (transport === undefined) {
        const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, created),
        });
        await makeServer().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    })();
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  const bound = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    close: async () => {
      await Promise.allSettled([...transports.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function httpClient(url: string, name = 'http-agent'): Promise<Client> {
  const client = new Client({ name, version: '0.0.1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('MCP proxy over Streamable HTTP', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let dbPath: string;
  let plan: FaultPlan;
  let proxy: McpProxy;
  let endpoint: McpHttpServer;
  let client: Client;

  beforeAll(async () => {
    upstream = await startUpstream();
    dir = await tempDir();
    dbPath = `${dir.path}/records.db`;
    plan = createFaultPlan({ version: 1, rules: [] });
    proxy = await startMcpProxy({ upstream: { url: upstream.url }, plan, store: dbPath, recording: { flushIntervalMs: 10 } });
    endpoint = await serveMcpOverHttp(proxy);
    client = await httpClient(endpoint.url);
  });
  afterAll(async () => {
    await client?.close();
    await endpoint?.close();
    await proxy?.close();
    await upstream?.close();
    await dir?.remove();
  });

  async function records() {
    await proxy.flush();
    return readRecords(dbPath);
  }

  it('serves the upstream as itself on 127.0.0.1', async () => {
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(client.getServerVersion()).toEqual({ name: 'orders-http', version: '0.3.0' });
    const tools = await client.listTools();
    expect(tools.tools.map((t) => [t.name, t.annotations ?? null])).toEqual([
      ['lookup_order', null],
      ['strict_lookup', { readOnlyHint: true }],
      ['warehouse_status', null],
    ]);
  });

  it('tells a JSON-RPC error from the upstream apart from an isError result', async () => {
    const before = (await records()).length;
    const error = await client.callTool({ name: 'strict_lookup', arguments: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32602);
    // Relayed as the upstream sent it: one prefix (the client SDK's), the data intact.
    expect((error as McpError).message).toBe('MCP error -32602: id is required');
    expect((error as McpError).data).toEqual({ field: 'id' });
    const direct = await httpClient(upstream.url, 'direct');
    const straight = await direct.callTool({ name: 'strict_lookup', arguments: {} }).catch((e: unknown) => e);
    await direct.close();
    expect((straight as McpError).message).toBe((error as McpError).message);
    const failed = await client.callTool({ name: 'warehouse_status', arguments: {} });
    expect(failed).toEqual({ content: [{ type: 'text', text: 'warehouse offline' }], isError: true });

    const [protocol, reported] = (await records()).slice(before);
    expect(protocol).toMatchObject({
      tool_name: 'strict_lookup',
      status: 'failure',
      failure_stage: 'param_validation',
      failure_category: 'parameter',
      error_code: 'MCP_-32602',
      error_message: 'id is required',
      raw_output: '{"field":"id"}',
      idempotent: true,
      fault: null,
    });
    expect(reported).toMatchObject({
      tool_name: 'warehouse_status',
      status: 'failure',
      failure_stage: 'execution',
      failure_category: 'business',
      failure_type: 'tool_reported_error',
      error_code: 'MCP_TOOL_ERROR',
      error_message: 'warehouse offline',
      idempotent: false,
    });
  });

  it('records a tool without annotations as non-idempotent, with the HTTP session in the context', async () => {
    const before = (await records()).length;
    await client.callTool({ name: 'lookup_order', arguments: { id: 'A-1' } });
    const [record] = (await records()).slice(before);
    expect(record).toMatchObject({ tool_name: 'lookup_order', status: 'success', idempotent: false, context_snapshot: { transport: 'mcp', agent: 'http-agent' } });
    expect(record!.context_snapshot['session_id']).toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
  });

  it('rewrites JSON text output (semantic drift shifts the date) and keeps sessions apart', async () => {
    plan.update({ version: 1, rules: [{ id: 'old-date', tool: 'lookup_order', fault: 'semantic_drift', params: { shift_date: -2 } }] });
    const other = await httpClient(endpoint.url, 'second-agent');
    try {
      const before = (await records()).length;
      const result = await other.callTool({ name: 'lookup_order', arguments: { id: 'B-2' } });
      expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual({ id: 'B-2', status: 'shipped', updated_at: '2026-02-27T10:00:00Z' });
      await client.callTool({ name: 'lookup_order', arguments: { id: 'C-3' } });
      const [fromOther, fromFirst] = (await records()).slice(before);
      expect(fromOther).toMatchObject({ status: 'success', fault: { kind: 'semantic_drift', rule_id: 'old-date' }, context_snapshot: { agent: 'second-agent' } });
      expect(fromOther!.trace_id).not.toBe(fromFirst!.trace_id);
      expect(fromOther!.step_index).toBe(0);
    } finally {
      await other.close();
      plan.update({ version: 1, rules: [] });
    }
  });

  it('refuses requests whose Host header is not the loopback address it listens on', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(endpoint.url, { method: 'POST', headers: { host: 'attacker.example', 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(status).toBe(403);
  });

  it('rejects a request without a session that is not an initialize request', async () => {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(ErrorCode.InvalidRequest);
  });
});

describe('an unreachable --upstream', () => {
  it('fails with one line naming the errno', async () => {
    const port = await refusedPort();
    const error = await connectUpstream({ url: `http://127.0.0.1:${port}/mcp` }).catch((e: unknown) => e);
    expect(McpUpstreamError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(`cannot connect to the upstream MCP server (http://127.0.0.1:${port}/mcp): ECONNREFUSED`);
  });
});

describe('an --upstream that goes away mid-session', () => {
  it('fails each later call as the refused connection it is (-32000 with the errno), records it as such, and goes on serving', async () => {
    const upstream = await startUpstream();
    const t = await startTestProxy({ url: upstream.url }, { version: 1, rules: [] });
    try {
      const ok = await t.client.callTool({ name: 'lookup_order', arguments: { id: 'A-1' } });
      expect(ok.isError).toBeUndefined();
      await upstream.close();
      // Lets the HTTP client see its pooled keep-alive socket close (a request still sent on it would be a reset).
      await new Promise((resolve) => setTimeout(resolve, 200));

      for (const id of ['A-2', 'A-3']) {
        const error = await rpcError(t.client.callTool({ name: 'lookup_order', arguments: { id } }));
        // The same shape as an injected connection_refused (fault-answers.ts): the request never reached the server.
        expect(error.code).toBe(ErrorCode.ConnectionClosed);
        expect(error.data).toEqual({ code: 'ECONNREFUSED' });
      }
      const records = await t.records();
      expect(records.map((r) => [r.status, r.failure_category, r.failure_type, r.error_code])).toEqual([
        ['success', null, null, null],
        ['failure', 'network', 'connection_refused', 'ECONNREFUSED'],
        ['failure', 'network', 'connection_refused', 'ECONNREFUSED'],
      ]);
    } finally {
      await t.close();
    }
  });
});

describe('an --upstream that restarts (its sessions are gone)', () => {
  it('starts a new session at the 404 for the old one and sends the call there, as the spec asks a client to; the call is recorded once, as a success', async () => {
    let upstream = await startUpstream();
    const port = Number(new URL(upstream.url).port);
    const lines: string[] = [];
    const t = await startTestProxy({ url: upstream.url }, { version: 1, rules: [] }, { log: (line) => lines.push(line) });
    try {
      expect((await t.client.callTool({ name: 'lookup_order', arguments: { id: 'A-1' } })).isError).toBeUndefined();
      await upstream.close();
      // Lets the HTTP client see its pooled keep-alive socket close (a request still sent on it would be a reset).
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The same server at the same address, started again: it knows no session.
      upstream = await startUpstream(orderServer, port);
      const result = await t.client.callTool({ name: 'lookup_order', arguments: { id: 'A-2' } });
      expect(result).toEqual({ content: [{ type: 'text', text: JSON.stringify({ id: 'A-2', status: 'shipped', updated_at: '2026-03-01T10:00:00Z' }) }] });
      // The new session stays: later requests of any kind go to it.
      expect((await t.client.listTools()).tools.map((tool) => tool.name)).toEqual(['lookup_order', 'strict_lookup', 'warehouse_status']);
      expect((await t.records()).map((r) => [r.tool_name, r.status, r.input_params])).toEqual([
        ['lookup_order', 'success', { id: 'A-1' }],
        ['lookup_order', 'success', { id: 'A-2' }],
      ]);
      expect(lines).toContainEqual(expect.stringContaining('new session'));
    } finally {
      await t.close();
      await upstream.close();
    }
  });
});

describe('server-everything over Streamable HTTP as the --upstream, restarted while the proxy runs', () => {
  it('relays progress over the upstream session, and after the restart goes on in a new session', async () => {
    const port = await freePort();
    let server = await startEverythingHttp(port);
    const lines: string[] = [];
    const t = await startTestProxy({ url: `http://127.0.0.1:${port}/mcp` }, { version: 1, rules: [] }, { log: (line) => lines.push(line) });
    try {
      const progress: number[] = [];
      const long = await t.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
      expect(JSON.stringify(long)).toContain('Long running operation completed');
      expect(progress.slice(0, 2)).toEqual([1, 2]);

      server.kill('SIGKILL');
      await once(server, 'exit');
      server = await startEverythingHttp(port);
      // It answers an unknown session with 400 "No valid session ID provided", not the spec's 404.
      expect(await t.client.callTool({ name: 'echo', arguments: { message: 'after the restart' } })).toEqual({ content: [{ type: 'text', text: 'Echo: after the restart' }] });
      expect((await t.records()).map((r) => [r.tool_name, r.status])).toEqual([
        ['trigger-long-running-operation', 'success'],
        ['echo', 'success'],
      ]);
      expect(lines).toContainEqual(expect.stringContaining('started a new session'));
      // The refusal itself is not reported: the new session is.
      expect(lines.filter((line) => line.includes('No valid session ID'))).toEqual([]);
    } finally {
      await t.close();
      server.kill('SIGKILL');
    }
  }, 30_000);
});

describe('server-everything over Streamable HTTP, restarted: the logging level a client set', () => {
  it('is set in the new session before the request that met the old one is sent again', async () => {
    const port = await freePort();
    let server = await startEverythingHttp(port);
    const t = await startTestProxy({ url: `http://127.0.0.1:${port}/mcp` }, { version: 1, rules: [] });
    try {
      const { logs, uris: [first, second, third] } = await logsAtWarning(t.client);
      // server-everything acknowledges a subscription with an info log, on the session's own stream.
      await t.client.subscribeResource({ uri: first });

      server.kill('SIGKILL');
      await once(server, 'exit');
      server = await startEverythingHttp(port);
      // Meets the unknown session: the proxy starts a new one, renews the first subscription, and sends this again.
      await t.client.subscribeResource({ uri: second });
      await t.client.setLoggingLevel('info');
      await t.client.subscribeResource({ uri: third });
      const deadline = Date.now() + 10_000;
      while (!logs.some((line) => line.includes(third)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      // One stream, in order: a log of the first or second subscription would have come before the third's.
      expect(logs.filter((line) => line.includes('Subscribe'))).toEqual([expect.stringMatching(new RegExp(`^info: Received Subscribe Resource request for URI: ${third} from session `))]);
    } finally {
      await t.close();
      server.kill('SIGKILL');
    }
  }, 30_000);
});

describe('an --upstream that dies during a call', () => {
  it('fails the call in flight as the reset it is (-32000 ECONNRESET) at once, not at the upstream timeout, and records it', async () => {
    let started!: () => void;
    const callStarted = new Promise<void>((resolve) => (started = resolve));
    const slowServer = (): Server => {
      const server = new Server({ name: 'slow-http', version: '0.1.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ name: 'slow_report', description: 'Takes its time', inputSchema: { type: 'object' } }] }));
      server.setRequestHandler(CallToolRequestSchema, async () => {
        started();
        await new Promise((resolve) => setTimeout(resolve, 60_000));
        return { content: [{ type: 'text', text: 'late' }] };
      });
      return server;
    };
    const upstream = await startUpstream(slowServer);
    const t = await startTestProxy({ url: upstream.url }, { version: 1, rules: [] }, { upstreamTimeoutMs: 30_000 });
    try {
      const began = Date.now();
      const pending = rpcError(t.client.callTool({ name: 'slow_report', arguments: {} }, undefined, { timeout: 60_000 }));
      await callStarted;
      await upstream.close();
      const error = await pending;
      const tookMs = Date.now() - began;
      const [record] = await t.records();
      expect(error.code).toBe(ErrorCode.ConnectionClosed);
      // The socket closed under the request: undici's code for it, classified as the reset it is.
      expect(error.data).toEqual({ code: 'UND_ERR_SOCKET' });
      expect(record).toMatchObject({ status: 'failure', failure_category: 'network', failure_type: 'connection_reset', error_code: 'UND_ERR_SOCKET' });
      // Well before the 30 s upstream timeout: the closed socket fails the request itself.
      expect(tookMs).toBeLessThan(10_000);
    } finally {
      await t.close();
    }
  }, 70_000);
});
