/**
 * Time, injected. Every wait (backoff, Retry-After, timeouts) and every time reading in the
 * runtime goes through a Clock, so a virtual clock makes a 30 s backoff cost nothing in tests.
 */

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason if the signal aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Optional capability: run a callback at an absolute time and cancel it cheaply. The runtime
 * uses it for per-call timeouts; a clock without it falls back to `sleep` with an AbortController.
 */
export interface SchedulingClock extends Clock {
  schedule(atMs: number, callback: () => void): () => void;
}

export function canSchedule(clock: Clock): clock is SchedulingClock {
  return typeof (clock as Partial<SchedulingClock>).schedule === 'function';
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Per-call timeouts without a timer per call: entries with the same timeout length expire in
 * insertion order, so each length gets a FIFO queue and one shared timer serves the earliest head.
 * Cancelled entries are only flagged; a queue is compacted once most of it is cancelled, which
 * keeps memory proportional to the calls actually in flight.
 *
 * The shared timer keeps the process alive exactly while some deadline is live: a call in flight
 * whose tool never settles must end in its timeout (and its record), not in the process running
 * out of work first (for an ES module awaiting the call at top level, exit code 13 and no record).
 * Once every deadline is cancelled the timer lets go, so a finished script does not wait out the
 * longest timeout.
 */
class DeadlineQueues {
  private readonly queues = new Map<number, DeadlineQueue>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  /** Deadlines neither cancelled nor fired. */
  private live = 0;

  schedule(atMs: number, callback: () => void): () => void {
    const now = Date.now();
    const span = Math.max(0, Math.round(atMs - now));
    let queue = this.queues.get(span);
    if (queue === undefined) {
      queue = new DeadlineQueue();
      this.queues.set(span, queue);
    }
    const entry: DeadlineEntry = { at: atMs, callback, cancelled: false };
    queue.push(entry);
    if (this.live++ === 0) this.timer?.ref();
    if (atMs < this.timerAt) this.arm(atMs, now);
    return () => {
      if (entry.cancelled) return;
      entry.cancelled = true;
      if (--this.live === 0) this.timer?.unref();
      queue.cancelled++;
      if (queue.cancelled > 64 && queue.cancelled * 2 > queue.length) queue.compact();
    };
  }

  private arm(atMs: number, now: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = atMs;
    this.timer = setTimeout(() => this.fire(), Math.max(0, atMs - now));
    if (this.live === 0) this.timer.unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    for (const [span, queue] of this.queues) {
      for (;;) {
        const head = queue.peek();
        if (head === undefined) break;
        if (head.cancelled) {
          queue.shift();
          queue.cancelled--;
          continue;
        }
        if (head.at > now) {
          if (head.at < next) next = head.at;
          break;
        }
        queue.shift();
        head.cancelled = true;
        this.live--;
        head.callback();
      }
      if (queue.length === 0) this.queues.delete(span);
    }
    if (next !== Infinity) this.arm(next, Date.now());
  }
}

interface DeadlineEntry {
  at: number;
  callback: () => void;
  cancelled: boolean;
}

/** An array-backed FIFO with a moving head, so shift() is O(1). */
class DeadlineQueue {
  private items: DeadlineEntry[] = [];
  private head = 0;
  cancelled = 0;

  get length(): number {
    return this.items.length - this.head;
  }
  push(entry: DeadlineEntry): void {
    this.items.push(entry);
  }
  peek(): DeadlineEntry | undefined {
    return this.items[this.head];
  }
  shift(): void {
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
  compact(): void {
    this.items = this.items.slice(this.head).filter((e) => !e.cancelled);
    this.head = 0;
    this.cancelled = 0;
  }
}

function createSystemClock(): SchedulingClock {
  const deadlines = new DeadlineQueues();
  return {
    now: () => Date.now(),
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(abortReason(signal));
      return new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          clearTimeout(timer);
          reject(abortReason(signal!));
        };
        const timer = setTimeout(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, Math.max(0, ms));
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    schedule: (atMs, callback) => deadlines.schedule(atMs, callback),
  };
}

/** Real time. */
export const systemClock: SchedulingClock = createSystemClock();

export interface VirtualClockOptions {
  /** Epoch ms the clock starts at. Default: 2026-01-01T00:00:00Z. */
  startMs?: number;
  /**
   * When true (the default), time jumps to the next pending timer as soon as the process has
   * nothing else to do (after pending I/O callbacks and microtasks), like a discrete-event
   * simulation. When false, time moves only through `advance`/`runAll`.
   */
  autoAdvance?: boolean;
}

export interface VirtualClock extends SchedulingClock {
  /** Moves time forward by `ms`, firing every timer due on the way, in order. */
  advance(ms: number): Promise<void>;
  /** Fires every pending timer, jumping time to each in turn. */
  runAll(): Promise<void>;
  /** Number of pending timers (sleeps and scheduled callbacks). */
  readonly pending: number;
  /** Total virtual time slept through `sleep` since creation: handy to assert "it waited 30 s". */
  readonly slept: number;
  /**
   * Holds automatic advancing until the returned release is called (and every other hold is
   * released): for real I/O in flight, which answers in real time and must not see virtual time
   * jump past it. `advance` and `runAll` still move time. Releasing twice is harmless.
   */
  hold(): () => void;
}

interface VirtualTimer {
  at: number;
  seq: number;
  fire: () => void;
  cancelled: boolean;
}

/**
 * A clock whose time only moves when told to, or when the process is idle (autoAdvance).
 * Timers fire in time order; ties fire in the order they were set.
 */
export function createVirtualClock(options: VirtualClockOptions = {}): VirtualClock {
  let now = options.startMs ?? Date.UTC(2026, 0, 1);
  const autoAdvance = options.autoAdvance ?? true;
  let timers: VirtualTimer[] = [];
  let seq = 0;
  let slept = 0;
  let idleCheck: NodeJS.Immediate | undefined;
  let holds = 0;

  const sortTimers = () => timers.sort((a, b) => a.at - b.at || a.seq - b.seq);

  const add = (at: number, fire: () => void): VirtualTimer => {
    const timer: VirtualTimer = { at, seq: seq++, fire, cancelled: false };
    timers.push(timer);
    sortTimers();
    if (autoAdvance) requestIdleAdvance();
    return timer;
  };

  const fireNext = (limit: number): boolean => {
    timers = timers.filter((t) => !t.cancelled);
    const next = timers[0];
    if (next === undefined || next.at > limit) return false;
    timers.shift();
    if (next.at > now) now = next.at;
    next.cancelled = true;
    next.fire();
    return true;
  };

  // Defers the jump until I/O callbacks and the microtask queue have drained twice, so that
  // promise chains started by the previous timer get to register their own timers first.
  function requestIdleAdvance(): void {
    if (idleCheck !== undefined) return;
    idleCheck = setImmediate(() => {
      idleCheck = setImmediate(() => {
        idleCheck = undefined;
        // Held: the last release asks again.
        if (holds > 0) return;
        if (fireNext(Infinity) && timers.length > 0) requestIdleAdvance();
      });
    });
  }

  const flushMicrotasks = () => new Promise<void>((resolve) => setImmediate(resolve));

  return {
    now: () => now,
    sleep(ms, signal) {
      if (signal?.aborted) return Promise.reject(abortReason(signal));
      const duration = Math.max(0, ms);
      return new Promise<void>((resolve, reject) => {
        const timer = add(now + duration, () => {
          signal?.removeEventListener('abort', onAbort);
          slept += duration;
          resolve();
        });
        function onAbort() {
          timer.cancelled = true;
          reject(abortReason(signal!));
        }
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    schedule(atMs, callback) {
      const timer = add(atMs, callback);
      return () => {
        timer.cancelled = true;
      };
    },
    async advance(ms) {
      const target = now + ms;
      await flushMicrotasks();
      while (fireNext(target)) await flushMicrotasks();
      now = target;
    },
    async runAll() {
      await flushMicrotasks();
      while (fireNext(Infinity)) await flushMicrotasks();
    },
    get pending() {
      return timers.filter((t) => !t.cancelled).length;
    },
    get slept() {
      return slept;
    },
    hold() {
      holds++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--holds === 0 && autoAdvance && timers.length > 0) requestIdleAdvance();
      };
    },
  };
}
