/**
 * What the runner tracks over a run's calls, as pure reducers: `(state, event) => state`. The
 * runner folds the events as they happen; a test folds a plain array.
 */
import type { CallTrace } from './types.js';

/** A call asked for, or its answer back (its trace), `at` the run's clock time (ms). */
export type CallEvent = { type: 'call'; tool: string; at: number } | { type: 'answer'; call: Pick<CallTrace, 'tool' | 'ok' | 'retryAfterMs'>; at: number };

// --- Retry-After ------------------------------------------------------------------------------

/** Waits that honored Retry-After / waits that were due, and the waits still owed per tool. */
export interface RetryAfterState {
  readonly honored: number;
  readonly due: number;
  /** Per tool: when its failure asking for a wait came back, and the wait (ms). */
  readonly owed: ReadonlyMap<string, { at: number; waitMs: number }>;
}

export const RETRY_AFTER_START: RetryAfterState = { honored: 0, due: 0, owed: new Map() };

/**
 * A failure with a Retry-After makes a wait due before the tool's next call; that call honors it
 * when it comes at least the wait after the failure's answer. A call already in flight when the
 * failure came back is not the next call.
 */
export function retryAfterStep(state: RetryAfterState, event: CallEvent): RetryAfterState {
  if (event.type === 'call') {
    const owed = state.owed.get(event.tool);
    if (owed === undefined) return state;
    const rest = new Map(state.owed);
    rest.delete(event.tool);
    return { honored: state.honored + (event.at - owed.at >= owed.waitMs ? 1 : 0), due: state.due + 1, owed: rest };
  }
  const { call } = event;
  if (call.ok || call.retryAfterMs === undefined) return state;
  return { ...state, owed: new Map(state.owed).set(call.tool, { at: event.at, waitMs: call.retryAfterMs }) };
}

// --- Budget -----------------------------------------------------------------------------------

export type BudgetExhausted = 'calls' | 'virtual_ms';

export interface BudgetLimits {
  calls: number;
  /** The run's clock time (ms) at which its virtual time runs out. */
  deadline: number;
}

/**
 * A request for a call (`started`: calls already started), an answer (`answered`: calls answered
 * so far), or a sleep that reached the deadline; `at` is the run's clock time (ms).
 */
export type BudgetEvent =
  | { type: 'request'; at: number; started: number }
  | { type: 'answer'; at: number; answered: number }
  | { type: 'slept_to_deadline' };

export interface BudgetState {
  /** What ran out first, once something did. */
  readonly exhausted: BudgetExhausted | undefined;
  /** Requests made after it ran out. */
  readonly overBudget: number;
  /**
   * What the last request gets: run as a call, answered BUDGET_EXHAUSTED (the first one past the
   * budget, so the agent can wrap up), or the run ended (any later one: a runaway loop).
   */
  readonly verdict: 'call' | 'budget_error' | 'end_run';
}

export const BUDGET_START: BudgetState = { exhausted: undefined, overBudget: 0, verdict: 'call' };

const exhaust = (state: BudgetState, why: BudgetExhausted): BudgetState => (state.exhausted === undefined ? { ...state, exhausted: why } : state);

export function budgetStep(state: BudgetState, event: BudgetEvent, limits: BudgetLimits): BudgetState {
  switch (event.type) {
    case 'request': {
      let next = state.exhausted === undefined && event.at >= limits.deadline ? exhaust(state, 'virtual_ms') : state;
      if (next.exhausted === undefined && event.started < limits.calls) return next.verdict === 'call' ? next : { ...next, verdict: 'call' };
      next = exhaust(next, 'calls');
      const overBudget = next.overBudget + 1;
      return { ...next, overBudget, verdict: overBudget > 1 ? 'end_run' : 'budget_error' };
    }
    case 'answer': {
      const next = event.answered >= limits.calls ? exhaust(state, 'calls') : state;
      return event.at >= limits.deadline ? exhaust(next, 'virtual_ms') : next;
    }
    case 'slept_to_deadline':
      return exhaust(state, 'virtual_ms');
  }
}

// --- Loops ------------------------------------------------------------------------------------

/** The current streak of identical failing calls per (tool, arguments), and the longest seen. */
export interface LoopState {
  readonly streaks: ReadonlyMap<string, number>;
  readonly longest: number;
}

export const LOOP_START: LoopState = { streaks: new Map(), longest: 0 };

/** A success ends its (tool, arguments) streak; a failure lengthens it. `key` names the pair. */
export function loopStep(state: LoopState, call: CallTrace, key: string): LoopState {
  if (call.ok) {
    if (!state.streaks.has(key)) return state;
    const streaks = new Map(state.streaks);
    streaks.delete(key);
    return { ...state, streaks };
  }
  const streak = (state.streaks.get(key) ?? 0) + 1;
  return { streaks: new Map(state.streaks).set(key, streak), longest: Math.max(state.longest, streak) };
}
