/**
 * A run's catalog state cut down to what the run changed. A full snapshot repeats the seeded
 * catalog (products, orders, messages, ...) in every result, which makes results.json tens of
 * megabytes for one suite; the seeded part is a pure function of (seed, now), so it is rebuilt
 * here and left out.
 */
import { canonicalJson } from '../../core/params-hash.js';
import { createToolCatalog, type CatalogSnapshot } from '../../tools/index.js';

function changedItems<T>(after: readonly T[], before: readonly T[], key: (item: T) => string): T[] {
  const seeded = new Map(before.map((item) => [key(item), canonicalJson(item)]));
  return after.filter((item) => seeded.get(key(item)) !== canonicalJson(item));
}

/**
 * Keeps the entities that are new or differ from the freshly seeded catalog; counters and the
 * duplicate report stay whole. `initial` defaults to the catalog rebuilt from the snapshot's
 * seed and anchor.
 */
export function changedState(state: CatalogSnapshot, initial?: CatalogSnapshot): CatalogSnapshot {
  const before = initial ?? createToolCatalog({ seed: state.seed, now: Date.parse(state.anchor) }).state.snapshot();
  return {
    ...state,
    orders: changedItems(state.orders, before.orders, (o) => o.order_id),
    products: changedItems(state.products, before.products, (p) => p.sku),
    messages: changedItems(state.messages, before.messages, (m) => m.message_id),
    events: changedItems(state.events, before.events, (e) => e.event_id),
    payments: changedItems(state.payments, before.payments, (p) => p.payment_id),
    refunds: changedItems(state.refunds, before.refunds, (r) => r.refund_id),
    files: changedItems(state.files, before.files, (f) => f.path),
  };
}

/** `changedState` for many results, building each distinct seeded catalog once. */
export function changedStates(states: readonly CatalogSnapshot[]): CatalogSnapshot[] {
  const initial = new Map<string, CatalogSnapshot>();
  return states.map((state) => {
    const key = `${state.seed}@${state.anchor}`;
    let before = initial.get(key);
    if (before === undefined) {
      before = createToolCatalog({ seed: state.seed, now: Date.parse(state.anchor) }).state.snapshot();
      initial.set(key, before);
    }
    return changedState(state, before);
  });
}
