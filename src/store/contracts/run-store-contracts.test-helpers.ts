/**
 * The Store contracts: one suite per capability (see `capabilities.test-helpers.ts`), each run
 * against every adapter. An adapter that lacks a capability says so, with the reason; that
 * suite, and those that observe through it, are then skipped with the reason in their titles,
 * and a test checks that the store lacks exactly what it says it lacks.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../core/store-types.js';
import { CAPABILITIES, HAS_CAPABILITY, type Capability, type CapabilityContract } from './capabilities.test-helpers.js';
import { correctionsContract } from './corrections-contract.test-helpers.js';
import { readerContract } from './reader-contract.test-helpers.js';
import { retentionContract } from './retention-contract.test-helpers.js';
import { statsContract } from './stats-contract.test-helpers.js';
import { trajectoriesContract } from './trajectories-contract.test-helpers.js';
import { writerContract } from './writer-contract.test-helpers.js';

const CONTRACTS: readonly CapabilityContract[] = [writerContract, readerContract, statsContract, retentionContract, trajectoriesContract, correctionsContract];

export interface StoreContractOptions {
  /** Runs once after every suite. */
  cleanup?: () => Promise<void>;
  /** The capabilities the adapter does not have, each with why (a non-empty sentence). */
  unsupported?: Partial<Record<Capability, string>>;
}

/** Why `contract` cannot run on a store lacking `unsupported`, or undefined when it can. */
export function skipReason(contract: Pick<CapabilityContract, 'capability' | 'observes'>, unsupported: Partial<Record<Capability, string>>): string | undefined {
  const own = unsupported[contract.capability];
  if (own !== undefined) return own;
  const missing = contract.observes.find((c) => unsupported[c] !== undefined);
  return missing === undefined ? undefined : `its checks read through ${missing}, which this store lacks: ${unsupported[missing]}`;
}

/**
 * Registers every capability's contract suite for one adapter. `makeStore` must return a fresh,
 * empty store each time it is called (a PostgreSQL store in a schema of its own); each test closes
 * the store it made.
 */
export function runStoreContracts(name: string, makeStore: () => Promise<Store>, options: StoreContractOptions = {}): void {
  const unsupported = options.unsupported ?? {};
  describe(`Store contracts: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
    });
    if (options.cleanup !== undefined) afterAll(options.cleanup);

    it('has every capability but those it states a reason for lacking', () => {
      for (const capability of CAPABILITIES) expect(HAS_CAPABILITY[capability](store), capability).toBe(unsupported[capability] === undefined);
      for (const [capability, why] of Object.entries(unsupported)) expect(why.trim(), capability).not.toBe('');
    });

    for (const contract of CONTRACTS) {
      const why = skipReason(contract, unsupported);
      if (why === undefined) describe(`${contract.capability} contract`, () => contract.register(() => store));
      else describe.skip(`${contract.capability} contract (skipped: ${why})`, () => contract.register(() => store));
    }
  });
}
