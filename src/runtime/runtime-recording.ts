/**
 * Where a runtime's records go: a store it opens from a spec (and closes), a Store of the
 * caller's, or a sink of the caller's; and how listener and store errors are reported.
 */
import { ConfigError, ToolDefinitionError } from '../core/errors.js';
import type { RecordSink } from '../core/record-sink.js';
import { createRecorder, type Recorder } from '../record/recorder.js';
import { hasCorrectionMemory } from '../store/corrections.js';
import { openStoreLazily, STORE_SPEC_FORMS } from '../store/open-store.js';
import type { Store } from '../core/store-types.js';
import { RuntimeCorrectionMemory } from './correction-memory.js';
import type { RuntimeOptions } from './types.js';

export interface RuntimeRecording {
  /** The store records go to, when one was configured. */
  store: Store | undefined;
  /** The store the runtime opened from a spec, and so closes. */
  ownedStore: Store | undefined;
  /** The batching recorder the runtime made for `store`; undefined with a sink of the caller's. */
  ownRecorder: Recorder | undefined;
  sink: RecordSink | undefined;
  reportListenerError: (error: unknown, where: string) => void;
  reportStoreError: (error: unknown) => void;
}

/** Throws a ToolDefinitionError or ConfigError for a store or recorder option that would lose records in silence. */
export function openRuntimeRecording(options: RuntimeOptions): RuntimeRecording {
  if (options.store !== undefined && options.recorder !== undefined) {
    throw new ToolDefinitionError('(runtime)', 'pass either store or recorder, not both');
  }
  // Anything else would be ignored in silence, and the records with it.
  const storeOption = options.store as unknown;
  const isStoreObject = typeof storeOption === 'object' && storeOption !== null && typeof (storeOption as Store).insert === 'function';
  if (storeOption !== undefined && typeof storeOption !== 'string' && !isStoreObject) {
    throw new ConfigError(`store must be a spec (${STORE_SPEC_FORMS}) or a Store with insert(), got ${storeOption === null ? 'null' : typeof storeOption}`, 'store');
  }
  const recorderOption = options.recorder as unknown;
  if (recorderOption !== undefined && (typeof recorderOption !== 'object' || recorderOption === null || typeof (recorderOption as RecordSink).enqueue !== 'function')) {
    throw new ConfigError(`recorder must be an object with enqueue(record), got ${recorderOption === null ? 'null' : typeof recorderOption}`, 'recorder');
  }
  // A store given by spec is opened (lazily) and closed by the runtime; a Store object stays the caller's.
  const ownedStore =
    typeof options.store === 'string'
      ? // A SQLite file gets its writer in a worker thread: the transactions then run beside the agent
        // instead of stalling its event loop, and on another core.
        openStoreLazily(options.store, { sqliteWriter: 'worker' })
      : undefined;
  const store: Store | undefined = ownedStore ?? (typeof options.store === 'object' ? options.store : undefined);
  const reportListenerError =
    options.onListenerError ??
    ((error: unknown, where: string) => {
      process.emitWarning(`faultline: ${where} threw: ${error instanceof Error ? error.message : String(error)}`);
    });
  const reportStoreError = options.recording?.onError ?? storeErrorReporter(options.onListenerError);
  const ownRecorder: Recorder | undefined =
    options.recorder !== undefined || store === undefined ? undefined : createRecorder({ ...options.recording, store, onError: reportStoreError });
  return { store, ownedStore, ownRecorder, sink: options.recorder ?? ownRecorder, reportListenerError, reportStoreError };
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
