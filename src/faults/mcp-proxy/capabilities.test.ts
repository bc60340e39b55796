/**
 * The proxy declares to the server exactly what its client declared, so everything that depends on
 * the handshake comes out as on a direct connection: compared here client by client, for several
 * capability sets, with the real server-everything (which lists some tools only to clients that
 * can sample, elicit, list roots or run tasks) over stdio and over Streamable HTTP, and clients
 * reaching the proxy in process or over its Streamable HTTP endpoint. A server without an SDK
 * shows that what the client wrote (experimental and unknown capabilities too) arrives unchanged,
 * and that the proxy relays a server's own requests only for what the client declared.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type CallToolResult,
  type ClientCapabilities,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../plan.js';
import { serveMcpOverHttp, type McpHttpServer } from './http-downstream.js';
import { EVERYTHING_SERVER, freePort, startEverythingHttp, tempDir, writeRawEchoServer } from './mcp-proxy.test-helpers.js';
import { startMcpProxy, type McpProxy } from './proxy.js';
import type { McpUpstream } from './upstream.js';

/** Capability sets a client may declare; server-everything answers each with a different tool list. */
const CAPABILITY_SETS: Record<string, ClientCapabilities> = {
  none: {},
  sampling: { sampling: {} },
  'form elicitation': { elicitation: {} },
  'form and url elicitation': { elicitation: { form: {}, url: {} } },
  roots: { roots: { listChanged: true } },
  'sampling, elicitation and roots': { sampling: {}, elicitation: {}, roots: {} },
  'everything, with tasks': {
    sampling: { context: {}, tools: {} },
    elicitation: { form: {}, url: {} },
    roots: { listChanged: true },
    tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
  },
  'experimental and unknown ones': { experimental: { 'vendor.example/feature': { level: 2 } }, sampling: {} },
};

