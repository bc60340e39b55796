import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createFaultPlan } from '../plan.js';
import { startHttpFaultProxy, type HttpFaultProxy, type HttpFaultProxyOptions } from './http-proxy.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An upstream that counts what reaches it. */
async function countingUpstream(): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

async function proxyFor(target: string, extra: Partial<HttpFaultProxyOptions> = {}): Promise<{ proxy: HttpFaultProxy; records: ToolExecutionRecord[] }> {
  const records: ToolExecutionRecord[] = [];
  const proxy = await startHttpFaultProxy({
    target,
    plan: createFaultPlan({ version: 1, rules: [] }),
    port: 0,
    adminToken: 'host-check-token-0123',
    recorder: { enqueue: (r) => void records.push(r) },
    ...extra,
  });
  cleanups.push(() => proxy.close());
  return { proxy, records };
}

/** One request on its own connection, as raw bytes back (the server closes after it). */
function rawRequest(port: number, head: string, body = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    // Not end(): node:http closes a half-closed connection before it answers.
    socket.write(`${head}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

/** The answer without its Date header, which differs from one second to the next. */
const withoutDate = (answer: string) => answer.replace(/\r\nDate: [^\r]*/i, '');

describe('the HTTP proxy refuses foreign Host names while bound to loopback (DNS rebinding)', () => {
  it('answers 403 FORBIDDEN_HOST on both paths with the same bytes, forwards nothing and records nothing', async () => {
    const upstream = await countingUpstream();
    const fast = await proxyFor(upstream.url);
    const full = await proxyFor(upstream.url, { fastPath: false });
    const request = 'POST /tools/send_payment HTTP/1.1\r\nHost: attacker.example:8080\r\nContent-Type: application/json';
    const answers = await Promise.all([fast, full].map((p) => rawRequest(p.proxy.port, request, '{"amount":100}')));
    expect(answers[0]).toMatch(/^HTTP\/1\.1 403 Forbidden\r\n/);
    expect(withoutDate(answers[0]!)).toBe(withoutDate(answers[1]!));
    const body = JSON.parse(answers[0]!.slice(answers[0]!.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('FORBIDDEN_HOST');
    expect(body.error.message).toContain('"attacker.example:8080"');
    expect(upstream.hits()).toBe(0);
    for (const p of [fast, full]) {
      expect(p.records).toEqual([]);
      expect(p.proxy.stats()).toMatchObject({ requests: 0, recorded: 0, fastPath: 0, refusedHosts: 1 });
    }
  });

  it('refuses the admin API under /__faultline/ to a foreign Host too, token or not', async () => {
    const upstream = await countingUpstream();
    const { proxy } = await proxyFor(upstream.url);
    const answer = await rawRequest(proxy.port, 'GET /__faultline/plan HTTP/1.1\r\nHost: rebound.example\r\nAuthorization: Bearer host-check-token-0123');
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain('FORBIDDEN_HOST');
  });

  it('serves loopback names (any port, any case, IPv6 in brackets) on the fast path, and the names it was told to allow', async () => {
    const upstream = await countingUpstream();
    const { proxy, records } = await proxyFor(upstream.url, { allowedHosts: ['tools.internal', 'Gateway.Example:443'] });
    const hosts = ['127.0.0.1', `127.0.0.1:${proxy.port}`, 'LOCALHOST:1', '[::1]:8080', 'tools.internal', 'tools.internal:9000', 'gateway.example'];
    for (const host of hosts) {
      expect(await rawRequest(proxy.port, `GET /orders/1 HTTP/1.1\r\nHost: ${host}`), host).toMatch(/^HTTP\/1\.1 200 /);
    }
    expect(await rawRequest(proxy.port, 'GET /orders/1 HTTP/1.1\r\nHost: tools.internal.attacker.example')).toMatch(/^HTTP\/1\.1 403 /);
    expect(upstream.hits()).toBe(hosts.length);
    expect(proxy.stats()).toMatchObject({ requests: hosts.length, fastPath: hosts.length, refusedHosts: 1 });
    await proxy.close();
    expect(records).toHaveLength(hosts.length);
  });

  it('a connection refused once stays served: the next request with a loopback Host goes through', async () => {
    const upstream = await countingUpstream();
    const { proxy } = await proxyFor(upstream.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(proxy.port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
      socket.write('GET /a HTTP/1.1\r\nHost: evil.example\r\n\r\n');
      socket.write('GET /b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 403', 'HTTP/1.1 200']);
    expect(upstream.hits()).toBe(1);
  });

  it('answers any Host when bound to all interfaces: the user exposed it on purpose', async () => {
    const upstream = await countingUpstream();
    const { proxy } = await proxyFor(upstream.url, { host: '0.0.0.0' });
    expect(await rawRequest(proxy.port, 'GET /orders/1 HTTP/1.1\r\nHost: proxy.lan')).toMatch(/^HTTP\/1\.1 200 /);
  });
});
