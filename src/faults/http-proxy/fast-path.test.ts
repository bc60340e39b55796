import { createHash } from 'node:crypto';
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createFaultPlan } from '../plan.js';
import type { ExchangeOutcome } from './exchange-record.js';
import { createFastPath, type FastCall } from './fast-path.js';
import { startHttpFaultProxy, type HttpFaultProxy } from './http-proxy.js';
import { EMPTY_BODY } from './request-body.js';
import { until } from './loopback.test-helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function closeServer(server: Server | ReturnType<typeof createNetServer>): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    if ('closeAllConnections' in server) server.closeAllConnections();
  });
}

/** A node:http upstream; counts the connections it accepted and those that closed. */
async function httpUpstream(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; connections: () => number; closed: () => number }> {
  const server = createServer(handler);
  let connections = 0;
  let closed = 0;
  server.on('connection', (socket: Socket) => {
    connections++;
    socket.on('close', () => closed++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => closeServer(server));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, closed: () => closed };
}

/** An upstream that writes what it likes on the socket, for shapes node:http would not produce. */
async function rawUpstream(onRequest: (socket: Socket, head: string) => void): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buf = '';
    socket.on('data', (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buf.slice(0, end);
      buf = buf.slice(end + 4);
      onRequest(socket, head);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    return closeServer(server);
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function proxyTo(target: string, extra: { rules?: Parameters<typeof createFaultPlan>[0]['rules']; maxArgsBytes?: number; fastPath?: boolean } = {}): Promise<{ proxy: HttpFaultProxy; records: ToolExecutionRecord[] }> {
  const records: ToolExecutionRecord[] = [];
  const proxy = await startHttpFaultProxy({
    target,
    plan: createFaultPlan({ version: 1, seed: 1, rules: extra.rules ?? [] }),
    port: 0,
    adminToken: 'fast-path-test-token',
    recorder: { enqueue: () => undefined },
    onRecord: (r) => records.push(r),
    ...(extra.maxArgsBytes === undefined ? {} : { maxArgsBytes: extra.maxArgsBytes }),
    ...(extra.fastPath === undefined ? {} : { fastPath: extra.fastPath }),
  });
  cleanups.push(() => proxy.close());
  return { proxy, records };
}

/** A client socket that keeps what it receives as latin1 text. */
function rawClient(port: number): { socket: Socket; text: () => string; ended: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  cleanups.push(() => void socket.destroy());
  return { socket, text: () => text, ended };
}

const count = (text: string, what: string) => text.split(what).length - 1;

describe('http fault proxy fast path', () => {
  it('serves keep-alive and pipelined requests in order over one pooled upstream socket, recording each', async () => {
    const up = await httpUpstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url }));
    });
    const { proxy, records } = await proxyTo(up.url);
    const client = rawClient(proxy.port);
    const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;
    client.socket.write(get('/a/1') + get('/b/2') + get('/c/3'));
    await until(() => (count(client.text(), 'HTTP/1.1 200 OK') === 3 ? true : undefined), 'three answers');
    const bodies = [...client.text().matchAll(/\{"path":"([^"]+)"\}/g)].map((m) => m[1]);
    expect(bodies).toEqual(['/a/1', '/b/2', '/c/3']);
    client.socket.write(get('/d/4?q=1'));
    await until(() => (count(client.text(), 'HTTP/1.1 200 OK') === 4 ? true : undefined), 'the fourth answer');
    expect(client.text()).toMatch(/Keep-Alive: timeout=5\r\n/);
    expect(up.connections()).toBe(1);
    expect(proxy.stats()).toMatchObject({ requests: 4, fastPath: 4, recorded: 4 });
    expect(records.map((r) => [r.tool_name, r.status, r.input_params])).toEqual([
      ['GET /a/:id', 'success', {}],
      ['GET /b/:id', 'success', {}],
      ['GET /c/:id', 'success', {}],
      ['GET /d/:id', 'success', { q: '1' }],
    ]);
  });

  it('relays a chunked request body as it arrives and takes the arguments from it', async () => {
    let received = '';
    let framing: string | undefined;
    const up = await httpUpstream((req, res) => {
      framing = req.headers['transfer-encoding'];
      req.on('data', (c: Buffer) => (received += c.toString()));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
    const { proxy, records } = await proxyTo(up.url);
    const client = rawClient(proxy.port);
    client.socket.write('POST /tools/get_weather HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"cit');
    await new Promise((resolve) => setTimeout(resolve, 30));
    client.socket.write('\r\n5\r\ny":"P\r\n');
    await new Promise((resolve) => setTimeout(resolve, 30));
    client.socket.write('8;x=y\r\naris"}  \r\n0\r\n\r\n');
    await until(() => (client.text().includes('{"ok":true}') ? true : undefined), 'the answer');
    expect(framing).toBe('chunked');
    expect(received).toBe('{"city":"Paris"}  ');
    expect(records[0]).toMatchObject({ tool_name: 'get_weather', input_params: { city: 'Paris' }, status: 'success' });
  });

  it('relays a chunked response with trailers and records its decoded body', async () => {
    const target = await rawUpstream((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n');
      setTimeout(() => socket.write('5\r\npedia\r\n0\r\nX-Checksum: 1\r\n\r\n'), 20);
    });
    const { proxy, records } = await proxyTo(target);
    const res = await fetch(`${proxy.url}/wiki`);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(await res.text()).toBe('Wikipedia');
    await until(() => records[0], 'the record');
    expect(records[0]).toMatchObject({ status: 'success', raw_output: 'Wikipedia', output_length: 9 });
  });

  it('answers HEAD, 204 and 304 without bodies and keeps the connection in step', async () => {
    const up = await httpUpstream((req, res) => {
      req.resume();
      if (req.url === '/204') res.writeHead(204).end();
      else if (req.url === '/304') res.writeHead(304, { etag: '"v1"' }).end();
      else res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(`body of ${req.url}`) }).end(req.method === 'HEAD' ? undefined : `body of ${req.url}`);
    });
    const { proxy, records } = await proxyTo(up.url);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    const sockets = new Set<Socket>();
    const send = (method: string, path: string) =>
      new Promise<{ status: number; body: string; length: string | undefined }>((resolve, reject) => {
        const r = request(`${proxy.url}${path}`, { method, agent }, (res) => {
          sockets.add(res.socket);
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body, length: res.headers['content-length'] }));
        });
        r.on('error', reject);
        r.end();
      });
    expect(await send('HEAD', '/head')).toEqual({ status: 200, body: '', length: String('body of /head'.length) });
    expect(await send('GET', '/204')).toMatchObject({ status: 204, body: '' });
    expect(await send('GET', '/304')).toMatchObject({ status: 304, body: '' });
    expect(await send('GET', '/last')).toMatchObject({ status: 200, body: 'body of /last' });
    expect(sockets.size).toBe(1);
    expect(records.map((r) => r.status)).toEqual(['success', 'success', 'success', 'success']);
    expect(proxy.stats().fastPath).toBe(4);
  });

  it('closes after the answer when the client asks, and stays open when only the upstream closes', async () => {
    const up = await httpUpstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 3, connection: 'close' }).end('bye');
    });
    const { proxy } = await proxyTo(up.url);
    const keep = rawClient(proxy.port);
    keep.socket.write('GET /one HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => (keep.text().endsWith('bye') ? true : undefined), 'the first answer');
    expect(keep.text()).toMatch(/Connection: keep-alive/);
    keep.socket.write('GET /two HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => (count(keep.text(), 'bye') === 2 ? true : undefined), 'the second answer on the same connection');
    expect(up.connections()).toBe(2);

    const closing = rawClient(proxy.port);
    closing.socket.write('GET /three HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    await closing.ended;
    expect(closing.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Connection: close\r\n\r\nbye$/);
  });

  it('relays a body delimited by the upstream closing, then closes the client connection', async () => {
    const target = await rawUpstream((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil ');
      setTimeout(() => socket.end('the end'), 20);
    });
    const { proxy, records } = await proxyTo(target);
    const client = rawClient(proxy.port);
    client.socket.write('GET /stream HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await client.ended;
    expect(client.text()).toMatch(/Connection: close\r\n\r\nuntil the end$/);
    expect(records[0]).toMatchObject({ status: 'success', raw_output: 'until the end' });
  });

  it('streams large bodies both ways with backpressure', async () => {
    const size = 8 * 1024 * 1024;
    const upload = Buffer.alloc(size, 'u');
    const download = Buffer.alloc(size, 'd');
    let uploadHash = '';
    const up = await httpUpstream((req, res) => {
      const hash = createHash('sha256');
      req.on('data', (c: Buffer) => hash.update(c));
      req.on('end', () => {
        uploadHash = hash.digest('hex');
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
        let sent = 0;
        const pump = () => {
          while (sent < size) {
            const piece = download.subarray(sent, sent + 65536);
            sent += piece.length;
            if (!res.write(piece)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      });
    });
    const { proxy, records } = await proxyTo(up.url, { maxArgsBytes: 1024 });
    const res = await fetch(`${proxy.url}/blobs/upload`, { method: 'PUT', body: upload });
    const got = Buffer.from(await res.arrayBuffer());
    expect(uploadHash).toBe(createHash('sha256').update(upload).digest('hex'));
    expect(got.equals(download)).toBe(true);
    await until(() => records[0], 'the record');
    expect(records[0]).toMatchObject({ status: 'success', output_length: size, raw_output: '[8388608 bytes of application/octet-stream]', context_snapshot: { request_body: 'streamed (over 1024 bytes)' } });
  });

  it('records a client that leaves mid-body or mid-answer, and cuts the upstream request', async () => {
    let seen = 0;
    const up = await httpUpstream((req, res) => {
      seen++;
      req.resume();
      if (req.url === '/slow-answer') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first part ');
      }
    });
    const { proxy, records } = await proxyTo(up.url);
    const midBody = rawClient(proxy.port);
    midBody.socket.write('POST /tools/upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n0123456789');
    await until(() => (seen === 1 ? true : undefined), 'the upstream to see the request');
    midBody.socket.destroy();
    await until(() => records[0], 'the first record');
    expect(records[0]).toMatchObject({ tool_name: 'upload', status: 'timeout', context_snapshot: { response_status: null } });
    await until(() => (up.closed() === 1 ? true : undefined), 'the upstream request cut mid-body');

    const midAnswer = rawClient(proxy.port);
    midAnswer.socket.write('GET /slow-answer HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => (midAnswer.text().includes('first part') ? true : undefined), 'the first bytes');
    midAnswer.socket.destroy();
    await until(() => records[1], 'the second record');
    expect(records[1]).toMatchObject({ status: 'success', raw_output: 'first part ', context_snapshot: { client_closed_early: true, response_status: 200 } });
    await until(() => (up.closed() === 2 ? true : undefined), 'the upstream request cut mid-answer');
  });

  it('answers 502 for an upstream that refuses, sends a malformed head, or closes before answering', async () => {
    const target = await rawUpstream((socket, head) => {
      if (head.startsWith('GET /garbage')) socket.write('HTTP/1.1 200 OK\r\nBad Header Line\r\n\r\n');
      else socket.destroy();
    });
    const { proxy, records } = await proxyTo(target);
    const garbage = await fetch(`${proxy.url}/garbage`);
    expect(garbage.status).toBe(502);
    expect(((await garbage.json()) as { error: { code: string } }).error.code).toBe('HPE_INVALID_RESPONSE');
    const hangUp = await fetch(`${proxy.url}/hang-up`);
    expect(hangUp.status).toBe(502);
    expect(((await hangUp.json()) as { error: { code: string } }).error).toMatchObject({ code: 'ECONNRESET', type: 'connection_reset' });
    await until(() => records[1], 'two records');
    // The client got a 502: recorded as the runtime classifies one, with the parser's code kept.
    expect(records[0]).toMatchObject({ status: 'failure', failure_category: 'system', failure_type: 'server_error', error_code: 'HPE_INVALID_RESPONSE', context_snapshot: { response_status: 502, upstream_error: 'HPE_INVALID_RESPONSE' } });
    expect(records[1]).toMatchObject({ status: 'failure', failure_category: 'network', failure_type: 'connection_reset', error_code: 'ECONNRESET', context_snapshot: { upstream_error: 'ECONNRESET' } });

    // A port that was just listened on and closed: nothing answers there.
    const gone = createNetServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as AddressInfo).port;
    await closeServer(gone);
    const { proxy: toNowhere } = await proxyTo(`http://127.0.0.1:${port}`);
    const res = await fetch(`${toNowhere.url}/x`);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ECONNREFUSED');
    expect(toNowhere.stats().fastPath).toBe(1);
  });

  it('closes the connection after an answer that came before the request body was all sent', async () => {
    const up = await httpUpstream((req, res) => {
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end('{"error":"too large"}');
      req.socket.destroySoon();
    });
    const { proxy, records } = await proxyTo(up.url);
    const client = rawClient(proxy.port);
    client.socket.write('POST /tools/upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n' + 'x'.repeat(1000));
    await client.ended;
    expect(client.text()).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(records[0]).toMatchObject({ status: 'failure', context_snapshot: { response_status: 413 } });
  });

  it('hands a connection to node:http for a fault, HTTP/1.0 or an odd head, and node keeps serving it', async () => {
    const up = await httpUpstream((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url })));
    });
    const { proxy, records } = await proxyTo(up.url, { rules: [{ id: 'orders-down', tool: 'GET /orders/:id', fault: 'http_status', params: { status: 503 } }] });
    const client = rawClient(proxy.port);
    client.socket.write('GET /fast/1 HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => (client.text().includes('"/fast/1"') ? true : undefined), 'the fast answer');
    // An injection header, then a plan rule, then a plain request: all on node:http from here on.
    client.socket.write('POST /tools/get_weather HTTP/1.1\r\nHost: localhost\r\nX-Inject-Error: 429\r\nContent-Length: 2\r\n\r\n{}');
    await until(() => (client.text().includes('HTTP/1.1 429') ? true : undefined), 'the injected 429');
    client.socket.write('GET /orders/ORD-10041 HTTP/1.1\r\nHost: localhost\r\n\r\nGET /fast/2 HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => (client.text().includes('"/fast/2"') ? true : undefined), 'the answer after the handoff');
    expect(client.text()).toMatch(/HTTP\/1\.1 503/);

    const old = rawClient(proxy.port);
    old.socket.write('GET /old HTTP/1.0\r\n\r\n');
    await old.ended;
    expect(old.text()).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*"\/old"/);

    const expecting = rawClient(proxy.port);
    expecting.socket.write('PUT /things/1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    await until(() => (expecting.text().startsWith('HTTP/1.1 100 Continue') ? true : undefined), 'node:http\'s 100 Continue');
    expecting.socket.write('{}');
    await until(() => (expecting.text().includes('"/things/1"') ? true : undefined), 'the answer after 100 Continue');

    const folded = rawClient(proxy.port);
    folded.socket.write('GET /folded HTTP/1.1\r\nHost: localhost\r\nX-A: 1\r\n  continued\r\n\r\n');
    await folded.ended;
    expect(folded.text()).not.toMatch(/200 OK/);

    expect(proxy.stats()).toMatchObject({ requests: 6, fastPath: 1 });
    expect(records.map((r) => [r.tool_name, r.error_code])).toEqual([
      ['GET /fast/:id', null],
      ['get_weather', 'HTTP_429'],
      ['GET /orders/:id', 'HTTP_503'],
      ['GET /fast/:id', null],
      ['GET /old', null],
      ['PUT /things/:id', null],
    ]);
  });

  it('answers a head over 16 KiB or a broken chunked body as node:http does, and closes', async () => {
    const up = await httpUpstream((req, res) => {
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const { proxy, records } = await proxyTo(up.url);
    const big = rawClient(proxy.port);
    big.socket.write(`GET /big HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`);
    await big.ended;
    expect(big.text()).toBe('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');

    const broken = rawClient(proxy.port);
    broken.socket.write('POST /tools/x HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    await broken.ended;
    expect(broken.text()).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    await until(() => records[0], 'the record of the broken request');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ tool_name: 'x', status: 'rejected', error_code: 'HPE_INVALID_CHUNK_SIZE', context_snapshot: { response_status: 400 } });
  });

  it('records every exchange in flight as given up when the proxy closes', async () => {
    const up = await httpUpstream(() => undefined);
    const { proxy, records } = await proxyTo(up.url);
    const client = rawClient(proxy.port);
    client.socket.write('GET /never HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => (proxy.stats().inFlight === 1 ? true : undefined), 'the request in flight');
    await proxy.close();
    await client.ended;
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ status: 'timeout', context_snapshot: { proxy_closed: true } });
  });
});

