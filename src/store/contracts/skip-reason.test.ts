import { describe, expect, it } from 'vitest';
import { CAPABILITIES, HAS_CAPABILITY } from './capabilities.test-helpers.js';
import { skipReason } from './run-store-contracts.test-helpers.js';
import { createMemoryStore } from '../memory/memory-store.js';
import type { Store } from '../../core/store-types.js';

describe('skipReason', () => {
  it('gives the capability its own reason, and a suite that reads through a missing one that reason too', () => {
    const unsupported = { trajectories: 'keeps records only' };
    expect(skipReason({ capability: 'trajectories', observes: [] }, unsupported)).toBe('keeps records only');
    expect(skipReason({ capability: 'retention', observes: ['writer', 'trajectories'] }, unsupported)).toBe(
      'its checks read through trajectories, which this store lacks: keeps records only',
    );
    expect(skipReason({ capability: 'writer', observes: ['reader', 'stats'] }, unsupported)).toBeUndefined();
  });
});

describe('HAS_CAPABILITY', () => {
  it('sees every capability of a built-in store, and no optional one a store without it lacks', async () => {
    const full = createMemoryStore();
    expect(CAPABILITIES.filter((c) => !HAS_CAPABILITY[c](full))).toEqual([]);
    // Only the required capabilities: a wrapper or test double may have no more.
    const bare: Store = {
      kind: 'memory',
      insert: (r) => full.insert(r),
      close: () => full.close(),
      get: (id) => full.get(id),
      query: (q) => full.query(q),
      count: (q) => full.count(q),
      toolStats: (f) => full.toolStats(f),
      failureBreakdown: (f) => full.failureBreakdown(f),
      hourly: (f) => full.hourly(f),
      signatures: (f) => full.signatures(f),
    };
    expect(CAPABILITIES.filter((c) => !HAS_CAPABILITY[c](bare))).toEqual(['retention', 'trajectories', 'corrections']);
    await full.close();
  });
});
