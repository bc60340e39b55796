/**
 * Where records go, for every part that records (the runtime, both fault proxies, FailBench): a
 * store named by a spec, which is opened here and so closed here; a Store of the caller's, put
 * behind a recorder made here; a sink of the caller's, used as is; or nothing. `close()` closes
 * only what was opened here, so a caller's store or sink outlives it.
 */
import { ConfigError } from '../core/errors.js';
import type { RecordSink } from '../core/record-sink.js';
import type { RecordWriter, Store } from '../core/store-types.js';
import { openStore, openStoreLazily, STORE_SPEC_FORMS, type OpenStoreOptions } from '../store/open-store.js';
import { createRecorder, type Recorder, type RecorderOptions } from './recorder.js';

/** `S`: what the caller's own store can do (the runtime needs a whole Store; a recorder only a RecordWriter). */
export interface RecordingTarget<S extends RecordWriter = Store> {
  /** A store spec (SQLite path, `postgres://` URL, `memory:`), opened and closed here; or a store of the caller's. */
  store?: string | S | undefined;
  /** A sink of the caller's, used instead of a store, and never closed here. */
  recorder?: RecordSink | undefined;
  /** Options of the recorder made in front of the store. */
  recording?: Omit<RecorderOptions, 'store'> | undefined;
  /** How a spec opens: its base directory and where a SQLite file's writes run. */
  open?: Pick<OpenStoreOptions, 'cwd' | 'sqliteWriter'>;
}

export interface Recording<S extends RecordWriter = Store> {
  /** Where records go; undefined when neither a store nor a sink was given. */
  sink: RecordSink | undefined;
  /** The store behind the recorder, whether opened here or the caller's. */
  store: S | Store | undefined;
  /** The recorder made here in front of `store`; undefined with a sink of the caller's. */
  recorder: Recorder | undefined;
  /** Closes the recorder made here, then the store opened here; a caller's store or sink is left open. Safe to call twice. */
  close(): Promise<void>;
}

const kindOf = (value: unknown) => (value === null ? 'null' : typeof value);

/**
 * Throws a ConfigError for a target that would lose records in silence: a store and a sink
 * together (one would be ignored), or either of a shape that cannot take records.
 */
export function checkRecordingTarget<S extends RecordWriter>(target: RecordingTarget<S>): void {
  if (target.store !== undefined && target.recorder !== undefined) throw new ConfigError('pass either store or recorder, not both', 'store');
  const store = target.store as unknown;
  const isStore = typeof store === 'object' && store !== null && typeof (store as RecordWriter).insert === 'function';
  if (store !== undefined && typeof store !== 'string' && !isStore) {
    throw new ConfigError(`store must be a spec (${STORE_SPEC_FORMS}) or a Store with insert(), got ${kindOf(store)}`, 'store');
  }
  const sink = target.recorder as unknown;
  if (sink !== undefined && (typeof sink !== 'object' || sink === null || typeof (sink as RecordSink).enqueue !== 'function')) {
    throw new ConfigError(`recorder must be an object with enqueue(record), got ${kindOf(sink)}`, 'recorder');
  }
}

function recordingOver<S extends RecordWriter>(target: RecordingTarget<S>, store: S | Store | undefined, owned: boolean): Recording<S> {
  const recorder = target.recorder !== undefined || store === undefined ? undefined : createRecorder({ ...target.recording, store });
  let closing: Promise<void> | undefined;
  return {
    sink: target.recorder ?? recorder,
    store,
    recorder,
    close() {
      closing ??= (async () => {
        await recorder?.close();
        if (owned) await store?.close();
      })();
      return closing;
    },
  };
}

/**
 * Opens the recording without waiting: a spec becomes a store that opens on first use, so one
 * that cannot be opened behaves like a store that is down (records spool, `onError` hears of it)
 * and never holds a call up.
 * @throws ConfigError for a misused target (see {@link checkRecordingTarget}).
 * @example
 * const recording = openRecording({ store: 'sqlite:.faultline/faultline.db', recording: { onError } });
 * recording.sink?.enqueue(record);
 * await recording.close();
 */
export function openRecording<S extends RecordWriter = Store>(target: RecordingTarget<S>): Recording<S> {
  checkRecordingTarget(target);
  if (typeof target.store === 'string') return recordingOver(target, openStoreLazily(target.store, target.open ?? {}), true);
  return recordingOver(target, target.store, false);
}

/**
 * Opens the recording now: a spec's store is opened before this resolves, so a store that cannot
 * be opened is reported here, to a caller that has not started anything yet.
 * @throws ConfigError for a misused target, or when the store a spec names cannot be opened.
 */
export async function openRecordingNow<S extends RecordWriter = Store>(target: RecordingTarget<S>): Promise<Recording<S>> {
  checkRecordingTarget(target);
  if (typeof target.store === 'string') return recordingOver(target, await openStore(target.store, target.open ?? {}), true);
  return recordingOver(target, target.store, false);
}
