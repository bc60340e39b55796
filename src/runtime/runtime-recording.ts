/**
 * Where a runtime's records go (`openRecording`: a store it opens from a spec and closes, a Store
 * of the caller's, or a sink of the caller's), and how listener and store errors are reported.
 */
import { ToolDefinitionError } from '../core/errors.js';
import { reportSafely, warnListenerError } from '../core/notify.js';
import { openRecording, type Recording } from '../record/open-recording.js';
import { hasCorrectionMemory } from '../store/corrections.js';
import type { Store } from '../core/store-types.js';
import { RuntimeCorrectionMemory } from './correction-memory.js';
import type { RuntimeOptions } from './types.js';

export interface RuntimeRecording extends Recording {
  reportListenerError: (error: unknown, where: string) => void;
  reportStoreError: (error: unknown) => void;
}

/** Throws a ConfigError for a store or recorder option that would lose records in silence. */
export function openRuntimeRecording(options: RuntimeOptions): RuntimeRecording {
  // What these handlers throw in turn is dropped: they are called from inside tool calls.
  const onListenerError = options.onListenerError ?? ((error: unknown, where: string) => warnListenerError(where)(error));
  const reportListenerError = (error: unknown, where: string) => reportSafely((e) => onListenerError(e, where), error);
  const onStoreError = options.recording?.onError ?? storeErrorReporter(options.onListenerError);
  const reportStoreError = (error: unknown) => reportSafely(onStoreError, error);
  const recording = openRecording({
    store: options.store,
    recorder: options.recorder,
    recording: { ...options.recording, onError: reportStoreError },
    // A SQLite file gets its writer in a worker thread: the transactions then run beside the agent
    // instead of stalling its event loop, and on another core.
    open: { sqliteWriter: 'worker' },
  });
  return Object.assign(recording, { reportListenerError, reportStoreError });
}

/** At most one warning a minute about the store: the recorder and the correction memory both meet an outage. */
const STORE_WARNING_INTERVAL_MS = 60_000;

/**
 * What the runtime does with store errors (writes of records and corrections) when
 * `recording.onError` is not set: tells `onListenerError` (as `store`), or warns that the store
 * cannot be written and that records are kept, at most once a minute.
 */
function storeErrorReporter(onListenerError: RuntimeOptions['onListenerError']): (error: unknown) => void {
  if (onListenerError !== undefined) return (error) => onListenerError(error, 'store');
  let warnedAt = -Infinity;
  return (error) => {
    const now = Date.now();
    if (now - warnedAt < STORE_WARNING_INTERVAL_MS) return;
    warnedAt = now;
    const message = error instanceof Error ? error.message : String(error);
    process.emitWarning(`faultline: cannot write to the store (${message}); records are kept (queue or spool) and sent again when it answers`);
  };
}

/** The runtime's correction memory, kept in the store when it has one; undefined when turned off. */
export function createCorrectionMemory(options: RuntimeOptions, store: Store | undefined, onError: (error: unknown) => void): RuntimeCorrectionMemory | undefined {
  if (options.correctionMemory === false) return undefined;
  try {
    return new RuntimeCorrectionMemory(options.correctionMemory ?? {}, hasCorrectionMemory(store) ? store : undefined, onError);
  } catch (error) {
    throw new ToolDefinitionError('(runtime)', (error as Error).message);
  }
}
