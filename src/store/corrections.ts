/**
 * The correction memory's semantics, shared by every adapter: limits, what makes two recoveries
 * "the same", and the in-process LIFO buffer (used by the memory store and by the runtime's
 * cache). The SQL adapters implement the same rules in SQL (`sqlite/corrections.ts`,
 * `postgres/corrections.ts`); the contract suite checks that all of them agree.
 */
import { canonicalJson } from '../core/params-hash.js';
import { cloneJson } from '../core/clone-json.js';
import type { CorrectionEntry, CorrectionLimits, CorrectionMemoryStore, CorrectionQuery, NewCorrection } from '../core/store-types.js';

export const DEFAULT_CORRECTION_LIMITS: CorrectionLimits = { capacity: 100, perSignature: 5 };
export const DEFAULT_CORRECTION_LIST_LIMIT = 100;

/** The limits with defaults filled in. @throws RangeError for a limit that is not a positive integer. */
export function correctionLimits(limits: Partial<CorrectionLimits> = {}): CorrectionLimits {
  const resolved = { ...DEFAULT_CORRECTION_LIMITS };
  for (const key of ['capacity', 'perSignature'] as const) {
    const value = limits[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1) throw new RangeError(`correction memory ${key} must be a positive integer, got ${String(value)}`);
    resolved[key] = value;
  }
  return resolved;
}

/**
 * Identifies a recovery within a signature: the action and what it changed, without the note
 * (and without the exact wait, so "waited 2.0 s" and "waited 2.1 s" are one recovery).
 */
export function recoveryKey(correction: Pick<NewCorrection, 'recovery'>): string {
  const { action, params_delta, tool, wait_ms } = correction.recovery;
  const waitSeconds = wait_ms === undefined ? null : Math.round(wait_ms / 1000);
  // canonicalJson({ action, params_delta, tool, wait_s }) written out (the keys are in sorted
  // order already): the runtime computes this for every correction it learns, and the SQL adapters
  // store it, so it must stay byte for byte what canonicalJson gives (corrections.test.ts checks).
  return `{"action":${canonicalJson(action)},"params_delta":${canonicalJson(params_delta ?? null)},"tool":${canonicalJson(tool ?? null)},"wait_s":${canonicalJson(waitSeconds)}}`;
}

/** @throws RangeError when the correction cannot be stored (missing signature, bad time, unknown shape). */
export function assertCorrection(correction: NewCorrection): void {
  if (typeof correction.signature !== 'string' || correction.signature === '') throw new RangeError('correction without a signature');
  if (typeof correction.tool_name !== 'string' || correction.tool_name === '') throw new RangeError('correction without a tool_name');
  if (typeof correction.recovery?.action !== 'string') throw new RangeError('correction without a recovery action');
  if (Number.isNaN(Date.parse(correction.recovered_at))) {
    throw new RangeError(`correction has an invalid recovered_at: ${JSON.stringify(correction.recovered_at)}`);
  }
}

/** Checks a whole batch before anything is stored. @throws RangeError as {@link assertCorrection} and {@link correctionLimits}. */
export function assertCorrections(corrections: readonly NewCorrection[], limits?: Partial<CorrectionLimits>): CorrectionLimits {
  const resolved = correctionLimits(limits);
  for (const correction of corrections) assertCorrection(correction);
  return resolved;
}

/**
 * A deep copy of a correction. Corrections are JSON data (the SQL adapters store them as JSON), and
 * copying plain objects field by field costs a fraction of `structuredClone`, which the runtime
 * would otherwise pay on every failure it finds a recovery for.
 */
function copyOf<T extends NewCorrection>(correction: T): T {
  return cloneJson(correction) as T;
}

/** A copy with `recovered_at` as canonical UTC ISO-8601 (as every adapter returns it). */
export function normalizedCorrection(correction: NewCorrection): NewCorrection {
  return Object.assign(copyOf(correction), { recovered_at: new Date(Date.parse(correction.recovered_at)).toISOString() });
}

