/**
 * Adaptive timeouts (seed 001 section 3.2), opt in per tool: the attempt timeout follows the
 * tool's recent history, k x the p99 of its last successful attempts, clamped to a floor and a
 * ceiling (by default the tool's own `timeoutMs`). Until enough successes are known, the fixed
 * timeout applies. The history is the store's: at startup the runtime reads the tool's most
 * recent successes back (SQLite or PostgreSQL), so a restarted process keeps the timeout it had.
 * Each attempt's record says which timeout applied and why (`attempts[].timeout`).
 */
import { ConfigError } from '../core/errors.js';
import type { AttemptTimeout } from '../core/record-types.js';
import type { RecordReader } from '../core/store-types.js';

export interface AdaptiveTimeoutOptions {
  /** The multiple of the p99. Default 3. */
  k?: number;
  /** The shortest timeout it may set. Default 100 ms. */
  floorMs?: number;
  /** The longest. Default: the tool's `timeoutMs`. */
  ceilingMs?: number;
  /** How many recent successes it keeps. Default 200. */
  window?: number;
  /** Successes needed before it moves off the fixed timeout. Default 20. */
  minSamples?: number;
}

interface Resolved {
  k: number;
  floorMs: number;
  ceilingMs: number;
  window: number;
  minSamples: number;
}

function resolve(toolName: string, fixedMs: number, options: AdaptiveTimeoutOptions): Resolved {
  const r: Resolved = { k: 3, floorMs: 100, ceilingMs: fixedMs, window: 200, minSamples: 20, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  const field = (name: string) => `${toolName}: adaptiveTimeout.${name}`;
  if (!(r.k > 0) || !Number.isFinite(r.k)) throw new ConfigError(`${field('k')} must be a positive number, got ${String(r.k)}`, 'adaptiveTimeout.k');
  if (!(r.floorMs > 0) || !(r.ceilingMs >= r.floorMs) || !Number.isFinite(r.ceilingMs)) {
    throw new ConfigError(`${field('floorMs')} must be positive and at most ceilingMs (${String(r.floorMs)} > ${String(r.ceilingMs)})`, 'adaptiveTimeout.floorMs');
  }
  for (const name of ['window', 'minSamples'] as const) {
    if (!Number.isInteger(r[name]) || r[name] < 1) throw new ConfigError(`${field(name)} must be a positive integer, got ${String(r[name])}`, `adaptiveTimeout.${name}`);
  }
  if (r.minSamples > r.window) throw new ConfigError(`${field('minSamples')} must be at most window`, 'adaptiveTimeout.minSamples');
  return r;
}

/** One tool's adaptive timeout: a ring of recent successful attempt durations. */
export class AdaptiveTimeout {
  readonly options: Resolved;
  private readonly ring: number[] = [];
  private next = 0;
  private cached: AttemptTimeout | undefined;
  /** Successes since the p99 was last taken. */
  private sinceComputed = 0;
  /** Settles when the history has been read from the store (at once without one). */
  loaded: Promise<void> = Promise.resolve();

  constructor(
    readonly toolName: string,
    private readonly fixedMs: number,
    options: AdaptiveTimeoutOptions,
  ) {
    this.options = resolve(toolName, fixedMs, options);
  }

  /** The timeout for the next attempt, and why. */
  current(): AttemptTimeout {
    if (this.cached !== undefined) return this.cached;
    const samples = this.ring.length;
    const { k, floorMs, ceilingMs, minSamples } = this.options;
    if (samples < minSamples) {
      this.cached = { ms: this.fixedMs, basis: 'fixed', p99_ms: null, samples, reason: `${samples} of ${minSamples} successes needed; the tool's timeout applies` };
      return this.cached;
    }
    const sorted = [...this.ring].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)]!;
    const raw = Math.ceil(k * p99);
    const ms = Math.min(ceilingMs, Math.max(floorMs, raw));
    const basis = ms === raw ? 'adaptive' : ms === floorMs ? 'floor' : 'ceiling';
    const clamp = basis === 'adaptive' ? '' : basis === 'floor' ? `, raised to the ${floorMs} ms floor` : `, cut to the ${ceilingMs} ms ceiling`;
    this.cached = { ms, basis, p99_ms: p99, samples, reason: `${k} x p99 ${p99} ms of the last ${samples} successes = ${raw} ms${clamp}` };
    return this.cached;
  }

  /** A successful attempt's duration. */
  observe(durationMs: number): void {
    if (!(durationMs >= 0)) return;
    if (this.ring.length < this.options.window) this.ring.push(durationMs);
    else this.ring[this.next] = durationMs;
    this.next = (this.next + 1) % this.options.window;
    // The p99 of a window moves slowly: taken again every twentieth of the window (10 successes
    // of 200), not on every call, where sorting the window would cost more than the call itself.
    this.sinceComputed++;
    if (this.ring.length <= this.options.minSamples || this.sinceComputed >= Math.max(1, Math.floor(this.options.window / 20))) this.invalidate();
  }

  private invalidate(): void {
    this.cached = undefined;
    this.sinceComputed = 0;
  }

  /** Reads the tool's most recent successes back from the store; store errors leave the fixed timeout. */
  load(store: RecordReader, onError: (error: unknown) => void): Promise<void> {
    this.loaded = store
      .query({ toolName: this.toolName, statuses: ['success'], order: 'desc', limit: this.options.window })
      .then((records) => {
        // Oldest first, so that what this process observes meanwhile stays the most recent.
        const durations: number[] = [];
        for (const r of records) {
          const last = r.attempts[r.attempts.length - 1];
          const d = last !== undefined && last.outcome === 'success' ? last.duration_ms : r.retry_count === 0 ? r.duration_ms : undefined;
          if (d !== undefined) durations.push(d);
        }
        const seen = this.ring.splice(0);
        this.next = 0;
        for (const d of durations.reverse()) this.observe(d);
        for (const d of seen) this.observe(d);
        this.invalidate();
      }, onError);
    return this.loaded;
  }
}
