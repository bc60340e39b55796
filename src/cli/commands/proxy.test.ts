import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeRecord } from '../../record/fixture.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { createToolCatalog } from '../../tools/catalog.js';
import { startMockToolServer, type MockToolServer } from '../../tools/http-server.js';
import { runCli } from '../run-cli.js';
import { captureIo, runCapture, waitFor, writeStoreFile } from '../run-cli.test-helpers.js';
import { compileCli } from './compiled-cli.test-helpers.js';
import { YAML_ALIAS_BOMB } from '../../io/yaml-alias-bomb.test-helpers.js';
import { refusedPort } from '../../refused-port.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-proxy-cli-'));
let upstream: MockToolServer;
beforeAll(async () => {
  upstream = await startMockToolServer({ catalog: createToolCatalog({ seed: 1 }), port: 0 });
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const stops: (() => Promise<number>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** Starts `faultline proxy` in-process; `stop()` plays Ctrl-C and resolves with the exit code. */
async function serve(args: string[], env: NodeJS.ProcessEnv = {}) {
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  const captured = captureIo(dir, interrupted);
  captured.io.env = env;
  const running = runCli(['proxy', '--target', upstream.url, '--port', '0', ...args], captured.io);
  const line = await waitFor(() => (captured.stdout().includes('\n') ? captured.stdout() : undefined), 'the startup output');
  let stopped: Promise<number> | undefined;
  const stop = () => {
    interrupt();
    return (stopped ??= running);
  };
  stops.push(stop);
  return { line, captured, stop };
}

function writeFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function expectUsageError(argv: string[], message: RegExp): Promise<void> {
  const run = await runCapture(argv, dir);
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr.split('\n')).toHaveLength(2);
  expect(run.stderr).toMatch(message);
}

describe('faultline proxy', () => {
  it('proxies with the plan, records to --db, and prints a generated admin token that works', async () => {
    const plan = writeFile('plan.yaml', 'version: 1\nrules:\n  - { id: weather-429, tool: get_weather, fault: http_status, params: { status: 429, retry_after: 3 } }\n');
    const db = join(dir, 'cli.db');
    const s = await serve(['--plan', plan, '--db', db]);
    const [url, token] = [/faultline proxy: (http:\/\/127\.0\.0\.1:\d+) -> /.exec(s.line)?.[1], /token: Bearer (\S+) \(generated\)/.exec(s.line)?.[1]];
    expect(url).toBeDefined();
    expect(token).toMatch(/^[\w-]{32}$/);
    expect(s.line).toContain(`plan ${plan}, 1 rule; records to ${db}`);

    const limited = await fetch(`${url}/tools/get_weather`, { method: 'POST', body: '{"city":"Paris"}' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    const order = await fetch(`${url}/tools/get_order`, { method: 'POST', body: '{"order_id":"ORD-10001"}' });
    expect(order.status).toBe(200);
    expect((await fetch(`${url}/__faultline/state`)).status).toBe(401);
    expect((await fetch(`${url}/__faultline/state`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    expect(await s.stop()).toBe(0);
    expect(s.captured.stderr()).toBe('faultline proxy: stopped after 2 requests (1 with faults, 2 recorded)\n');
    await expect(fetch(`${url}/tools/get_weather`)).rejects.toThrow();
    const store = createSqliteStore({ path: db, readonly: true });
    const records = await store.query({});
    await store.close();
    expect(records.map((r) => [r.tool_name, r.status, r.failure_type, r.fault?.rule_id ?? null])).toEqual([
      ['get_weather', 'failure', 'rate_limited', 'weather-429'],
      ['get_order', 'success', null, null],
    ]);
  });

  it('takes the admin token from $FAULTLINE_ADMIN_TOKEN without printing it, and prints JSON with --json', async () => {
    const s = await serve(['--json', '--db', join(dir, 'json.db')], { FAULTLINE_ADMIN_TOKEN: 'env-token-123' });
    const info = JSON.parse(s.line) as Record<string, unknown>;
    expect(info).toMatchObject({ target: `${upstream.url}/`, plan: null, rules: 0 });
    expect(info).not.toHaveProperty('admin_token');
    expect(s.line).not.toContain('env-token-123');
    expect(info['admin_url']).toBe(`${info['url'] as string}/__faultline`);
    const ok = await fetch(`${info['admin_url'] as string}/plan`, { headers: { authorization: 'Bearer env-token-123' } });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ version: 1, rules: [] });
    expect(await s.stop()).toBe(0);
    expect(s.captured.stderr()).toBe('');
  });

  it('with --json, prints where the records went as one JSON line at exit', async () => {
    const db = join(dir, 'json-exit.db');
    const s = await serve(['--json', '--db', db]);
    const info = JSON.parse(s.line) as { url: string };
    for (let i = 0; i < 3; i++) expect((await fetch(`${info.url}/tools/get_order`, { method: 'POST', body: '{"order_id":"ORD-10001"}' })).status).toBe(200);
    expect(await s.stop()).toBe(0);
    const lines = s.captured.stdout().split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[1]!)).toEqual({
      stopped: true,
      requests: 3,
      injected: 0,
      recorded: 3,
      recording: { offered: 3, stored: 3, spooled: 0, inMemory: 0, dropped: 0, rejected: 0, recovered: 0, storeHealthy: true },
    });
    expect(s.captured.stderr()).toBe('');
  });

  it('reads --routes and serves the admin API on --admin-port', async () => {
    const routes = writeFile('routes.yaml', 'routes:\n  - { match: "GET /v1/weather", tool: get_weather }\n');
    const plan = writeFile('routes-plan.yaml', 'version: 1\nrules:\n  - { tool: get_weather, fault: http_status, params: { status: 503 } }\n');
    const s = await serve(['--routes', routes, '--plan', plan, '--admin-port', '0', '--admin-token', 'flag-token', '--json', '--db', join(dir, 'routes.db')]);
    const info = JSON.parse(s.line) as { url: string; admin_url: string };
    expect(info.admin_url).not.toBe(`${info.url}/__faultline`);
    expect((await fetch(`${info.url}/v1/weather?city=Paris`)).status).toBe(503);
    expect((await fetch(`${info.admin_url}/state`, { headers: { authorization: 'Bearer flag-token' } })).status).toBe(200);
    expect(await s.stop()).toBe(0);
  });

  it('refuses a YAML alias bomb put to the admin API with 400 INVALID_PLAN, keeping the plan', async () => {
    const s = await serve(['--json', '--admin-token', 'bomb-token', '--db', join(dir, 'bomb-admin.db')]);
    const info = JSON.parse(s.line) as { admin_url: string };
    const put = await fetch(`${info.admin_url}/plan`, { method: 'PUT', headers: { authorization: 'Bearer bomb-token' }, body: YAML_ALIAS_BOMB });
    expect(put.status).toBe(400);
    expect(((await put.json()) as { error: unknown }).error).toEqual({ code: 'INVALID_PLAN', message: 'plan: invalid YAML: Excessive alias count indicates a resource exhaustion attack' });
    expect(await (await fetch(`${info.admin_url}/plan`, { headers: { authorization: 'Bearer bomb-token' } })).json()).toEqual({ version: 1, rules: [] });
    expect(await s.stop()).toBe(0);
  });

  it('answers bad flags, bad files and an unusable --db with one line and exit 2, creating nothing', async () => {
    const db = join(dir, 'never.db');
    await expectUsageError(['proxy', '--db', db], /^faultline: --target <url> is required/);
    await expectUsageError(['proxy', '--target', 'ftp://example.com', '--db', db], /^faultline: --target must be an http\(s\) URL, got "ftp:\/\/example\.com"/);
    await expectUsageError(['proxy', '--target', upstream.url, '--port', 'eighty', '--db', db], /^faultline: invalid --port "eighty": expected 0-65535 \(0 picks a free port\)\n/);
    await expectUsageError(['proxy', '--target', upstream.url, '--admin-port', '-1', '--db', db], /^faultline: invalid --admin-port "-1": expected 0-65535 \(0 picks a free port\)\n/);
    await expectUsageError(['proxy', '--target', upstream.url, '--hold-cap', '0', '--db', db], /^faultline: invalid --hold-cap "0": expected a duration from 1ms to 24h, like 500ms, 30s or 5m\n/);
    await expectUsageError(['proxy', '--target', upstream.url, '--admin-token', ' ', '--db', db], /^faultline: --admin-token must not be empty/);
    await expectUsageError(['proxy', '--target', upstream.url, '--frobnicate', '--db', db], /^faultline: unknown option '--frobnicate'/);
    const badPlan = writeFile('bad-plan.yaml', 'version: 1\nrules:\n  - { tool: get_weather, fault: explode }\n');
    await expectUsageError(['proxy', '--target', upstream.url, '--plan', badPlan, '--db', db], /^faultline: .*bad-plan\.yaml: rules\[0\]\.fault: /);
    await expectUsageError(['proxy', '--target', upstream.url, '--plan', join(dir, 'missing.yaml'), '--db', db], /^faultline: cannot read fault plan .*missing\.yaml: no such file or directory\n$/);
    await expectUsageError(['proxy', '--target', upstream.url, '--plan', dir, '--db', db], /^faultline: cannot read fault plan .*: is a directory\n$/);
    await expectUsageError(['proxy', '--plan', '/nonexistent.yaml', '--target', 'http://127.0.0.1:1', '--db', db], /^faultline: cannot read fault plan \/nonexistent\.yaml: no such file or directory\n$/);
    const badRoutes = writeFile('bad-routes.yaml', 'routes:\n  - { match: "/v1/weather", tool: get_weather }\n');
    await expectUsageError(['proxy', '--target', upstream.url, '--routes', badRoutes, '--db', db], /^faultline: .*bad-routes\.yaml: routes\[0\]\.match: expected "METHOD \/path"/);
    const bomb = writeFile('bomb.yaml', YAML_ALIAS_BOMB);
    await expectUsageError(['proxy', '--target', upstream.url, '--plan', bomb, '--db', db], /^faultline: .*bomb\.yaml: invalid YAML: Excessive alias count/);
    await expectUsageError(['proxy', '--target', upstream.url, '--routes', bomb, '--db', db], /^faultline: .*bomb\.yaml: invalid YAML: Excessive alias count/);
    expect(existsSync(db)).toBe(false);

    mkdirSync(join(dir, 'blocker'), { recursive: true });
    writeFileSync(join(dir, 'blocker', 'file'), 'not a directory');
    await expectUsageError(['proxy', '--target', upstream.url, '--db', join(dir, 'blocker', 'file', 'x.db')], /^faultline: cannot write .*x\.db: .*blocker\/file is not a directory\n/);
    writeFileSync(join(dir, 'blocker', 'not-sqlite.db'), 'not a database, and long enough for SQLite to read a header from it');
    await expectUsageError(['proxy', '--target', upstream.url, '--db', join(dir, 'blocker', 'not-sqlite.db')], /^faultline: cannot open SQLite store /);
    await expectUsageError(['proxy', '--target', upstream.url, '--db', 'mysql://nowhere'], /^faultline: unknown store "mysql:\/\/nowhere"/);
  });

  it('refuses an unreachable --target with one line and exit 2, creating nothing', async () => {
    const port = await refusedPort();
    const db = join(dir, 'unreachable.db');
    await expectUsageError(['proxy', '--target', `http://127.0.0.1:${port}`, '--port', '0', '--db', db], new RegExp(`^faultline: cannot reach --target http://127\\.0\\.0\\.1:${port}/: ECONNREFUSED`));
    await expectUsageError(['proxy', '--target', 'http://no-such-host.invalid:8787', '--port', '0', '--db', db], /^faultline: cannot reach --target http:\/\/no-such-host\.invalid:8787\/: (ENOTFOUND|EAI_AGAIN)/);
    expect(existsSync(db)).toBe(false);
  });

  it('reports a port already in use in one line', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await expectUsageError(['proxy', '--target', upstream.url, '--port', String(port), '--db', join(dir, 'busy.db')], new RegExp(`^faultline: cannot listen on 127\\.0\\.0\\.1:${port}: EADDRINUSE`));
      // The admin port's turn: the message names it, not --port.
      await expectUsageError(['proxy', '--target', upstream.url, '--port', '0', '--admin-port', String(port), '--db', join(dir, 'busy.db')], new RegExp(`^faultline: cannot listen on 127\\.0\\.0\\.1:${port} \\(--admin-port\\): EADDRINUSE$`, 'm'));
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    expect(existsSync(join(dir, 'busy.db'))).toBe(false);
  });

  it('leaves nothing behind that it created when the port is taken, and a store that was there as it was', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as { port: number }).port);
    const cwd = join(dir, 'busy-start');
    mkdirSync(cwd);
    const existing = await writeStoreFile(join(dir, 'busy-existing.db'), [makeRecord({ tool_name: 'get_weather' })]);
    const refused = async (args: string[]) => {
      const run = await runCapture(['proxy', '--target', upstream.url, ...args], cwd);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toMatch(/^faultline: cannot listen on 127\.0\.0\.1:\d+( \(--admin-port\))?: EADDRINUSE\n$/);
    };
    try {
      // The default --db (.faultline/faultline.db), one in directories that do not exist yet, and the admin port's turn.
      await refused(['--port', port]);
      await refused(['--port', port, '--db', join(cwd, 'new', 'deeper', 'records.db')]);
      await refused(['--port', '0', '--admin-port', port, '--db', 'relative.db']);
      expect(readdirSync(cwd)).toEqual([]);
      await refused(['--port', port, '--db', existing]);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    const store = createSqliteStore({ path: existing, readonly: true });
    const records = await store.query({});
    await store.close();
    expect(records.map((r) => r.tool_name)).toEqual(['get_weather']);
  });
});