/** The list query's limit, resolved: default 100; anything not positive gives nothing. */
export function listLimit(query: CorrectionQuery): number {
  const limit = query.limit ?? DEFAULT_CORRECTION_LIST_LIMIT;
  return Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : Number.MAX_SAFE_INTEGER;
}

/** Whether `store` keeps a correction memory. */
export function hasCorrectionMemory<S extends Partial<CorrectionMemoryStore>>(store: S | undefined): store is S & CorrectionMemoryStore {
  return (
    store !== undefined &&
    typeof store.pushCorrection === 'function' &&
    typeof store.pushCorrections === 'function' &&
    typeof store.latestCorrection === 'function' &&
    typeof store.listCorrections === 'function'
  );
}

interface Slot {
  entry: CorrectionEntry;
  key: string;
}

/**
 * A bounded LIFO of corrections per signature, in process. Every operation is O(per-signature
 * cap): a Map keeps global push order (its first key is the oldest entry), and each signature
 * keeps its own short list, newest last.
 */
export class CorrectionBuffer {
  readonly limits: CorrectionLimits;
  #seq = 0;
  readonly #order = new Map<number, Slot & { seq: number }>();
  readonly #bySignature = new Map<string, (Slot & { seq: number })[]>();
  readonly #perTool = new Map<string, number>();

  constructor(limits: Partial<CorrectionLimits> = {}) {
    this.limits = correctionLimits(limits);
  }

  get size(): number {
    return this.#order.size;
  }

  /** Whether any entry is kept for the tool: a cheap test before computing a failure's signature. */
  hasTool(toolName: string): boolean {
    return this.#perTool.has(toolName);
  }

  /**
   * Pushes a correction on top of its signature's list, following the store contract: the same
   * recovery from the same trace is a no-op; from another trace it moves up with `uses + 1`.
   */
  push(correction: NewCorrection, limits: CorrectionLimits = this.limits): CorrectionEntry {
    return copyOf(this.add(correction, limits));
  }

  /** {@link push}, returning the entry kept (not a copy): the caller must not modify it. */
  add(correction: NewCorrection, limits: CorrectionLimits = this.limits): CorrectionEntry {
    const key = recoveryKey(correction);
    const same = this.#bySignature.get(correction.signature)?.find((slot) => slot.key === key);
    if (same !== undefined && same.entry.trace_id !== null && same.entry.trace_id === correction.trace_id) return same.entry;
    // Not `{ ...copy, uses }`: on Node 20 an object literal spreading an object before other keys costs about 1 us.
    const entry: CorrectionEntry = Object.assign(copyOf(correction), { uses: (same?.entry.uses ?? 0) + 1 });
    if (same !== undefined) this.#remove(same.seq);
    this.#put(entry, key, limits);
    return entry;
  }

  /** Puts an entry as it is (uses included), replacing the same recovery for its signature. */
  put(entry: CorrectionEntry): void {
    const key = recoveryKey(entry);
    const same = this.#bySignature.get(entry.signature)?.find((slot) => slot.key === key);
    if (same !== undefined) this.#remove(same.seq);
    this.#put(copyOf(entry), key, this.limits);
  }

  /**
   * Puts a stored entry back as it is, under its own push order `seq` and recovery key (as a SQL
   * table keeps them), oldest first: how a SQL adapter replays a batch in memory (see
   * `sqlite/corrections.ts`). Later pushes get seqs above every seq put back.
   */
  restore(seq: number, entry: CorrectionEntry, key: string): void {
    this.#seq = Math.max(this.#seq, seq);
    const slot = { entry, key, seq };
    this.#order.set(seq, slot);
    const list = this.#bySignature.get(entry.signature);
    if (list === undefined) this.#bySignature.set(entry.signature, [slot]);
    else list.push(slot);
    this.#perTool.set(entry.tool_name, (this.#perTool.get(entry.tool_name) ?? 0) + 1);
  }

