import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { failureSignature } from '../core/failure-signature.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { CorrectionMemoryStore, NewCorrection, Store } from '../core/store-types.js';
import { createVirtualClock } from '../core/clock.js';
import { MAX_QUEUED_CORRECTIONS, RuntimeCorrectionMemory } from './correction-memory.js';
import { defineTool, type ToolSpec } from './define-tool.js';
import { createRuntime, type RuntimeOptions } from './runtime.js';
import { AuthError, HttpError } from './tool-errors.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-corrections-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const UNITS = ['celsius', 'fahrenheit'];

/** Rejects units it does not know (quoting them, so the failure signature is the same for every bad unit). */
const weather: ToolSpec<any, unknown> = {
  name: 'get_weather',
  description: 'weather by city',
  input: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] },
  idempotent: true,
  retry: { maxRetries: 0 },
  execute: (args: { city: string; unit?: string }) => {
    if (args.unit !== undefined && !UNITS.includes(args.unit)) throw new HttpError(400, `unit ${JSON.stringify(args.unit)} is not supported`);
    return { city: args.city, temp: 18 };
  },
};

function setup(tools: ToolSpec<any, unknown>[], extra: Partial<RuntimeOptions> = {}) {
  const clock = createVirtualClock();
  const records: ToolExecutionRecord[] = [];
  const rt = createRuntime({ tools: tools.map((t) => defineTool(t)), clock, seed: 7, onRecord: (r) => records.push(r), ...extra });
  return { clock, records, rt };
}

