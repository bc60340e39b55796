import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createVirtualClock } from '../core/clock.js';
import { describePostgres, useTestSchema } from '../store/postgres/test-server.test-helpers.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';

/** A search whose next answers take the given times, on the runtime's (virtual) clock. */
function search(adaptive: Parameters<typeof defineTool>[0]['adaptiveTimeout'], delays: number[]) {
  return defineTool({
    name: 'search',
    description: 'answers after a delay',
    input: { type: 'object', properties: { q: { type: 'string' } } },
    idempotent: true,
    timeoutMs: 5000,
    retry: { maxRetries: 0 },
    ...(adaptive !== undefined ? { adaptiveTimeout: adaptive } : {}),
    execute: async (_args: unknown, ctx) => {
      await ctx.clock.sleep(delays.shift() ?? 100, ctx.signal);
      return { ok: true };
    },
  });
}

describe('adaptive timeouts', () => {
  it('are off by default: the fixed timeout applies and attempts say nothing of it', async () => {
    const rt = createRuntime({ tools: [search(undefined, [])], clock: createVirtualClock() });
    const r = await rt.execute('search', {});
    expect(r.record.attempts[0]!.timeout).toBeUndefined();
    expect(rt.adaptiveTimeouts.current('search')).toBeUndefined();
  });

  it('keep the fixed timeout until enough successes, then use k x p99, and the record says which and why', async () => {
    const rt = createRuntime({ tools: [search({ minSamples: 5, k: 3, floorMs: 50 }, [100, 100, 120, 100, 100, 400])], clock: createVirtualClock() });
    const first = await rt.execute('search', {});
    expect(first.record.attempts[0]!.timeout).toMatchObject({ ms: 5000, basis: 'fixed', samples: 0 });
    for (let i = 0; i < 4; i++) await rt.execute('search', {});
    expect(rt.adaptiveTimeouts.current('search')).toEqual({ ms: 360, basis: 'adaptive', p99_ms: 120, samples: 5, reason: '3 x p99 120 ms of the last 5 successes = 360 ms' });
    // The sixth answer takes 400 ms: under the fixed 5 s it would pass; now it times out at 360.
    const slow = await rt.execute('search', {});
    expect(slow.record).toMatchObject({ status: 'timeout', failure_type: 'timeout', duration_ms: 360 });
    expect(slow.record.attempts[0]!.timeout).toMatchObject({ ms: 360, basis: 'adaptive' });
    expect(slow.record.error_message).toContain('360 ms');
  });

  it('clamp to the floor and the ceiling, and say so', async () => {
    const fast = createRuntime({ tools: [search({ minSamples: 2, floorMs: 200 }, [5, 5])], clock: createVirtualClock() });
    await fast.execute('search', {});
    await fast.execute('search', {});
    expect(fast.adaptiveTimeouts.current('search')).toMatchObject({ ms: 200, basis: 'floor', reason: '3 x p99 5 ms of the last 2 successes = 15 ms, raised to the 200 ms floor' });
    const slow = createRuntime({ tools: [search({ minSamples: 2, ceilingMs: 3000 }, [2000, 2000])], clock: createVirtualClock() });
    await slow.execute('search', {});
    await slow.execute('search', {});
    expect(slow.adaptiveTimeouts.current('search')).toMatchObject({ ms: 3000, basis: 'ceiling' });
  });

  it('refuses options that cannot work, at definition', () => {
    expect(() => createRuntime({ tools: [search({ floorMs: 9000 }, [])] })).toThrow(/adaptiveTimeout.floorMs/);
    expect(() => createRuntime({ tools: [search({ minSamples: 0 }, [])] })).toThrow(/adaptiveTimeout.minSamples/);
  });

  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('survive a restart: a new runtime on the same SQLite file starts from the stored successes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'faultline-timeout-'));
    dirs.push(dir);
    await checkRestart(`sqlite:${join(dir, 'f.db')}`);
  });
});

/** Runs 30 successes, closes, and opens a second runtime on the same store. */
async function checkRestart(store: string): Promise<void> {
  const delays = Array.from({ length: 30 }, (_, i) => 80 + (i % 10) * 10); // 80..170 ms
  const first = createRuntime({ tools: [search({ minSamples: 20 }, delays)], store, clock: createVirtualClock() });
  for (let i = 0; i < 30; i++) await first.execute('search', { q: String(i) });
  // The p99 is taken again every 10 successes (a twentieth of the 200-success window).
  const before = first.adaptiveTimeouts.current('search');
  expect(before).toMatchObject({ basis: 'adaptive', samples: 30, p99_ms: 170, ms: 510 });
  await first.close();

  const second = createRuntime({ tools: [search({ minSamples: 20 }, [])], store, clock: createVirtualClock() });
  expect(second.adaptiveTimeouts.current('search')?.basis).toBe('fixed');
  await second.adaptiveTimeouts.loaded;
  expect(second.adaptiveTimeouts.current('search')).toEqual(before);
  const r = await second.execute('search', {});
  expect(r.record.attempts[0]!.timeout).toMatchObject({ ms: 510, basis: 'adaptive', samples: 30 });
  await second.close();
}

const describePg = await describePostgres('adaptive timeouts on PostgreSQL');
describePg('adaptive timeouts on PostgreSQL', () => {
  const { url } = useTestSchema('adaptive');
  it('survive a restart: a new runtime on the same schema starts from the stored successes', async () => {
    await checkRestart(url);
  });
});