describe('createFastPath', () => {
  it('closes idle keep-alive connections after keepAliveTimeoutMs', async () => {
    const up = await httpUpstream((req, res) => {
      req.resume();
      res.end('ok');
    });
    const outcomes: ExchangeOutcome[] = [];
    const fast = createFastPath<FastCall>(
      {
        open: () => ({ body: EMPTY_BODY, exchange: { upstreamStatus: null, upstreamError: null } }),
        upstreamHead: (_call, head) => `${head.method} ${head.target} HTTP/1.1\r\nhost: up\r\n\r\n`,
        gatewayError: (_call, error) => ({ status: 502, headers: {}, body: error.message, code: 'X' }),
        finish: (_call, outcome) => outcomes.push(outcome),
        handOff: (socket) => socket.destroy(),
      },
      { upstreamHost: '127.0.0.1', upstreamPort: Number(new URL(up.url).port), maxFreeUpstreamSockets: 4, maxArgsBytes: 1024, captureBytes: 1024, keepAliveTimeoutMs: 100 },
    );
    const server = createNetServer((socket) => fast.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => {
      fast.closeAll();
      return closeServer(server);
    });
    const client = rawClient((server.address() as AddressInfo).port);
    client.socket.write('GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await until(() => (client.text().endsWith('ok') ? true : undefined), 'the answer');
    const started = Date.now();
    await client.ended;
    expect(Date.now() - started).toBeLessThan(3000);
    expect(outcomes).toMatchObject([{ kind: 'response', status: 200, body: 'ok', bodyBytes: 2 }]);
    await until(() => (fast.connections === 0 ? true : undefined), 'the connection forgotten');
  });
});

/** An upstream that answers `ok` to every head it reads and keeps every byte it was sent. */
async function bytesUpstream(): Promise<{ url: string; received: () => string }> {
  let received = '';
  const target = await rawUpstream((socket) => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
  const port = Number(new URL(target).port);
  // In front of it, a relay that keeps a copy of what goes through.
  const relay = createNetServer((client) => {
    const up = connect(port, '127.0.0.1');
    client.on('data', (c: Buffer) => {
      received += c.toString('latin1');
      up.write(c);
    });
    up.on('data', (c: Buffer) => client.write(c));
    client.on('close', () => up.destroy());
    up.on('close', () => client.destroy());
    client.on('error', () => undefined);
    up.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => closeServer(relay));
  return { url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, received: () => received };
}

const H = 'Host: localhost\r\n';
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

// Whatever two HTTP parsers could frame differently must not be relayed: the upstream socket may
// carry other clients' requests next (request smuggling, RFC 9112 sections 6.3 and 11.2). Both
// paths answer such bytes as node:http's server does, 400 and the end of the connection.
describe.each([
  ['the fast path', true],
  ['node:http', false],
])('on %s, the proxy', (_name, fastPath) => {
  it('refuses a head that could be framed two ways, forwarding none of it', async () => {
    const up = await bytesUpstream();
    const { proxy, records } = await proxyTo(up.url, { fastPath });
    const heads = [
      `POST /a HTTP/1.1\r\n${H}Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello`,
      `POST /a HTTP/1.1\r\n${H}Content-Length: 5, 5\r\n\r\nhello`,
      `POST /a HTTP/1.1\r\n${H}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      `POST /a HTTP/1.1\r\n${H}Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n`,
      `POST /a HTTP/1.1\r\n${H}Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n`,
      `POST /a HTTP/1.1\r\n${H}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n`,
      `GET /a HTTP/1.1\r\n${H}X-A: a\x00b\r\n\r\n`,
      // Bare LF line ends: no CRLF CRLF ever comes; the fast path used to wait for it.
      'GET /a HTTP/1.1\nHost: x\n\n',
      // A method llhttp does not know; the fast path used to relay it.
      `FOO /a HTTP/1.1\r\n${H}\r\n`,
    ];
    for (const head of heads) {
      const client = rawClient(proxy.port);
      client.socket.write(Buffer.from(head, 'latin1'));
      await client.ended;
      expect(client.text(), JSON.stringify(head)).toBe(BAD_REQUEST);
    }
    expect(up.received()).toBe('');
    expect(records).toEqual([]);
  });

  it('refuses a chunked body the upstream could read differently, before any of it goes on, and records it', async () => {
    const up = await bytesUpstream();
    const { proxy, records } = await proxyTo(up.url, { fastPath });
    const bodies = [
      '5 \r\nhello\r\n0\r\n\r\n',
      '5;a=\x01\r\nhello\r\n0\r\n\r\n',
      '5;\r\nhello\r\n0\r\n\r\n',
      '5\r\nhello\r\n0\r\nContent-Length: 40\r\n\r\n',
      '5\r\nhello\r\n0\r\nX-T: 1\r\n folded\r\n\r\n',
    ];
    for (const body of bodies) {
      const client = rawClient(proxy.port);
      client.socket.write(Buffer.from(`POST /tools/upload HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n${body}GET /smuggled HTTP/1.1\r\n${H}\r\n`, 'latin1'));
      await client.ended;
      expect(client.text(), JSON.stringify(body)).toBe(BAD_REQUEST);
    }
    expect(up.received()).not.toMatch(/hello|smuggled/);
    await until(() => (records.length === bodies.length ? true : undefined), 'a record of each');
    for (const r of records) expect(r).toMatchObject({ tool_name: 'upload', status: 'rejected', context_snapshot: { response_status: 400 } });
  });

  it('answers a request that asked to close even with bytes after it, and reads no further', async () => {
    const up = await bytesUpstream();
    const { proxy, records } = await proxyTo(up.url, { fastPath });
    const client = rawClient(proxy.port);
    client.socket.write(`GET /first HTTP/1.1\r\n${H}Connection: close\r\n\r\nGET /second HTTP/1.1\r\n${H}\r\n`);
    await client.ended;
    expect(client.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Connection: close\r\n\r\nok$/);
    expect(up.received()).not.toMatch(/second/);
    await until(() => records[0], 'the record');
    expect(records.map((r) => [r.tool_name, r.status])).toEqual([['GET /first', 'success']]);
  });

  it('answers 502 to an upstream head with bare LF line ends, two Content-Lengths, or both framings', async () => {
    const target = await rawUpstream((socket, head) => {
      if (head.includes('/bare-lf')) socket.write('HTTP/1.1 200 OK\nContent-Length: 2\n\nok');
      else if (head.includes('/two-lengths')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok');
      else socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n');
    });
    const { proxy, records } = await proxyTo(target, { fastPath });
    for (const path of ['/bare-lf', '/two-lengths', '/both']) {
      const res = await fetch(`${proxy.url}${path}`);
      expect(res.status, path).toBe(502);
      expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/^HPE_/);
    }
    await until(() => (records.length === 3 ? true : undefined), 'three records');
    for (const r of records) expect(r).toMatchObject({ status: 'failure', context_snapshot: { response_status: 502 } });
  });

  it('relays an Upgrade request as a plain one, without its Upgrade, and answers it', async () => {
    const up = await bytesUpstream();
    const { proxy, records } = await proxyTo(up.url, { fastPath });
    const client = rawClient(proxy.port);
    client.socket.write(`GET /ws HTTP/1.1\r\n${H}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
    await until(() => (client.text().endsWith('ok') ? true : undefined), 'the answer');
    expect(client.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(up.received()).toMatch(/^GET \/ws HTTP\/1\.1\r\n/);
    expect(up.received()).not.toMatch(/upgrade/i);
    await until(() => records[0], 'the record');
    expect(records[0]).toMatchObject({ tool_name: 'GET /ws', status: 'success' });
  });
});

describe('http fault proxy fast path, a body read until the upstream closes', () => {
  it('resets the client connection when the upstream resets it, so the cut body does not look whole', async () => {
    const target = await rawUpstream((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part');
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
    const { proxy, records } = await proxyTo(target);
    const client = rawClient(proxy.port);
    let error: string | undefined;
    client.socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    client.socket.write(`GET /stream HTTP/1.1\r\n${H}\r\n`);
    await client.ended;
    expect(error).toBe('ECONNRESET');
    await until(() => records[0], 'the record');
    expect(records[0]).toMatchObject({ status: 'failure', error_code: 'ECONNRESET', raw_output: 'first part' });
  });
});

// An upstream answer that goes wrong after its head, or that no request asked for: both paths
// tell the client and the record the same thing.
describe.each([
  ['the fast path', true],
  ['node:http', false],
])('on %s, an upstream answer', (_name, fastPath) => {
  it('read until the upstream closes and cut by a reset reaches the client broken, and is recorded ECONNRESET', async () => {
    const target = await rawUpstream((socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst part');
      setTimeout(() => socket.resetAndDestroy(), 20);
    });
    const { proxy, records } = await proxyTo(target, { fastPath });
    const client = rawClient(proxy.port);
    let error: string | undefined;
    client.socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    client.socket.write(`GET /stream HTTP/1.1\r\n${H}\r\n`);
    await client.ended;
    // The fast path relays the body as it came, until the close, so only a reset says it broke;
    // node:http's server sends it chunked, and leaves out the last chunk.
    if (fastPath) expect(error).toBe('ECONNRESET');
    else expect(client.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n(?:[^\r\n]+\r\n)*Transfer-Encoding: chunked\r\n(?:[^\r\n]+\r\n)*\r\na\r\nfirst part\r\n$/);
    await until(() => records[0], 'the record');
    expect(records[0]).toMatchObject({ status: 'failure', error_code: 'ECONNRESET', raw_output: 'first part', context_snapshot: { response_status: 200, upstream_error: 'ECONNRESET' } });

    // An HTTP/1.0 client (node:http's path on both) gets the body until the close too: a reset.
    const old = rawClient(proxy.port);
    let oldError: string | undefined;
    old.socket.on('error', (e: NodeJS.ErrnoException) => (oldError = e.code));
    old.socket.write(`GET /stream HTTP/1.0\r\n${H}\r\n`);
    await old.ended;
    expect(oldError).toBe('ECONNRESET');
    await until(() => records[1], 'the second record');
    expect(records[1]).toMatchObject({ status: 'failure', error_code: 'ECONNRESET', raw_output: 'first part' });
  });

  it('whose chunked framing breaks gets to the client as far as it was sound, and is recorded ECONNRESET with the cause', async () => {
    const target = await rawUpstream((socket, head) => {
      const start = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n';
      if (head.includes('/at-once')) {
        socket.write(`${start}zz\r\n`);
      } else {
        socket.write(`${start}5\r\nhello\r\n`);
        setTimeout(() => socket.write('zz\r\n'), 20);
      }
    });
    const { proxy, records } = await proxyTo(target, { fastPath });
    // Right after the head: the client gets the head (it was lost with the bad bytes), then the end.
    const atOnce = rawClient(proxy.port);
    atOnce.socket.write(`GET /at-once HTTP/1.1\r\n${H}\r\n`);
    await atOnce.ended;
    expect(atOnce.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n(?:[^\r\n]+\r\n)*Transfer-Encoding: chunked\r\n(?:[^\r\n]+\r\n)*\r\n$/);
    await until(() => records[0], 'the first record');
    const later = rawClient(proxy.port);
    later.socket.write(`GET /later HTTP/1.1\r\n${H}\r\n`);
    await later.ended;
    expect(later.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n(?:[^\r\n]+\r\n)*\r\n5\r\nhello\r\n$/);
    await until(() => records[1], 'the second record');
    const cause = { response_status: 200, upstream_status: 200, upstream_error: 'HPE_INVALID_CHUNK_SIZE' };
    expect(records[0]).toMatchObject({ status: 'failure', failure_type: 'connection_reset', error_code: 'ECONNRESET', raw_output: null, context_snapshot: cause });
    expect(records[1]).toMatchObject({ status: 'failure', failure_type: 'connection_reset', error_code: 'ECONNRESET', raw_output: 'hello', context_snapshot: cause });
  });

  it('switching protocols that no request asked for is a 502', async () => {
    const target = await rawUpstream((socket, head) => {
      if (head.includes('/bare')) socket.write('HTTP/1.1 101 Switching Protocols\r\n\r\n');
      else socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nframes');
    });
    const { proxy, records } = await proxyTo(target, { fastPath });
    for (const path of ['/upgrade', '/bare']) {
      const client = rawClient(proxy.port);
      client.socket.write(`GET ${path} HTTP/1.1\r\n${H}Connection: close\r\n\r\n`);
      await until(() => (client.text().endsWith('}') ? true : undefined), `the answer to ${path}`);
      expect(client.text(), path).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n[\s\S]*"code":"HPE_UNEXPECTED_UPGRADE"/);
    }
    await until(() => (records.length === 2 ? true : undefined), 'two records');
    for (const r of records) {
      expect(r).toMatchObject({ status: 'failure', failure_type: 'server_error', error_code: 'HPE_UNEXPECTED_UPGRADE', context_snapshot: { response_status: 502, upstream_error: 'HPE_UNEXPECTED_UPGRADE' } });
    }
  });

  it('refuses a request body in a transfer coding the proxy does not decode with 501, forwarding none of it', async () => {
    const up = await bytesUpstream();
    const { proxy, records } = await proxyTo(up.url, { fastPath });
    const client = rawClient(proxy.port);
    // Chunked comes last, so the body's end is known: the request after it is served.
    client.socket.write(`POST /tools/upload HTTP/1.1\r\n${H}Transfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /next HTTP/1.1\r\n${H}\r\n`);
    await until(() => (client.text().endsWith('ok') ? true : undefined), 'the answer to the next request');
    expect(client.text()).toMatch(/^HTTP\/1\.1 501 Not Implemented\r\n[\s\S]*"code":"UNSUPPORTED_TRANSFER_CODING"[\s\S]*HTTP\/1\.1 200 OK\r\n/);
    expect(up.received()).toMatch(/^GET \/next HTTP\/1\.1\r\n[^]*\r\n\r\n$/);
    await until(() => (records.length === 2 ? true : undefined), 'two records');
    expect(records[0]).toMatchObject({ tool_name: 'upload', status: 'rejected', error_code: 'UNSUPPORTED_TRANSFER_CODING', context_snapshot: { response_status: 501 } });
    expect(records[1]).toMatchObject({ tool_name: 'GET /next', status: 'success' });
  });
});
