import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createVirtualClock, type VirtualClock } from '../core/clock.js';
import { defineTool } from './define-tool.js';
import { createRedisBreakers, type RedisBreakers } from './redis-breakers.js';
import { REDIS_URL, redisForTests } from './redis.test-helpers.js';
import { createRuntime, type Runtime } from './runtime.js';
import { HttpError } from './tool-errors.js';

interface Upstream {
  failing: boolean;
  calls: Array<unknown>;
  health: number;
}

function inventory(upstream: Upstream, options: { idempotent?: boolean; health?: boolean } = {}) {
  return defineTool({
    name: 'inventory',
    description: 'stock levels',
    input: { type: 'object', properties: { sku: { type: 'string' } } },
    idempotent: options.idempotent ?? true,
    retry: { maxRetries: 0 },
    breaker: { failureThreshold: 2, cooldownMs: 1000 },
    ...(options.health === true
      ? {
          healthCheck: () => {
            upstream.health++;
            if (upstream.failing) throw new HttpError(503, 'still down');
            return { ok: true };
          },
        }
      : {}),
    execute: (args: unknown) => {
      upstream.calls.push(args);
      if (upstream.failing) throw new HttpError(503, 'inventory service down');
      return { stock: 3 };
    },
  });
}

async function tripped(rt: Runtime): Promise<void> {
  await rt.execute('inventory', { sku: 'A' });
  await rt.execute('inventory', { sku: 'A' });
  expect(rt.breakers.state('inventory')?.state).toBe('open');
}

/** Lets the probe's promise chain run after a timer fired. */
const drain = () => new Promise((resolve) => setImmediate(resolve));

describe('breaker background probes', () => {
  it('are off by default: the circuit stays open until an agent call probes it', async () => {
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream: Upstream = { failing: true, calls: [], health: 0 };
    const rt = createRuntime({ tools: [inventory(upstream)], clock });
    await tripped(rt);
    upstream.failing = false;
    await clock.advance(5000);
    await drain();
    expect(rt.breakers.state('inventory')?.state).toBe('open');
    expect(upstream.calls).toHaveLength(2);
  });

  it('probe an idempotent tool with the call that opened the circuit at each cooldown, and close it on success', async () => {
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream: Upstream = { failing: true, calls: [], health: 0 };
    const rt = createRuntime({ tools: [inventory(upstream)], clock, breakerProbes: true });
    await tripped(rt);
    await clock.advance(999);
    await drain();
    expect(upstream.calls).toHaveLength(2);
    // First probe at the cooldown: still failing, so the circuit reopens.
    await clock.advance(1);
    await drain();
    expect(upstream.calls).toHaveLength(3);
    expect(rt.breakers.state('inventory')?.state).toBe('open');
    upstream.failing = false;
    await clock.advance(1000);
    await drain();
    expect(upstream.calls).toEqual([{ sku: 'A' }, { sku: 'A' }, { sku: 'A' }, { sku: 'A' }]);
    expect(rt.breakers.state('inventory')?.state).toBe('closed');
    // An agent's next call runs at once, and nothing probes any more.
    expect((await rt.execute('inventory', { sku: 'B' })).ok).toBe(true);
    await clock.advance(10_000);
    await drain();
    expect(upstream.calls).toHaveLength(5);
    await rt.close();
  });

  it('use the declared health call, also for a non-idempotent tool; without one such a tool is never probed', async () => {
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream: Upstream = { failing: true, calls: [], health: 0 };
    const rt = createRuntime({ tools: [inventory(upstream, { idempotent: false, health: true })], clock, breakerProbes: true });
    await tripped(rt);
    upstream.failing = false;
    await clock.advance(1000);
    await drain();
    expect(upstream.health).toBe(1);
    expect(upstream.calls).toHaveLength(2);
    expect(rt.breakers.state('inventory')?.state).toBe('closed');

    const clock2 = createVirtualClock({ autoAdvance: false });
    const upstream2: Upstream = { failing: true, calls: [], health: 0 };
    const rt2 = createRuntime({ tools: [inventory(upstream2, { idempotent: false })], clock: clock2, breakerProbes: true });
    await tripped(rt2);
    upstream2.failing = false;
    await clock2.advance(5000);
    await drain();
    expect(upstream2.calls).toHaveLength(2);
    expect(rt2.breakers.state('inventory')?.state).toBe('open');
  });

  it('stop when the runtime closes', async () => {
    const clock = createVirtualClock({ autoAdvance: false });
    const upstream: Upstream = { failing: true, calls: [], health: 0 };
    const rt = createRuntime({ tools: [inventory(upstream)], clock, breakerProbes: true });
    await tripped(rt);
    await rt.close();
    await clock.advance(5000);
    await drain();
    expect(upstream.calls).toHaveLength(2);
  });
});

const redis = await redisForTests();
(redis ? describe : describe.skip)('breaker background probes with Redis-shared breakers', () => {
  const open: Array<{ rt: Runtime; breakers: RedisBreakers }> = [];
  afterEach(async () => {
    for (const { rt, breakers } of open.splice(0)) {
      await rt.close();
      await breakers.close();
    }
  });

  function member(prefix: string, clock: VirtualClock, upstream: Upstream) {
    const breakers = createRedisBreakers({ url: REDIS_URL, prefix });
    const rt = createRuntime({ tools: [inventory(upstream)], clock, breakers, breakerProbes: true });
    open.push({ rt, breakers });
    return { rt, breakers };
  }
  const settle = async (...members: Array<{ breakers: RedisBreakers }>) => {
    await new Promise((resolve) => setTimeout(resolve, 30));
    for (const m of members) await m.breakers.ready();
    await new Promise((resolve) => setTimeout(resolve, 30));
  };

  it('send one probe across the fleet per cooldown, and its success closes the circuit everywhere', async () => {
    const prefix = `faultline-probe-${randomUUID()}`;
    const upstream: Upstream = { failing: true, calls: [], health: 0 };
    const clocks = [createVirtualClock({ autoAdvance: false }), createVirtualClock({ autoAdvance: false }), createVirtualClock({ autoAdvance: false })];
    const fleet = clocks.map((clock) => member(prefix, clock, upstream));
    await settle(...fleet);
    // One process sees the failures; the circuit opens for all of them.
    await tripped(fleet[0]!.rt);
    await settle(...fleet);
    for (const m of fleet) expect(m.rt.breakers.state('inventory')?.state).toBe('open');
    // The others learn it when their calls are refused: all three now wait to probe.
    for (const m of fleet.slice(1)) expect((await m.rt.execute('inventory', { sku: 'A' })).record.failure_type).toBe('circuit_open');
    upstream.failing = false;
    const before = upstream.calls.length;
    await Promise.all(clocks.map((c) => c.advance(1000)));
    await settle(...fleet);
    expect(upstream.calls.length - before).toBe(1);
    for (const m of fleet) expect(m.rt.breakers.state('inventory')?.state).toBe('closed');
  });
});
