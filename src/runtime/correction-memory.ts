/**
 * The runtime's correction memory (seed 004 section 6): it notices, within a trace, a failure
 * followed by a call that recovered it, remembers (failure signature, what worked) in a bounded
 * LIFO, and answers "what fixed this last time?" when the same failure comes back.
 *
 * The cache is in process and synchronous, so the failure path pays one map lookup (plus the
 * signature, only when the tool has entries; signatures are cached by their raw fields) and the
 * success path one size check. The store, when it keeps a correction memory, is loaded once when
 * the runtime starts and written to in the background by one writer: corrections learned while a
 * write is in flight queue up and go in the next one, in one store call (`pushCorrections`).
 * Store errors go to `onError` and never reach a call.
 */
import { reportSafely } from '../core/notify.js';
import type { CorrectionRecovery, LastRecovery, ToolExecutionRecord } from '../core/record-types.js';
import { CorrectionBuffer, correctionLimits } from '../store/corrections.js';
import { cachedFailureSignature, effectiveFailureType } from '../core/failure-signature.js';
import type { CorrectionEntry, CorrectionLimits, CorrectionMemoryStore, CorrectionQuery, NewCorrection } from '../core/store-types.js';
import { paramsDelta } from '../core/params-delta.js';
import { cloneJson } from '../core/clone-json.js';

/** The `correctionMemory` runtime option. */
export type CorrectionMemoryOptions = Partial<CorrectionLimits>;

/** What a runtime exposes of its correction memory. */
export interface CorrectionMemoryView {
  /** The newest correction for a failure signature (see `failureSignature`). */
  latest(signature: string): CorrectionEntry | undefined;
  /** Newest first. */
  list(query?: CorrectionQuery): CorrectionEntry[];
  /** Settles once the entries stored earlier are loaded (at once without a store); never rejects. */
  readonly loaded: Promise<void>;
}

/** What a correction needs to know about the failed call. */
export type FailedCall = Pick<
  ToolExecutionRecord,
  'status' | 'tool_name' | 'failure_stage' | 'failure_category' | 'failure_type' | 'error_code' | 'error_message' | 'trace_id'
>;

/**
 * A failure handed to the agent in a trace, waiting for a call that recovers it: only what
 * learning needs, so that tracking does not keep whole records (outputs, stacks) alive.
 */
interface PendingFailure {
  failed: FailedCall;
  /** A non-idempotent call whose failure may have taken effect (see {@link repeatsTheCall}). */
  ambiguousWrite: boolean;
  step_index: number;
  params_hash: string;
  input_params: unknown;
  intent: unknown;
  retryAfterMs: number | null;
  /** Epoch ms the failed call ended. */
  endMs: number;
}

/** Traces with unrecovered failures tracked at once; the oldest trace is dropped beyond it. */
const MAX_PENDING_TRACES = 1000;
/** Unrecovered failures tracked per trace; the oldest is dropped beyond it. */
const MAX_PENDING_PER_TRACE = 8;
/** A repeat of the same call counts as "waited" after this long, when the failure named no Retry-After. */
const MIN_WAIT_MS = 1000;
/**
 * Corrections waiting for the store at most (a store that stalls); beyond it the oldest are dropped
 * and reported. A failed write is reported and not retried, so a failing store costs one attempt
 * per batch, never a loop.
 */
export const MAX_QUEUED_CORRECTIONS = 10_000;
/** A write starts at the next turn of the event loop, or at once when this many are waiting. */
const BATCH_START = 512;

const intentOf = (record: ToolExecutionRecord): unknown => record.context_snapshot['intent'];

/**
 * Recoveries that call the failed tool again. After an ambiguous write (a non-idempotent tool whose
 * call timed out, was reset, or met a 500/502/504: it may have acted) a second call may act twice,
 * so the memory never learns one of these as the fix there, nor offers one stored earlier (a
 * trajectory, another runtime's store): what fixes an ambiguous write is verifying the state first,
 * which is what the failure's own feedback says (`verify_state`). Another tool called next for the
 * same intent (a read of the state, typically) is still learned.
 */
export function repeatsTheCall(recovery: CorrectionRecovery): boolean {
  return recovery.action === 'retry_with_fixed_params' || recovery.action === 'retry' || recovery.action === 'wait_and_retry';
}

const offeredAfterAmbiguousWrite = (entry: CorrectionEntry): boolean => !repeatsTheCall(entry.recovery);

