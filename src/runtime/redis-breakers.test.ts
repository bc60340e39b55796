import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCapture } from '../cli/run-cli.test-helpers.js';
import { runTypeScriptProcess } from '../ts-worker.test-helpers.js';
import { REDIS_URL, redisForTests } from './redis.test-helpers.js';
import { FaultlineError } from '../core/errors.js';
import { createVirtualClock, type VirtualClock } from '../core/clock.js';
import { defineTool } from './define-tool.js';
import { createRedisBreakers, MAX_PENDING_REPORTS, type RedisBreakers } from './redis-breakers.js';
import { createRuntime, type Runtime } from './runtime.js';
import { HttpError } from './tool-errors.js';
import { refusedPort } from '../refused-port.test-helpers.js';


const available = await redisForTests();
const describeRedis = available ? describe : describe.skip;

/** A fleet of runtimes ("processes") sharing one prefix; each has its own connections. */
const open: { rt: Runtime; breakers: RedisBreakers }[] = [];
let admin: Redis;
beforeAll(() => {
  if (available) admin = new Redis(REDIS_URL);
});
afterEach(async () => {
  for (const { rt, breakers } of open.splice(0)) {
    await rt.close();
    await breakers.close();
  }
});
afterAll(() => admin?.disconnect());

interface Upstream {
  failing: boolean;
  calls: number;
}

function member(prefix: string, clock: VirtualClock, upstream: Upstream) {
  const breakers = createRedisBreakers({ url: REDIS_URL, prefix });
  const rt = createRuntime({
    tools: [
      defineTool({
        name: 'inventory',
        description: 'Stock levels.',
        input: { type: 'object', properties: {} },
        idempotent: true,
        retry: { maxRetries: 0 },
        breaker: { failureThreshold: 5, cooldownMs: 30_000 },
        execute: () => {
          upstream.calls++;
          if (upstream.failing) throw new HttpError(503, 'inventory service down');
          return { sku: 'SKU-1', stock: 3 };
        },
      }),
    ],
    clock,
    breakers,
  });
  open.push({ rt, breakers });
  return { rt, breakers };
}

/** Until every pending report and publication has landed (a round trip through Redis on each connection). */
async function settle(...members: { breakers: RedisBreakers }[]) {
  await new Promise((resolve) => setTimeout(resolve, 30));
  for (const m of members) await m.breakers.ready();
  await new Promise((resolve) => setTimeout(resolve, 30));
}

/** Two members of a fresh fleet on one virtual clock, both synced, calling one failing upstream. */
async function twoProcesses() {
  const prefix = `faultline-test-${randomUUID()}`;
  const clock = createVirtualClock({ autoAdvance: false });
  const upstream: Upstream = { failing: true, calls: 0 };
  const a = member(prefix, clock, upstream);
  const b = member(prefix, clock, upstream);
  await Promise.all([a.breakers.ready(), b.breakers.ready()]);
  return { prefix, clock, upstream, a, b };
}

