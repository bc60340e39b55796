/**
 * The loop guard: per session, refuses a call before it runs when the same call (tool and
 * arguments) has already failed `maxIdenticalFailures - 1` times, and a non-idempotent write that
 * already succeeded with the same arguments inside a window. Seed 000 calls more than 3
 * identical failing retries a loop (section 2.2); agents in the wild make dozens.
 *
 * Sessions are keyed by the call's `sessionId`, else its trace id; a call with neither is not
 * part of a session and is never refused. Memory is bounded: the least recently used sessions
 * and, within one, the least recently used calls are forgotten first.
 */
import { ConfigError } from '../core/errors.js';
import { paramsHash } from '../core/params-hash.js';
import type { FailureCategory, FeedbackAction } from '../core/taxonomy.js';
import { rejection, type Classification } from './classify.js';

export interface LoopGuardOptions {
  /** The Nth identical failing call in a session is refused (N - 1 ran and failed). Default 4. */
  maxIdenticalFailures?: number;
  /**
   * A non-idempotent tool called again with the same arguments after it succeeded, within
   * `duplicateWindowMs`: `'refuse'` (default) refuses it unless the call carries an
   * `idempotencyKey` (then the tool deduplicates); `'flag'` runs it and adds a `notice` to the
   * result and `feedback` to its record; `'off'` ignores it.
   */
  duplicateWrites?: 'refuse' | 'flag' | 'off';
  /** How long a successful write counts for the duplicate check. Default 5 minutes. */
  duplicateWindowMs?: number;
  /** Sessions remembered at once. Default 10 000. */
  maxSessions?: number;
  /** Distinct calls remembered per session. Default 256. */
  maxCallsPerSession?: number;
}

export interface ResolvedLoopGuardOptions {
  maxIdenticalFailures: number;
  duplicateWrites: 'refuse' | 'flag' | 'off';
  duplicateWindowMs: number;
  maxSessions: number;
  maxCallsPerSession: number;
}

export const DEFAULT_LOOP_GUARD: ResolvedLoopGuardOptions = {
  maxIdenticalFailures: 4,
  duplicateWrites: 'refuse',
  duplicateWindowMs: 5 * 60_000,
  maxSessions: 10_000,
  maxCallsPerSession: 256,
};

/** What the guard needs to know about a failure to say what to do instead of repeating it. */
export interface FailureSummary {
  category: FailureCategory;
  type: string;
  code: string;
  action: FeedbackAction;
}

interface CallMemory {
  failures: number;
  last: FailureSummary | undefined;
  /** When this exact write last succeeded, and as which execution. */
  wroteAt: number | undefined;
  wroteAs: string | undefined;
}

/** The guard's verdict on a call about to run. */
export type LoopVerdict =
  | { kind: 'loop'; failures: number; last: FailureSummary; message: string; action: FeedbackAction }
  | { kind: 'duplicate_write'; refuse: boolean; previousExecutionId: string; agoMs: number; message: string };

/** One call as the guard sees it: where it belongs and what it is. */
export interface GuardedCall {
  /** Session and tool and the arguments' hash; undefined when the call has no session. */
  readonly loopKey: string | undefined;
  readonly toolName: string;
}

