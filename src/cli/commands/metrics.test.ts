import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monitorDataset } from '../../monitor/monitor-dataset.test-helpers.js';
import { makeRecord } from '../../record/fixture.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCapture, startCli, waitFor, writeStoreFile } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-metrics-cli-'));
const records = monitorDataset();
let db: string;
beforeAll(async () => {
  db = await writeStoreFile(join(dir, 'agents.db'), records);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const start = (args: readonly string[]) => startCli(['metrics', ...args], dir);

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

const count = (tool: string, status: string) => records.filter((r) => r.tool_name === tool && r.status === status).length;

describe('faultline metrics', () => {
  it('serves /metrics from the store on 127.0.0.1, refreshed per scrape, until Ctrl-C', async () => {
    const { captured, exit, stop } = start(['--db', db, '--port', '0']);
    const url = await waitFor(() => /serving (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(captured.stdout())?.[1], 'the listening line');
    expect(captured.stdout()).toBe(`faultline metrics: serving ${url} (Ctrl-C stops)\n`);

    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const body = await res.text();
    expect(sample(body, 'faultline_tool_calls_total{tool="search_flights",status="timeout"}')).toBe(count('search_flights', 'timeout'));
    expect(sample(body, 'faultline_tool_calls_total{tool="get_weather",status="success"}')).toBe(count('get_weather', 'success'));
    expect(sample(body, 'faultline_tool_failures_total{tool="create_order",stage="param_validation",category="parameter",type="missing_required"}')).toBe(5);
    expect(sample(body, 'faultline_breaker_trips_total{tool="search_flights"}')).toBe(2);
    expect(sample(body, 'faultline_tool_retries_total{tool="search_flights"}')).toBe(
      records.filter((r) => r.tool_name === 'search_flights').reduce((n, r) => n + r.retry_count, 0),
    );
    expect(sample(body, 'faultline_tool_duration_seconds_count{tool="send_email"}')).toBe(5);
    expect(body).toContain('# TYPE faultline_breaker_open gauge');

    // Written by another process while serving: the next scrape includes it.
    const writer = createSqliteStore({ path: db });
    await writer.insert([makeRecord({ tool_name: 'get_weather' })]);
    await writer.close();
    const again = await (await fetch(url)).text();
    expect(sample(again, 'faultline_tool_calls_total{tool="get_weather",status="success"}')).toBe(count('get_weather', 'success') + 1);

    const other = await fetch(url.replace('/metrics', '/'));
    expect(other.status).toBe(404);

    stop();
    expect(await exit).toBe(0);
    expect(captured.stderr()).toBe('');
    await expect(fetch(url)).rejects.toThrow();
  });

  it('prints the endpoint as JSON with --json', async () => {
    const { captured, exit, stop } = start(['--db', db, '--port', '0', '--json']);
    const line = await waitFor(() => (captured.stdout().endsWith('\n') ? captured.stdout() : undefined), 'the JSON line');
    const endpoint = JSON.parse(line) as { url: string; host: string; port: number };
    expect(endpoint).toStrictEqual({ url: `http://127.0.0.1:${endpoint.port}/metrics`, host: '127.0.0.1', port: endpoint.port });
    expect((await fetch(endpoint.url)).status).toBe(200);
    stop();
    expect(await exit).toBe(0);
  });

  it('keeps --max-tools tool labels, those with the most calls, and sums the rest as (other)', async () => {
    const capped = await writeStoreFile(join(dir, 'capped.db'), records);
    const { captured, exit, stop } = start(['--db', capped, '--port', '0', '--max-tools', '2']);
    const url = await waitFor(() => /serving (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(captured.stdout())?.[1], 'the listening line');
    const body = await (await fetch(url)).text();
    const tools = new Set([...body.matchAll(/\btool="([^"]*)"/g)].map((m) => m[1]));
    // get_weather (251 calls) and search_flights (250) keep theirs; create_order (25) and send_email (5) share one.
    expect([...tools].sort()).toStrictEqual(['(other)', 'get_weather', 'search_flights']);
    expect(sample(body, 'faultline_tool_duration_seconds_count{tool="(other)"}')).toBe(30);
    expect(sample(body, 'faultline_tool_failures_total{tool="(other)",stage="param_validation",category="parameter",type="missing_required"}')).toBe(5);
    expect(sample(body, 'faultline_tool_calls_total{tool="get_weather",status="success"}')).toBe(count('get_weather', 'success'));
    stop();
    expect(await exit).toBe(0);
    for (const bad of ['0', '-1', '2.5', 'many']) {
      expect(await runCapture(['metrics', '--db', capped, '--port', '0', '--max-tools', bad], dir)).toStrictEqual({
        code: 2,
        stdout: '',
        stderr: `faultline: invalid --max-tools ${JSON.stringify(bad)}: expected an integer >= 1\n`,
      });
    }
  });

  it('answers only to loopback Host names when bound to loopback (no DNS rebinding), as the dashboard does', async () => {
    const { captured, exit, stop } = start(['--db', db, '--port', '0', '--json']);
    const line = await waitFor(() => (captured.stdout().endsWith('\n') ? captured.stdout() : undefined), 'the JSON line');
    const { port } = JSON.parse(line) as { port: number };
    const scrape = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/metrics', headers: { host } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) expect((await scrape(host)).status).toBe(200);
    const rebound = await scrape(`attacker.example:${port}`);
    expect(rebound.status).toBe(403);
    expect(rebound.body).not.toContain('faultline_tool_calls_total');
    stop();
    expect(await exit).toBe(0);
  });

  it('refuses a taken port, a bad port and a missing store with one line and exit 2', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const taken = await runCapture(['metrics', '--db', db, '--port', String(port)], dir);
      expect(taken).toStrictEqual({ code: 2, stdout: '', stderr: `faultline: cannot listen on 127.0.0.1:${port}: EADDRINUSE\n` });
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    expect(await runCapture(['metrics', '--db', db, '--port', '70000'], dir)).toStrictEqual({
      code: 2,
      stdout: '',
      stderr: 'faultline: invalid --port "70000": expected 0-65535 (0 picks a free port)\n',
    });
    // '' would listen on every interface with the loopback Host check off.
    for (const host of ['', ' ']) {
      expect(await runCapture(['metrics', '--db', db, '--port', '0', '--host', host], dir)).toStrictEqual({ code: 2, stdout: '', stderr: 'faultline: --host must not be empty\n' });
    }
    expect(await runCapture(['metrics', '--port', '0'], dir)).toStrictEqual({
      code: 2,
      stdout: '',
      stderr: `faultline: no faultline store at ${join(dir, '.faultline', 'faultline.db')} (run \`npx faultline demo\` or point --db at one)\n`,
    });
    expect(await runCapture(['metrics', '--port', '0', '--db', 'postgres://postgres@127.0.0.1:1/x'], dir)).toStrictEqual({
      code: 2,
      stdout: '',
      stderr: 'faultline: could not connect to PostgreSQL at 127.0.0.1:1: ECONNREFUSED\n',
    });
  });
});