/** A client declaring `capabilities` that answers what it declared, the same way every time. */
function clientWith(capabilities: ClientCapabilities): Client {
  const client = new Client({ name: 'capability-test', version: '1.0.0' }, { capabilities });
  if (capabilities.sampling !== undefined) {
    client.setRequestHandler(CreateMessageRequestSchema, () => ({ model: 'fixed-model', role: 'assistant', content: { type: 'text', text: 'a fixed sample' }, stopReason: 'endTurn' }));
  }
  if (capabilities.elicitation !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => (request.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada', check: true, email: 'ada@example.com' } }));
  }
  if (capabilities.roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///srv/alpha', name: 'alpha' }] }));
  return client;
}

/** What the proxy shows of a server's capabilities (proxy.ts: `tasks` and unknown keys are not mirrored). */
function mirrored(caps: ServerCapabilities | undefined): ServerCapabilities {
  const { tasks: _tasks, ...rest } = caps ?? {};
  return rest;
}

const names = (tools: { name: string }[]) => tools.map((t) => t.name).sort();

interface Rig {
  proxy: McpProxy;
  http: McpHttpServer;
  /** A client straight to a server of its own (stdio), or to the shared one (Streamable HTTP). */
  direct(capabilities: ClientCapabilities): Promise<Client>;
  close(): Promise<void>;
}

/** A proxy in front of `upstream` with its HTTP endpoint; `direct` connects a client to the server itself over `transport()`. */
async function rig(upstream: McpUpstream, transport: () => Transport, stop: () => void = () => undefined): Promise<Rig> {
  const proxy = await startMcpProxy({ upstream, plan: createFaultPlan({ version: 1, rules: [] }), store: ':memory:' });
  const http = await serveMcpOverHttp(proxy);
  return {
    proxy,
    http,
    async direct(capabilities) {
      const client = clientWith(capabilities);
      await client.connect(transport());
      return client;
    },
    async close() {
      await http.close();
      await proxy.close();
      stop();
    },
  };
}

const stdioRig = () =>
  rig({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' }, () => new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' }));

async function httpRig(): Promise<Rig> {
  const port = await freePort();
  const server: ChildProcess = await startEverythingHttp(port);
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  return rig({ url }, () => new StreamableHTTPClientTransport(url), () => server.kill('SIGKILL'));
}

async function throughProxy(rig: Rig, capabilities: ClientCapabilities, downstream: 'in-process' | 'Streamable HTTP'): Promise<Client> {
  const client = clientWith(capabilities);
  if (downstream === 'Streamable HTTP') {
    await client.connect(new StreamableHTTPClientTransport(new URL(rig.http.url)));
  } else {
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await rig.proxy.connect(serverSide);
    await client.connect(clientSide);
  }
  return client;
}

function textOf(result: unknown): string {
  return ((result as CallToolResult).content as Array<{ text?: string }>).map((block) => block.text ?? '').join('\n');
}

for (const [upstreamKind, makeRig] of [
  ['stdio', stdioRig],
  ['Streamable HTTP', httpRig],
] as const) {
  describe(`server-everything over ${upstreamKind}: through the proxy as straight, per capability set`, () => {
    let rig: Rig;
    beforeAll(async () => {
      rig = await makeRig();
    }, 60_000);
    afterAll(async () => {
      await rig?.close();
    });

    for (const downstream of ['in-process', 'Streamable HTTP'] as const) {
      for (const [setName, capabilities] of Object.entries(CAPABILITY_SETS)) {
        it(`${setName}, client ${downstream}: the same handshake, tools, prompts and resources`, { timeout: 60_000 }, async () => {
          const direct = await rig.direct(capabilities);
          const proxied = await throughProxy(rig, capabilities, downstream);
          try {
            expect(proxied.getServerVersion()).toEqual(direct.getServerVersion());
            expect(proxied.getInstructions()).toEqual(direct.getInstructions());
            expect(proxied.getServerCapabilities()).toEqual(mirrored(direct.getServerCapabilities()));
            const [directTools, proxiedTools] = await Promise.all([direct.listTools(), proxied.listTools()]);
            expect(names(proxiedTools.tools)).toEqual(names(directTools.tools));
            expect(proxiedTools).toEqual(directTools);
            expect(await proxied.listPrompts()).toEqual(await direct.listPrompts());
            expect(await proxied.listResourceTemplates()).toEqual(await direct.listResourceTemplates());
          } finally {
            await proxied.close();
            await direct.close();
          }
        });
      }
    }

    it('lists a different set of tools for different declarations, so the comparison above can fail', { timeout: 60_000 }, async () => {
      const lists: string[][] = [];
      for (const capabilities of [CAPABILITY_SETS['none']!, CAPABILITY_SETS['sampling, elicitation and roots']!, CAPABILITY_SETS['everything, with tasks']!]) {
        const client = await throughProxy(rig, capabilities, 'in-process');
        lists.push(names((await client.listTools()).tools));
        await client.close();
      }
      expect(lists[1]!.length).toBeGreaterThan(lists[0]!.length);
      expect(lists[2]!.length).toBeGreaterThan(lists[1]!.length);
      expect(lists[1]).toEqual(expect.arrayContaining(['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']));
      expect(lists[0]).not.toContain('trigger-sampling-request');
    });

    it("answers the server's sampling, elicitation and roots requests as the client straight would", { timeout: 60_000 }, async () => {
      const capabilities = CAPABILITY_SETS['form and url elicitation']!;
      const full = { ...capabilities, sampling: {}, roots: { listChanged: true } };
      const direct = await rig.direct(full);
      const proxied = await throughProxy(rig, full, 'Streamable HTTP');
      try {
        const calls = [
          { name: 'trigger-sampling-request', arguments: { prompt: 'say hi', maxTokens: 20 } },
          { name: 'trigger-elicitation-request', arguments: {} },
          { name: 'trigger-url-elicitation', arguments: { url: 'https://example.com/authorize' } },
        ];
        // server-everything makes up an id for each URL elicitation.
        const shape = (result: unknown) => JSON.stringify(result).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>');
        for (const call of calls) expect(shape(await proxied.callTool(call)), call.name).toEqual(shape(await direct.callTool(call)));
        // The server asks for roots a moment after the handshake.
        const roots = async (client: Client) => {
          for (let i = 0; i < 100; i++) {
            const text = textOf(await client.callTool({ name: 'get-roots-list', arguments: {} }));
            if (text.includes('file:///srv/alpha')) return text;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          throw new Error('the roots never reached the server');
        };
        expect(await roots(proxied)).toEqual(await roots(direct));
      } finally {
        await proxied.close();
        await direct.close();
      }
    });
  });
}

describe('a server without an SDK sees what the client wrote', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let upstream: McpUpstream;
  let proxy: McpProxy;
  beforeAll(async () => {
    dir = await tempDir();
    upstream = { command: process.execPath, args: [await writeRawEchoServer(join(dir.path, 'raw-echo.mjs'))], stderr: 'ignore' };
    proxy = await startMcpProxy({ upstream, plan: createFaultPlan({ version: 1, rules: [] }), store: ':memory:' });
  });
  afterAll(async () => {
    await proxy?.close();
    await dir?.remove();
  });

  /** A client that declares `capabilities` as raw JSON: the SDK's Client sends them as given. */
  async function proxiedClient(capabilities: Record<string, unknown>): Promise<Client> {
    const client = new Client({ name: 'raw', version: '1' }, { capabilities: capabilities as ClientCapabilities });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await proxy.connect(serverSide);
    await client.connect(clientSide);
    return client;
  }

  it('receives experimental, extension and future capabilities unchanged, nested keys included', async () => {
    const declared = {
      experimental: { 'vendor.example/streaming': { chunkBytes: 4096 } },
      extensions: { 'io.example/ui': { version: '2' } },
      roots: { listChanged: true, futureFlag: true },
      someCapabilityFromNextYear: { enabled: true, modes: ['a', 'b'] },
    };
    const client = await proxiedClient(declared);
    try {
      expect(JSON.parse(textOf(await client.callTool({ name: 'declared', arguments: {} })))).toEqual(declared);
    } finally {
      await client.close();
    }
  });

  it('relays a request for a declared capability and answers one for an undeclared capability itself, as an SDK client without it would', async () => {
    const withSampling = await proxiedClient({ sampling: {} });
    const without = await proxiedClient({});
    let askedWithout = 0;
    without.fallbackRequestHandler = async () => {
      askedWithout++;
      return {};
    };
    withSampling.setRequestHandler(CreateMessageRequestSchema, () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: 'sampled' } }));
    try {
      const ask = (client: Client, method: string) => client.callTool({ name: 'ask', arguments: { method, params: { messages: [], maxTokens: 5 } } }).then((r) => JSON.parse(textOf(r)) as unknown);
      expect(await ask(withSampling, 'sampling/createMessage')).toEqual({ result: { model: 'm', role: 'assistant', content: { type: 'text', text: 'sampled' } } });
      for (const method of ['sampling/createMessage', 'elicitation/create', 'roots/list', 'tasks/list']) {
        expect(await ask(without, method), method).toEqual({ error: { code: -32601, message: 'Method not found' } });
      }
      expect(askedWithout).toBe(0);
    } finally {
      await withSampling.close();
      await without.close();
    }
  });

  it('passes requests and notifications of methods it does not know both ways', async () => {
    const client = await proxiedClient({ roots: { listChanged: true }, experimental: { 'vendor.example/hello': {} } });
    client.fallbackRequestHandler = async (request) => ({ echoed: request.method, params: request.params ?? null });
    try {
      expect(JSON.parse(textOf(await client.callTool({ name: 'ask', arguments: { method: 'vendor.example/hello', params: { n: 1 } } })))).toEqual({
        result: { echoed: 'vendor.example/hello', params: { n: 1 } },
      });
      await client.notification({ method: 'notifications/roots/list_changed' });
      await client.notification({ method: 'notifications/vendor.example/tick', params: { at: 1 } });
      const seen = async () => JSON.parse(textOf(await client.callTool({ name: 'notifications', arguments: {} }))) as string[];
      let notes = await seen();
      for (let i = 0; i < 50 && notes.length < 3; i++) notes = await seen();
      expect(notes).toEqual(['notifications/initialized', 'notifications/roots/list_changed', 'notifications/vendor.example/tick']);
      // And a request of its own to the server, which the server refuses as it refuses it straight.
      const unknown = await client.request({ method: 'vendor.example/unknown', params: {} }, z.object({})).catch((e: unknown) => e);
      expect(unknown).toMatchObject({ code: -32601, message: expect.stringContaining('Method not found: vendor.example/unknown') });
    } finally {
      await client.close();
    }
  });
});
