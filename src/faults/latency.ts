/**
 * Latency samples for the `latency` fault. The random source is injected (seeded per plan, rule
 * and tool), so a plan replays the same delays run after run.
 */
import { MAX_FAULT_DELAY_MS, type LatencyParams } from './plan-spec.js';

/** Standard normal deviate by Box-Muller; `1 - u` keeps the logarithm away from zero. */
function standardNormal(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Milliseconds of delay, whole, never negative, within the params' bounds. */
export function sampleLatency(params: LatencyParams, random: () => number): number {
  if ('ms' in params) return Math.max(0, Math.round(params.ms));
  let ms: number;
  switch (params.distribution) {
    case 'uniform':
      return Math.round(params.min_ms + random() * (params.max_ms - params.min_ms));
    case 'normal':
      ms = params.mean_ms + params.stddev_ms * standardNormal(random);
      break;
    case 'exponential':
      ms = -params.mean_ms * Math.log(1 - random());
      break;
  }
  // A distribution's tail can reach past any timer; it stops at the longest wait a plan may give.
  return Math.round(Math.min(params.max_ms ?? MAX_FAULT_DELAY_MS, MAX_FAULT_DELAY_MS, Math.max(params.min_ms ?? 0, ms)));
}