describe('correction memory in the runtime', () => {
  it('learns a fixed-arguments recovery in a trace and surfaces it on the next failure with the same signature', async () => {
    const { rt } = setup([weather]);
    const s = rt.session({ traceId: 'T1' });
    const failed = await s.execute('get_weather', { city: 'Paris', unit: 'kelvin' });
    expect(failed.ok).toBe(false);
    // Nothing learned yet: the first failure carries no last recovery.
    expect(failed.record.feedback?.last_recovery).toBeUndefined();
    expect((await s.execute('get_weather', { city: 'Paris', unit: 'celsius' })).ok).toBe(true);

    const signature = failureSignature(failed.record)!.signature;
    expect(rt.corrections!.list()).toEqual([
      {
        signature,
        tool_name: 'get_weather',
        failure_category: failed.record.failure_category,
        failure_type: failed.record.failure_type,
        error_code: 'HTTP_400',
        recovery: { action: 'retry_with_fixed_params', params_delta: { unit: 'celsius' } },
        trace_id: 'T1',
        recovered_at: '2026-01-01T00:00:00.000Z',
        uses: 1,
      },
    ]);

    // Another trace, another bad unit: the same signature.
    const again = await rt.execute('get_weather', { city: 'Rome', unit: 'rankine' }, { traceId: 'T2' });
    expect(again.ok).toBe(false);
    if (again.ok) return;
    expect(failureSignature(again.record)!.signature).toBe(signature);
    const last = { action: 'retry_with_fixed_params', params_delta: { unit: 'celsius' }, recovered_at: '2026-01-01T00:00:00.000Z', uses: 1 };
    expect(again.record.feedback?.last_recovery).toEqual(last);
    expect(again.feedback.lastRecovery).toEqual(last);
    expect(again.feedback.hint).toContain('The last time this failure happened, setting unit to "celsius" fixed it');
    expect(again.record.feedback?.hint).toBe(again.feedback.hint);
    // Other failures of the tool are other signatures.
    const other = await rt.execute('get_weather', { unit: 'celsius' });
    expect(other.ok).toBe(false);
    expect(other.record.feedback?.last_recovery).toBeUndefined();
    await rt.close();
  });

  it('learns a wait before the same call, and a plain repeat, from the gap between the calls', async () => {
    let limited = true;
    const { rt, clock } = setup([
      {
        name: 'send_sms',
        description: 'sms',
        input: { type: 'object', properties: { to: { type: 'string' } } },
        idempotent: true,
        retry: { maxRetries: 0 },
        execute: () => {
          if (limited) throw new HttpError(429, 'too many requests', { 'retry-after': '2' });
          return 'sent';
        },
      },
    ]);
    const s = rt.session({ traceId: 'wait' });
    const failed = await s.execute('send_sms', { to: '+100' });
    expect(failed.record.feedback?.retry_after_ms).toBe(2000);
    await clock.advance(2500);
    limited = false;
    expect((await s.execute('send_sms', { to: '+100' })).ok).toBe(true);
    expect(rt.corrections!.list()[0]?.recovery).toEqual({ action: 'wait_and_retry', wait_ms: 2500 });

    // A repeat sooner than the Retry-After is a plain retry, a different recovery.
    limited = true;
    const s2 = rt.session({ traceId: 'quick' });
    await s2.execute('send_sms', { to: '+100' });
    await clock.advance(100);
    limited = false;
    expect((await s2.execute('send_sms', { to: '+100' })).ok).toBe(true);
    expect(rt.corrections!.list().map((e) => e.recovery.action)).toEqual(['retry', 'wait_and_retry']);
    // LIFO: the most recent recovery is what the next failure shows.
    limited = true;
    const third = await rt.execute('send_sms', { to: '+200' });
    expect(third.record.feedback?.last_recovery?.action).toBe('retry');
    expect(third.record.feedback?.hint).toContain('calling again unchanged fixed it');
    await rt.close();
  });

  it('learns a switch to another tool for the same intent (an unknown tool name, then the right one)', async () => {
    const { rt } = setup([weather]);
    const s = rt.session({ traceId: 'typo', intent: 'weather in Paris' });
    expect((await s.execute('get_wether', { city: 'Paris' })).ok).toBe(false);
    expect((await s.execute('get_weather', { city: 'Paris' })).ok).toBe(true);
    expect(rt.corrections!.list()[0]).toMatchObject({ tool_name: 'get_wether', failure_type: 'unknown_tool', recovery: { action: 'switch_tool', tool: 'get_weather' } });
    const again = await rt.execute('get_wether', { city: 'Oslo' });
    if (again.ok) throw new Error('expected a failure');
    expect(again.feedback.lastRecovery).toMatchObject({ action: 'switch_tool', tool: 'get_weather' });
    expect(again.feedback.hint).toContain('calling get_weather instead fixed it');

    // A different tool for a different intent, not right after the failure, or without an intent, recovers nothing.
    const { rt: rt2 } = setup([weather, { name: 'noop', description: 'n', input: { type: 'object' }, execute: () => 'ok' }]);
    await rt2.execute('get_wether', {}, { traceId: 'x', stepIndex: 0, intent: 'weather' });
    await rt2.execute('noop', {}, { traceId: 'x', stepIndex: 1, intent: 'something else' });
    await rt2.execute('get_wether', {}, { traceId: 'y', stepIndex: 0, intent: 'weather' });
    await rt2.execute('noop', {}, { traceId: 'y', stepIndex: 5, intent: 'weather' });
    await rt2.execute('get_wether', {}, { traceId: 'z', stepIndex: 0 });
    await rt2.execute('noop', {}, { traceId: 'z', stepIndex: 1 });
    expect(rt2.corrections!.list()).toEqual([]);
    await rt.close();
    await rt2.close();
  });

  it("learns the runtime's own recoveries: a fallback tool and a credential refresh", async () => {
    let token = 'old';
    const { rt } = setup(
      [
        { name: 'primary', description: 'p', input: { type: 'object' }, idempotent: true, retry: { maxRetries: 0 }, fallback: 'backup', execute: () => Promise.reject(new HttpError(429, 'slow down')) },
        { name: 'backup', description: 'b', input: { type: 'object' }, idempotent: true, execute: () => 'from backup' },
        {
          name: 'api',
          description: 'a',
          input: { type: 'object' },
          execute: () => {
            if (token !== 'new') throw new AuthError('credential_expired', 'token expired');
            return 'data';
          },
        },
      ],
      {
        refreshCredential: () => {
          if (token === 'old') token = 'new';
          return token === 'new';
        },
      },
    );
    const viaBackup = await rt.execute('primary', {});
    expect(viaBackup.ok).toBe(true);
    expect((await rt.execute('api', {})).ok).toBe(true);
    expect(rt.corrections!.list().map((e) => [e.tool_name, e.recovery])).toEqual([
      ['api', { action: 'refresh_credential' }],
      ['primary', { action: 'switch_tool', tool: 'backup', note: 'runtime fallback (rate limit exhausted)' }],
    ]);
    // When the refresh stops working, the failure says what worked before.
    token = 'revoked';
    const failed = await rt.execute('api', {});
    expect(failed.ok).toBe(false);
    expect(failed.record.feedback?.last_recovery).toMatchObject({ action: 'refresh_credential', uses: 1 });
    await rt.close();
  });

  it('bounds the memory: the oldest entries go beyond the per-signature cap and the capacity', async () => {
    const { rt } = setup([weather], { correctionMemory: { capacity: 2, perSignature: 1 } });
    const recover = async (trace: string, bad: [string, Record<string, unknown>], good: [string, Record<string, unknown>]) => {
      const s = rt.session({ traceId: trace, intent: 'weather in Paris' });
      expect((await s.execute(...bad)).ok).toBe(false);
      expect((await s.execute(...good)).ok).toBe(true);
    };
    await recover('a', ['get_weather', { city: 'Paris', unit: 'kelvin' }], ['get_weather', { city: 'Paris', unit: 'celsius' }]);
    await recover('b', ['get_weather', { city: 'Paris', unit: 'rankine' }], ['get_weather', { city: 'Paris', unit: 'fahrenheit' }]);
    // perSignature 1: the newer fix replaced the older one for the same signature.
    expect(rt.corrections!.list().map((e) => e.recovery.params_delta)).toEqual([{ unit: 'fahrenheit' }]);
    await recover('c', ['get_weather', { unit: 'celsius' }], ['get_weather', { city: 'Paris', unit: 'celsius' }]);
    await recover('d', ['get_wether', { city: 'Paris' }], ['get_weather', { city: 'Paris' }]);
    // Three signatures so far, capacity 2: the oldest is gone.
    const kept = rt.corrections!.list();
    expect(kept).toHaveLength(2);
    expect(kept.map((e) => e.trace_id)).toEqual(['d', 'c']);
    await rt.close();
  });

  it('keeps calls working when the store fails, reporting through recording.onError', async () => {
    const errors: unknown[] = [];
    const memory = createMemoryStore();
    const broken = new Proxy(memory, {
      get(target, key) {
        if (key === 'listCorrections') return () => Promise.reject(new Error('store down (list)'));
        if (key === 'pushCorrection' || key === 'pushCorrections') {
          return () => {
            throw new Error('store down (push)');
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    }) as Store;
    const { rt } = setup([weather], { store: broken, recording: { onError: (e) => errors.push(e) } });
    const s = rt.session({ traceId: 'T' });
    expect((await s.execute('get_weather', { city: 'Paris', unit: 'kelvin' })).ok).toBe(false);
    expect((await s.execute('get_weather', { city: 'Paris', unit: 'celsius' })).ok).toBe(true);
    // The cache still learned; the next failure shows it.
    const again = await rt.execute('get_weather', { city: 'Paris', unit: 'kelvin' });
    expect(again.record.feedback?.last_recovery?.action).toBe('retry_with_fixed_params');
    await rt.flush();
    expect(errors.map((e) => (e as Error).message)).toEqual(['store down (list)', 'store down (push)']);
    expect(await memory.count()).toBe(3);
    await rt.close();
  });

  it('persists corrections in a SQLite file and loads them when a runtime restarts', async () => {
    const path = join(dir, 'restart.db');
    const first = setup([weather], { store: `sqlite:${path}` });
    const s = first.rt.session({ traceId: 'before-restart' });
    await s.execute('get_weather', { city: 'Paris', unit: 'kelvin' });
    await s.execute('get_weather', { city: 'Paris', unit: 'celsius' });
    await first.rt.close();

    const store = createSqliteStore({ path, readonly: true });
    expect((await store.listCorrections()).map((e) => [e.trace_id, e.recovery])).toEqual([
      ['before-restart', { action: 'retry_with_fixed_params', params_delta: { unit: 'celsius' } }],
    ]);
    await store.close();

    const second = setup([weather], { store: `sqlite:${path}` });
    await second.rt.corrections!.loaded;
    const failed = await second.rt.execute('get_weather', { city: 'Lyon', unit: 'kelvin' });
    expect(failed.record.feedback?.last_recovery).toMatchObject({ action: 'retry_with_fixed_params', params_delta: { unit: 'celsius' } });
    await second.rt.close();
  });

  it('never learns calling a write again as the fix for a failure that may have taken effect, and offers none stored', async () => {
    // A non-idempotent write whose first call for each order number fails in a way that may have
    // acted: a hang (timeout), a 500, a 502 or a reset; later calls succeed.
    const seen = new Set<number>();
    const placeOrder: ToolSpec<any, unknown> = {
      name: 'place_order',
      description: 'places an order',
      input: { type: 'object', properties: { order: { type: 'integer' }, units: { type: 'integer' } }, required: ['order'] },
      idempotent: false,
      timeoutMs: 1000,
      retry: { maxRetries: 0 },
      execute: (args: { order: number }) => {
        if (seen.has(args.order)) return { placed: args.order };
        seen.add(args.order);
        switch (args.order % 4) {
          case 0:
            return new Promise(() => undefined);
          case 1:
            throw new HttpError(500, 'internal error');
          case 2:
            throw new HttpError(502, 'bad gateway');
          default:
            throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        }
      },
    };
    const getOrder: ToolSpec<any, unknown> = { name: 'get_order', description: 'reads orders', input: { type: 'object' }, idempotent: true, execute: () => [] };
    const store = createMemoryStore();
    const { rt, clock } = setup([placeOrder, getOrder], { store, recording: { spool: false } });
    for (let order = 0; order < 4; order++) {
      // The next call changes the arguments: the lesson would be "setting units to 2 fixed it".
      const s = rt.session({ traceId: `changed-${order}`, intent: 'order' });
      const failed = await s.execute('place_order', { order, units: 1 });
      expect(failed.record.feedback?.action).toBe('verify_state');
      expect((await s.execute('place_order', { order, units: 2 })).ok).toBe(true);
      // The next call repeats the write at once, or after a wait: "calling again" / "waiting and calling again".
      const repeated = rt.session({ traceId: `repeated-${order}`, intent: 'order' });
      expect((await repeated.execute('place_order', { order: order + 4 })).record.feedback?.action).toBe('verify_state');
      expect((await repeated.execute('place_order', { order: order + 4 })).ok).toBe(true);
      const waited = rt.session({ traceId: `waited-${order}`, intent: 'order' });
      expect((await waited.execute('place_order', { order: order + 8 })).record.feedback?.action).toBe('verify_state');
      await clock.advance(5_000);
      expect((await waited.execute('place_order', { order: order + 8 })).ok).toBe(true);
    }
    expect(rt.corrections!.list()).toEqual([]);

    // Reading the state right after the failure, for the same intent, is what an agent should do: that is learned.
    const s = rt.session({ traceId: 't-verify', intent: 'order' });
    const failed = await s.execute('place_order', { order: 12 });
    expect((await s.execute('get_order', {})).ok).toBe(true);
    const signature = failureSignature(failed.record)!.signature;
    expect(rt.corrections!.list().map((e) => [e.signature, e.recovery])).toEqual([[signature, { action: 'switch_tool', tool: 'get_order' }]]);

    // A repeat stored for the same signature (by an older runtime, or learned from trajectories) is
    // newer, but it is not offered after an ambiguous write: the read is.
    await rt.flush();
    await store.pushCorrection({ ...rt.corrections!.list()[0]!, recovery: { action: 'retry_with_fixed_params', params_delta: { units: 2 } }, trace_id: 'older' });
    seen.delete(12);
    const { rt: restarted } = setup([placeOrder, getOrder], { store, recording: { spool: false } });
    await restarted.corrections!.loaded;
    expect(restarted.corrections!.latest(signature)?.recovery.action).toBe('retry_with_fixed_params');
    const again = await restarted.execute('place_order', { order: 12 });
    if (again.ok) throw new Error('expected a timeout');
    expect(again.feedback.action).toBe('verify_state');
    expect(again.feedback.lastRecovery).toMatchObject({ action: 'switch_tool', tool: 'get_order' });
    expect(again.feedback.hint).not.toContain('setting units');
    expect(again.feedback.hint).toContain('calling get_order instead fixed it');
    await rt.close();
    await restarted.close();
  });

  it('still learns a repeat as the fix for the same failures of an idempotent tool', async () => {
    const lookup: ToolSpec<any, unknown> = {
      name: 'lookup_order',
      description: 'reads an order',
      input: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      idempotent: true,
      timeoutMs: 1000,
      retry: { maxRetries: 0 },
      execute: (args: { id: number }) => (args.id === 1 ? new Promise(() => undefined) : { id: args.id }),
    };
    const { rt } = setup([lookup]);
    const s = rt.session({ traceId: 'T' });
    expect((await s.execute('lookup_order', { id: 1 })).ok).toBe(false);
    expect((await s.execute('lookup_order', { id: 2 })).ok).toBe(true);
    expect(rt.corrections!.list().map((e) => e.recovery)).toEqual([{ action: 'retry_with_fixed_params', params_delta: { id: 2 } }]);
    await rt.close();
  });

  it('can be turned off', async () => {
    const { rt } = setup([weather], { correctionMemory: false });
    expect(rt.corrections).toBeUndefined();
    const s = rt.session({ traceId: 'T' });
    await s.execute('get_weather', { city: 'Paris', unit: 'kelvin' });
    await s.execute('get_weather', { city: 'Paris', unit: 'celsius' });
    const again = await rt.execute('get_weather', { city: 'Paris', unit: 'kelvin' });
    expect(again.record.feedback?.last_recovery).toBeUndefined();
    expect(() => setup([weather], { correctionMemory: { capacity: 0 } })).toThrow(/capacity must be a positive integer/);
    await rt.close();
  });
});

describe('correction memory writes', () => {
  const correction = (i: number): NewCorrection => ({
    signature: `sig-${i}`,
    tool_name: `tool_${i % 3}`,
    failure_category: 'parameter',
    failure_type: 'enum_mismatch',
    error_code: 'INVALID_ARGUMENTS',
    recovery: { action: 'retry_with_fixed_params', params_delta: { unit: `u${i % 2}` } },
    trace_id: `trace-${i}`,
    recovered_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  });

  /** Lets the writer start: what is pushed after this waits for the write in flight. */
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  /** A memory store whose batch writes are counted and wait for `release` (a busy store). */
  function gatedStore(fail = false) {
    const memory = createMemoryStore();
    const batches: number[][] = [];
    let open: () => void = () => undefined;
    let gate = new Promise<void>((resolve) => (open = resolve));
    const store: CorrectionMemoryStore = {
      pushCorrection: () => Promise.reject(new Error('the runtime writes batches')),
      pushCorrections: async (cs, limits) => {
        batches.push(cs.map((c) => Number(c.signature.slice(4))));
        await gate;
        if (fail) throw new Error(`store down (${cs.length})`);
        await memory.pushCorrections(cs, limits);
      },
      latestCorrection: (s) => memory.latestCorrection(s),
      listCorrections: (q) => memory.listCorrections(q),
    };
    const release = () => {
      open();
      gate = Promise.resolve();
    };
    return { memory, store, batches, release };
  }

  it('stores what queued during a write in one store call, with the result of pushing one by one', async () => {
    const { memory, store, batches, release } = gatedStore();
    const errors: unknown[] = [];
    const m = new RuntimeCorrectionMemory({ capacity: 8, perSignature: 2 }, store, (e) => errors.push(e));
    await m.loaded;
    const pushed = [0, 1, 2, 3, 1, 4, 5, 6, 7, 8, 9].map(correction);
    pushed.push({ ...correction(1), trace_id: 'again' }, correction(2));
    m.push(pushed[0]!);
    await turn();
    for (const c of pushed.slice(1)) m.push(c);
    release();
    await m.flush();
    expect(batches).toEqual([[0], [1, 2, 3, 1, 4, 5, 6, 7, 8, 9, 1, 2]]);
    expect(errors).toEqual([]);
    const oneByOne = createMemoryStore();
    for (const c of pushed) await oneByOne.pushCorrection(c, { capacity: 8, perSignature: 2 });
    expect(await memory.listCorrections({ limit: Infinity })).toEqual(await oneByOne.listCorrections({ limit: Infinity }));
    expect(await memory.listCorrections({ limit: Infinity })).toEqual(m.list({ limit: Infinity }));
  });

  it('reports a failed write once per batch and does not retry it', async () => {
    const { store, batches, release } = gatedStore(true);
    const errors: Error[] = [];
    const m = new RuntimeCorrectionMemory({}, store, (e) => errors.push(e as Error));
    m.push(correction(0));
    await turn();
    for (let i = 1; i < 5; i++) m.push(correction(i));
    release();
    await m.flush();
    await turn();
    expect(batches).toEqual([[0], [1, 2, 3, 4]]);
    expect(errors.map((e) => e.message)).toEqual(['store down (1)', 'store down (4)']);
    // The cache kept everything.
    expect(m.list({ limit: Infinity })).toHaveLength(5);
  });

  it(`keeps at most ${MAX_QUEUED_CORRECTIONS} corrections waiting for a busy store, dropping the oldest with one report`, async () => {
    const { memory, store, batches, release } = gatedStore();
    const errors: Error[] = [];
    const m = new RuntimeCorrectionMemory({ capacity: 3 }, store, (e) => errors.push(e as Error));
    const total = MAX_QUEUED_CORRECTIONS + 6;
    m.push(correction(0));
    await turn();
    for (let i = 1; i < total; i++) m.push(correction(i));
    release();
    await m.flush();
    // One in flight, then the newest MAX_QUEUED_CORRECTIONS: five dropped.
    expect(batches.map((b) => [b[0], b.length])).toEqual([
      [0, 1],
      [6, MAX_QUEUED_CORRECTIONS],
    ]);
    expect(errors.map((e) => e.message)).toEqual([`correction memory: 5 corrections not stored, more than ${MAX_QUEUED_CORRECTIONS} were waiting for the store`]);
    expect((await memory.listCorrections()).map((e) => e.signature)).toEqual([total - 1, total - 2, total - 3].map((i) => `sig-${i}`));
  });
});
