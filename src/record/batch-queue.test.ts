import { describe, expect, it } from 'vitest';
import { makeFailureRecord, makeRecord } from './fixture.js';
import { acknowledge, BatchQueue } from './batch-queue.js';

const success = (step: number) => makeRecord({ step_index: step });
const failure = (step: number) => makeFailureRecord({ failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', step_index: step });
const steps = (q: BatchQueue) => q.chunks.map((c) => c.records.map((r) => r.step_index));

describe('BatchQueue', () => {
  it('fills chunks of at most one batch, oldest first, counting records and successes', () => {
    const q = new BatchQueue(3, false);
    for (let i = 0; i < 7; i++) expect(q.push(i % 2 === 0 ? success(i) : failure(i), undefined)).toBeUndefined();
    expect(steps(q)).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    expect({ count: q.count, successes: q.successes }).toEqual({ count: 7, successes: 4 });
    expect(q.tailFull()).toBe(false);
    expect(q.hasFullBatch()).toBe(true);
    q.push(success(7), undefined);
    q.push(success(8), undefined);
    expect(q.tailFull()).toBe(true);
  });

  it('knows a lone partial chunk is no full batch, and keeps the age of its first record', () => {
    const q = new BatchQueue(4, false);
    const before = performance.now();
    q.push(success(0), undefined);
    q.push(success(1), undefined);
    expect(q.hasFullBatch()).toBe(false);
    expect(q.head!.since).toBeGreaterThanOrEqual(before);
    expect(q.head!.since).toBeLessThanOrEqual(performance.now());
  });

  it('takes the head whole, and puts a failed batch back in send order, ahead of newer records', () => {
    const q = new BatchQueue(2, false);
    for (let i = 0; i < 6; i++) q.push(success(i), undefined);
    const first = q.shift()!;
    const second = q.shift()!;
    expect(q.count).toBe(2);
    q.push(success(6), undefined);
    // The second write failed before the first: each goes back in the order it was sent.
    q.putBack(1, second.records, second);
    q.putBack(0, first.records, first);
    expect(steps(q)).toEqual([[0, 1], [2, 3], [4, 5], [6]]);
    expect(q.chunks.map((c) => c.seq)).toEqual([0, 1, -1, -1]);
    expect({ count: q.count, successes: q.successes }).toEqual({ count: 7, successes: 7 });
    // A chunk that was sent never grows again: new records start a chunk of their own.
    const q2 = new BatchQueue(3, false);
    q2.push(success(0), undefined);
    const sent = q2.shift()!;
    q2.putBack(0, sent.records, sent);
    q2.push(success(1), undefined);
    expect(steps(q2)).toEqual([[0], [1]]);
  });

  it('evicts the newest success for a failure, and nothing when only failures are queued', () => {
    const q = new BatchQueue(2, false);
    [success(0), failure(1), success(2), failure(3)].forEach((r) => q.push(r, undefined));
    expect(q.evictNewestSuccess()).toBe(true);
    expect(steps(q)).toEqual([[0, 1], [3]]);
    expect(q.evictNewestSuccess()).toBe(true);
    expect(steps(q)).toEqual([[1], [3]]);
    expect(q.evictNewestSuccess()).toBe(false);
    expect({ count: q.count, successes: q.successes }).toEqual({ count: 2, successes: 0 });
  });

  it('durable: acknowledges each record only when its chunk leaves memory', async () => {
    const q = new BatchQueue(2, true);
    const acked: number[] = [];
    const waits = [0, 1, 2].map((i) => q.push(success(i), undefined)!.then(() => acked.push(i)));
    let admittedAck = false;
    expect(q.push(success(3), () => (admittedAck = true))).toBeUndefined();
    await Promise.resolve();
    expect(acked).toEqual([]);
    acknowledge(q.shift()!.acks);
    await Promise.all(waits.slice(0, 2));
    expect(acked).toEqual([0, 1]);
    expect(q.clear()).toBe(2);
    await waits[2];
    expect(acked).toEqual([0, 1, 2]);
    expect(admittedAck).toBe(true);
    expect({ count: q.count, chunks: q.chunks.length }).toEqual({ count: 0, chunks: 0 });
  });

  it('batched: holds no acknowledgements', () => {
    const q = new BatchQueue(2, false);
    q.push(success(0), undefined);
    expect(q.head!.acks).toBeNull();
    expect(() => acknowledge(null)).not.toThrow();
  });
});
