/**
 * Shared by the MCP proxy tests: real MCP servers from npm as upstreams, a proxy in-process
 * with a real SQLite store in a temp directory, and a real SDK Client connected to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { createFaultPlan, type FaultPlan } from '../plan.js';
import type { FaultPlanSpec } from '../plan-spec.js';
import { startMcpProxy, type McpProxy, type McpProxyOptions } from './proxy.js';
import type { McpUpstream } from './upstream.js';
import { refusedPort } from '../../refused-port.test-helpers.js';

const modules = (path: string) => fileURLToPath(new URL(`../../../node_modules/${path}`, import.meta.url));

/** `@modelcontextprotocol/server-everything`'s entry point (pass `stdio`). */
export const EVERYTHING_SERVER = modules('@modelcontextprotocol/server-everything/dist/index.js');
/** `@modelcontextprotocol/server-filesystem`'s entry point (pass the allowed directories). */
export const FILESYSTEM_SERVER = modules('@modelcontextprotocol/server-filesystem/dist/index.js');
/** `@modelcontextprotocol/server-memory`'s entry point (the graph file comes from MEMORY_FILE_PATH). */
export const MEMORY_SERVER = modules('@modelcontextprotocol/server-memory/dist/index.js');
/** `@modelcontextprotocol/inspector-cli`'s bin. */
export const INSPECTOR_CLI = modules('.bin/mcp-inspector-cli');