  /** Every entry kept, oldest first, with its push order and recovery key; the caller must not modify them. */
  slots(): IterableIterator<Readonly<Slot & { seq: number }>> {
    return this.#order.values();
  }

  /** The newest entry for the signature; the caller must not modify it. */
  latest(signature: string): CorrectionEntry | undefined {
    const list = this.#bySignature.get(signature);
    return list?.[list.length - 1]?.entry;
  }

  /** The newest entry for the signature that `accept` takes; the caller must not modify it. */
  latestWhere(signature: string, accept: (entry: CorrectionEntry) => boolean): CorrectionEntry | undefined {
    const list = this.#bySignature.get(signature);
    if (list === undefined) return undefined;
    for (let i = list.length - 1; i >= 0; i--) if (accept(list[i]!.entry)) return list[i]!.entry;
    return undefined;
  }

  /** Newest first, copies. */
  list(query: CorrectionQuery = {}): CorrectionEntry[] {
    const limit = listLimit(query);
    const out: CorrectionEntry[] = [];
    if (limit === 0) return out;
    const slots = query.signature === undefined ? [...this.#order.values()] : (this.#bySignature.get(query.signature) ?? []);
    for (let i = slots.length - 1; i >= 0 && out.length < limit; i--) out.push(copyOf(slots[i]!.entry));
    return out;
  }

  #put(entry: CorrectionEntry, key: string, limits: CorrectionLimits): void {
    const slot = { entry, key, seq: ++this.#seq };
    this.#order.set(slot.seq, slot);
    let list = this.#bySignature.get(entry.signature);
    if (list === undefined) {
      list = [];
      this.#bySignature.set(entry.signature, list);
    }
    list.push(slot);
    this.#perTool.set(entry.tool_name, (this.#perTool.get(entry.tool_name) ?? 0) + 1);
    while (list.length > limits.perSignature) this.#remove(list[0]!.seq);
    while (this.#order.size > limits.capacity) this.#remove(this.#order.keys().next().value!);
  }

  #remove(seq: number): void {
    const slot = this.#order.get(seq);
    if (slot === undefined) return;
    this.#order.delete(seq);
    const list = this.#bySignature.get(slot.entry.signature)!;
    list.splice(list.indexOf(slot), 1);
    if (list.length === 0) this.#bySignature.delete(slot.entry.signature);
    const left = this.#perTool.get(slot.entry.tool_name)! - 1;
    if (left === 0) this.#perTool.delete(slot.entry.tool_name);
    else this.#perTool.set(slot.entry.tool_name, left);
  }
}

/** A `corrections` row as the SQL adapters read it (`recovery` is JSON text in SQLite, parsed JSONB in PostgreSQL). */
export interface CorrectionRow {
  signature: string;
  tool_name: string;
  failure_category: string | null;
  failure_type: string;
  error_code: string | null;
  recovery: string | CorrectionEntry['recovery'];
  trace_id: string | null;
  recovered_at: string | Date;
  uses: number | string;
}

/** The columns the SQL adapters select, in the order of {@link CorrectionRow}. */
export const CORRECTION_COLUMNS = 'signature, tool_name, failure_category, failure_type, error_code, recovery, trace_id, recovered_at, uses';

export function rowToCorrection(row: CorrectionRow): CorrectionEntry {
  return {
    signature: row.signature,
    tool_name: row.tool_name,
    failure_category: row.failure_category as CorrectionEntry['failure_category'],
    failure_type: row.failure_type,
    error_code: row.error_code,
    recovery: typeof row.recovery === 'string' ? (JSON.parse(row.recovery) as CorrectionEntry['recovery']) : row.recovery,
    trace_id: row.trace_id,
    recovered_at: row.recovered_at instanceof Date ? row.recovered_at.toISOString() : row.recovered_at,
    uses: Number(row.uses),
  };
}
