/**
 * `faultline mcp-proxy`: usage errors in-process, then the real command compiled and run as a
 * process, with real MCP clients (the SDK's, and @modelcontextprotocol/inspector-cli) in front
 * and a real MCP server from npm behind.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListRootsRequestSchema, McpError, ToolListChangedNotificationSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, INSPECTOR_CLI, MEMORY_SERVER, readRecords, tempDir, writeDyingServer } from '../../faults/mcp-proxy/mcp-proxy.test-helpers.js';
import { runCapture, startCli, waitFor } from '../run-cli.test-helpers.js';
import { compileCli } from './compiled-cli.test-helpers.js';
import { YAML_ALIAS_BOMB } from '../../io/yaml-alias-bomb.test-helpers.js';

const run = promisify(execFile);

/** An MCP client transport over a child the test spawned itself, so that the test can see the child's exit code. */
class ChildStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();

  /** `asciiOnly` escapes every non-ASCII character as \uXXXX, as Python's json.dumps does by default. */
  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly asciiOnly = false,
  ) {}

  async start(): Promise<void> {
    this.child.stdout.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message);
    });
    this.child.once('close', () => this.onclose?.());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const line = serializeMessage(message);
    this.child.stdin.write(this.asciiOnly ? line.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : line);
  }

  /** Ends the child's stdin, which is how an MCP client leaves a stdio server. */
  async close(): Promise<void> {
    this.child.stdin.end();
  }
}

/** A server that fails at start-up the way real ones do: a few lines on stderr, then a non-zero exit. */
const EARLY_EXIT = "console.error('memory server starting'); console.error('Error: MEMORY_FILE_PATH is a directory'); console.error('  at main (index.js:1:1)'); process.exit(3)";

const PLAN = ['version: 1', 'rules:', '  - id: sum-400', '    tool: get-sum', '    fault: http_status', '    params: { status: 400, message: a and b must be numbers }', ''].join('\n');

let dir: Awaited<ReturnType<typeof tempDir>>;
let planPath: string;

beforeAll(async () => {
  dir = await tempDir('faultline-mcp-cli-');
  planPath = join(dir.path, 'plan.yaml');
  await writeFile(planPath, PLAN);
});
afterAll(async () => {
  await dir?.remove();
});

