/**
 * A clock that starts at a chosen instant and then runs at real speed. The mock tool server
 * uses it by default: the catalog's data is seeded around a fixed "now" (so a seed means the
 * same data on any day), and its orders still ship and its rate limits still refill while a
 * human pokes at it with curl.
 */
import { systemClock, type Clock } from '../core/clock.js';

export function anchoredClock(startMs: number, base: Clock = systemClock): Clock {
  const offset = startMs - base.now();
  return {
    now: () => base.now() + offset,
    sleep: (ms, signal) => base.sleep(ms, signal),
  };
}
