/**
 * One policy for every listener of the user's (core/notify.ts): what it throws goes to the
 * caller's onError (else a process warning), what onError throws is dropped, and neither breaks
 * the call that reported it. One block per family of call sites.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { Store } from './core/store-types.js';
import { createFaultPlan } from './faults/plan.js';
import { startAdminServer } from './faults/mcp-proxy/admin-server.js';
import { startHttpFaultProxy } from './faults/http-proxy/http-proxy.js';
import { runToolCalls } from './integrations/tool-calls.js';
import { withModelRetry } from './llm/model-retry.js';
import { startDashboard } from './monitor/dashboard/dashboard.test-helpers.js';
import { makeRecord } from './record/fixture.js';
import { createRecorder } from './record/recorder.js';
import { defineTool } from './runtime/define-tool.js';
import { createRedisBreakers } from './runtime/redis-breakers.js';
import { createRuntime } from './runtime/runtime.js';
import { HttpError } from './runtime/tool-errors.js';
import { createMemoryStore } from './store/memory/memory-store.js';
import { retentionFor } from './store/retention.js';
import { importFile } from './trajectory/import-file.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-listener-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const boom = () => {
  throw new Error('the listener broke');
};
const fails = (): never => {
  throw new Error('the error handler broke too');
};
/** The process warnings emitted while `work` runs. */
async function warningsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => void seen.push(String(warning)));
  await work();
  return seen;
}
/** A store whose every write fails, as a store that is down. */
function downStore(): Store {
  const store = createMemoryStore();
  store.insert = () => Promise.reject(new Error('the store is down'));
  return store;
}

const echo = defineTool({ name: 'echo', description: 'echo', input: { type: 'object' }, idempotent: true, execute: (args: unknown) => args });
const conflict = defineTool({
  name: 'reserve',
  description: 'always a conflict',
  input: { type: 'object' },
  idempotent: true,
  execute: () => {
    throw new HttpError(409, 'taken');
  },
});

describe('the runtime: onRecord, fault plans, onListenerError, recording.onError', () => {
  it('answers the call when onRecord throws, telling onListenerError', async () => {
    const told: string[] = [];
    const rt = createRuntime({ tools: [echo], onRecord: boom, onListenerError: (error, where) => told.push(`${where}: ${(error as Error).message}`) });
    expect(await rt.execute('echo', { a: 1 })).toMatchObject({ ok: true, output: { a: 1 } });
    expect(told).toEqual(['onRecord: the listener broke']);
    await rt.close();
  });

  it('answers the call when onRecord, the fault plan and onListenerError all throw', async () => {
    const faults = { plan: boom };
    const rt = createRuntime({ tools: [echo], onRecord: boom, faults, onListenerError: fails });
    expect(await rt.execute('echo', { a: 1 })).toMatchObject({ ok: true });
    await rt.close();
  });

  it('without onListenerError, a throwing onRecord is a process warning, not silence', async () => {
    const rt = createRuntime({ tools: [echo], onRecord: boom });
    const warnings = await warningsDuring(() => rt.execute('echo', {}));
    expect(warnings).toEqual(['faultline: onRecord threw: the listener broke']);
    await rt.close();
  });

  it('goes on recording into a store that is down when recording.onError throws', async () => {
    const seen: unknown[] = [];
    const rt = createRuntime({
      tools: [echo, conflict],
      store: downStore(),
      recording: { spool: false, onError: (error) => (seen.push(error), fails()) },
    });
    for (let i = 0; i < 3; i++) expect(await rt.execute(i === 1 ? 'reserve' : 'echo', { i })).toMatchObject({ ok: i !== 1 });
    await rt.flush();
    expect(seen.length).toBeGreaterThan(0);
    expect(rt.stats()!.offered).toBe(3);
    await rt.close();
  });
});

describe('the recorder: onError', () => {
  it('keeps accepting records when onError throws on every store failure', async () => {
    let told = 0;
    const recorder = createRecorder({ store: downStore(), spool: false, onError: () => (told++, fails()) });
    for (let i = 0; i < 5; i++) expect(() => recorder.enqueue(makeRecord({ step_index: i }))).not.toThrow();
    await recorder.flush();
    expect(told).toBeGreaterThan(0);
    expect(recorder.recording().offered).toBe(5);
    await recorder.close();
  });
});