describe('faultline mcp-proxy: bad usage and bad input print one line and exit 2', () => {
  // A port in use, for --port and --admin-port.
  const blocker = createServer();
  const taken = () => String((blocker.address() as AddressInfo).port);
  beforeAll(() => new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve)));
  afterAll(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

  const cases: Array<[string, () => string[], RegExp]> = [
    ['--allow-host without --port', () => ['mcp-proxy', '--allow-host', 'mcp.lan', '--', 'node'], /^faultline: --allow-host needs --port$/],
    ['no upstream', () => ['mcp-proxy', '--plan', planPath], /^faultline: no upstream MCP server: add -- <server command\.\.\.> \(stdio\) or --upstream <url>/],
    ['both upstreams', () => ['mcp-proxy', '--plan', planPath, '--upstream', 'http://127.0.0.1:9/mcp', '--', 'node'], /^faultline: give either --upstream <url> or -- <server command>, not both$/],
    ['an --upstream that is not http', () => ['mcp-proxy', '--plan', planPath, '--upstream', 'ftp://example/mcp'], /^faultline: --upstream must be an http\(s\) URL/],
    ['a bad --header', () => ['mcp-proxy', '--plan', planPath, '--upstream', 'http://127.0.0.1:9/mcp', '--header', 'no-colon'], /^faultline: --header must look like "Name: value"/],
    ['a bad --port', () => ['mcp-proxy', '--plan', planPath, '--port', 'eighty', '--', 'node'], /^faultline: --port must be a port number from 0 to 65535, got "eighty"$/],
    ['--admin-token without --admin-port', () => ['mcp-proxy', '--plan', planPath, '--admin-token', 'x', '--', 'node'], /^faultline: --admin-token needs --admin-port$/],
    ['an unknown flag', () => ['mcp-proxy', '--plan', planPath, '--bogus', '--', 'node'], /^faultline: unknown option '--bogus'/],
    ['--max-restarts without --restart', () => ['mcp-proxy', '--plan', planPath, '--max-restarts', '3', '--', 'node'], /^faultline: --max-restarts needs --restart$/],
    ['a bad --max-restarts', () => ['mcp-proxy', '--plan', planPath, '--restart', '--max-restarts', '0', '--', 'node'], /^faultline: --max-restarts must be a whole number from 1 to 1000, got "0"$/],
    ['--restart with --upstream', () => ['mcp-proxy', '--plan', planPath, '--restart', '--upstream', 'http://127.0.0.1:9/mcp'], /^faultline: --restart applies to a server command/],
    ['a plan file that does not exist', () => ['mcp-proxy', '--plan', join(dir.path, 'missing.yaml'), '--', 'node'], /^faultline: cannot read fault plan .*missing\.yaml: no such file or directory$/],
    ['a plan that does not validate', () => ['mcp-proxy', '--plan', join(dir.path, 'bad.yaml'), '--', 'node'], /^faultline: .*bad\.yaml.*status/],
    ['a plan that is a YAML alias bomb', () => ['mcp-proxy', '--plan', join(dir.path, 'bomb.yaml'), '--', 'node'], /^faultline: .*bomb\.yaml: invalid YAML: Excessive alias count indicates a resource exhaustion attack$/],
    // Before the server is started: nothing but the one line.
    ['a --port in use', () => ['mcp-proxy', '--plan', planPath, '--db', ':memory:', '--port', taken(), '--', process.execPath, EVERYTHING_SERVER, 'stdio'], /^faultline: cannot listen on 127\.0\.0\.1:\d+ \(--port\): EADDRINUSE$/],
    ['an --admin-port in use', () => ['mcp-proxy', '--plan', planPath, '--db', ':memory:', '--port', '0', '--admin-port', taken(), '--', process.execPath, EVERYTHING_SERVER, 'stdio'], /^faultline: cannot listen on 127\.0\.0\.1:\d+ \(--admin-port\): EADDRINUSE$/],
    ['a --db that cannot be opened', () => ['mcp-proxy', '--plan', planPath, '--db', '/dev/null/records.db', '--', process.execPath, EVERYTHING_SERVER, 'stdio'], /^faultline: cannot open SQLite store/],
    ['a --db that is not a store', () => ['mcp-proxy', '--plan', planPath, '--db', 'mysql://db/x', '--', 'node'], /^faultline: unknown store "mysql:\/\/db\/x"/],
    ['a server command that does not exist', () => ['mcp-proxy', '--plan', planPath, '--db', ':memory:', '--', '/nonexistent/mcp-server'], /^faultline: cannot connect to the upstream MCP server \(\/nonexistent\/mcp-server\): ENOENT$/],
    [
      'a server that exits before the MCP handshake, after writing to stderr',
      () => ['mcp-proxy', '--plan', planPath, '--db', ':memory:', '--', process.execPath, '-e', EARLY_EXIT],
      /^faultline: cannot connect to the upstream MCP server \(.* -e .*\): it exited with code 3 before the MCP handshake \(it wrote 3 lines to stderr: run the command directly to see them\)$/,
    ],
  ];

  beforeAll(async () => {
    await writeFile(join(dir.path, 'bad.yaml'), 'version: 1\nrules:\n  - tool: x\n    fault: http_status\n    params: { status: 418 }\n');
    await writeFile(join(dir.path, 'bomb.yaml'), YAML_ALIAS_BOMB);
  });

  for (const [name, argv, message] of cases) {
    it(name, async () => {
      const result = await runCapture(argv(), dir.path);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(message);
    });
  }

  it('leaves no store behind when the server cannot start, with the default --db or a given one', async () => {
    const failing = [['/nonexistent/mcp-server'], [process.execPath, '-e', EARLY_EXIT]];
    for (const server of failing) {
      const cwd = join(dir.path, `no-store-${failing.indexOf(server)}`);
      await mkdir(cwd);
      const byDefault = await runCapture(['mcp-proxy', '--plan', planPath, '--', ...server], cwd);
      const given = await runCapture(['mcp-proxy', '--plan', planPath, '--db', join(cwd, 'records.db'), '--', ...server], cwd);
      expect([byDefault.code, given.code]).toEqual([2, 2]);
      expect(await readdir(cwd)).toEqual([]);
    }
  });

  it('leaves no store behind when a port is taken: the ports come before the store', async () => {
    const cwd = join(dir.path, 'no-store-port');
    await mkdir(cwd);
    const server = ['--', process.execPath, EVERYTHING_SERVER, 'stdio'];
    const byDefault = await runCapture(['mcp-proxy', '--plan', planPath, '--port', taken(), ...server], cwd);
    const given = await runCapture(['mcp-proxy', '--plan', planPath, '--db', join(cwd, 'new', 'records.db'), '--port', '0', '--admin-port', taken(), ...server], cwd);
    expect([byDefault.code, given.code]).toEqual([2, 2]);
    expect(await readdir(cwd)).toEqual([]);
  });
});

