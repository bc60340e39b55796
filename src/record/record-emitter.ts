/**
 * Hands each record to `onRecord`, then to the sink: the one emitter of the runtime and both
 * proxies. Neither may break the call: what they throw or reject goes to `onError` (see
 * core/notify.ts), and a sink's promise is waited on only when it returns one.
 */
import { notify, reportSafely } from '../core/notify.js';
import type { RecordSink } from '../core/record-sink.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

/** Where a record's delivery failed: the listener, or the sink. */
export type EmitFailureSite = 'onRecord' | 'recorder.enqueue';

export function recordEmitter(
  onRecord: ((record: ToolExecutionRecord) => void) | undefined,
  sink: RecordSink | undefined,
  onError: (error: unknown, where: EmitFailureSite) => void,
): (record: ToolExecutionRecord) => Promise<void> | undefined {
  const listenerFailed = (error: unknown): void => onError(error, 'onRecord');
  const sinkFailed = (error: unknown): void => reportSafely((e) => onError(e, 'recorder.enqueue'), error);
  return (record) => {
    notify(onRecord, record, listenerFailed);
    if (sink === undefined) return undefined;
    // A sink of the user's own may throw, reject, or return what `push` returns (`enqueue: (r) =>
    // records.push(r)`): none of that may break the call, as a store failure may not.
    let wait: unknown;
    try {
      wait = sink.enqueue(record);
    } catch (error) {
      sinkFailed(error);
      return undefined;
    }
    if (wait === undefined || typeof (wait as PromiseLike<void> | null)?.then !== 'function') return undefined;
    return Promise.resolve(wait as PromiseLike<void>).then(undefined, sinkFailed);
  };
}
