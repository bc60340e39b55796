import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { createFaultPlan } from '../plan.js';
import { everythingUpstream, tempDir } from './mcp-proxy.test-helpers.js';
import { startMcpProxy } from './proxy.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('MCP proxy retention', () => {
  it('stops its prune schedule on close, waiting for a prune in flight, before closing the recording', async () => {
    const dir = await tempDir();
    cleanups.push(() => dir.remove());
    const inner = createSqliteStore({ path: join(dir.path, 'records.db') });
    cleanups.push(() => inner.close());
    const events: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let pruneStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      pruneStarted = resolve;
    });
    // The caller's store: its prune is held until the test lets it go.
    const store = Object.assign(Object.create(inner) as typeof inner, {
      async prune(beforeMs: number) {
        events.push('prune started');
        pruneStarted();
        await gate;
        const deleted = await inner.prune!(beforeMs);
        events.push('prune ended');
        return deleted;
      },
    });
    const proxy = await startMcpProxy({ upstream: everythingUpstream(), plan: createFaultPlan({ version: 1, rules: [] }), store, retention: '30d' });
    await started;
    const closed = proxy.close().then(() => events.push('proxy closed'));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    release();
    await closed;
    // Nothing runs against the store once the proxy is gone.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events).toEqual(['prune started', 'prune ended', 'proxy closed']);
  }, 30_000);
});