describe('faultline mcp-proxy --json', () => {
  it('prints where the records went as one JSON line on stderr at exit', async () => {
    const db = join(dir.path, 'json-exit.db');
    const cli = startCli(['mcp-proxy', '--plan', planPath, '--db', db, '--port', '0', '--json', '--', process.execPath, EVERYTHING_SERVER, 'stdio'], dir.path);
    const url = await waitFor(() => /serving .* at (http:\/\/\S+)/.exec(cli.captured.stderr())?.[1], 'the proxy to listen', 60_000);
    const client = new Client({ name: 'json-exit', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    await client.callTool({ name: 'echo', arguments: { message: 'one' } });
    await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }).catch(() => undefined);
    await client.close();
    cli.stop();
    expect(await cli.exit).toBe(0);
    const last = cli.captured.stderr().trim().split('\n').at(-1)!;
    expect(JSON.parse(last)).toEqual({
      stopped: true,
      calls: 2,
      recording: { offered: 2, stored: 2, spooled: 0, inMemory: 0, dropped: 0, rejected: 0, recovered: 0, storeHealthy: true },
    });
    expect((await readRecords(db)).map((r) => r.tool_name)).toEqual(['echo', 'get-sum']);
  }, 120_000);
});

describe('faultline mcp-proxy as a process', () => {
  let main: string;

  beforeAll(async () => {
    // Compiled once, so the real CLI runs as users run it.
    main = await compileCli(join(dir.path, 'build'), ['faults/mcp-proxy/proxy.js']);
  }, 180_000);

  const serverArgs = () => ['--', process.execPath, EVERYTHING_SERVER, 'stdio'];

  it('serves an SDK client over stdio, applies the plan, and records every call', async () => {
    const db = join(dir.path, 'stdio.db');
    const transport = new StdioClientTransport({ command: process.execPath, args: [main, 'mcp-proxy', '--plan', planPath, '--db', db, ...serverArgs()], cwd: dir.path, stderr: 'pipe' });
    const stderr: string[] = [];
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const client = new Client({ name: 'cli-test', version: '1' });
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('mcp-servers/everything');
    const tools = await client.listTools();
    expect(tools.tools.find((t) => t.name === 'echo')?.annotations).toMatchObject({ readOnlyHint: true });
    expect(await client.callTool({ name: 'echo', arguments: { message: 'over stdio' } })).toEqual({ content: [{ type: 'text', text: 'Echo: over stdio' }] });
    const error = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }).catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32602);
    await client.close();

    // Closing stdin stops the proxy, which flushes its records before it exits.
    const deadline = Date.now() + 10_000;
    while (!stderr.join('').includes('stopped after') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(stderr.join('')).toContain('faultline mcp-proxy: stopped after 2 tool call(s)');
    const records = await readRecords(db);
    expect(records.map((r) => [r.tool_name, r.status, r.error_code, r.fault?.rule_id ?? null])).toEqual([
      ['echo', 'success', null, null],
      ['get-sum', 'failure', 'MCP_-32602', 'sum-400'],
    ]);
    expect(records[1]).toMatchObject({ failure_category: 'parameter', idempotent: true, context_snapshot: { agent: 'cli-test', transport: 'mcp' } });
  });

  it('without --plan only records, and tells server-everything what its stdio client declared: the same tools as straight', { timeout: 60_000 }, async () => {
    const db = join(dir.path, 'no-plan.db');
    const capabilities = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
    const proxied = new Client({ name: 'capable', version: '1' }, { capabilities });
    const direct = new Client({ name: 'capable', version: '1' }, { capabilities });
    for (const client of [proxied, direct]) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
    await proxied.connect(new StdioClientTransport({ command: process.execPath, args: [main, 'mcp-proxy', '--db', db, ...serverArgs()], cwd: dir.path, stderr: 'ignore' }));
    await direct.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], stderr: 'ignore' }));
    try {
      const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
      const tools = await names(proxied);
      expect(tools).toEqual(await names(direct));
      expect(tools).toEqual(expect.arrayContaining(['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']));
      expect(tools).not.toContain('trigger-url-elicitation');
      expect(await proxied.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } })).toEqual(await direct.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }));
    } finally {
      await proxied.close();
      await direct.close();
    }
    const deadline = Date.now() + 10_000;
    let records = await readRecords(db).catch(() => []);
    while (records.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      records = await readRecords(db).catch(() => []);
    }
    expect(records.map((r) => [r.tool_name, r.status, r.fault])).toEqual([['get-sum', 'success', null]]);
  });

  it('works with @modelcontextprotocol/inspector-cli as the client', { timeout: 120_000 }, async () => {
    const db = join(dir.path, 'inspector.db');
    const inspect = (...method: string[]) =>
      run(INSPECTOR_CLI, ['--cli', process.execPath, ...method, '--', main, 'mcp-proxy', '--plan', planPath, '--db', db, ...serverArgs()], { cwd: dir.path, timeout: 60_000 });

    const listed = await inspect('--method', 'tools/list');
    const tools = (JSON.parse(listed.stdout) as { tools: Array<{ name: string; annotations?: Record<string, unknown> }> }).tools;
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-structured-content']));
    expect(tools.find((t) => t.name === 'get-sum')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });

    // --tool-arg takes several values, so it goes before the next flag.
    const called = await inspect('--tool-arg', 'message=hello inspector', '--method', 'tools/call', '--tool-name', 'echo');
    expect(JSON.parse(called.stdout)).toEqual({ content: [{ type: 'text', text: 'Echo: hello inspector' }] });

    const failed = await inspect('--tool-arg', 'a=1', 'b=2', '--method', 'tools/call', '--tool-name', 'get-sum').catch((e: { code?: number; stderr?: string }) => e);
    expect((failed as { code?: number }).code).toBe(1);
    expect((failed as { stderr?: string }).stderr).toContain('MCP error -32602: a and b must be numbers');

    const deadline = Date.now() + 10_000;
    let records = await readRecords(db);
    while (records.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      records = await readRecords(db);
    }
    expect(records.map((r) => [r.tool_name, r.status, r.error_code])).toEqual([
      ['echo', 'success', null],
      ['get-sum', 'failure', 'MCP_-32602'],
    ]);
    expect(records[0]!.context_snapshot).toMatchObject({ agent: 'inspector-cli' });
  });

  /** Starts the CLI and collects its stderr lines. */
  function start(
    args: string[],
    env: NodeJS.ProcessEnv = {},
  ): { child: ChildProcessWithoutNullStreams; line(pattern: RegExp): Promise<RegExpExecArray>; lines(): string[]; exit: Promise<number | null> } {
    const child = spawn(process.execPath, [main, 'mcp-proxy', ...args], { cwd: dir.path, env: { ...process.env, ...env } });
    const lines: string[] = [];
    const waiting: Array<() => void> = [];
    createInterface({ input: child.stderr }).on('line', (line) => {
      lines.push(line);
      for (const wake of waiting.splice(0)) wake();
    });
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return {
      child,
      exit,
      lines: () => [...lines],
      async line(pattern) {
        const deadline = Date.now() + 15_000;
        for (;;) {
          for (const line of lines) {
            const match = pattern.exec(line);
            if (match !== null) return match;
          }
          if (Date.now() > deadline) throw new Error(`no stderr line matched ${pattern}; got:\n${lines.join('\n')}`);
          await new Promise<void>((resolve) => {
            waiting.push(resolve);
            setTimeout(resolve, 100);
          });
        }
      },
    };
  }

  it('serves Streamable HTTP with --port, takes plan changes on --admin-port, and exits 0 on SIGTERM', async () => {
    const db = join(dir.path, 'http.db');
    const proc = start(['--plan', planPath, '--db', db, '--port', '0', '--admin-port', '0', ...serverArgs()], { FAULTLINE_ADMIN_TOKEN: '' });
    try {
      const url = (await proc.line(/serving mcp-servers\/everything at (http:\/\/127\.0\.0\.1:\d+\/mcp)$/))[1]!;
      const adminUrl = (await proc.line(/admin endpoint at (http:\/\/127\.0\.0\.1:\d+) /))[1]!;
      // No token configured: one was generated and printed.
      const token = (await proc.line(/admin token: (\S+)$/))[1]!;

      const client = new Client({ name: 'http-cli-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      expect(await client.callTool({ name: 'echo', arguments: { message: 'over http' } })).toEqual({ content: [{ type: 'text', text: 'Echo: over http' }] });

      expect((await fetch(`${adminUrl}/plan`, { method: 'PUT', body: 'version: 1\nrules: []\n' })).status).toBe(401);
      const put = await fetch(`${adminUrl}/plan`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}` },
        body: 'version: 1\nrules:\n  - id: echo-down\n    tool: echo\n    fault: http_status\n    params: { status: 502 }\n',
      });
      expect(put.status).toBe(200);
      await proc.line(/plan updated: 1 rule\(s\)$/);
      const error = await client.callTool({ name: 'echo', arguments: { message: 'again' } }).catch((e: unknown) => e);
      expect((error as McpError).code).toBe(-32603);
      const state = (await (await fetch(`${adminUrl}/state`, { headers: { authorization: `Bearer ${token}` } })).json()) as { calls: number; sessions: number };
      expect(state).toMatchObject({ calls: 2, sessions: 1 });
      await client.close();

      proc.child.kill('SIGTERM');
      expect(await proc.exit).toBe(0);
      const records = await readRecords(db);
      expect(records.map((r) => [r.tool_name, r.error_code, r.fault?.rule_id ?? null])).toEqual([
        ['echo', null, null],
        ['echo', 'MCP_-32603', 'echo-down'],
      ]);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('takes $FAULTLINE_ADMIN_TOKEN with the newline a token file leaves, as the HTTP proxy does', async () => {
    const proc = start(['--plan', planPath, '--db', join(dir.path, 'token.db'), '--port', '0', '--admin-port', '0', ...serverArgs()], { FAULTLINE_ADMIN_TOKEN: ' token-from-a-file\n' });
    try {
      const adminUrl = (await proc.line(/admin endpoint at (http:\/\/127\.0\.0\.1:\d+) /))[1]!;
      const plan = await fetch(`${adminUrl}/plan`, { headers: { authorization: 'Bearer token-from-a-file' } });
      expect(plan.status).toBe(200);
      expect(await plan.json()).toMatchObject({ version: 1 });
      // A configured token is not printed.
      expect(proc.lines().some((line) => line.includes('admin token'))).toBe(false);
      proc.child.kill('SIGTERM');
      expect(await proc.exit).toBe(0);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('keeps serving when the server dies mid-call: both calls fail with -32000 and are recorded, and it exits 1 when the client leaves', async () => {
    const script = await writeDyingServer(join(dir.path, 'dying-server.mjs'));
    const db = join(dir.path, 'dying.db');
    const proc = start(['--plan', planPath, '--db', db, '--', process.execPath, script, 'exit:3']);
    try {
      const client = new Client({ name: 'survivor', version: '1' });
      await client.connect(new ChildStdioTransport(proc.child));
      const tools = await client.listTools();
      expect(await client.callTool({ name: 'ping', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'pong' }] });

      const running = await client.callTool({ name: 'slow_write', arguments: {} }).catch((e: unknown) => e);
      expect(running).toBeInstanceOf(McpError);
      expect(running).toMatchObject({ code: -32000, data: { code: 'ECONNRESET', exit_code: 3, signal: null } });
      const after = await client.callTool({ name: 'ping', arguments: {} }).catch((e: unknown) => e);
      expect(after).toMatchObject({ code: -32000, data: { code: 'UPSTREAM_EXITED', exit_code: 3, signal: null } });

      // The proxy is still there, answers tools/list, and has written the records while it runs.
      expect(proc.child.exitCode).toBeNull();
      expect(await client.listTools()).toEqual(tools);
      const deadline = Date.now() + 10_000;
      let records = await readRecords(db);
      while (records.length < 3 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        records = await readRecords(db);
      }
      expect(records.map((r) => [r.tool_name, r.status, r.failure_category, r.failure_type, r.error_code])).toEqual([
        ['ping', 'success', null, null, null],
        ['slow_write', 'failure', 'network', 'connection_reset', 'ECONNRESET'],
        ['ping', 'failure', 'system', 'dependency_down', 'UPSTREAM_EXITED'],
      ]);
      await proc.line(/exited with code 3/);
      expect(proc.lines()).toEqual([expect.stringMatching(/^faultline mcp-proxy: the upstream MCP server \(.*dying-server\.mjs exit:3\) exited with code 3; tools\/call now fails with -32000/)]);

      await client.close();
      expect(await proc.exit).toBe(1);
      await proc.line(/^faultline mcp-proxy: stopped after 3 tool call\(s\); records in .*dying\.db$/);
      expect(proc.lines()).toHaveLength(2);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('with --restart, starts a server that died mid-call again: the failed call is recorded, the next one succeeds, and it exits 0', { timeout: 60_000 }, async () => {
    const script = await writeDyingServer(join(dir.path, 'restarted-server.mjs'));
    const db = join(dir.path, 'restarted.db');
    const proc = start(['--plan', planPath, '--db', db, '--restart', '--max-restarts', '2', '--', process.execPath, script, 'exit:3', join(dir.path, 'restarted-count.txt')]);
    try {
      const client = new Client({ name: 'comes-back', version: '1' });
      let notified!: () => void;
      const listChanged = new Promise<void>((resolve) => (notified = resolve));
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => notified());
      await client.connect(new ChildStdioTransport(proc.child));
      const running = await client.callTool({ name: 'slow_write', arguments: {} }).catch((e: unknown) => e);
      expect(running).toMatchObject({ code: -32000, data: { code: 'ECONNRESET', exit_code: 3, signal: null } });
      await proc.line(/restarted the upstream MCP server \(attempt 1 of 2\)$/);
      // The restarted server lists generation_2 instead of generation_1.
      await listChanged;
      expect(await client.callTool({ name: 'ping', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'pong' }] });
      await client.close();
      expect(await proc.exit).toBe(0);
      expect((await readRecords(db)).map((r) => [r.tool_name, r.status, r.error_code])).toEqual([
        ['slow_write', 'failure', 'ECONNRESET'],
        ['ping', 'success', null],
      ]);
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it("takes a request over the SDK's 10 MiB from its stdio client: write_file to server-filesystem with 2 million CJK characters sent \\u-escaped (11 MB), recorded", { timeout: 60_000 }, async () => {
    const files = join(dir.path, 'large-write');
    await mkdir(files);
    const db = join(dir.path, 'large-write.db');
    const proc = start(['--plan', planPath, '--db', db, '--', process.execPath, FILESYSTEM_SERVER, files]);
    try {
      const client = new Client({ name: 'ascii-client', version: '1' });
      await client.connect(new ChildStdioTransport(proc.child, true));
      const content = '大文件的一行内容，重复到两百万字。\n'.repeat(110_000);
      // 6 bytes a character as the client sends it: over the SDK's 10 MiB. The proxy sends it on
      // as UTF-8, 3 bytes a character, which server-filesystem's own SDK reader takes.
      expect(content.length * 6).toBeGreaterThan(10 * 1024 * 1024);
      expect(Buffer.byteLength(content)).toBeLessThan(10 * 1024 * 1024);
      const path = join(files, 'notes.txt');
      const text = `Successfully wrote to ${path}`;
      expect(await client.callTool({ name: 'write_file', arguments: { path, content } }, undefined, { timeout: 30_000 })).toEqual({ content: [{ type: 'text', text }], structuredContent: { content: text } });
      expect(await readFile(path, 'utf8')).toBe(content);

      await client.close();
      expect(await proc.exit).toBe(0);
      const records = await readRecords(db);
      expect(records.map((r) => [r.tool_name, r.status])).toEqual([['write_file', 'success']]);
      // raw_output is capped (DESIGN.md); input_params is not: the record keeps the arguments whole.
      expect(records[0]!.raw_output!.length).toBeLessThanOrEqual(2000);
      expect(records[0]!.input_params).toEqual({ path, content });
    } finally {
      proc.child.kill('SIGKILL');
    }
  });

  it('leaves no store behind when started as a process with a server that exits at once', async () => {
    const cwd = join(dir.path, 'process-no-store');
    await mkdir(cwd);
    const child = spawn(process.execPath, [main, 'mcp-proxy', '--plan', planPath, '--', process.execPath, '-e', EARLY_EXIT], { cwd });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/^faultline: cannot connect to the upstream MCP server \(.*\): it exited with code 3 before the MCP handshake \(it wrote 3 lines to stderr: run the command directly to see them\)\n$/);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('drives server-memory with @modelcontextprotocol/inspector-cli: entities and relations in, the graph back out', { timeout: 120_000 }, async () => {
    const db = join(dir.path, 'memory.db');
    const graphFile = join(dir.path, 'memory-graph.jsonl');
    // Each inspector run starts the proxy, which starts its own server-memory on the same graph file.
    const inspect = (...method: string[]) =>
      run(INSPECTOR_CLI, ['--cli', process.execPath, ...method, '--', main, 'mcp-proxy', '--plan', planPath, '--db', db, '--', process.execPath, MEMORY_SERVER], {
        cwd: dir.path,
        timeout: 60_000,
        env: { ...process.env, MEMORY_FILE_PATH: graphFile },
      });

    const tools = (JSON.parse((await inspect('--method', 'tools/list')).stdout) as { tools: Array<{ name: string; annotations?: Record<string, unknown> }> }).tools;
    expect(tools.find((t) => t.name === 'read_graph')?.annotations).toMatchObject({ readOnlyHint: true });

    const entities = JSON.stringify([
      { name: 'Grace Hopper', entityType: 'person', observations: ['wrote the first compiler'] },
      { name: 'COBOL', entityType: 'language', observations: [] },
    ]);
    const created = await inspect('--tool-arg', `entities=${entities}`, '--method', 'tools/call', '--tool-name', 'create_entities');
    expect((JSON.parse(created.stdout) as { structuredContent: unknown }).structuredContent).toEqual({ entities: JSON.parse(entities) as unknown });
    const relations = JSON.stringify([{ from: 'Grace Hopper', to: 'COBOL', relationType: 'designed' }]);
    await inspect('--tool-arg', `relations=${relations}`, '--method', 'tools/call', '--tool-name', 'create_relations');

    const graph = JSON.parse((await inspect('--method', 'tools/call', '--tool-name', 'read_graph')).stdout) as { structuredContent: unknown; content: Array<{ text: string }> };
    const expected = { entities: JSON.parse(entities) as unknown, relations: JSON.parse(relations) as unknown };
    expect(graph.structuredContent).toEqual(expected);
    expect(JSON.parse(graph.content[0]!.text)).toEqual(expected);

    const deadline = Date.now() + 10_000;
    let records = await readRecords(db);
    while (records.length < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      records = await readRecords(db);
    }
    expect(records.map((r) => [r.tool_name, r.status, r.idempotent, r.fault])).toEqual([
      ['create_entities', 'success', false, null],
      ['create_relations', 'success', false, null],
      ['read_graph', 'success', true, null],
    ]);
    expect(records[0]).toMatchObject({ input_params: { entities: JSON.parse(entities) as unknown }, context_snapshot: { agent: 'inspector-cli', mcp_server: 'memory-server' } });
  });
});
