/**
 * A per-tool consecutive-failure circuit breaker.
 *
 *   closed --(N consecutive counted failures)--> open --(cooldown elapsed)--> half_open
 *   half_open --(probe succeeds)--> closed;  half_open --(probe fails)--> open (cooldown restarts)
 *
 * Only failures of the tool itself are counted (see `countsAgainstBreaker`); the caller decides
 * what counts and reports it. In half_open exactly one probe runs; other calls are rejected
 * until it settles. State can be saved and restored, e.g. across restarts or via a shared store.
 */
import type { BreakerStateName } from '../core/record-types.js';

export interface BreakerOptions {
  /** Consecutive counted failures that open the circuit. Default 5. */
  failureThreshold: number;
  /** How long the circuit stays open before a probe is allowed. Default 30 s. */
  cooldownMs: number;
}

export const DEFAULT_BREAKER: Readonly<BreakerOptions> = { failureThreshold: 5, cooldownMs: 30_000 };

/** A serializable snapshot of one breaker. */
export interface BreakerSnapshot {
  state: BreakerStateName;
  consecutiveFailures: number;
  /** Epoch ms when the circuit last opened, or null. */
  openedAt: number | null;
  /** Total times this breaker has opened. */
  trips: number;
}

/** Makes the breaker of each tool of a runtime (see `RuntimeOptions.breakers`). */
export interface BreakerProvider {
  breakerFor(toolName: string, options: BreakerOptions): Breaker;
}

/** The breaker's answer to "may this call run?". `probe`: yes, as the single half-open probe. */
export type Admission = 'allow' | 'probe' | 'reject';

/**
 * What the runtime asks of a tool's breaker. {@link ConsecutiveBreaker} is the local one; the
 * Redis breakers (`faultline/redis`) wrap one and share its state between processes.
 */
export interface Breaker {
  readonly options: BreakerOptions;
  readonly currentState: BreakerStateName;
  /** Asks to run a call at `now`. A `probe` admission must be settled with one of the on* calls. */
  admit(now: number): Admission;
  /** The state a caller would see now, without claiming the probe. */
  peek(now: number): BreakerStateName;
  onSuccess(): void;
  /** A counted failure. Returns true when this failure opened the circuit. */
  onFailure(now: number): boolean;
  /** The call ended saying nothing about the tool's health: frees the half-open probe slot. */
  onNeutral(): void;
  snapshot(): BreakerSnapshot;
  restore(snapshot: BreakerSnapshot): void;
  /**
   * Whether this process may send the background probe of the open circuit (see
   * `breaker-probes.ts`). A breaker shared between processes claims it fleet-wide, so one probe
   * goes out across the fleet; a local breaker has no such method: the probe is always its own.
   */
  claimProbe?(now: number): Promise<boolean>;
}

export class ConsecutiveBreaker implements Breaker {
  private state: BreakerStateName = 'closed';
  private failures = 0;
  private openedAt: number | null = null;
  private probeInFlight = false;
  private trips = 0;

  constructor(readonly options: BreakerOptions) {}

  get currentState(): BreakerStateName {
    return this.state;
  }

  /** Asks to run a call at `now`. A `probe` admission must be settled with one of the on* calls. */
  admit(now: number): Admission {
    if (this.state === 'closed') return 'allow';
    if (this.state === 'open') {
      if (this.openedAt !== null && now - this.openedAt < this.options.cooldownMs) return 'reject';
      this.state = 'half_open';
      this.probeInFlight = false;
    }
    if (this.probeInFlight) return 'reject';
    this.probeInFlight = true;
    return 'probe';
  }

  /** The state a caller would see now, without claiming the probe. */
  peek(now: number): BreakerStateName {
    if (this.state === 'open' && this.openedAt !== null && now - this.openedAt >= this.options.cooldownMs) return 'half_open';
    return this.state;
  }

  onSuccess(): void {
    this.failures = 0;
    this.probeInFlight = false;
    this.state = 'closed';
    this.openedAt = null;
  }

  /** A counted failure. Returns true when this failure opened the circuit. */
  onFailure(now: number): boolean {
    this.probeInFlight = false;
    if (this.state === 'half_open') return this.open(now);
    this.failures++;
    if (this.state === 'closed' && this.failures >= this.options.failureThreshold) return this.open(now);
    return false;
  }

  /**
   * The call ended in a way that says nothing about the tool's health (a parameter error, a
   * cancellation). Frees the half-open probe slot without changing the state.
   */
  onNeutral(): void {
    this.probeInFlight = false;
  }

  snapshot(): BreakerSnapshot {
    return { state: this.state, consecutiveFailures: this.failures, openedAt: this.openedAt, trips: this.trips };
  }

  restore(snapshot: BreakerSnapshot): void {
    this.state = snapshot.state;
    this.failures = snapshot.consecutiveFailures;
    this.openedAt = snapshot.openedAt;
    this.trips = snapshot.trips;
    this.probeInFlight = false;
  }

  private open(now: number): boolean {
    this.state = 'open';
    this.openedAt = now;
    this.failures = 0;
    this.trips++;
    return true;
  }
}
