import type { ToolExecutionRecord } from './record-types.js';

/** Where records go. A `Recorder` (src/record/recorder.ts) is one; so is anything with `enqueue`. */
export interface RecordSink {
  /**
   * Returns a promise only when the caller must wait (durable writes, backpressure). The call
   * never fails because of the sink: a throw or a rejection goes to `onListenerError` (as
   * `recorder.enqueue`), and any other value returned is ignored.
   */
  enqueue(record: ToolExecutionRecord): Promise<void> | undefined;
  flush?(): Promise<void>;
  close?(): Promise<void>;
}
