import { describe, expect, it } from 'vitest';
import { FaultlineError } from '../../core/errors.js';
import { makeRecord } from '../../record/fixture.js';
import { runStoreContracts } from '../contracts/run-store-contracts.test-helpers.js';
import { createMemoryStore } from './memory-store.js';

runStoreContracts('memory', async () => createMemoryStore());

describe('memory store', () => {
  it('refuses use after close with a typed error', async () => {
    const store = createMemoryStore();
    await store.close();
    await expect(store.insert([makeRecord()])).rejects.toSatisfy(FaultlineError.isInstance);
  });

  it('leaves the store unchanged when a batch holds an invalid created_at', async () => {
    const store = createMemoryStore();
    const good = makeRecord({ created_at: '2025-03-10T08:00:00.000Z' });
    const bad = { ...makeRecord({ created_at: '2025-03-10T08:00:01.000Z' }), created_at: 'yesterday' };
    await expect(store.insert([good, bad])).rejects.toThrow(/invalid created_at/);
    expect(await store.count()).toBe(0);
  });
});
