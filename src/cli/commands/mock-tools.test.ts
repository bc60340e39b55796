import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../run-cli.js';
import { captureIo, runCapture, waitFor } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-mock-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `faultline mock-tools` in-process; `stop()` plays Ctrl-C and resolves with the exit code. */
async function serve(args: string[]) {
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  const captured = captureIo(dir, interrupted);
  const running = runCli(['mock-tools', '--port', '0', ...args], captured.io);
  const url = await waitFor(() => /http:\/\/[\d.]+:\d+/.exec(captured.stdout())?.[0], 'the server URL');
  return {
    url,
    captured,
    async stop() {
      interrupt();
      return running;
    },
  };
}

describe('faultline mock-tools', () => {
  it('serves the catalog on loopback until interrupted, then closes', async () => {
    const s = await serve(['--seed', '7']);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.captured.stdout()).toMatch(/16 tools at http:\/\/127\.0\.0\.1:\d+ \(seed 7, data as of 2026-03-29T14:00:00\.000Z\)/);
    const tools = (await (await fetch(`${s.url}/tools`)).json()) as { tools: { name: string }[] };
    expect(tools.tools.map((t) => t.name)).toContain('create_order');
    const injected = await fetch(`${s.url}/tools/get_weather`, { method: 'POST', headers: { 'x-inject-error': '429' }, body: '{"city":"Shanghai"}' });
    expect(injected.status).toBe(429);
    expect(await s.stop()).toBe(0);
    expect(s.captured.stderr()).toBe('faultline mock-tools: stopped (1 fault injected)\n');
    await expect(fetch(`${s.url}/tools`)).rejects.toThrow();
  });

  it('refuses tool calls whose Host is not loopback (DNS rebinding), and serves the names --allow-host adds', async () => {
    const s = await serve(['--allow-host', 'tools.lan']);
    const post = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${s.url}/tools/create_order`, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ customer_id: 'CUS-002', items: [{ sku: 'SKU-1005', quantity: 1 }] }));
      });
    const orders = async () => ((await (await fetch(`${s.url}/state`)).json()) as { orders: { source: string }[] }).orders.filter((o) => o.source === 'tool').length;
    const refused = await post('attacker.example');
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'FORBIDDEN_HOST' } });
    expect(await orders()).toBe(0);
    expect((await post('tools.lan:8787')).status).toBe(200);
    expect((await post('localhost')).status).toBe(200);
    expect(await orders()).toBe(2);
    expect(await s.stop()).toBe(0);
  });

  it('serves the same data for the same seed', async () => {
    const body = JSON.stringify({ month: '2026-02', region: 'east', granularity: 'monthly' });
    const totals = async (seed: string) => {
      const s = await serve(['--seed', seed]);
      const res = (await (await fetch(`${s.url}/tools/query_sales_data`, { method: 'POST', body })).json()) as { totals: unknown };
      await s.stop();
      return res.totals;
    };
    expect(await totals('3')).toEqual(await totals('3'));
    expect(await totals('4')).not.toEqual(await totals('3'));
  });

  it('applies a fault plan file, and prints JSON with --json', async () => {
    const plan = join(dir, 'plan.yaml');
    writeFileSync(plan, 'version: 1\nrules:\n  - { tool: get_weather, trigger: first_call_only, fault: http_status, params: { status: 503, retry_after: 4 } }\n');
    const s = await serve(['--plan', plan, '--json']);
    const info = JSON.parse(s.captured.stdout().trim()) as Record<string, unknown>;
    expect(info).toMatchObject({ url: s.url, tools: 16, seed: 1, plan });
    const first = await fetch(`${s.url}/tools/get_weather`, { method: 'POST', body: '{"city":"Paris"}' });
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('4');
    expect((await fetch(`${s.url}/tools/get_weather`, { method: 'POST', body: '{"city":"Paris"}' })).status).toBe(200);
    expect(await s.stop()).toBe(0);
  });

  it('starts its clock at --now', async () => {
    const s = await serve(['--now', '2026-01-10T00:00:00Z']);
    const res = (await (await fetch(`${s.url}/tools/get_weather`, { method: 'POST', body: '{"city":"London"}' })).json()) as { date: string };
    expect(res.date).toBe('2026-01-10');
    await s.stop();
  });

  it.each([
    // As metrics, dashboard and proxy read them.
    [['--port', '70000'], /^faultline: invalid --port "70000": expected 0-65535 \(0 picks a free port\)\n$/],
    [['--port', 'http'], /^faultline: invalid --port "http": expected 0-65535/],
    [['--seed', '1.5'], /^faultline: invalid --seed "1\.5": expected an integer from -2147483648 to 4294967295\n$/],
    [['--timeout-cap', '-5s'], /^faultline: invalid --timeout-cap "-5s": expected a duration from 1ms to 10m, like 500ms, 30s or 5m, or 0 for never\n$/],
    [['--now', 'yesterday'], /--now must be an ISO-8601 time/],
    [['--plan', join(dir, 'missing.yaml')], /^faultline: cannot read fault plan .*missing\.yaml: no such file or directory\n$/],
    [['--allow-host', 'http://tools.lan/'], /^faultline: --allow-host must be a host name such as tools\.internal/],
  ])('rejects %j with one line and exit code 2', async (args, message) => {
    const run = await runCapture(['mock-tools', ...args], dir);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('rejects an invalid plan with one line and exit code 2', async () => {
    const plan = join(dir, 'bad.yaml');
    writeFileSync(plan, 'version: 1\nrules:\n  - { tool: get_weather, fault: meteor_strike }\n');
    const run = await runCapture(['mock-tools', '--plan', plan], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^faultline: .*bad\.yaml.*meteor_strike/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('reports a port in use with one line and exit code 2', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const run = await runCapture(['mock-tools', '--port', String(port)], dir);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`faultline: cannot listen on 127.0.0.1:${port}: EADDRINUSE\n`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
