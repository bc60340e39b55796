/**
 * What the recorder knows of its store's health: healthy until a write fails, then probed on a
 * backoff that doubles from `initialDelayMs` up to `maxDelayMs` until a write succeeds again.
 * The probe itself is the recorder's (re-inserting `lastStored`, an idempotent no-op that
 * succeeds exactly when the store takes writes); this part keeps the state and the timer.
 */
import type { ToolExecutionRecord } from '../core/record-types.js';

export interface StoreHealthOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  /** Decides when a probe is due (the timer itself runs on real time). */
  clock: { now(): number };
  /** Runs a probe; called by the timer. */
  probe: () => void;
}

export class StoreHealth {
  #healthy = true;
  #delayMs: number;
  #nextProbeAt = 0;
  #timer: NodeJS.Timeout | null = null;
  /** The most recent record the store confirmed; re-inserting it is the health check. */
  lastStored: ToolExecutionRecord | null = null;

  constructor(private readonly options: StoreHealthOptions) {
    this.#delayMs = options.initialDelayMs;
  }

  get healthy(): boolean {
    return this.#healthy;
  }

  /** A probe is waiting on its timer. */
  get probeScheduled(): boolean {
    return this.#timer !== null;
  }

  /** The current backoff between probes. */
  get probeDelayMs(): number {
    return this.#delayMs;
  }

  probeDue(): boolean {
    return this.options.clock.now() >= this.#nextProbeAt;
  }

  /**
   * A write failed. True when it starts an outage (the caller reports it). A failed probe doubles
   * the backoff; a write started before the outage was noticed leaves a scheduled probe as it is.
   * No probe is scheduled once `closed`.
   */
  failed(duringProbe: boolean, closed: boolean): boolean {
    let starts = false;
    if (this.#healthy) {
      this.#healthy = false;
      this.#delayMs = this.options.initialDelayMs;
      starts = true;
    } else if (!duringProbe) {
      if (this.#timer !== null) return false;
    } else {
      this.#delayMs = Math.min(this.#delayMs * 2, this.options.maxDelayMs);
    }
    this.scheduleProbe(closed);
    return starts;
  }

  /** A write succeeded while the store was failing: healthy again, backoff reset. */
  recovered(): void {
    this.#healthy = true;
    this.#delayMs = this.options.initialDelayMs;
    this.clearProbe();
  }

  scheduleProbe(closed: boolean): void {
    this.clearProbe();
    if (closed) return;
    this.#nextProbeAt = this.options.clock.now() + this.#delayMs;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.options.probe();
    }, this.#delayMs);
    this.#timer.unref();
  }

  clearProbe(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** The last record of a batch the store confirmed becomes the health-check record. */
  remember(batch: readonly ToolExecutionRecord[]): void {
    const last = batch[batch.length - 1];
    if (last !== undefined) this.lastStored = last;
  }
}