export function everythingUpstream(): McpUpstream {
  return { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' };
}

export function filesystemUpstream(dir: string): McpUpstream {
  return { command: process.execPath, args: [FILESYSTEM_SERVER, dir], stderr: 'ignore' };
}

/** server-memory keeping its knowledge graph in `file` (by default it writes next to its own code). */
export function memoryUpstream(file: string): McpUpstream {
  return { command: process.execPath, args: [MEMORY_SERVER], env: { MEMORY_FILE_PATH: file }, stderr: 'ignore' };
}

/**
 * Writes a small real MCP server (SDK McpServer over stdio) to `path`: `ping` answers at once,
 * `slow_write` starts and then the process ends half way through it, as `node path <how>` says:
 * `exit:<code>` exits with that code, `kill:<signal>` kills itself with that signal. It also has
 * one prompt, `greet`, to show that requests other than tool calls fail alike once it is gone.
 *
 * For restarts, `node path <how> <countFile> [once]` counts its starts in `countFile` and lists one
 * more tool, `generation_<n>` for its n-th start, so that each restart changes the tool list; with
 * `once`, every start after the first exits with code 5 before the handshake.
 */
export async function writeDyingServer(path: string): Promise<string> {
  const sdk = (file: string) => JSON.stringify(modules(`@modelcontextprotocol/sdk/dist/esm/server/${file}`));
  await writeFile(
    path,
    [
      `import { McpServer } from ${sdk('mcp.js')};`,
      `import { StdioServerTransport } from ${sdk('stdio.js')};`,
      `import { existsSync, readFileSync, writeFileSync } from 'node:fs';`,
      `const [how, value] = (process.argv[2] ?? 'exit:1').split(':');`,
      `const countFile = process.argv[3];`,
      `const generation = countFile === undefined ? 0 : (existsSync(countFile) ? Number(readFileSync(countFile, 'utf8')) : 0) + 1;`,
      `if (countFile !== undefined) writeFileSync(countFile, String(generation));`,
      `if (process.argv[4] === 'once' && generation > 1) process.exit(5);`,
      `const server = new McpServer({ name: 'dies-mid-call', version: '1.0.0' });`,
      `server.registerTool('ping', { description: 'answers at once', annotations: { readOnlyHint: true } }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));`,
      `server.registerTool('slow_write', { description: 'writes slowly; the process ends half way' }, async () => {`,
      `  setTimeout(() => (how === 'kill' ? process.kill(process.pid, value) : process.exit(Number(value))), 150);`,
      `  return new Promise(() => {});`,
      `});`,
      `if (generation > 0) server.registerTool('generation_' + generation, { description: 'which start this is' }, async () => ({ content: [{ type: 'text', text: String(generation) }] }));`,
      `server.registerPrompt('greet', { description: 'a greeting' }, () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }] }));`,
      `await server.connect(new StdioServerTransport());`,
      '',
    ].join('\n'),
  );
  return path;
}

/**
 * Writes a small MCP server to `path` that speaks JSON-RPC over stdio by hand, without an SDK, so
 * that nothing on its side parses what a client declares: it keeps the `initialize` params as they
 * came. Tools: `declared` answers with the client's capabilities as JSON text; `ask <method>`
 * sends the client a request of that method whatever the client declared (as a server that does
 * not check would) and answers with the client's reply (`{ result }` or `{ error }`) as JSON text.
 * Every notification it gets is kept and `notifications` lists them.
 */
export async function writeRawEchoServer(path: string): Promise<string> {
  await writeFile(
    path,
    [
      `import { createInterface } from 'node:readline';`,
      `let declared = null;`,
      `const notes = [];`,
      `const waiting = new Map();`,
      `let next = 0;`,
      `const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\\n');`,
      `const text = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }] });`,
      `const tools = [`,
      `  { name: 'declared', description: 'the client capabilities, as declared', inputSchema: { type: 'object' } },`,
      `  { name: 'ask', description: 'sends the client a request', inputSchema: { type: 'object', properties: { method: { type: 'string' }, params: { type: 'object' } }, required: ['method'] } },`,
      `  { name: 'notifications', description: 'the notifications received', inputSchema: { type: 'object' } },`,
      `];`,
      `for await (const line of createInterface({ input: process.stdin })) {`,
      `  if (line.trim() === '') continue;`,
      `  const message = JSON.parse(line);`,
      `  if (message.method === undefined) {`,
      `    const pending = waiting.get(message.id);`,
      `    if (pending !== undefined) { waiting.delete(message.id); send({ id: pending, result: text(message.error === undefined ? { result: message.result } : { error: message.error }) }); }`,
      `    continue;`,
      `  }`,
      `  if (message.id === undefined) { notes.push(message.method); continue; }`,
      `  switch (message.method) {`,
      `    case 'initialize':`,
      `      declared = message.params.capabilities;`,
      `      send({ id: message.id, result: { protocolVersion: message.params.protocolVersion, capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'raw-echo', version: '1.0.0' }, instructions: 'echoes what its client declared' } });`,
      `      break;`,
      `    case 'ping': send({ id: message.id, result: {} }); break;`,
      `    case 'tools/list': send({ id: message.id, result: { tools } }); break;`,
      `    case 'tools/call': {`,
      `      const { name, arguments: args = {} } = message.params;`,
      `      if (name === 'declared') send({ id: message.id, result: text(declared) });`,
      `      else if (name === 'notifications') send({ id: message.id, result: text(notes) });`,
      `      else if (name === 'ask') { const id = 'server-' + next++; waiting.set(id, message.id); send({ id, method: args.method, params: args.params ?? {} }); }`,
      `      else send({ id: message.id, error: { code: -32602, message: 'unknown tool ' + name } });`,
      `      break;`,
      `    }`,
      `    default: send({ id: message.id, error: { code: -32601, message: 'Method not found: ' + message.method } });`,
      `  }`,
      `}`,
      '',
    ].join('\n'),
  );
  return path;
}

/** server-everything over Streamable HTTP on `port`, once it listens. */
export async function startEverythingHttp(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${said}`)));
  });
  child.stderr!.resume();
  return child;
}

/** A port nothing listens on now. */
export async function freePort(): Promise<number> {
  // Not a port a server on port 0 just gave back: the next listen(0) may take it before the test does.
  return refusedPort();
}

/** The JSON-RPC error a request was answered with (fails the test if it succeeded or failed otherwise). */
export async function rpcError(call: Promise<unknown>): Promise<McpError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected a JSON-RPC error, got ${JSON.stringify(error)}`);
  return error;
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

/**
 * Sets `client`'s logging level to `warning` on server-everything (through the proxy) and from then
 * on collects the logs it gets as `level: data`; also the first three resource URIs it lists, which
 * server-everything acknowledges with an info log when subscribed to.
 */
export async function logsAtWarning(client: Client): Promise<{ logs: string[]; uris: [string, string, string] }> {
  const logs: string[] = [];
  let listening = false;
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void (listening && logs.push(`${n.params.level}: ${String(n.params.data)}`)));
  const [first, second, third] = (await client.listResources()).resources.map((r) => r.uri);
  if (first === undefined || second === undefined || third === undefined) throw new Error('server-everything listed fewer than three resources');
  await client.setLoggingLevel('warning');
  listening = true;
  return { logs, uris: [first, second, third] };
}
