/**
 * Rule triggers as predicates over (call count, time, random draw). Compiled once per plan
 * (window bounds are resolved against the plan's start then), evaluated on every matching call.
 */
import type { FaultTrigger } from './plan-spec.js';
import { isoInstant } from './timestamps.js';

export interface TriggerInput {
  /** 1-based count of calls of this tool that matched the rule, this one included. */
  count: number;
  /** Clock time of the call. */
  now: number;
  /** The rule's seeded random stream for this tool; drawn only by probability triggers. */
  random: () => number;
}

export type TriggerTest = (input: TriggerInput) => boolean;

/** A window bound as epoch ms: ISO times are absolute, numbers are offsets from the plan's start. */
export function windowBound(bound: string | number, startedAt: number): number {
  return typeof bound === 'number' ? startedAt + bound : (isoInstant(bound) ?? Number.NaN);
}

export function compileTrigger(trigger: FaultTrigger, startedAt: number): TriggerTest {
  if (trigger === 'always') return () => true;
  if (trigger === 'first_call_only') return ({ count }) => count === 1;
  if ('nth' in trigger) {
    const calls = new Set(trigger.nth);
    return ({ count }) => calls.has(count);
  }
  if ('every' in trigger) {
    const every = trigger.every;
    return ({ count }) => count % every === 0;
  }
  if ('after' in trigger) {
    const after = trigger.after;
    return ({ count }) => count > after;
  }
  if ('probability' in trigger) {
    const p = trigger.probability;
    return ({ random }) => random() < p;
  }
  const from = trigger.window.from === undefined ? -Infinity : windowBound(trigger.window.from, startedAt);
  const until = trigger.window.until === undefined ? Infinity : windowBound(trigger.window.until, startedAt);
  return ({ now }) => now >= from && now < until;
}