function checkOptions(options: LoopGuardOptions): ResolvedLoopGuardOptions {
  const resolved = { ...DEFAULT_LOOP_GUARD, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as ResolvedLoopGuardOptions;
  const { maxIdenticalFailures: n, duplicateWindowMs: w } = resolved;
  if (!Number.isInteger(n) || n < 2) throw new ConfigError(`loopGuard.maxIdenticalFailures must be an integer >= 2, got ${String(n)}`, 'loopGuard.maxIdenticalFailures');
  if (typeof w !== 'number' || !(w >= 0) || !Number.isFinite(w)) throw new ConfigError(`loopGuard.duplicateWindowMs must be a non-negative number, got ${String(w)}`, 'loopGuard.duplicateWindowMs');
  if (!['refuse', 'flag', 'off'].includes(resolved.duplicateWrites)) {
    throw new ConfigError(`loopGuard.duplicateWrites must be refuse, flag or off, got ${String(resolved.duplicateWrites)}`, 'loopGuard.duplicateWrites');
  }
  for (const field of ['maxSessions', 'maxCallsPerSession'] as const) {
    if (!Number.isInteger(resolved[field]) || resolved[field] < 1) throw new ConfigError(`loopGuard.${field} must be a positive integer, got ${String(resolved[field])}`, `loopGuard.${field}`);
  }
  return resolved;
}

/** What to do instead of the same call again, after a failure of this kind. */
function instead(last: FailureSummary, toolName: string, fallback: string | undefined): { action: FeedbackAction; text: string } {
  switch (last.category) {
    case 'parameter':
      return { action: 'retry_with_fixed_params', text: `Change the arguments as the earlier errors said, or stop calling ${toolName}.` };
    case 'auth':
      return { action: 'escalate_to_user', text: 'Changing nothing cannot fix the credentials: tell the user which access is missing.' };
    case 'business':
    case 'semantic':
      return { action: 'try_alternative', text: 'Change the request (another identifier, broader filters) or use another source.' };
    default:
      return fallback !== undefined
        ? { action: 'use_fallback', text: `Use ${fallback} instead.` }
        : { action: 'skip', text: `Skip this step, or tell the user that ${toolName} keeps failing.` };
  }
}

export class LoopGuard {
  readonly options: ResolvedLoopGuardOptions;
  private readonly sessions = new Map<string, Map<string, CallMemory>>();

  constructor(options: LoopGuardOptions = {}) {
    this.options = checkOptions(options);
  }

  /** The key of a call: undefined when it belongs to no session. */
  keyOf(session: string | undefined, toolName: string, args: unknown): string | undefined {
    return session === undefined ? undefined : `${session}\u001f${toolName}\u001f${paramsHash(args)}`;
  }

  private memory(key: string, create: boolean): CallMemory | undefined {
    const cut = key.indexOf('\u001f');
    const sessionId = key.slice(0, cut);
    let session = this.sessions.get(sessionId);
    if (session === undefined) {
      if (!create) return undefined;
      if (this.sessions.size >= this.options.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
      session = new Map();
    } else {
      // Re-inserted, so the Map's order is least recently used first.
      this.sessions.delete(sessionId);
    }
    this.sessions.set(sessionId, session);
    const callKey = key.slice(cut + 1);
    let entry = session.get(callKey);
    if (entry === undefined) {
      if (!create) return undefined;
      if (session.size >= this.options.maxCallsPerSession) session.delete(session.keys().next().value!);
      entry = { failures: 0, last: undefined, wroteAt: undefined, wroteAs: undefined };
    } else {
      session.delete(callKey);
    }
    session.set(callKey, entry);
    return entry;
  }

  /**
   * Whether the call may run. `write`: the tool is not idempotent; `keyed`: the call carries an
   * idempotency key of the caller's.
   */
  check(call: GuardedCall, now: number, write: boolean, keyed: boolean, fallback: string | undefined): LoopVerdict | undefined {
    if (call.loopKey === undefined) return undefined;
    const entry = this.memory(call.loopKey, false);
    if (entry === undefined) return undefined;
    const n = this.options.maxIdenticalFailures;
    if (entry.failures >= n - 1 && entry.last !== undefined) {
      const next = instead(entry.last, call.toolName, fallback);
      const message =
        `${call.toolName} has already failed ${entry.failures} times in this session with exactly these arguments ` +
        `(last: ${entry.last.type}, ${entry.last.code}), so this call was not run. Do not repeat it unchanged. ${next.text}`;
      return { kind: 'loop', failures: entry.failures, last: entry.last, message, action: next.action };
    }
    const mode = this.options.duplicateWrites;
    if (write && mode !== 'off' && entry.wroteAt !== undefined && now - entry.wroteAt <= this.options.duplicateWindowMs) {
      const refuse = mode === 'refuse' && !keyed;
      if (mode === 'refuse' && keyed) return undefined;
      const ago = Math.max(0, Math.round((now - entry.wroteAt) / 1000));
      const message =
        `${call.toolName} already succeeded with exactly these arguments ${ago} s ago in this session (execution ${entry.wroteAs}). ` +
        (refuse
          ? 'This call was not run, so nothing happened twice. Read the current state to check the first one; if a second identical write is really meant, call again with an idempotencyKey of its own.'
          : 'It ran again: check the current state for a duplicate.');
      return { kind: 'duplicate_write', refuse, previousExecutionId: entry.wroteAs ?? '', agoMs: now - entry.wroteAt, message };
    }
    return undefined;
  }

  /** A call that ran (or was rejected by validation) and failed. The guard's own refusals are not counted. */
  noteFailure(call: GuardedCall, failure: FailureSummary): void {
    if (call.loopKey === undefined || failure.category === 'logic') return;
    const entry = this.memory(call.loopKey, true)!;
    entry.failures++;
    entry.last = failure;
  }

  /** A call that succeeded: its failures are forgiven; a write is remembered for the duplicate check. */
  noteSuccess(call: GuardedCall, now: number, write: boolean, executionId: string): void {
    if (call.loopKey === undefined) return;
    const entry = this.memory(call.loopKey, write);
    if (entry === undefined) return;
    entry.failures = 0;
    entry.last = undefined;
    if (write) {
      entry.wroteAt = now;
      entry.wroteAs = executionId;
    }
  }
}

/** The classification of a call the guard refused: rejected at request_build, category logic. */
export function refusalOf(verdict: LoopVerdict): Classification {
  return verdict.kind === 'loop'
    ? rejection('request_build', 'logic', 'loop_detected', 'LOOP_DETECTED', verdict.message)
    : rejection('request_build', 'logic', 'duplicate_write', 'DUPLICATE_WRITE', verdict.message);
}
