/**
 * Virtual time over real sockets. A run's virtual clock jumps to its next timer as soon as the
 * process is idle; with the tools behind a socket, "idle" can mean "a response is on the wire",
 * and a jump then would fire the runtime's timeout or the agent's backoff in the middle of a
 * request that takes a millisecond of real time. The gate holds the clock while any exchange
 * of the run is doing real work, and lets it run when every exchange in flight is parked on a
 * virtual wait (an injected delay or hang, held by the proxy on the same clock).
 *
 * An exchange is one request on the wire, from the moment the client sends it until both the
 * client has its outcome and the proxy has recorded it (the record is the proxy's last act for
 * that request, so nothing of it is left on a socket). Counted, not tracked one by one, because
 * a proxy's waits do not say which request they belong to:
 *
 *   open     = sent - settled on the client side   (requests the client still waits for)
 *   serving  = sent - recorded by the proxy        (requests the proxy still works on)
 *   parked   = the proxy's virtual waits in progress
 *
 * Time may move when open == parked and serving == parked and no client-settled request is still
 * being served (settled <= recorded): every request in flight is parked on virtual time, none is
 * on the wire. With one call at a time (every reference agent) this is exact. With concurrent
 * calls from one run the counts can, for an instant, let time move while a response is on the
 * wire next to a parked request whose client already left; determinism then rests on the agent.
 *
 * A record that never comes (a proxy bug) would hold the clock for good; a real-time safety
 * release after {@link STUCK_MS} turns that into a slow run instead of a stuck one.
 */
import type { Clock, VirtualClock } from '../../core/clock.js';

/** Real time after which an exchange the client finished with no longer holds the clock. */
export const STUCK_MS = 5_000;

export interface Exchange {
  /** The client has its outcome (a response, an error, or it gave up). Idempotent. */
  settle(): void;
}

export interface IoGate {
  /** A request is about to go on the wire. */
  begin(): Exchange;
  /** The proxy recorded one request (its last act for it). */
  recorded(): void;
  /** The clock for the servers of this run: the run's time, and waits that count as parked. */
  readonly serverClock: Clock;
  /** Resolves once every request sent so far is settled and recorded (or given up on after {@link STUCK_MS}). */
  drained(): Promise<void>;
  /** Whether the clock is held now (for tests). */
  readonly holding: boolean;
}

export function createIoGate(clock: VirtualClock): IoGate {
  let sent = 0;
  let settled = 0;
  let recordedCount = 0;
  let parked = 0;
  let release: (() => void) | undefined;
  let safety: NodeJS.Timeout | undefined;
  let onDrained: (() => void) | undefined;
  const isDrained = () => settled === sent && recordedCount >= sent;

  const update = () => {
    const open = sent - settled;
    const serving = sent - recordedCount;
    const hold = open !== parked || serving !== parked || settled > recordedCount;
    if (hold && release === undefined) release = clock.hold();
    else if (!hold && release !== undefined) {
      const r = release;
      release = undefined;
      r();
    }
    // Waiting on a record after the client is done: guard against one that never comes.
    if (settled > recordedCount && safety === undefined) {
      safety = setTimeout(() => {
        safety = undefined;
        recordedCount = Math.max(recordedCount, settled);
        update();
      }, STUCK_MS);
      safety.unref();
    } else if (settled <= recordedCount && safety !== undefined) {
      clearTimeout(safety);
      safety = undefined;
    }
    if (onDrained !== undefined && isDrained()) onDrained();
  };

  const serverClock: Clock = {
    now: () => clock.now(),
    async sleep(ms, signal) {
      parked++;
      update();
      try {
        await clock.sleep(ms, signal);
      } finally {
        parked--;
        update();
      }
    },
  };

  return {
    begin() {
      sent++;
      update();
      let done = false;
      return {
        settle() {
          if (done) return;
          done = true;
          settled++;
          update();
        },
      };
    },
    recorded() {
      recordedCount++;
      update();
    },
    serverClock,
    drained() {
      if (isDrained()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const previous = onDrained;
        onDrained = () => {
          onDrained = undefined;
          previous?.();
          resolve();
        };
      });
    },
    get holding() {
      return release !== undefined;
    },
  };
}
