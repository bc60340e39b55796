/**
 * The capabilities a Store is made of (see `core/store-types.ts`), how a test tells whether a
 * store has one, and the shape of the contract suite each of them has.
 */
import type { Store } from '../../core/store-types.js';
import { hasCorrectionMemory } from '../corrections.js';
import { canPrune } from '../retention.js';
import { hasTrajectoryStore } from '../trajectory-row.js';

export const CAPABILITIES = ['writer', 'reader', 'stats', 'retention', 'trajectories', 'corrections'] as const;
export type Capability = (typeof CAPABILITIES)[number];

const functions = (store: Store, names: readonly (keyof Store)[]) => names.every((name) => typeof store[name] === 'function');

/** Whether `store` has each capability: for the optional ones, by the guard its callers use. */
export const HAS_CAPABILITY: Record<Capability, (store: Store) => boolean> = {
  writer: (store) => functions(store, ['insert', 'close']) && typeof store.kind === 'string',
  reader: (store) => functions(store, ['get', 'query', 'count']),
  stats: (store) => functions(store, ['toolStats', 'failureBreakdown', 'hourly', 'signatures']),
  retention: (store) => canPrune(store),
  trajectories: (store) => hasTrajectoryStore(store),
  corrections: (store) => hasCorrectionMemory(store),
};

/**
 * The contract suite of one capability. `register` is called inside a `describe` whose
 * `beforeEach` has made a fresh, empty store; `store()` returns it. `observes` lists the other
 * capabilities its tests read results through (a write is checked by reading it back), so the
 * suite cannot run on a store that lacks them. `S` is what the suite uses of a store: only the
 * capabilities it tests and observes through.
 */
export interface CapabilityContract<S = Store> {
  capability: Capability;
  observes: readonly Capability[];
  register(store: () => S): void;
}