describe('retention: onError', () => {
  it('drops what onError throws after a failed prune instead of rejecting unhandled', async () => {
    const store = createMemoryStore();
    store.prune = () => Promise.reject(new Error('prune failed'));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    let told = 0;
    const retention = retentionFor('1d', store, { onError: () => (told++, fails()), now: () => Date.now() })!;
    await vi.waitFor(() => expect(told).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.off('unhandledRejection', onUnhandled);
    await retention.stop();
    expect(unhandled).toEqual([]);
  });
});

describe('the HTTP proxy: onRecord and a custom recorder', () => {
  it('answers the request and tells recording.onError what onRecord threw', async () => {
    const upstream = createServer((_req, res) => res.end('{"ok":true}'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const told: string[] = [];
    const proxy = await startHttpFaultProxy({
      target: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      plan: createFaultPlan({ version: 1, rules: [] }),
      port: 0,
      adminToken: 'listener-errors-token',
      onRecord: boom,
      recorder: { enqueue: () => Promise.reject(new Error('the sink rejected')) },
      recording: { onError: (error) => (told.push((error as Error).message), fails()) },
    });
    try {
      const res = await fetch(`${proxy.url}/anything`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('{"ok":true}');
      await vi.waitFor(() => expect(told.sort()).toEqual(['the listener broke', 'the sink rejected']));
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    }
  });
});

describe('the admin API: onUpdate', () => {
  it('answers 200 with the new plan when onUpdate throws, and warns', async () => {
    const plan = createFaultPlan({ version: 1, rules: [] });
    const admin = await startAdminServer({ plan, token: 'listener-errors-token', onUpdate: boom });
    try {
      let status = 0;
      const warnings = await warningsDuring(async () => {
        const res = await fetch(`${admin.url}/plan`, {
          method: 'PUT',
          headers: { authorization: 'Bearer listener-errors-token', 'content-type': 'application/yaml' },
          body: 'version: 1\nrules:\n  - id: outage\n    tool: create_*\n    fault: http_status\n    params: { status: 503 }\n',
        });
        status = res.status;
        await res.text();
      });
      expect(status).toBe(200);
      expect(plan.spec.rules).toHaveLength(1);
      expect(warnings).toEqual(['faultline: onUpdate threw: the listener broke']);
    } finally {
      await admin.close();
    }
  });
});

describe('the dashboard: onError', () => {
  it('still answers 503 when onError throws', async () => {
    const store = createMemoryStore();
    store.toolStats = () => Promise.reject(new Error('the store is down'));
    let told = 0;
    const dashboard = await startDashboard({ store, onError: () => (told++, fails()) });
    try {
      const res = await fetch(`${dashboard.url}/api/stats`);
      expect(res.status).toBe(503);
      expect(told).toBe(1);
    } finally {
      await dashboard.close();
    }
  });
});

describe('SDK adapters: onResult', () => {
  it("returns every call's result when onResult throws, and warns", async () => {
    const rt = createRuntime({ tools: [echo] });
    let results: unknown[] = [];
    const calls = [
      { id: 'c1', name: 'echo', input: { value: { n: 1 } } },
      { id: 'c2', name: 'echo', input: { json: '{"n":2}' } },
    ];
    const warnings = await warningsDuring(async () => (results = await runToolCalls(rt, calls, { onResult: boom })));
    expect(results).toMatchObject([{ ok: true, output: { n: 1 } }, { ok: true, output: { n: 2 } }]);
    expect(warnings).toEqual(['faultline: onResult threw: the listener broke', 'faultline: onResult threw: the listener broke']);
    await rt.close();
  });
});

describe('importers: onSkip', () => {
  it('imports the rest of the file when onSkip throws, and warns', async () => {
    const path = join(dir, 'chat.jsonl');
    const line = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] });
    writeFileSync(path, `${line}\n{not json\n${line}\n`);
    let written = 0;
    let result: Awaited<ReturnType<typeof importFile>> | undefined;
    const warnings = await warningsDuring(async () => {
      result = await importFile('openai', path, { write: async (batch) => void (written += batch.length), onSkip: boom });
    });
    expect(written).toBe(2);
    expect(result!.skipped).toHaveLength(1);
    expect(warnings).toEqual(['faultline: onSkip threw: the listener broke']);
  });
});

describe('model retries: onRetry', () => {
  it('retries when onRetry throws, and warns', async () => {
    let n = 0;
    const attempt = async () => (n++ === 0 ? { ok: false as const, failure: { kind: 'server' as const, message: 'server' } } : { ok: true as const, value: 'yes' });
    const clock = { now: () => 0, sleep: async () => undefined } as unknown as Parameters<typeof withModelRetry>[1]['clock'];
    let result: unknown;
    const warnings = await warningsDuring(async () => {
      result = await withModelRetry(attempt, {
        provider: 'p',
        options: { maxAttempts: 3, baseDelayMs: 1, factor: 2, maxDelayMs: 10, maxRetryAfterMs: 1000 },
        clock,
        random: () => 0.5,
        signal: new AbortController().signal,
        onRetry: boom,
      });
    });
    expect(result).toEqual({ ok: true, value: 'yes', attempts: 2 });
    expect(warnings).toEqual(['faultline: onRetry threw: the listener broke']);
  });
});

describe('shared circuit breakers: onError', () => {
  it('keep breaking locally when onError throws on a Redis that is down', async () => {
    let heard = 0;
    const breakers = createRedisBreakers({
      url: 'redis://127.0.0.1:1',
      prefix: 'faultline-test-listener',
      onError: () => {
        heard++;
        fails();
      },
      redis: { retryStrategy: () => null },
    });
    let calls = 0;
    const failing = defineTool({
      name: 'inventory',
      description: 'always down',
      input: { type: 'object' },
      idempotent: true,
      retry: { maxRetries: 0 },
      breaker: { failureThreshold: 2 },
      execute: () => {
        calls++;
        throw new HttpError(503, 'down');
      },
    });
    const rt = createRuntime({ tools: [failing], breakers });
    await expect(breakers.ready()).rejects.toThrow(/could not connect to Redis/);
    for (let i = 0; i < 3; i++) await rt.execute('inventory', {});
    // The circuit opened after two failures although every report of the outage threw.
    expect(calls).toBe(2);
    expect(rt.breakers.state('inventory')!.state).toBe('open');
    expect(heard).toBeGreaterThan(0);
    await rt.close();
    await breakers.close();
  });
});