export class RuntimeCorrectionMemory implements CorrectionMemoryView {
  readonly #limits: CorrectionLimits;
  #cache: CorrectionBuffer;
  readonly #store: CorrectionMemoryStore | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #pending = new Map<string, PendingFailure[]>();
  /** Corrections not yet handed to the store, oldest first. */
  #queue: NewCorrection[] = [];
  /** Dropped from a full queue since the last report. */
  #dropped = 0;
  /** The writer draining the queue, while it runs. */
  #writer: Promise<void> | undefined;
  /** Starts the writer's first write now instead of at the next turn, while it waits for one. */
  #startNow: (() => void) | undefined;
  readonly loaded: Promise<void>;

  constructor(options: CorrectionMemoryOptions, store: CorrectionMemoryStore | undefined, onError: (error: unknown) => void) {
    this.#limits = correctionLimits(options);
    this.#cache = new CorrectionBuffer(this.#limits);
    this.#store = store;
    this.#onError = onError;
    this.loaded = store === undefined ? Promise.resolve() : this.#load(store);
  }

  /** True while some trace has a failure waiting for its recovery: the success path's only check. */
  get tracking(): boolean {
    return this.#pending.size !== 0;
  }

  latest(signature: string): CorrectionEntry | undefined {
    const entry = this.#cache.latest(signature);
    return entry === undefined ? undefined : (cloneJson(entry) as CorrectionEntry);
  }

  list(query?: CorrectionQuery): CorrectionEntry[] {
    return this.#cache.list(query);
  }

  /**
   * The last recovery for a failure record's signature, as the record's feedback carries it.
   * `ambiguousWrite`: the failure may have taken effect (see {@link repeatsTheCall}).
   */
  lastRecoveryFor(record: ToolExecutionRecord, ambiguousWrite = false): LastRecovery | undefined {
    if (!this.#cache.hasTool(record.tool_name)) return undefined;
    const signature = cachedFailureSignature(record);
    const entry =
      signature === null
        ? undefined
        : ambiguousWrite
          ? this.#cache.latestWhere(signature.signature, offeredAfterAmbiguousWrite)
          : this.#cache.latest(signature.signature);
    if (entry === undefined) return undefined;
    // Not `{ ...copy, recovered_at, uses }`: on Node 20 that literal costs about 1 us.
    return Object.assign(cloneJson(entry.recovery) as CorrectionRecovery, { recovered_at: entry.recovered_at, uses: entry.uses });
  }

  /**
   * Remembers a failure handed to the agent in an explicit trace, until a later call recovers it.
   * `ambiguousWrite`: the failure may have taken effect (see {@link repeatsTheCall}).
   */
  noteFailure(record: ToolExecutionRecord, endMs: number, ambiguousWrite = false): void {
    if (record.failure_type === 'cancelled') return;
    let list = this.#pending.get(record.trace_id);
    if (list === undefined) {
      if (this.#pending.size >= MAX_PENDING_TRACES) this.#pending.delete(this.#pending.keys().next().value!);
      list = [];
      this.#pending.set(record.trace_id, list);
    }
    list.push({
      failed: {
        status: record.status,
        tool_name: record.tool_name,
        failure_stage: record.failure_stage,
        failure_category: record.failure_category,
        failure_type: record.failure_type,
        error_code: record.error_code,
        error_message: record.error_message,
        trace_id: record.trace_id,
      },
      ambiguousWrite,
      step_index: record.step_index,
      params_hash: record.params_hash,
      input_params: record.input_params,
      intent: intentOf(record),
      retryAfterMs: record.feedback?.retry_after_ms ?? null,
      endMs,
    });
    if (list.length > MAX_PENDING_PER_TRACE) list.shift();
  }

  /**
   * A call succeeded in a trace: if it recovers a pending failure, remember how. The same tool
   * again recovers every pending failure of that tool (changed arguments, a wait, or a plain
   * repeat); a different tool recovers only the failure of the step right before it, and only
   * when both calls state the same intent.
   */
  noteSuccess(record: ToolExecutionRecord, startedAt: number): void {
    const list = this.#pending.get(record.trace_id);
    if (list === undefined) return;
    // One pass, no closures: this runs for every success in a trace with a failure pending.
    const sameTool: PendingFailure[] = [];
    const left: PendingFailure[] = [];
    for (const p of list) (p.failed.tool_name === record.tool_name ? sameTool : left).push(p);
    if (sameTool.length === 0) {
      const previous = list[list.length - 1]!;
      // Without a stated intent, the next call may just be the agent's next step, not a substitute.
      const sameIntent = previous.intent !== undefined && previous.intent === intentOf(record);
      if (record.step_index !== previous.step_index + 1 || !sameIntent) return;
      left.pop();
      this.#settle(record.trace_id, left);
      const correction = correctionOf(previous.failed, { action: 'switch_tool', tool: record.tool_name }, record.created_at);
      if (correction !== undefined) this.push(correction);
      return;
    }
    this.#settle(record.trace_id, left);
    // Several failures with one signature recovered by one call are one correction.
    const seen = sameTool.length > 1 ? new Set<string>() : undefined;
    for (const failure of sameTool) {
      // Calling the tool again is never the lesson of an ambiguous write (see repeatsTheCall).
      if (failure.ambiguousWrite) continue;
      const correction = correctionOf(failure.failed, sameToolRecovery(failure, record, startedAt), record.created_at);
      if (correction === undefined || seen?.has(correction.signature) === true) continue;
      seen?.add(correction.signature);
      this.push(correction);
    }
  }

  /** The failures of a trace still waiting for a recovery, after a success settled some. */
  #settle(traceId: string, left: PendingFailure[]): void {
    if (left.length === 0) this.#pending.delete(traceId);
    else this.#pending.set(traceId, left);
  }

  /** A recovery the runtime made itself (a fallback tool, a credential refresh). */
  learn(failed: FailedCall, recovery: CorrectionRecovery, recoveredAt: string): void {
    const correction = correctionOf(failed, recovery, recoveredAt);
    if (correction !== undefined) this.push(correction);
  }

  /** Puts the correction on top of the cache now, and queues it for the store's writer. */
  push(correction: NewCorrection): void {
    this.#cache.add(correction);
    const store = this.#store;
    if (store === undefined) return;
    if (this.#queue.length >= MAX_QUEUED_CORRECTIONS) {
      this.#queue.shift();
      this.#dropped += 1;
    }
    this.#queue.push(correction);
    if (this.#writer === undefined) this.#writer = this.#drain(store);
    else if (this.#queue.length >= BATCH_START) this.#startNow?.();
  }

  /** Settles when the load and every background write so far have. */
  async flush(): Promise<void> {
    await this.loaded;
    this.#startNow?.();
    while (this.#writer !== undefined) await this.#writer;
  }

  /** Stores everything queued, one store call per round, until the queue is empty. */
  async #drain(store: CorrectionMemoryStore): Promise<void> {
    // Waits for the next turn of the event loop, so that the corrections learned meanwhile go in
    // the same write (with an in-thread store a write is one synchronous transaction: without the
    // wait, each correction would get its own); `flush` and a long queue start it sooner. It also
    // makes sure `#writer` is set before this can finish (a store may throw at once).
    await new Promise<void>((resolve) => {
      this.#startNow = resolve;
      setImmediate(resolve);
    });
    this.#startNow = undefined;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        if (this.#dropped > 0) {
          this.#report(
            new Error(`correction memory: ${this.#dropped} corrections not stored, more than ${MAX_QUEUED_CORRECTIONS} were waiting for the store`),
          );
          this.#dropped = 0;
        }
        try {
          await store.pushCorrections(batch, this.#limits);
        } catch (error) {
          this.#report(error);
        }
      }
    } finally {
      this.#writer = undefined;
    }
  }