describe('faultline proxy as a process', () => {
  let main: string;
  beforeAll(async () => {
    main = await compileCli(join(dir, 'build'), ['store/sqlite/sqlite-worker.js']);
  }, 180_000);

  it('writes its records from a SQLite writer in a worker thread, and has all of them stored once stopped', { timeout: 60_000 }, async () => {
    const db = join(dir, 'process.db');
    const child = spawn(process.execPath, [main, 'proxy', '--target', upstream.url, '--port', '0', '--db', db, '--json', '--admin-token', 'process-token'], { cwd: dir });
    try {
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const line = await waitFor(() => (stdout.includes('\n') ? stdout.split('\n')[0] : undefined), 'the startup line', 30_000);
      const info = JSON.parse(line) as { url: string; sqlite_writer: string };
      expect(info.sqlite_writer).toBe('worker');

      const answers = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          fetch(`${info.url}/tools/${i % 2 === 0 ? 'get_weather' : 'get_order'}`, { method: 'POST', body: JSON.stringify(i % 2 === 0 ? { city: 'Paris' } : { order_id: 'ORD-10001' }) }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 120 }, () => 200));
      await Promise.all(answers.map((a) => a.arrayBuffer()));

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      const store = createSqliteStore({ path: db, readonly: true });
      const records = await store.query({ limit: 1000 });
      await store.close();
      expect(records).toHaveLength(120);
      expect(new Set(records.map((r) => r.tool_name))).toEqual(new Set(['get_weather', 'get_order']));
      expect(records.every((r) => r.status === 'success')).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('reports a --db the worker cannot open in one line, exit 2', { timeout: 60_000 }, async () => {
    mkdirSync(join(dir, 'process-blocker'), { recursive: true });
    // A file that is no SQLite database: the path checks pass, and the worker's open fails.
    writeFileSync(join(dir, 'process-blocker', 'not-sqlite.db'), 'not a database, and long enough for SQLite to read a header from it');
    const child = spawn(process.execPath, [main, 'proxy', '--target', upstream.url, '--port', '0', '--db', join(dir, 'process-blocker', 'not-sqlite.db')], { cwd: dir });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await new Promise<number | null>((resolve) => child.once('exit', resolve))).toBe(2);
    expect(stderr).toMatch(/^faultline: cannot open SQLite store [^\n]*\n$/);
  });
});
