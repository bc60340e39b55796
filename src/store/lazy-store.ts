/**
 * A Store that opens on first use. `createRuntime` is synchronous but opening PostgreSQL is not;
 * wrapping the open in the store lets the recorder treat a store that fails to open like one
 * that went down: records spool, the failure is reported through `onError`, and tool calls are
 * never held up.
 */
import { ConfigError } from '../core/errors.js';
import type { Store, StoreKind } from '../core/store-types.js';

/**
 * `declared`: what the store to be opened will declare (`maxInsertsInFlight`, `batchEncoding`),
 * for a caller that knows it before the open: the recorder reads them once, when it is created.
 * An encoded batch goes to the opened store's `insertEncoded`, or is decoded for its `insert`.
 * `poll`, when given, is the `Store.poll` of the store being opened, its open included.
 */
export function lazyStore(
  kind: StoreKind,
  open: () => Promise<Store>,
  declared: Pick<Store, 'maxInsertsInFlight' | 'batchEncoding' | 'poll'> = {},
): Store & { opened(): Promise<Store> } {
  let opening: Promise<Store> | undefined;
  let closed = false;
  const opened = (): Promise<Store> => {
    // A failed open is retried on the next use: the recorder probes until the store comes up.
    opening ??= open().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };
  const encoding = declared.batchEncoding;
  return {
    kind,
    opened,
    ...(declared.maxInsertsInFlight !== undefined ? { maxInsertsInFlight: declared.maxInsertsInFlight } : {}),
    ...(declared.poll !== undefined ? { poll: declared.poll } : {}),
    ...(encoding !== undefined
      ? {
          batchEncoding: encoding,
          insertEncoded: async (batch: Uint8Array) => {
            const store = await opened();
            return store.insertEncoded !== undefined ? store.insertEncoded(batch) : store.insert(encoding.decode(batch));
          },
        }
      : {}),
    insert: async (records) => (await opened()).insert(records),
    prune: async (beforeMs, options) => {
      const store = await opened();
      if (store.prune === undefined) throw new ConfigError(`the ${store.kind} store cannot prune`, 'store');
      return store.prune(beforeMs, options);
    },
    get: async (id) => (await opened()).get(id),
    query: async (q) => (await opened()).query(q),
    count: async (q) => (await opened()).count(q),
    toolStats: async (f) => (await opened()).toolStats(f),
    failureBreakdown: async (f) => (await opened()).failureBreakdown(f),
    hourly: async (f) => (await opened()).hourly(f),
    signatures: async (f) => (await opened()).signatures(f),
    // Trajectory storage is optional on a Store; these answer as the opened store would.
    insertTrajectories: async (ts) => {
      const store = await opened();
      if (store.insertTrajectories === undefined) throw new ConfigError(`the ${store.kind} store does not store trajectories`, 'store');
      return store.insertTrajectories(ts);
    },
    updateTrajectories: async (ts) => (await opened()).updateTrajectories?.(ts) ?? 0,
    getTrajectory: async (id) => (await opened()).getTrajectory?.(id) ?? null,
    queryTrajectories: async (q) => (await opened()).queryTrajectories?.(q) ?? [],
    countTrajectories: async (q) => (await opened()).countTrajectories?.(q) ?? 0,
    // So is the correction memory.
    pushCorrection: async (c, limits) => {
      const store = await opened();
      if (store.pushCorrection === undefined) throw new ConfigError(`the ${store.kind} store has no correction memory`, 'store');
      return store.pushCorrection(c, limits);
    },
    pushCorrections: async (cs, limits) => {
      const store = await opened();
      if (store.pushCorrections === undefined) throw new ConfigError(`the ${store.kind} store has no correction memory`, 'store');
      return store.pushCorrections(cs, limits);
    },
    latestCorrection: async (signature) => (await opened()).latestCorrection?.(signature) ?? null,
    listCorrections: async (q) => (await opened()).listCorrections?.(q) ?? [],
    async close() {
      if (closed) return;
      closed = true;
      const pending = opening;
      if (pending === undefined) return;
      const store = await pending.catch(() => undefined);
      await store?.close();
    },
  };
}

/** The kind a store spec names, without opening it. */
export function storeKindOf(spec: string): StoreKind {
  const s = spec.trim();
  if (s === ':memory:' || s === 'memory:') return 'memory';
  if (/^postgres(?:ql)?:\/\//i.test(s)) return 'postgres';
  return 'sqlite';
}
