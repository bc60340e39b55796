/**
 * The overview for one agent or one FailBench run. The store's rollups are per tool and hour,
 * with no agent or run in them, so such a view reads the raw records of its window instead,
 * keeps the matching ones, and puts them in a memory store: every figure the overview shows
 * (stats, hourly series, signatures, alerts) is then computed by the same code as for the
 * whole store, over those records only. The read is bounded: a window holding more records
 * than {@link MAX_SCOPED_RECORDS} is refused with a line asking for a narrower one.
 */
import { ConfigError } from '../../core/errors.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createMemoryStore } from '../../store/memory/memory-store.js';
import type { RecordReader, Store, TimeWindow } from '../../core/store-types.js';

/** The most records an agent or run view reads. */
export const MAX_SCOPED_RECORDS = 100_000;
const PAGE = 5000;

export interface RecordScope {
  /** `context_snapshot.agent`, as the runtime's sessions and FailBench record it. */
  agent: string | null;
  /** A FailBench run id: `context_snapshot.failbench_run_id`, or a trace `failbench:<run>:…`. */
  run: string | null;
}

export function isScoped(scope: RecordScope): boolean {
  return scope.agent !== null || scope.run !== null;
}

export function inScope(record: ToolExecutionRecord, scope: RecordScope): boolean {
  const context = record.context_snapshot as Record<string, unknown> | null;
  if (scope.agent !== null && context?.['agent'] !== scope.agent) return false;
  if (scope.run !== null && context?.['failbench_run_id'] !== scope.run && !record.trace_id.startsWith(`failbench:${scope.run}:`)) return false;
  return true;
}

/**
 * A memory store holding the records of `window` that are in `scope`.
 * @throws ConfigError when the window holds more than `max` records (answered with 400).
 */
export async function scopedStore(store: RecordReader, window: TimeWindow, scope: RecordScope, max: number = MAX_SCOPED_RECORDS): Promise<Store> {
  const total = await store.count({ since: window.since, until: window.until });
  if (total > max) {
    throw new ConfigError(
      `the agent and run filters read the window's records one by one, and this window holds ${total} (more than ${max}): narrow it with since and until`,
      'since',
    );
  }
  const scoped = createMemoryStore();
  for (let afterId: string | undefined; ; ) {
    const page = await store.query({ since: window.since, until: window.until, limit: PAGE, ...(afterId === undefined ? {} : { afterId }) });
    const matching = page.filter((r) => inScope(r, scope));
    if (matching.length > 0) await scoped.insert(matching);
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.execution_id;
  }
  return scoped;
}