  async #load(store: CorrectionMemoryStore): Promise<void> {
    try {
      const stored = await store.listCorrections({ limit: this.#limits.capacity });
      // Corrections learned while the load ran are newer than anything stored: they stay on top.
      const local = this.#cache.list({ limit: Infinity });
      const cache = new CorrectionBuffer(this.#limits);
      for (let i = stored.length - 1; i >= 0; i--) cache.put(stored[i]!);
      for (let i = local.length - 1; i >= 0; i--) cache.put(local[i]!);
      this.#cache = cache;
    } catch (error) {
      this.#report(error);
    }
  }

  #report(error: unknown): void {
    reportSafely(this.#onError, error);
  }
}

function sameToolRecovery(failure: PendingFailure, success: ToolExecutionRecord, startedAt: number): CorrectionRecovery {
  if (failure.params_hash !== success.params_hash) {
    return { action: 'retry_with_fixed_params', params_delta: paramsDelta(failure.input_params, success.input_params) };
  }
  const gap = startedAt - failure.endMs;
  if (gap > 0 && gap >= (failure.retryAfterMs ?? MIN_WAIT_MS)) return { action: 'wait_and_retry', wait_ms: gap };
  return { action: 'retry' };
}

function correctionOf(failed: FailedCall, recovery: CorrectionRecovery, recoveredAt: string): NewCorrection | undefined {
  const signature = cachedFailureSignature(failed);
  if (signature === null) return undefined;
  return {
    signature: signature.signature,
    tool_name: failed.tool_name,
    failure_category: failed.failure_category,
    failure_type: effectiveFailureType(failed),
    error_code: failed.error_code,
    recovery,
    trace_id: failed.trace_id,
    recovered_at: recoveredAt,
  };
}
