/**
 * The recorder's way to its spool: synchronous appends when the store cannot take records, an
 * fsync at most once per interval (every append in durable mode), and a disk that fails tried
 * again after a pause, its error reported once until it works again.
 */
import type { ToolExecutionRecord } from '../core/record-types.js';
import type { Spool } from './spool.js';

/** A spool whose disk failed is tried again after this long. */
const SPOOL_RETRY_MS = 1000;

export interface SpoolFailoverOptions {
  /** Every append fsync'd. */
  durable: boolean;
  /** Otherwise the file is fsync'd at most this often. */
  syncEveryMs: number;
  /** Spool errors, once until the spool works again. */
  report: (error: unknown) => void;
}

export class SpoolFailover {
  #failing = false;
  #retryAt = 0;
  #lastError: unknown = null;
  #errorReported = false;
  #lastSyncAt = performance.now();
  /** Appends since the last fsync. */
  unsynced = false;

  constructor(
    readonly spool: Spool,
    private readonly options: SpoolFailoverOptions,
  ) {}

  /** The error the disk last gave, or null. */
  get lastError(): unknown {
    return this.#lastError;
  }

  /** Whether an append may be tried now: the disk works, or its pause is over. */
  canTake(now = performance.now()): boolean {
    return !this.#failing || now >= this.#retryAt;
  }

  /**
   * Appends records synchronously, so that they leave memory even when the event loop never
   * turns. False when the disk fails (or failed less than a pause ago).
   */
  append(records: readonly ToolExecutionRecord[]): boolean {
    const now = performance.now();
    if (!this.canTake(now)) return false;
    const sync = this.options.durable || now - this.#lastSyncAt >= this.options.syncEveryMs;
    try {
      this.spool.spillSync(records, sync);
    } catch (error) {
      this.#failing = true;
      this.#retryAt = now + SPOOL_RETRY_MS;
      this.#lastError = error;
      this.reportError(error);
      return false;
    }
    if (sync) this.#lastSyncAt = now;
    this.unsynced = !sync;
    this.#failing = false;
    this.#errorReported = false;
    return true;
  }

  /** Fsyncs what was appended since the last fsync. */
  syncIfUnsynced(): void {
    if (!this.unsynced) return;
    try {
      this.spool.syncSpilled();
      this.unsynced = false;
      this.#lastSyncAt = performance.now();
    } catch (error) {
      this.reportError(error);
    }
  }

  /** The next append tries the disk whatever the pause says (the store came back, or a recovery runs). */
  retryNow(): void {
    this.#failing = false;
  }

  reportError(error: unknown): void {
    if (this.#errorReported) return;
    this.#errorReported = true;
    this.options.report(error);
  }
}
