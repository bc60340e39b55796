/**
 * Rule triggers as predicates over (call count, time, random draw). Compiled once per plan
 * (window bounds are resolved against the plan's start then, and a window's jitter is drawn from
 * the plan's seed), evaluated on every matching call.
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
  /** A number in [0, 1) fixed per rule and tool by the plan's seed (one_of's choice). */
  pick: () => number;
}

export type TriggerTest = (input: TriggerInput) => boolean;

/** A window bound as epoch ms: ISO times are absolute, numbers are offsets from the plan's start. */
export function windowBound(bound: string | number, startedAt: number): number {
  return typeof bound === 'number' ? startedAt + bound : (isoInstant(bound) ?? Number.NaN);
}

/**
 * @param draw a number in [0, 1) from the plan's seed for this rule: how much of a window's
 * `jitter_ms` it gets.
 */
export function compileTrigger(trigger: FaultTrigger, startedAt: number, draw: () => number): TriggerTest {
  if (trigger === 'always') return () => true;
  if (trigger === 'first_call_only') return ({ count }) => count === 1;
  if ('nth' in trigger) {
    const calls = new Set(trigger.nth);
    return ({ count }) => calls.has(count);
  }
  if ('one_of' in trigger) {
    const calls = trigger.one_of;
    return ({ count, pick }) => count === calls[Math.min(calls.length - 1, Math.floor(pick() * calls.length))];
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
  const { from: start, until: end, jitter_ms: jitter } = trigger.window;
  const from = start === undefined ? -Infinity : windowBound(start, startedAt);
  const until = end === undefined ? Infinity : windowBound(end, startedAt) + (jitter === undefined || jitter === 0 ? 0 : Math.floor(draw() * jitter));
  return ({ now }) => now >= from && now < until;
}
