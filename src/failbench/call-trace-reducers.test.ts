import { describe, expect, it } from 'vitest';
import {
  BUDGET_START,
  budgetStep,
  LOOP_START,
  loopStep,
  RETRY_AFTER_START,
  retryAfterStep,
  type BudgetEvent,
  type BudgetLimits,
  type CallEvent,
} from './call-trace-reducers.js';
import type { CallTrace } from './types.js';

const call = (tool: string, at: number): CallEvent => ({ type: 'call', tool, at });
const answer = (tool: string, at: number, ok: boolean, retryAfterMs?: number): CallEvent => ({
  type: 'answer',
  at,
  call: { tool, ok, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) },
});
const retryAfterOf = (events: CallEvent[]) => {
  const { honored, due } = events.reduce(retryAfterStep, RETRY_AFTER_START);
  return { honored, due };
};

describe('retryAfterStep', () => {
  it('counts the next call of a tool whose failure asked for a wait, honored when it waited long enough', () => {
    expect(retryAfterOf([call('a', 0), answer('a', 10, false, 1000), call('a', 1010), answer('a', 1020, true)])).toEqual({ honored: 1, due: 1 });
    expect(retryAfterOf([call('a', 0), answer('a', 10, false, 1000), call('a', 500), answer('a', 510, true)])).toEqual({ honored: 0, due: 1 });
  });

  it('makes nothing due for a failure without a wait, a success, or another tool', () => {
    expect(retryAfterOf([answer('a', 10, false), call('a', 11), answer('a', 20, true, 500), call('a', 21), answer('b', 30, false, 100), call('c', 31)])).toEqual({ honored: 0, due: 0 });
  });

  it('does not count a call made before the failure came back, and counts one wait once', () => {
    const events = [call('a', 0), call('a', 5), answer('a', 10, false, 100), answer('a', 12, true), call('a', 200), call('a', 300)];
    expect(retryAfterOf(events)).toEqual({ honored: 1, due: 1 });
  });

  it('leaves the state it was given alone', () => {
    const owing = retryAfterStep(RETRY_AFTER_START, answer('a', 10, false, 100));
    retryAfterStep(owing, call('a', 500));
    expect(owing.owed.get('a')).toEqual({ at: 10, waitMs: 100 });
    expect(RETRY_AFTER_START.owed.size).toBe(0);
  });
});

describe('budgetStep', () => {
  const limits: BudgetLimits = { calls: 2, deadline: 1000 };
  const fold = (events: BudgetEvent[]) => events.map((_, i) => events.slice(0, i + 1).reduce((s, e) => budgetStep(s, e, limits), BUDGET_START));

  it('runs calls within the budget', () => {
    const states = fold([{ type: 'request', at: 0, started: 0 }, { type: 'answer', at: 10, answered: 1 }, { type: 'request', at: 10, started: 1 }]);
    expect(states.map((s) => [s.exhausted, s.verdict])).toEqual([
      [undefined, 'call'],
      [undefined, 'call'],
      [undefined, 'call'],
    ]);
  });

  it('answers the first request past the call budget, and ends the run at the second', () => {
    const states = fold([
      { type: 'request', at: 0, started: 0 },
      { type: 'request', at: 0, started: 1 },
      { type: 'request', at: 0, started: 2 },
      { type: 'request', at: 0, started: 2 },
    ]);
    expect(states.map((s) => [s.exhausted, s.verdict])).toEqual([
      [undefined, 'call'],
      [undefined, 'call'],
      ['calls', 'budget_error'],
      ['calls', 'end_run'],
    ]);
  });

  it('runs out of calls when the last call is answered, before any request past it', () => {
    const [, last] = fold([{ type: 'answer', at: 5, answered: 1 }, { type: 'answer', at: 6, answered: 2 }]);
    expect(last).toEqual({ exhausted: 'calls', overBudget: 0, verdict: 'call' });
  });

  it('runs out of virtual time at the deadline: an answer, a request or a sleep that reaches it', () => {
    expect(fold([{ type: 'answer', at: 1000, answered: 1 }]).at(-1)!.exhausted).toBe('virtual_ms');
    expect(fold([{ type: 'request', at: 1000, started: 0 }]).at(-1)).toEqual({ exhausted: 'virtual_ms', overBudget: 1, verdict: 'budget_error' });
    expect(fold([{ type: 'slept_to_deadline' }]).at(-1)!.exhausted).toBe('virtual_ms');
  });

  it('keeps what ran out first', () => {
    const states = fold([{ type: 'answer', at: 1200, answered: 2 }, { type: 'slept_to_deadline' }]);
    expect(states.map((s) => s.exhausted)).toEqual(['calls', 'calls']);
  });
});

describe('loopStep', () => {
  const trace = (tool: string, ok: boolean): CallTrace => ({ tool, args: {}, ok, virtualMs: 0 });
  const longest = (calls: CallTrace[]) => calls.reduce((s, c) => loopStep(s, c, c.tool), LOOP_START).longest;

  it('finds the longest streak of identical failures, a success ending its streak', () => {
    expect(longest([])).toBe(0);
    expect(longest([trace('a', false), trace('a', false), trace('b', false), trace('a', false)])).toBe(3);
    expect(longest([trace('a', false), trace('a', true), trace('a', false), trace('a', false)])).toBe(2);
  });
});
