/**
 * The recorder's in-memory window (DESIGN.md "The recorder"): records waiting for a write, in
 * chunks of at most one batch, each with the age of its oldest record (the `maxUnsavedMs` bound)
 * and, in durable mode, one acknowledgement per record, given once the record is stored or
 * spooled. The recorder decides when a chunk goes (to the store or the spool); this keeps the
 * order, the counts and the acknowledgements.
 */
import type { ToolExecutionRecord } from '../core/record-types.js';

/**
 * Queued records, at most one batch: the queue is a list of these, so a batch leaves it whole (no
 * copying of a long array) and carries the age of its oldest record for `maxUnsavedMs`.
 */
export interface Chunk {
  records: ToolExecutionRecord[];
  /** Durable mode only: one resolver per record, parallel to `records`. */
  acks: Array<() => void> | null;
  /** `performance.now()` when its first record was queued. */
  since: number;
  /** Success records in it: what a failure may take the place of when nothing else can make room. */
  successes: number;
  /** -1 for records not sent yet; a batch put back after a failed write keeps its number, which orders it. */
  seq: number;
}

/** Gives every acknowledgement of a chunk that left memory (stored, spooled, or dropped). */
export function acknowledge(acks: Array<() => void> | null): void {
  if (acks !== null) for (const ack of acks) ack();
}

export class BatchQueue {
  /** Oldest first; only the last chunk grows, and only while it was never sent. */
  chunks: Chunk[] = [];
  /** Records in `chunks`, and the successes among them. */
  count = 0;
  successes = 0;

  constructor(
    readonly batchSize: number,
    readonly durable: boolean,
  ) {}

  get head(): Chunk | undefined {
    return this.chunks[0];
  }

  /**
   * Queues a record in the tail chunk. Durable: `ack` is a waiter's resolver to give when the
   * record leaves memory; without one, a promise for that moment is returned.
   */
  push(record: ToolExecutionRecord, ack: (() => void) | undefined): Promise<void> | undefined {
    let tail = this.chunks[this.chunks.length - 1];
    if (tail === undefined || tail.seq >= 0 || tail.records.length >= this.batchSize) {
      tail = { records: [], acks: this.durable ? [] : null, since: performance.now(), successes: 0, seq: -1 };
      this.chunks.push(tail);
    }
    tail.records.push(record);
    if (record.status === 'success') {
      tail.successes++;
      this.successes++;
    }
    this.count++;
    const acks = tail.acks;
    if (acks === null) return undefined;
    if (ack !== undefined) {
      acks.push(ack);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      acks.push(resolve);
    });
  }

  /** Whether the tail chunk holds a whole batch. */
  tailFull(): boolean {
    return (this.chunks[this.chunks.length - 1]?.records.length ?? 0) >= this.batchSize;
  }

  /** Whether the head is a batch that grows no more: full, or followed by another. */
  hasFullBatch(): boolean {
    return this.chunks.length > 1 || (this.chunks[0]?.records.length ?? 0) >= this.batchSize;
  }

  /** Takes the head chunk out (its acknowledgements stay with it). */
  shift(): Chunk | undefined {
    const chunk = this.chunks.shift();
    if (chunk !== undefined) {
      this.count -= chunk.records.length;
      this.successes -= chunk.successes;
    }
    return chunk;
  }

  /**
   * Puts a batch whose write found nowhere to go back, in order, ahead of newer records. Batches
   * written concurrently fail in the order they were sent (the stores that pipeline apply writes in
   * order), so each goes after the ones put back before it.
   */
  putBack(seq: number, records: ToolExecutionRecord[], chunk: Pick<Chunk, 'acks' | 'since' | 'successes'>): void {
    let at = 0;
    while (at < this.chunks.length && this.chunks[at]!.seq >= 0 && this.chunks[at]!.seq < seq) at++;
    this.chunks.splice(at, 0, { records, acks: chunk.acks, since: chunk.since, successes: chunk.successes, seq });
    this.count += records.length;
    this.successes += chunk.successes;
  }

  /**
   * Drops the newest queued success to make room for a failure; false when none is queued. Never
   * one a durable caller waits on: durable mode never drops to make room.
   */
  evictNewestSuccess(): boolean {
    for (let c = this.chunks.length - 1; c >= 0; c--) {
      const chunk = this.chunks[c]!;
      if (chunk.successes === 0) continue;
      for (let i = chunk.records.length - 1; i >= 0; i--) {
        if (chunk.records[i]!.status !== 'success') continue;
        chunk.records.splice(i, 1);
        chunk.successes--;
        this.successes--;
        this.count--;
        if (chunk.records.length === 0) this.chunks.splice(c, 1);
        return true;
      }
    }
    return false;
  }

  /** Empties the queue, giving every acknowledgement; returns how many records it held. */
  clear(): number {
    const chunks = this.chunks;
    this.chunks = [];
    let count = 0;
    for (const chunk of chunks) {
      count += chunk.records.length;
      acknowledge(chunk.acks);
    }
    this.count = 0;
    this.successes = 0;
    return count;
  }
}
