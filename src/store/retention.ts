/**
 * Retention: records older than an age are deleted, with what they added to the rollups
 * (`RecordRetention.prune`). `faultline prune` runs it once; a runtime or proxy given `retention` runs it
 * when it starts and then every hour, for as long as it runs.
 */
import { reportSafely } from '../core/notify.js';
import { parseDurationMs } from '../core/duration-text.js';
import { ConfigError } from '../core/errors.js';
import type { RecordRetention, StoreHandle } from '../core/store-types.js';

/** Records deleted per transaction: short enough that the recorder's inserts interleave with a large prune. */
export const PRUNE_CHUNK = 10_000;
/** How often a running runtime or proxy prunes. Records are counted in hourly rollups: an hour is the grain anyway. */
export const RETENTION_INTERVAL_MS = 3_600_000;

/** A store that may be able to prune: what retention is given. */
export type MaybePrunable = StoreHandle & Partial<RecordRetention>;

/** A store that can prune. */
export type PrunableStore = StoreHandle & RecordRetention;

export function canPrune<S extends MaybePrunable>(store: S): store is S & RecordRetention {
  return typeof store.prune === 'function';
}

/**
 * Deletes every record created before `beforeMs`, {@link PRUNE_CHUNK} per transaction; returns
 * how many were deleted. `stopped`, when it says so between transactions, ends it early.
 */
export async function pruneBefore(store: RecordRetention, beforeMs: number, until: { stopped?: () => boolean } = {}): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = await store.prune(beforeMs, { limit: PRUNE_CHUNK });
    deleted += n;
    if (n < PRUNE_CHUNK || until.stopped?.() === true) return deleted;
  }
}

export interface RetentionOptions {
  /** Records older than this (ms) are deleted. */
  maxAgeMs: number;
  /** Default {@link RETENTION_INTERVAL_MS}. */
  intervalMs?: number;
  /** Where a failed prune is reported; the next run tries again. */
  onError: (error: unknown) => void;
  /** Default `Date.now`. */
  now?: () => number;
}

export interface Retention {
  /** Stops the schedule and waits for a prune in progress. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Prunes `store` now (on the next turn of the event loop, so it never runs inside the caller's
 * constructor) and then every `intervalMs`. The timers are unref'd: retention never keeps a
 * process alive.
 * @throws ConfigError when the store cannot prune.
 */
export function startRetention(store: MaybePrunable, options: RetentionOptions): Retention {
  if (!canPrune(store)) throw new ConfigError(`retention needs a store that can prune; the ${store.kind} store given has no prune()`, 'retention');
  const now = options.now ?? Date.now;
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (stopped || running !== undefined) return;
    running = pruneBefore(store, now() - options.maxAgeMs, { stopped: () => stopped })
      .then(() => undefined, (error: unknown) => reportSafely(options.onError, error))
      .finally(() => {
        running = undefined;
      });
  };
  const first = setTimeout(run, 0);
  const every = setInterval(run, options.intervalMs ?? RETENTION_INTERVAL_MS);
  first.unref();
  every.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      clearInterval(every);
      await running;
    },
  };
}

/**
 * The `retention` option of the runtime and the proxies: undefined when it is not set, else the
 * schedule started on `store`. `value` is a duration as the CLI writes it (`30d`) or milliseconds.
 * @throws ConfigError for a bad duration, or retention without a store that can prune.
 */
export function retentionFor(
  value: string | number | undefined,
  store: MaybePrunable | undefined,
  options: Omit<RetentionOptions, 'maxAgeMs'>,
): Retention | undefined {
  if (value === undefined) return undefined;
  const maxAgeMs = parseDurationMs(value, 'retention');
  if (store === undefined) throw new ConfigError('retention needs a store: only records in a store are pruned', 'retention');
  return startRetention(store, { ...options, maxAgeMs });
}
