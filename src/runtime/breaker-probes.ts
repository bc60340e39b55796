/**
 * Background probes of open circuits (seed 001 section 4.3): while a tool's circuit is open, the
 * runtime itself tries the tool at each cooldown, with the tool's declared `healthCheck`, or
 * with the call whose failure opened the circuit when repeating it is safe (idempotent tools
 * only). A probe that succeeds closes the circuit, so agents find the tool back without one of
 * their calls paying for the half-open try; one that fails reopens it until the next cooldown.
 * With breakers shared through Redis, the breaker's `claimProbe` lets one process probe per
 * cooldown across the fleet.
 *
 * Timers run on the runtime's clock (virtual in tests); on the system clock they do not keep the
 * process alive.
 */
import { systemClock, canSchedule, type Clock } from '../core/clock.js';
import { countsAgainstBreaker } from '../core/taxonomy.js';
import { classifyError, classifyOutput, timeoutClassification, type Classification } from './classify.js';
import type { ToolContext } from './define-tool.js';
import type { RegisteredTool } from './registry.js';

/** What the prober did, for `rt.breakers.probes()`. */
export interface ProbeStats {
  /** Probes sent. */
  sent: number;
  /** Probes that closed their circuit. */
  closed: number;
  /** Probes this process did not send because another one held the fleet's probe. */
  yielded: number;
}

export class BreakerProber {
  private readonly timers = new Map<string, () => void>();
  private readonly lastArgs = new Map<string, unknown>();
  private stopped = false;
  readonly stats: ProbeStats = { sent: 0, closed: 0, yielded: 0 };

  constructor(
    private readonly clock: Clock,
    private readonly reportError: (error: unknown, where: string) => void,
  ) {}

  /** Whether the tool can be probed: it declares a health call, or repeating it is safe. */
  static canProbe(entry: RegisteredTool): boolean {
    return entry.tool.healthCheck !== undefined || entry.tool.idempotent;
  }

  /**
   * The circuit of `entry` is open (it just opened on a call with `args`, or refused one: with
   * shared breakers another process may have opened it): probe it after the cooldown.
   */
  opened(entry: RegisteredTool, args: unknown): void {
    if (this.stopped || !BreakerProber.canProbe(entry) || this.timers.has(entry.tool.name)) return;
    this.lastArgs.set(entry.tool.name, args);
    const openedAt = entry.breaker.snapshot().openedAt ?? this.clock.now();
    this.schedule(entry, openedAt + entry.breaker.options.cooldownMs);
  }

  /** Cancels every pending probe. */
  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }

  private schedule(entry: RegisteredTool, at: number): void {
    const name = entry.tool.name;
    this.timers.get(name)?.();
    const fire = () => {
      this.timers.delete(name);
      this.probe(entry).catch((error: unknown) => this.reportError(error, 'breaker probe'));
    };
    this.timers.set(name, this.timer(at, fire));
  }

  private timer(at: number, fire: () => void): () => void {
    if (this.clock === systemClock) {
      const handle = setTimeout(fire, Math.max(0, at - Date.now()));
      handle.unref();
      return () => clearTimeout(handle);
    }
    if (canSchedule(this.clock)) return this.clock.schedule(at, fire);
    const stop = new AbortController();
    this.clock.sleep(Math.max(0, at - this.clock.now()), stop.signal).then(fire, () => undefined);
    return () => stop.abort();
  }

  private async probe(entry: RegisteredTool): Promise<void> {
    if (this.stopped) return;
    const { breaker } = entry;
    const now = this.clock.now();
    const state = breaker.peek(now);
    if (state === 'closed') return;
    const cooldown = breaker.options.cooldownMs;
    if (state === 'open') {
      // Reopened since (another call's probe failed): probe after its cooldown.
      this.schedule(entry, (breaker.snapshot().openedAt ?? now) + cooldown);
      return;
    }
    if (breaker.claimProbe !== undefined && !(await breaker.claimProbe(now))) {
      this.stats.yielded++;
      this.schedule(entry, now + cooldown);
      return;
    }
    if (breaker.admit(now) !== 'probe') {
      // An agent's call is the half-open probe already.
      this.schedule(entry, now + cooldown);
      return;
    }
    this.stats.sent++;
    const failure = await this.run(entry);
    const ended = this.clock.now();
    if (failure === undefined) {
      breaker.onSuccess();
      this.stats.closed++;
      this.lastArgs.delete(entry.tool.name);
      return;
    }
    if (countsAgainstBreaker(failure.category, failure.type)) breaker.onFailure(ended);
    else breaker.onNeutral();
    this.schedule(entry, ended + cooldown);
  }

  /** Runs the probe under the tool's timeout; undefined when it succeeded. */
  private run(entry: RegisteredTool): Promise<Classification | undefined> {
    const { tool } = entry;
    const controller = new AbortController();
    const clock = this.clock;
    const ctx: ToolContext = { signal: controller.signal, attempt: 0, idempotencyKey: `probe-${tool.name}-${clock.now()}`, traceId: `breaker-probe:${tool.name}`, toolName: tool.name, clock };
    return new Promise<Classification | undefined>((resolve) => {
      let settled = false;
      const settle = (c: Classification | undefined) => {
        if (settled) return;
        settled = true;
        cancel();
        resolve(c);
      };
      const cancel = this.timer(clock.now() + tool.timeoutMs, () => {
        controller.abort(new DOMException(`${tool.name} probe timed out after ${tool.timeoutMs} ms`, 'TimeoutError'));
        settle(timeoutClassification(tool.timeoutMs));
      });
      let pending: unknown;
      try {
        pending = tool.healthCheck !== undefined ? tool.healthCheck(ctx) : tool.execute(this.lastArgs.get(tool.name) ?? {}, ctx);
      } catch (error) {
        settle(classifyError(error, clock.now()));
        return;
      }
      Promise.resolve(pending).then(
        (output) => settle(classifyOutput(output, clock.now())),
        (error: unknown) => settle(classifyError(error, clock.now())),
      );
    });
  }
}