describeRedis('shared circuit breakers through Redis (the real server on 127.0.0.1:6379)', () => {
  it('counts failures across processes: 3 here and 2 there open the circuit for both', async () => {
    const { upstream, a, b } = await twoProcesses();

    for (let i = 0; i < 3; i++) await a.rt.execute('inventory', {});
    await settle(a, b);
    expect(b.rt.breakers.state('inventory')).toMatchObject({ state: 'closed', consecutiveFailures: 3 });
    for (let i = 0; i < 2; i++) await b.rt.execute('inventory', {});
    await settle(a, b);

    const callsBefore = upstream.calls;
    const ra = await a.rt.execute('inventory', {});
    const rb = await b.rt.execute('inventory', {});
    expect(upstream.calls).toBe(callsBefore);
    for (const r of [ra, rb]) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.type).toBe('circuit_open');
    }
    expect(await a.breakers.sharedStates()).toMatchObject({ inventory: { state: 'open', trips: 1 } });
  });

  it("a success anywhere resets the shared count (failures must be consecutive fleet-wide)", async () => {
    const { upstream, a, b } = await twoProcesses();
    for (let i = 0; i < 4; i++) await a.rt.execute('inventory', {});
    await settle(a, b);
    upstream.failing = false;
    await b.rt.execute('inventory', {});
    await settle(a, b);
    expect(a.rt.breakers.state('inventory')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    upstream.failing = true;
    for (let i = 0; i < 4; i++) await a.rt.execute('inventory', {});
    await settle(a, b);
    expect((await a.breakers.sharedStates())['inventory']).toMatchObject({ state: 'closed', consecutiveFailures: 4 });
  });

  it('after the cooldown a probe in one process closes the circuit everywhere; a failed probe reopens it everywhere', async () => {
    const { clock, upstream, a, b } = await twoProcesses();
    for (let i = 0; i < 5; i++) await a.rt.execute('inventory', {});
    await settle(a, b);
    expect(b.rt.breakers.state('inventory')!.state).toBe('open');

    await clock.advance(30_000);
    const failedProbe = await b.rt.execute('inventory', {});
    expect(failedProbe.ok).toBe(false);
    await settle(a, b);
    const reopened = a.rt.breakers.state('inventory')!;
    expect(reopened).toMatchObject({ state: 'open', openedAt: clock.now(), trips: 2 });
    expect((await a.rt.execute('inventory', {})).ok).toBe(false);

    await clock.advance(30_000);
    upstream.failing = false;
    const probe = await a.rt.execute('inventory', {});
    expect(probe.ok).toBe(true);
    await settle(a, b);
    expect(b.rt.breakers.state('inventory')!.state).toBe('closed');
    expect((await b.rt.execute('inventory', {})).ok).toBe(true);
  });

  it('a process that starts later picks up the open circuit; reset closes it for everyone', async () => {
    const prefix = `faultline-test-${randomUUID()}`;
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream = { failing: true, calls: 0 };
    const a = member(prefix, clock, upstream);
    await a.breakers.ready();
    for (let i = 0; i < 5; i++) await a.rt.execute('inventory', {});
    await settle(a);
    const late = member(prefix, clock, upstream);
    await late.breakers.ready();
    expect(late.rt.breakers.state('inventory')!.state).toBe('open');
    await late.breakers.reset('inventory');
    await settle(a, late);
    expect(a.rt.breakers.state('inventory')!.state).toBe('closed');
    expect(await admin.hget(`${prefix}:breaker:inventory`, 'state')).toBe('closed');
  });

  it('shares the circuit with another OS process', async () => {
    const prefix = `faultline-test-${randomUUID()}`;
    const dir = mkdtempSync(join(tmpdir(), 'faultline-breakers-'));
    try {
      // The other process: a runtime whose tool always fails, called 5 times, on the same Redis.
      const script = join(dir, 'other.ts');
      const here = (file: string) => JSON.stringify(fileURLToPath(new URL(file, import.meta.url)));
      writeFileSync(
        script,
        [
          `import { createRuntime } from ${here('./runtime.ts')};`,
          `import { defineTool } from ${here('./define-tool.ts')};`,
          `import { HttpError } from ${here('./tool-errors.ts')};`,
          `import { createRedisBreakers } from ${here('./redis-breakers.ts')};`,
          `const breakers = createRedisBreakers({ url: ${JSON.stringify(REDIS_URL)}, prefix: ${JSON.stringify(prefix)} });`,
          `const rt = createRuntime({ breakers, tools: [defineTool({ name: 'inventory', description: 'x', input: { type: 'object' }, idempotent: true, retry: { maxRetries: 0 }, breaker: { failureThreshold: 5 }, execute: () => { throw new HttpError(502, 'bad gateway'); } })] });`,
          `await breakers.ready();`,
          `for (let i = 0; i < 5; i++) await rt.execute('inventory', {});`,
          `await new Promise((r) => setTimeout(r, 50));`,
          `console.log(JSON.stringify(rt.breakers.state('inventory')));`,
          `await rt.close(); await breakers.close();`,
        ].join('\n'),
      );
      const upstream = { failing: false, calls: 0 };
      const here2 = member(prefix, createVirtualClock({ startMs: Date.now(), autoAdvance: false }), upstream);
      await here2.breakers.ready();
      const out = await runTypeScriptProcess(script, join(dir, 'ts'));
      expect(JSON.parse(out.trim())).toMatchObject({ state: 'open' });
      await settle(here2);
      const r = await here2.rt.execute('inventory', {});
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.type).toBe('circuit_open');
      expect(upstream.calls).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeRedis('shared circuit breakers before the first connection (a short script, no ready())', () => {
  afterEach(async () => {
    for (const key of await admin.keys('faultline-test-early-*')) await admin.del(key);
  });

  /** Another process, connected, whose failing `inventory` was called `failures` times, on a fresh prefix. */
  async function failedElsewhere(failures: number) {
    const prefix = `faultline-test-early-${randomUUID()}`;
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream: Upstream = { failing: true, calls: 0 };
    const other = member(prefix, clock, upstream);
    await other.breakers.ready();
    for (let i = 0; i < failures; i++) await other.rt.execute('inventory', {});
    await settle(other);
    return { prefix, clock, upstream, other };
  }

  it('a circuit tripped before the connection is up is shared once it is, and sharedStates() waits for it', async () => {
    const prefix = `faultline-test-early-${randomUUID()}`;
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream: Upstream = { failing: true, calls: 0 };
    const other = member(prefix, clock, upstream);
    await other.breakers.ready();
    const script = member(prefix, clock, upstream);
    for (let i = 0; i < 5; i++) await script.rt.execute('inventory', {});
    expect(script.rt.breakers.state('inventory')!.state).toBe('open');

    // Right away: no raw driver error, and the trip is in Redis.
    expect(await script.breakers.sharedStates()).toMatchObject({ inventory: { state: 'open', trips: 1, consecutiveFailures: 0, cooldownMs: 30_000 } });
    expect(script.breakers.droppedReports).toBe(0);
    await settle(other, script);
    const callsBefore = upstream.calls;
    const r = await other.rt.execute('inventory', {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.type).toBe('circuit_open');
    expect(upstream.calls).toBe(callsBefore);
  });

  it('a success before the connection resets the count other processes left (the shared count was unknown)', async () => {
    const { prefix, clock, upstream, other } = await failedElsewhere(3);
    upstream.failing = false;
    const script = member(prefix, clock, upstream);
    for (let i = 0; i < 3; i++) expect((await script.rt.execute('inventory', {})).ok).toBe(true);
    expect((await script.breakers.sharedStates())['inventory']).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
    await settle(other, script);
    expect(other.rt.breakers.state('inventory')).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });

  it('reset() before the connection is up waits for it', async () => {
    const { prefix } = await failedElsewhere(5);
    const script = createRedisBreakers({ url: REDIS_URL, prefix });
    try {
      await script.reset('inventory');
      expect(await admin.hget(`${prefix}:breaker:inventory`, 'state')).toBe('closed');
    } finally {
      await script.close();
    }
  });

  it('a given client that is closed makes sharedStates() and reset() fail with one FaultlineError', async () => {
    const client = new Redis(REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const breakers = createRedisBreakers({ client, prefix: `faultline-test-early-${randomUUID()}`, onError: () => undefined });
    await breakers.ready();
    client.disconnect();
    await expect(breakers.sharedStates()).rejects.toSatisfy((e: unknown) => FaultlineError.isInstance(e) && (e as Error).message === 'could not connect to Redis at the given client: the connection is closed');
    await expect(breakers.reset('inventory')).rejects.toSatisfy((e: unknown) => FaultlineError.isInstance(e) && (e as Error).message === 'could not connect to Redis at the given client: the connection is closed');
    await breakers.close();
  });
});

/** Opens a connection to the test Redis for `client`; both sockets are kept in `sockets` while open. */
function connectToRedis(client: Socket, sockets: Set<Socket>): Socket {
  const target = new URL(REDIS_URL);
  const upstream = connectTcp(Number(target.port || 6379), target.hostname);
  for (const s of [client, upstream]) {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  }
  return upstream;
}

/** Starts forwarding `port` to the test Redis: a Redis that comes up at that port now. */
async function redisComesUpAt(port: number): Promise<Server> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    client.pipe(connectToRedis(client, sockets)).pipe(client);
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

describeRedis('shared circuit breakers when Redis comes up after the process started', () => {
  it('once ioredis gets through, the process hears the circuits other processes open (the subscription is made then)', async () => {
    const prefix = `faultline-test-early-${randomUUID()}`;
    const port = await refusedPort();
    const late = createRedisBreakers({ url: `redis://127.0.0.1:${port}`, prefix, onError: () => undefined, redis: { retryStrategy: () => 20 } });
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream: Upstream = { failing: true, calls: 0 };
    const lateRt = createRuntime({
      tools: [defineTool({ name: 'inventory', description: 'x', input: { type: 'object' }, idempotent: true, retry: { maxRetries: 0 }, breaker: { failureThreshold: 5, cooldownMs: 30_000 }, execute: () => ({ ok: true }) })],
      clock,
      breakers: late,
    });
    open.push({ rt: lateRt, breakers: late });
    await expect(late.ready()).rejects.toThrow(/could not connect to Redis/);
    const server = await redisComesUpAt(port);
    try {
      // Reads work again once ioredis has reconnected.
      for (;;) {
        const states = await late.sharedStates().catch(() => undefined);
        if (states !== undefined) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await late.ready();
      const other = member(prefix, clock, upstream);
      await other.breakers.ready();
      for (let i = 0; i < 5; i++) await other.rt.execute('inventory', {});
      await settle(other);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(lateRt.breakers.state('inventory')!.state).toBe('open');
    } finally {
      await lateRt.close();
      await late.close();
      open.splice(open.findIndex((m) => m.breakers === late), 1);
      server.close();
      for (const key of await admin.keys(`${prefix}:*`)) await admin.del(key);
    }
  });
});

describe('shared circuit breakers with Redis unreachable', () => {
  it('keep working locally: nothing waits, the outage is reported once, reports are dropped', async () => {
    const errors: unknown[] = [];
    const breakers = createRedisBreakers({ url: 'redis://127.0.0.1:1', prefix: 'faultline-test-down', onError: (e) => errors.push(e), redis: { retryStrategy: () => null } });
    const upstream = { failing: true, calls: 0 };
    const rt = createRuntime({
      tools: [
        defineTool({
          name: 'inventory',
          description: 'x',
          input: { type: 'object' },
          idempotent: true,
          retry: { maxRetries: 0 },
          breaker: { failureThreshold: 3 },
          execute: () => {
            upstream.calls++;
            throw new HttpError(503, 'down');
          },
        }),
      ],
      clock: createVirtualClock(),
      breakers,
    });
    await expect(breakers.ready()).rejects.toThrow(/could not connect to Redis at redis:\/\/127.0.0.1:1: .*ECONNREFUSED/);
    for (let i = 0; i < 4; i++) await rt.execute('inventory', {});
    expect(upstream.calls).toBe(3);
    expect(rt.breakers.state('inventory')!.state).toBe('open');
    expect(breakers.droppedReports).toBe(3);
    expect(errors.length).toBe(1);
    await rt.close();
    await breakers.close();
    await breakers.close();
  });
});

/** A runtime whose one tool, `inventory`, always fails with a 503 and opens its circuit at the second failure. */
function failingInventory(breakers: ReturnType<typeof createRedisBreakers>) {
  const upstream = { calls: 0 };
  const execute = () => {
    upstream.calls++;
    throw new HttpError(503, 'down');
  };
  const tool = defineTool({ name: 'inventory', description: 'x', input: { type: 'object' }, idempotent: true, retry: { maxRetries: 0 }, breaker: { failureThreshold: 2 }, execute });
  return { rt: createRuntime({ tools: [tool], clock: createVirtualClock(), breakers }), upstream };
}

describe('shared circuit breakers when Redis never comes up', () => {
  it('sharedStates(), reset() and ready() called at once fail with one FaultlineError naming the address; tool calls meanwhile go on locally', async () => {
    const breakers = createRedisBreakers({ url: 'redis://127.0.0.1:1', prefix: 'faultline-test-down', onError: () => undefined, redis: { retryStrategy: () => null } });
    const { rt, upstream } = failingInventory(breakers);
    const expected = (e: unknown) => FaultlineError.isInstance(e) && /^could not connect to Redis at redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/.test((e as Error).message);
    const calledAtOnce = Promise.all([
      expect(breakers.sharedStates()).rejects.toSatisfy(expected),
      expect(breakers.reset('inventory')).rejects.toSatisfy(expected),
      expect(breakers.ready()).rejects.toSatisfy(expected),
    ]);
    // Made before the connection fails: not held up, and their reports dropped once it has.
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await rt.execute('inventory', {}));
    expect(results.map((r) => (r.ok ? 'ok' : r.error.type))).toEqual(['dependency_down', 'dependency_down', 'circuit_open']);
    expect(upstream.calls).toBe(2);
    await calledAtOnce;
    expect(breakers.droppedReports).toBe(2);
    await rt.close();
    await breakers.close();
  });
});

/** A loopback server that accepts connections and never answers (a stopped Redis, another service on the port). */
async function silentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Forwards a fresh port to the test Redis until `silence()`: from then on what clients send is
 * held back, so the connections stay up and nothing answers, until `resume()` passes it on or
 * `cut()` drops it with the connections (new ones are forwarded).
 */
async function redisThatFallsSilent(): Promise<{ url: string; silence: () => void; resume: () => void; cut: () => void; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let silent = false;
  const held: { upstream: Socket; chunk: Buffer }[] = [];
  const server = createServer((client) => {
    const upstream = connectToRedis(client, sockets);
    client.on('data', (chunk: Buffer) => {
      if (silent) held.push({ upstream, chunk });
      else upstream.write(chunk);
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    silence: () => void (silent = true),
    resume: () => {
      silent = false;
      for (const { upstream, chunk } of held.splice(0)) upstream.write(chunk);
    },
    cut: () => {
      silent = false;
      held.length = 0;
      for (const s of sockets) s.destroy();
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('shared circuit breakers when the server accepts the connection and never answers', () => {
  it('ready(), sharedStates() and reset() fail after the connect timeout with one FaultlineError; tool calls go on locally and close() ends', async () => {
    const server = await silentServer();
    try {
      const breakers = createRedisBreakers({ url: server.url, prefix: 'faultline-test-silent', onError: () => undefined, redis: { retryStrategy: () => null, connectTimeout: 200 } });
      const { rt } = failingInventory(breakers);
      const expected = `could not connect to Redis at ${server.url}: no answer within 0.2 s`;
      const silence = (e: unknown) => FaultlineError.isInstance(e) && (e as Error).message === expected;
      const waiting = Promise.all([
        expect(breakers.ready()).rejects.toSatisfy(silence),
        expect(breakers.sharedStates()).rejects.toSatisfy(silence),
        expect(breakers.reset('inventory')).rejects.toSatisfy(silence),
      ]);
      const results = [];
      for (let i = 0; i < 3; i++) results.push(await rt.execute('inventory', {}));
      expect(results.map((r) => (r.ok ? 'ok' : r.error.type))).toEqual(['dependency_down', 'dependency_down', 'circuit_open']);
      await waiting;
      // Asked after the first connection gave up: at once, the same way.
      await expect(breakers.sharedStates()).rejects.toSatisfy(silence);
      expect(breakers.droppedReports).toBe(2);
      await rt.close();
      await breakers.close();
    } finally {
      await server.close();
    }
  });

  it('faultline breakers --redis at such a server ends with one line and exit 2', async () => {
    const server = await silentServer();
    try {
      const run = await runCapture(['breakers', '--redis', server.url], tmpdir());
      expect(run).toEqual({ code: 2, stdout: '', stderr: `faultline: could not connect to Redis at ${server.url}: no answer within 3 s\n` });
    } finally {
      await server.close();
    }
  });
});

describeRedis('shared circuit breakers when Redis stops answering after the first connection', () => {
  it('sharedStates() and reset() fail after the connect timeout with one FaultlineError, and close() ends', async () => {
    const redis = await redisThatFallsSilent();
    try {
      // ready() answers within the bound through the forwarder even on a loaded machine.
      const breakers = createRedisBreakers({ url: redis.url, prefix: `faultline-test-silent-${randomUUID()}`, onError: () => undefined, redis: { retryStrategy: () => null, connectTimeout: 1000 } });
      await breakers.ready();
      redis.silence();
      const silence = (e: unknown) => FaultlineError.isInstance(e) && (e as Error).message === `could not connect to Redis at ${redis.url}: no answer within 1 s`;
      await expect(breakers.sharedStates()).rejects.toSatisfy(silence);
      await expect(breakers.reset('inventory')).rejects.toSatisfy(silence);
      await breakers.close();
    } finally {
      await redis.close();
    }
  });
});

/**
 * A process connected through `redis` (made silent) and another straight to Redis, on a fresh
 * prefix; the first has made `calls` failure reports, in rounds of 1,000 with the event loop
 * turning between them, that Redis has not answered.
 */
async function reportsWhileSilent(redis: { url: string; silence: () => void }, calls: number) {
  const prefix = `faultline-test-silent-${randomUUID()}`;
  const errors: unknown[] = [];
  const silent = createRedisBreakers({ url: redis.url, prefix, onError: (e) => errors.push(e) });
  const other = createRedisBreakers({ url: REDIS_URL, prefix });
  // A threshold never reached: every call fails and each failure is one report.
  const inventory = silent.breakerFor('inventory', { failureThreshold: 1_000_000, cooldownMs: 30_000 });
  await Promise.all([silent.ready(), other.ready()]);
  redis.silence();
  for (let round = 0; round < calls / 1_000; round++) {
    for (let i = 0; i < 1_000; i++) {
      expect(inventory.admit(i)).toBe('allow');
      inventory.onFailure(i);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { prefix, errors, silent, other };
}

/** Reports go through again: a circuit tripped in `here` opens in `there`. */
async function tripIsShared(here: RedisBreakers, there: RedisBreakers) {
  const payments = here.breakerFor('payments', { failureThreshold: 3, cooldownMs: 30_000 });
  const paymentsThere = there.breakerFor('payments', { failureThreshold: 3, cooldownMs: 30_000 });
  await Promise.all([here.ready(), there.ready()]);
  for (let i = 0; i < 3; i++) payments.onFailure(1_000);
  await here.ready();
  await there.ready();
  expect(paymentsThere.snapshot()).toMatchObject({ state: 'open', trips: 1 });
}

describeRedis('shared circuit breakers while Redis, connected, stops answering', () => {
  const calls = 50_000;
  const cleanUp = async (fleet: { prefix: string; silent: RedisBreakers; other: RedisBreakers }, redis: { close: () => Promise<void> }) => {
    await fleet.silent.close();
    await fleet.other.close();
    await redis.close();
    for (const key of await admin.keys(`${fleet.prefix}:*`)) await admin.del(key);
  };

  it(`at most ${MAX_PENDING_REPORTS} reports await its answer, the rest are dropped and counted; once it answers, circuits are shared again`, async () => {
    const redis = await redisThatFallsSilent();
    const fleet = await reportsWhileSilent(redis, calls);
    try {
      // Redis gets what the forwarder held back: the reports that waited, and no more.
      redis.resume();
      await fleet.silent.ready();
      expect(Number(await admin.hget(`${fleet.prefix}:breaker:inventory`, 'failures'))).toBe(MAX_PENDING_REPORTS);
      expect(fleet.silent.droppedReports).toBe(calls - MAX_PENDING_REPORTS);
      expect(fleet.errors).toHaveLength(1);
      expect(fleet.errors[0]).toSatisfy((e: unknown) => FaultlineError.isInstance(e) && (e as Error).message === `${MAX_PENDING_REPORTS} reports to Redis at ${redis.url} are unanswered; more are dropped until it answers`);
      await tripIsShared(fleet.silent, fleet.other);
      expect(fleet.silent.droppedReports).toBe(calls - MAX_PENDING_REPORTS);
    } finally {
      await cleanUp(fleet, redis);
    }
  });

  it('a new connection ends the wait: the reports that waited are dropped too, and circuits are shared again', async () => {
    const redis = await redisThatFallsSilent();
    const fleet = await reportsWhileSilent(redis, calls);
    try {
      redis.cut();
      for (;;) {
        const states = await fleet.silent.sharedStates().catch(() => undefined);
        if (states !== undefined) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(fleet.silent.droppedReports).toBe(calls);
      expect(await admin.hget(`${fleet.prefix}:breaker:inventory`, 'failures')).toBe(null);
      await tripIsShared(fleet.silent, fleet.other);
      expect(fleet.silent.droppedReports).toBe(calls);
    } finally {
      await cleanUp(fleet, redis);
    }
  });
});
