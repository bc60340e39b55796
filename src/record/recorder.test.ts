import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { createPostgresStore } from '../store/postgres/postgres-store.js';
import { describePostgres, PG_URL } from '../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createSqliteWorkerStore } from '../store/sqlite/sqlite-worker-store.js';
import { typeScriptWorkerUrl } from '../ts-worker.test-helpers.js';
import type { Store } from '../core/store-types.js';
import { makeFailureRecord, makeRecord } from './fixture.js';
import {
  createRecorder,
  RecorderBlockTimeoutError,
  RecordsDroppedError,
  RecordsRejectedError,
  StoreWriteTimeoutError,
  type Recorder,
  type RecorderOptions,
} from './recorder.js';
import { readSpoolBatches } from './spool.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

/** Above the largest pid_max Linux allows (2^22), so never alive. */
const DEAD_PID = 999_999_999;

/**
 * A store whose insert can be switched to fail or to hang, so outages are simulated exactly.
 * Rows are keyed by execution_id like the real stores; `duplicates` counts re-inserted ids.
 */
class ControllableStore implements Store {
  readonly kind = 'memory' as const;
  readonly rows = new Map<string, ToolExecutionRecord>();
  /** Size of every insert call, in order, including failed ones. */
  readonly calls: number[] = [];
  duplicates = 0;
  /** How often each id was part of a successful insert. */
  readonly accepted = new Map<string, number>();
  active = 0;
  maxActive = 0;
  behavior: 'up' | 'fail' | 'hang' | 'throw-sync' = 'up';
  /** Ids the store refuses like a database refusing a bad row: the whole batch fails. */
  readonly refuse = new Set<string>();
  /** Inserts containing one of these ids fail until the count runs out: a record caught in one dropped connection after another. */
  readonly flaky = new Map<string, number>();
  private gate: Promise<void> | null = null;
  private openGate: (() => void) | null = null;

  /** Holds every insert until `release()`; they then succeed or fail by `behavior`. */
  hold(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  release(): void {
    this.openGate?.();
    this.gate = null;
    this.openGate = null;
  }

  insert(records: readonly ToolExecutionRecord[]): Promise<void> {
    this.calls.push(records.length);
    if (this.behavior === 'throw-sync') throw new Error('store blew up synchronously');
    return this.insertAsync(records);
  }

  private async insertAsync(records: readonly ToolExecutionRecord[]): Promise<void> {
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      if (this.gate !== null) await this.gate;
      if (this.behavior === 'hang') await new Promise<never>(() => undefined);
      if (this.behavior === 'fail') throw new Error('connection refused');
      for (const record of records) {
        const left = this.flaky.get(record.execution_id) ?? 0;
        if (left > 0) {
          this.flaky.set(record.execution_id, left - 1);
          throw new Error('connection reset');
        }
      }
      const bad = records.find((record) => this.refuse.has(record.execution_id));
      if (bad !== undefined) throw new RangeError(`invalid record ${bad.execution_id}`);
      for (const record of records) {
        this.accepted.set(record.execution_id, (this.accepted.get(record.execution_id) ?? 0) + 1);
        if (this.rows.has(record.execution_id)) this.duplicates++;
        else this.rows.set(record.execution_id, record);
      }
    } finally {
      this.active--;
    }
  }

  async get(executionId: string): Promise<ToolExecutionRecord | null> {
    return this.rows.get(executionId) ?? null;
  }

  async count(): Promise<number> {
    return this.rows.size;
  }

  async close(): Promise<void> {}

  // The recorder only writes; the read side belongs to the store contract suite.
  query = unused;
  toolStats = unused;
  failureBreakdown = unused;
  hourly = unused;
  signatures = unused;
}

function unused(): Promise<never> {
  return Promise.reject(new Error('not used by the recorder'));
}

class ManualClock {
  constructor(public time = 1_000_000) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}

let dir: string;
let recorders: Recorder[] = [];
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'faultline-recorder-'));
  recorders = [];
  unhandled = [];
  process.on('unhandledRejection', onUnhandled);
});

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(recorders.map((recorder) => recorder.close()));
  process.off('unhandledRejection', onUnhandled);
  rmSync(dir, { recursive: true, force: true });
  expect(unhandled).toEqual([]);
});

/** A recorder with test-friendly defaults: spool in the temp dir, long interval, no real-time probes. */
function recorder(store: Store, options: Partial<RecorderOptions> = {}): Recorder {
  const created = createRecorder({
    store,
    spool: { path: join(dir, 'spool', 'test.jsonl') },
    flushIntervalMs: 60_000,
    retry: { initialDelayMs: 60_000, maxDelayMs: 240_000 },
    ...options,
  });
  recorders.push(created);
  return created;
}

function records(count: number, overrides: Partial<ToolExecutionRecord> = {}): ToolExecutionRecord[] {
  return Array.from({ length: count }, () => makeRecord(overrides));
}

/** Lets queued microtasks, I/O callbacks and immediates run. */
async function turn(times = 3): Promise<void> {
  for (let i = 0; i < times; i++) await new Promise((resolve) => setImmediate(resolve));
}

function spoolFiles(): string[] {
  const spoolDir = join(dir, 'spool');
  return existsSync(spoolDir) ? readdirSync(spoolDir).map((name) => join(spoolDir, name)) : [];
}

async function idsOnDisk(): Promise<string[]> {
  const found: string[] = [];
  for (const path of spoolFiles()) {
    for await (const batch of readSpoolBatches(path, { batchSize: 10_000 })) {
      for (const record of batch.records) found.push(record.execution_id);
    }
  }
  return found;
}

function expectExactlyOnce(store: ControllableStore, sent: readonly ToolExecutionRecord[]): void {
  expect(store.rows.size).toBe(sent.length);
  for (const record of sent) expect(store.rows.has(record.execution_id)).toBe(true);
}

describe('batching', () => {
  it('flushes when batchSize records are queued, after the enqueue call returns', async () => {
    const store = new ControllableStore();
    const rec = recorder(store, { batchSize: 100 });
    const batch = records(100);
    for (const record of batch.slice(0, 99)) expect(rec.enqueue(record)).toBeUndefined();
    await turn();
    expect(store.calls).toEqual([]);

    expect(rec.enqueue(batch[99] as ToolExecutionRecord)).toBeUndefined();
    // Never synchronously inside enqueue.
    expect(store.calls).toEqual([]);
    await turn();
    expect(store.calls).toEqual([100]);
    expect(rec.stats()).toMatchObject({ enqueued: 100, written: 100, queued: 0 });
  });

  it('sends at most batchSize per insert and keeps one flush in flight', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { batchSize: 100 });
    const sent = records(350);
    for (const record of sent) rec.enqueue(record);
    await turn();
    expect(store.calls).toEqual([100]);
    store.release();
    await rec.flush();
    expect(store.calls).toEqual([100, 100, 100, 50]);
    expect(store.maxActive).toBe(1);
    expectExactlyOnce(store, sent);
  });

  it('a drain started by a full batch writes only full batches, not each trickle of records', async () => {
    // Each write takes a moment, as a real one does, so records keep arriving while it runs.
    class SlowStore extends ControllableStore {
      override insert(batch: readonly ToolExecutionRecord[]): Promise<void> {
        return new Promise((resolve) => setTimeout(resolve, 2)).then(() => super.insert(batch));
      }
    }
    const store = new SlowStore();
    const rec = recorder(store, { batchSize: 100 });
    const sent = records(1000);
    // Concurrent agents: a few records at a time, with I/O turns in between, while writes are in flight.
    for (let i = 0; i < sent.length; i += 5) {
      for (const record of sent.slice(i, i + 5)) rec.enqueue(record);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await turn();
    expect(store.calls.length).toBeGreaterThan(0);
    expect(store.calls.every((size) => size === 100)).toBe(true);
    await rec.flush();
    expect(store.calls.reduce((a, b) => a + b, 0)).toBe(1000);
    expectExactlyOnce(store, sent);
  });

  it('flushes a partial batch on the interval', async () => {
    vi.useFakeTimers();
    const store = new ControllableStore();
    const rec = recorder(store, { batchSize: 100, flushIntervalMs: 250, spool: false });
    for (const record of records(10)) rec.enqueue(record);
    await vi.advanceTimersByTimeAsync(249);
    expect(store.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(store.calls).toEqual([10]);
    for (const record of records(3)) rec.enqueue(record);
    await vi.advanceTimersByTimeAsync(250);
    expect(store.calls).toEqual([10, 3]);
  });

  it('flush() writes everything queued before it was called', async () => {
    const store = new ControllableStore();
    const rec = recorder(store, { batchSize: 512 });
    const sent = records(20);
    for (const record of sent) rec.enqueue(record);
    await rec.flush();
    expectExactlyOnce(store, sent);
    expect(rec.stats()).toMatchObject({ written: 20, queued: 0, storeHealthy: true });
  });
});

/** A store that applies concurrent inserts in call order, like the SQLite writer thread, and says so. */
class PipelinedStore extends ControllableStore {
  readonly maxInsertsInFlight = Number.POSITIVE_INFINITY;
}

describe('pipelined writes', () => {
  it('keeps every full batch in flight when the store pipelines, never a partial one beside them', async () => {
    const store = new PipelinedStore();
    store.hold();
    const rec = recorder(store, { batchSize: 100 });
    const sent = records(350);
    for (const record of sent) rec.enqueue(record);
    await turn();
    expect(store.calls).toEqual([100, 100, 100]);
    expect(store.active).toBe(3);
    expect(rec.stats()).toMatchObject({ queued: 350, written: 0 });
    store.release();
    await rec.flush();
    expect(store.calls).toEqual([100, 100, 100, 50]);
    expect(store.maxActive).toBe(3);
    expect(rec.stats()).toMatchObject({ queued: 0, written: 350 });
    expectExactlyOnce(store, sent);
  });

  it('takes full batches that fill while earlier ones are in flight, up to maxInFlight', async () => {
    const store = new PipelinedStore();
    store.hold();
    const rec = recorder(store, { batchSize: 100, maxInFlight: 2 });
    const sent = records(500);
    for (const record of sent.slice(0, 100)) rec.enqueue(record);
    await turn();
    expect(store.calls).toEqual([100]);
    for (const record of sent.slice(100)) rec.enqueue(record);
    await turn();
    expect(store.calls).toEqual([100, 100]);
    store.release();
    await rec.flush();
    expect(store.maxActive).toBe(2);
    expect(store.calls).toEqual([100, 100, 100, 100, 100]);
    expectExactlyOnce(store, sent);
  });

  it('puts batches that failed together back in their order, ahead of newer records', async () => {
    const store = new PipelinedStore();
    const clock = new ManualClock();
    store.behavior = 'fail';
    store.hold();
    const rec = recorder(store, { spool: false, batchSize: 10, maxQueue: 100, clock });
    const sent = records(35);
    for (const record of sent) rec.enqueue(record);
    await turn();
    expect(store.calls).toEqual([10, 10, 10]);
    store.release();
    await rec.flush();
    expect(rec.stats()).toMatchObject({ queued: 35, written: 0, storeHealthy: false });

    store.behavior = 'up';
    clock.advance(60_000);
    await rec.flush();
    expect([...store.rows.keys()]).toEqual(sent.map((record) => record.execution_id));
  });

  it('spools every batch in flight when the store fails, and stores each once after recovery', async () => {
    const store = new PipelinedStore();
    const clock = new ManualClock();
    store.behavior = 'fail';
    store.hold();
    const rec = recorder(store, { batchSize: 10, clock });
    const sent = records(40);
    for (const record of sent) rec.enqueue(record);
    await turn();
    expect(store.calls).toEqual([10, 10, 10, 10]);
    store.release();
    await rec.flush();
    expect(rec.stats()).toMatchObject({ spooled: 40, queued: 0, storeHealthy: false });

    store.behavior = 'up';
    clock.advance(60_000);
    await rec.flush();
    await rec.close();
    expect(rec.stats()).toMatchObject({ replayed: 40, storeHealthy: true });
    expect(store.duplicates).toBe(0);
    expectExactlyOnce(store, sent);
  });

  it('sends batches in the encoding of a store that has one, and spools the same records when it fails', async () => {
    const utf8 = { encoder: new TextEncoder(), decoder: new TextDecoder() };
    class EncodingStore extends PipelinedStore {
      encodedInserts = 0;
      readonly batchEncoding = {
        encode: (batch: readonly ToolExecutionRecord[]) => utf8.encoder.encode(JSON.stringify(batch)),
        decode: (bytes: Uint8Array) => JSON.parse(utf8.decoder.decode(bytes)) as ToolExecutionRecord[],
      };
      insertEncoded(bytes: Uint8Array): Promise<void> {
        this.encodedInserts++;
        return this.insert(this.batchEncoding.decode(bytes));
      }
    }
    const store = new EncodingStore();
    const clock = new ManualClock();
    const rec = recorder(store, { batchSize: 10, clock });
    const sent = records(30);
    for (const record of sent.slice(0, 20)) rec.enqueue(record);
    await rec.flush();
    expect(store.encodedInserts).toBe(2);
    expect(store.rows.get(sent[3]!.execution_id)).toEqual(sent[3]);

    store.behavior = 'fail';
    for (const record of sent.slice(20)) rec.enqueue(record);
    await rec.flush();
    expect(await idsOnDisk()).toEqual(sent.slice(20).map((record) => record.execution_id));

    store.behavior = 'up';
    clock.advance(60_000);
    await rec.close();
    expect(rec.stats()).toMatchObject({ written: 20, spooled: 10, replayed: 10 });
    expectExactlyOnce(store, sent);
  });

  it('sends a batch its store cannot encode through insert, record by record when refused', async () => {
    class PickyEncodingStore extends PipelinedStore {
      encodedInserts = 0;
      readonly batchEncoding = {
        encode: (batch: readonly ToolExecutionRecord[]): Uint8Array => {
          if (batch.some((record) => record.tool_name === 'unencodable')) throw new RangeError('cannot encode');
          return new TextEncoder().encode(JSON.stringify(batch));
        },
        decode: (bytes: Uint8Array) => JSON.parse(new TextDecoder().decode(bytes)) as ToolExecutionRecord[],
      };
      insertEncoded(bytes: Uint8Array): Promise<void> {
        this.encodedInserts++;
        return this.insert(this.batchEncoding.decode(bytes));
      }
    }
    const store = new PickyEncodingStore();
    const errors: unknown[] = [];
    const rec = recorder(store, { batchSize: 10, onError: (error) => errors.push(error) });
    const sent = records(20);
    const bad = makeRecord({ tool_name: 'unencodable' });
    store.refuse.add(bad.execution_id);
    for (const record of sent.slice(0, 10)) rec.enqueue(record);
    await rec.flush();
    for (const record of [...sent.slice(10, 15), bad, ...sent.slice(15, 19)]) rec.enqueue(record);
    await rec.flush();
    rec.enqueue(sent[19]!);
    await rec.close();
    expect(store.encodedInserts).toBe(2);
    expectExactlyOnce(store, sent);
    expect(rec.stats()).toMatchObject({ rejected: 1, storeHealthy: true });
    expect(errors.some((error) => RecordsRejectedError.isInstance(error))).toBe(true);
  });

  it('in durable mode, records enqueued during a write share the next one (group commit)', async () => {
    const store = new PipelinedStore();
    store.hold();
    const rec = recorder(store, { mode: 'durable', batchSize: 100 });
    const [first, ...rest] = records(6);
    const acks = [rec.enqueue(first!)];
    await turn();
    expect(store.calls).toEqual([1]);
    for (const record of rest) acks.push(rec.enqueue(record));
    await turn();
    expect(store.calls).toEqual([1]);
    store.release();
    await Promise.all(acks);
    expect(store.calls).toEqual([1, 5]);
    expect(store.maxActive).toBe(1);
  });
});

describe('overflow', () => {
  it('drops and counts records beyond maxQueue', async () => {
    const store = new ControllableStore();
    const rec = recorder(store, { batchSize: 10, maxQueue: 10, overflow: 'drop' });
    const sent = records(15);
    for (const record of sent) expect(rec.enqueue(record)).toBeUndefined();
    expect(rec.stats()).toMatchObject({ enqueued: 15, dropped: 5, queued: 10 });
    await rec.flush();
    expectExactlyOnce(store, sent.slice(0, 10));
  });

  it('blocks with a promise until there is room, and keeps order', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { batchSize: 5, maxQueue: 10, overflow: 'block' });
    const sent = records(12);
    for (const record of sent.slice(0, 10)) expect(rec.enqueue(record)).toBeUndefined();
    const eleventh = rec.enqueue(sent[10] as ToolExecutionRecord);
    const twelfth = rec.enqueue(sent[11] as ToolExecutionRecord);
    expect(eleventh).toBeInstanceOf(Promise);
    expect(twelfth).toBeInstanceOf(Promise);
    let admitted = 0;
    void eleventh?.then(() => admitted++);
    void twelfth?.then(() => admitted++);
    await turn();
    expect(admitted).toBe(0);
    expect(rec.stats()).toMatchObject({ queued: 10, waiting: 2, dropped: 0 });

    store.release();
    await Promise.all([eleventh, twelfth]);
    expect(admitted).toBe(2);
    await rec.flush();
    expect([...store.rows.keys()]).toEqual(sent.map((record) => record.execution_id));
    expect(rec.stats().dropped).toBe(0);
  });
});

/** Whether the recorder's figures account for every record offered, each in exactly one place. */
function expectAccounted(rec: Recorder): void {
  const r = rec.recording();
  expect(r.stored + r.spooled + r.inMemory + r.dropped + r.rejected).toBe(r.offered);
}

/** The ids in the spool files, read synchronously (for checks made before the event loop turns). */
function idsOnDiskNow(): Set<string> {
  const found = new Set<string>();
  for (const path of spoolFiles()) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (line !== '') found.add((JSON.parse(line) as ToolExecutionRecord).execution_id);
    }
  }
  return found;
}

const failure = () => makeFailureRecord({ failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error' });

describe('memory full: lossless by default', () => {
  it('spills the oldest queued batch to the spool at once, keeps memory bounded, and replays it: nothing lost, nothing doubled', async () => {
    const store = new ControllableStore();
    store.hold();
    const errors: unknown[] = [];
    const rec = recorder(store, { batchSize: 10, maxQueue: 30, onError: (e) => errors.push(e) });
    const sent = records(1000);
    let most = 0;
    // One synchronous burst: no write can finish meanwhile.
    for (const record of sent) {
      expect(rec.enqueue(record)).toBeUndefined();
      most = Math.max(most, rec.stats().queued);
      expectAccounted(rec);
    }
    expect(most).toBeLessThanOrEqual(30);
    const before = rec.recording();
    expect(before).toMatchObject({ offered: 1000, dropped: 0, stored: 0 });
    expect(before.spooled).toBeGreaterThanOrEqual(970);
    expect(idsOnDiskNow().size).toBe(before.spooled);
    store.release();
    await rec.close();
    expectExactlyOnce(store, sent);
    expect(store.duplicates).toBe(0);
    expect(rec.recording()).toMatchObject({ offered: 1000, stored: 1000, spooled: 0, inMemory: 0, dropped: 0 });
    expect(spoolFiles()).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('replays what it spilled while the store stays healthy, without waiting for close', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { batchSize: 10, maxQueue: 20 });
    const sent = records(200);
    for (const record of sent) rec.enqueue(record);
    expect(rec.recording().spooled).toBeGreaterThan(0);
    store.release();
    await vi.waitFor(() => expect(store.rows.size).toBe(200));
    expect(rec.recording()).toMatchObject({ stored: 200, spooled: 0, inMemory: 0 });
    // The segment goes once all of it is stored.
    await vi.waitFor(() => expect(rec.stats().pendingSpoolFiles).toBe(0));
    expect(spoolFiles()).toEqual([]);
  });

  it('with nowhere to spill, drops successes before any failure, and reports the drops once per episode', async () => {
    const store = new ControllableStore();
    store.hold();
    const errors: unknown[] = [];
    const rec = recorder(store, { spool: false, batchSize: 5, maxQueue: 10, onError: (e) => errors.push(e) });
    const successes = records(10);
    for (const record of successes) rec.enqueue(record);
    const failures = Array.from({ length: 14 }, failure);
    // Failures may fill twice maxQueue, then each takes a queued success's place.
    for (const record of failures) expect(rec.enqueue(record)).toBeUndefined();
    expect(rec.recording()).toMatchObject({ offered: 24, dropped: 4, inMemory: 20 });
    expect(rec.enqueue(makeRecord())).toBeUndefined();
    const last = failure();
    rec.enqueue(last);
    expect(rec.recording()).toMatchObject({ offered: 26, dropped: 6, inMemory: 20 });
    expectAccounted(rec);
    const dropReports = errors.filter((e) => RecordsDroppedError.isInstance(e));
    expect(dropReports).toHaveLength(1);
    expect((dropReports[0] as Error).message).toMatch(/spool is disabled/);

    store.release();
    await rec.flush();
    // Every failure is stored, and the successes that were not made to give way.
    for (const record of [...failures, last]) expect(store.rows.has(record.execution_id)).toBe(true);
    expect(store.rows.size).toBe(20);
    expect(successes.filter((record) => store.rows.has(record.execution_id))).toHaveLength(5);
    expectAccounted(rec);

    // Room came back: a new episode is reported again.
    store.hold();
    for (const record of records(30)) rec.enqueue(record);
    expect(errors.filter((e) => RecordsDroppedError.isInstance(e))).toHaveLength(2);
    store.release();
  });

  it('drops when the spool disk fails too, reporting the disk error, and spills again once it works', async () => {
    const store = new ControllableStore();
    store.hold();
    const blocker = join(dir, 'blocked');
    writeFileSync(blocker, 'a file where the spool directory should be');
    const errors: unknown[] = [];
    const rec = recorder(store, { spool: { path: join(blocker, 'spool', 'x.jsonl') }, batchSize: 5, maxQueue: 10, onError: (e) => errors.push(e) });
    for (const record of records(20)) rec.enqueue(record);
    expect(rec.recording()).toMatchObject({ offered: 20, dropped: 10, spooled: 0, inMemory: 10 });
    expect(errors.some((e) => RecordsDroppedError.isInstance(e) && /spool failed/.test((e as Error).message))).toBe(true);
    store.release();
    await rec.flush();
    expectAccounted(rec);
  });

  it("'drop' still discards a success beyond maxQueue at once, and 'block' still waits", async () => {
    const store = new ControllableStore();
    store.hold();
    const dropping = recorder(store, { batchSize: 5, maxQueue: 10, overflow: 'drop' });
    for (const record of records(12)) dropping.enqueue(record);
    expect(dropping.recording()).toMatchObject({ dropped: 2, spooled: 0 });
    const blocking = recorder(store, { batchSize: 5, maxQueue: 10, overflow: 'block', spool: { path: join(dir, 'spool', 'other.jsonl') } });
    const waits = records(12).map((record) => blocking.enqueue(record));
    expect(waits.filter((w) => w !== undefined)).toHaveLength(2);
    expect(blocking.recording()).toMatchObject({ dropped: 0, spooled: 0, inMemory: 12 });
    store.release();
    await Promise.all(waits);
  });
});

describe('the window of records only in memory, when the event loop never turns', () => {
  it('spills (or copies) what is older than maxUnsavedMs from the enqueue path itself', async () => {
    const store = new ControllableStore();
    store.behavior = 'hang';
    const rec = recorder(store, { batchSize: 50, maxUnsavedMs: 100, insertTimeoutMs: 60_000 });
    const sent: Array<{ record: ToolExecutionRecord; at: number }> = [];
    const start = performance.now();
    // A synchronous loop: no timer, no store reply and no I/O callback can run.
    while (performance.now() - start < 400) {
      const record = makeRecord();
      rec.enqueue(record);
      sent.push({ record, at: performance.now() });
      for (let spin = performance.now(); performance.now() - spin < 0.05; );
    }
    const end = sent[sent.length - 1]!.at;
    const onDisk = idsOnDiskNow();
    // Checked at least every 64 records: everything enqueued before the last check minus the bound is on disk.
    const lastChecked = sent[Math.max(0, sent.length - 65)]!.at;
    const old = sent.filter((s) => s.at < lastChecked - 100);
    expect(old.length).toBeGreaterThan(0);
    for (const s of old) expect(onDisk.has(s.record.execution_id)).toBe(true);
    // The rest is young: only the last maxUnsavedMs (and a check's worth of records) is in memory.
    const r = rec.recording();
    expect(r.spooled).toBe(onDisk.size);
    expect(r.inMemory).toBe(sent.length - onDisk.size);
    for (const s of sent) if (!onDisk.has(s.record.execution_id)) expect(s.at).toBeGreaterThanOrEqual(lastChecked - 100 - (end - lastChecked) - 1);
    // Not even a microtask ran, so nothing was sent: every record older than the bound was spilled.
    expect(store.calls).toEqual([]);
    store.behavior = 'up';
    await rec.close();
    expect(new Set(store.rows.keys())).toEqual(new Set(sent.map((s) => s.record.execution_id)));
    expect(rec.recording()).toMatchObject({ stored: sent.length, spooled: 0, inMemory: 0, dropped: 0 });
  });

  it('keeps writing to a store that can tell its finished writes synchronously (poll), with nothing spilled', async () => {
    // Writes finish "elsewhere", and are learned of through poll() or when the event loop turns,
    // like the SQLite writer thread's replies.
    class PollingStore extends ControllableStore {
      readonly maxInsertsInFlight = Number.POSITIVE_INFINITY;
      private readonly finished: Array<() => void> = [];
      polls = 0;
      override insert(batch: readonly ToolExecutionRecord[]): Promise<void> {
        setImmediate(() => this.poll());
        return new Promise<void>((resolve) => this.finished.push(resolve)).then(() => super.insert(batch));
      }
      poll(): void {
        this.polls++;
        for (const resolve of this.finished.splice(0)) resolve();
      }
    }
    const store = new PollingStore();
    const rec = recorder(store, { batchSize: 20, maxQueue: 100 });
    const sent = records(5000);
    // Microtasks only, as a loop awaiting tools that answer at once.
    for (const record of sent) {
      rec.enqueue(record);
      await Promise.resolve();
    }
    expect(store.polls).toBeGreaterThan(0);
    // No macrotask ran, yet all but the last few batches are stored.
    expect(store.rows.size).toBeGreaterThan(4900);
    expect(rec.recording()).toMatchObject({ spooled: 0, dropped: 0 });
    expect(existsSync(join(dir, 'spool'))).toBe(false);
    await rec.close();
    expectExactlyOnce(store, sent);
  });
});

describe('durable mode', () => {
  it('resolves enqueue only after the insert holding the record completed', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { mode: 'durable' });
    const record = makeRecord();
    const done = rec.enqueue(record);
    expect(done).toBeInstanceOf(Promise);
    let resolved = false;
    void done?.then(() => {
      resolved = true;
    });
    await turn();
    expect(store.calls).toEqual([1]);
    expect(resolved).toBe(false);

    store.release();
    await done;
    expect(store.rows.has(record.execution_id)).toBe(true);
  });

  it('groups records enqueued during a write into the next insert', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { mode: 'durable' });
    const first = rec.enqueue(makeRecord());
    await turn();
    const rest = records(5).map((record) => rec.enqueue(record));
    store.release();
    await Promise.all([first, ...rest]);
    expect(store.calls).toEqual([1, 5]);
  });

  it('resolves once the record is fsync\'d to the spool when the store fails', async () => {
    const store = new ControllableStore();
    store.behavior = 'fail';
    const rec = recorder(store, { mode: 'durable' });
    const record = makeRecord();
    await rec.enqueue(record);
    expect(await idsOnDisk()).toEqual([record.execution_id]);
    expect(rec.stats()).toMatchObject({ spooled: 1, storeHealthy: false });
  });

  it('never acknowledges a record that is not stored or spooled, however many are in flight at once', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { mode: 'durable', batchSize: 10, maxQueue: 50 });
    const sent = records(600);
    let early = 0;
    const acks = sent.map((record) =>
      rec.enqueue(record)!.then(() => {
        // At the moment of the acknowledgement the record is in the store or already on disk.
        if (!store.rows.has(record.execution_id)) {
          expect(idsOnDiskNow().has(record.execution_id)).toBe(true);
          early++;
        }
      }),
    );
    await turn();
    expect(early).toBeGreaterThan(0);
    expect(rec.recording()).toMatchObject({ dropped: 0 });
    store.release();
    await Promise.all(acks);
    await rec.close();
    expectExactlyOnce(store, sent);
  });

  it('with the spool disabled, a caller waits for room instead of being acknowledged', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { mode: 'durable', spool: false, batchSize: 5, maxQueue: 10 });
    let acknowledged = 0;
    const sent = records(30);
    const acks = sent.map((record) => rec.enqueue(record)!.then(() => acknowledged++));
    await turn();
    expect(acknowledged).toBe(0);
    expect(rec.recording()).toMatchObject({ dropped: 0, inMemory: 30 });
    store.release();
    await Promise.all(acks);
    expect(acknowledged).toBe(30);
    expectExactlyOnce(store, sent);
  });
});

describe('close', () => {
  it('flushes, is idempotent, and drops (counts) records enqueued afterwards', async () => {
    const store = new ControllableStore();
    const rec = recorder(store);
    const sent = records(3);
    for (const record of sent) rec.enqueue(record);
    const first = rec.close();
    expect(rec.close()).toBe(first);
    await first;
    expectExactlyOnce(store, sent);
    expect(rec.enqueue(makeRecord())).toBeUndefined();
    expect(rec.stats()).toMatchObject({ enqueued: 4, dropped: 1, written: 3 });
    await rec.flush();
    expect(store.calls).toEqual([3]);
  });

  it('stops the interval timer', async () => {
    vi.useFakeTimers();
    const store = new ControllableStore();
    const rec = recorder(store, { flushIntervalMs: 100, spool: false });
    await rec.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves pending durable and blocked callers even when records cannot be written', async () => {
    const store = new ControllableStore();
    store.behavior = 'fail';
    const rec = recorder(store, { spool: false, mode: 'durable', maxQueue: 2, batchSize: 2, overflow: 'block' });
    const pending = records(4).map((record) => rec.enqueue(record));
    await turn();
    await rec.close();
    await expect(Promise.all(pending)).resolves.toBeDefined();
    expect(rec.stats()).toMatchObject({ dropped: 4, queued: 0, waiting: 0 });
  });
});

describe('store outage with a spool', () => {
  it('spools failed batches, recovers, replays, and ends with every record stored exactly once', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    const errors: unknown[] = [];
    const rec = recorder(store, { batchSize: 50, clock, onError: (error) => errors.push(error) });

    const before = records(120);
    for (const record of before) rec.enqueue(record);
    await rec.flush();
    store.behavior = 'fail';
    const during = records(230);
    for (const record of during) rec.enqueue(record);
    await rec.flush();

    expect(rec.stats()).toMatchObject({ storeHealthy: false, written: 120, spooled: 230 });
    // Only the first failing batch touched the store, plus the health check that re-inserts the
    // last stored record to tell an outage from a refused record; the rest went straight to disk.
    expect(store.calls).toEqual([50, 50, 20, 50, 1]);
    expect((await idsOnDisk()).sort()).toEqual(during.map((record) => record.execution_id).sort());
    expect(errors).toHaveLength(1);

    store.behavior = 'up';
    const after = records(40);
    for (const record of after) rec.enqueue(record);
    clock.advance(60_000);
    await rec.flush();

    expect(rec.stats()).toMatchObject({ storeHealthy: true, replayed: 230, written: 160, pendingSpoolFiles: 0 });
    expectExactlyOnce(store, [...before, ...during, ...after]);
    expect(spoolFiles()).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  it('backs off exponentially between probes, measured on the injected clock', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    const rec = recorder(store, { clock, retry: { initialDelayMs: 60_000, maxDelayMs: 200_000 } });
    store.behavior = 'fail';
    rec.enqueue(makeRecord());
    await rec.flush();
    const probesSoFar = (): number => store.calls.length - 1;

    const expectProbeAfter = async (delay: number): Promise<void> => {
      const before = probesSoFar();
      clock.advance(delay - 1);
      await rec.flush();
      expect(probesSoFar()).toBe(before);
      clock.advance(1);
      await rec.flush();
      expect(probesSoFar()).toBe(before + 1);
    };
    await expectProbeAfter(60_000);
    await expectProbeAfter(120_000);
    await expectProbeAfter(200_000);
    await expectProbeAfter(200_000);
    expect(rec.stats().failedFlushes).toBe(5);
  });

  it('probes on a real timer too, without any flush call', async () => {
    const store = new ControllableStore();
    const rec = recorder(store, { retry: { initialDelayMs: 20, maxDelayMs: 40 } });
    store.behavior = 'fail';
    const sent = records(5);
    for (const record of sent) rec.enqueue(record);
    await rec.flush();
    expect(rec.stats().storeHealthy).toBe(false);
    store.behavior = 'up';
    await vi.waitFor(() => expect(rec.stats().storeHealthy).toBe(true), { timeout: 2000 });
    await vi.waitFor(() => expect(store.rows.size).toBe(5), { timeout: 2000 });
    expectExactlyOnce(store, sent);
  });

  it('reports once per outage, and swallows errors thrown by onError', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    const errors: unknown[] = [];
    const rec = recorder(store, {
      batchSize: 10,
      clock,
      onError: (error) => {
        errors.push(error);
        throw new Error('handler bug');
      },
    });
    store.behavior = 'fail';
    for (let round = 0; round < 3; round++) {
      for (const record of records(25)) rec.enqueue(record);
      await rec.flush();
      clock.advance(300_000);
      await rec.flush();
    }
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('connection refused');

    store.behavior = 'up';
    clock.advance(300_000);
    await rec.flush();
    expect(rec.stats().storeHealthy).toBe(true);

    store.behavior = 'fail';
    rec.enqueue(makeRecord());
    await rec.flush();
    expect(errors).toHaveLength(2);
    store.behavior = 'up';
    await rec.close();
    expect(store.rows.size).toBe(76);
  });

  it('treats a hanging insert as a failure after insertTimeoutMs and loses nothing', async () => {
    const store = new ControllableStore();
    store.behavior = 'hang';
    const errors: unknown[] = [];
    const rec = recorder(store, { insertTimeoutMs: 30, onError: (error) => errors.push(error) });
    const sent = records(7);
    for (const record of sent) rec.enqueue(record);
    await rec.flush();
    expect(errors).toHaveLength(1);
    expect(StoreWriteTimeoutError.isInstance(errors[0])).toBe(true);
    // No health check after a timeout: a hanging store would only hold the queue up longer.
    expect(store.calls).toEqual([7]);
    expect(rec.stats()).toMatchObject({ spooled: 7, storeHealthy: false });
    store.behavior = 'up';
    await rec.close();
    expectExactlyOnce(store, sent);
    expect(spoolFiles()).toEqual([]);
  });

  it('treats an insert that throws synchronously like any failure', async () => {
    const store = new ControllableStore();
    store.behavior = 'throw-sync';
    const rec = recorder(store);
    const sent = records(4);
    for (const record of sent) rec.enqueue(record);
    await rec.flush();
    expect(rec.stats()).toMatchObject({ spooled: 4, storeHealthy: false });
    store.behavior = 'up';
    await rec.close();
    expectExactlyOnce(store, sent);
  });

  it('leaves the spool on disk when the store is still down at close', async () => {
    const store = new ControllableStore();
    store.behavior = 'fail';
    const rec = recorder(store);
    const sent = records(9);
    for (const record of sent) rec.enqueue(record);
    await rec.close();
    expect(store.rows.size).toBe(0);
    expect((await idsOnDisk()).sort()).toEqual(sent.map((record) => record.execution_id).sort());
  });

  it('keeps memory bounded by maxQueue while 200k records go to disk, then stores them all', async () => {
    const store = new ControllableStore();
    store.behavior = 'fail';
    const maxQueue = 5_000;
    const rec = recorder(store, { batchSize: 1_000, maxQueue, overflow: 'block' });
    const total = 200_000;
    const sentIds: string[] = [];
    let maxQueued = 0;
    for (let i = 0; i < total; i++) {
      const record = makeRecord({ attempts: [], input_params: null, raw_output: null });
      sentIds.push(record.execution_id);
      const wait = rec.enqueue(record);
      if (wait !== undefined) await wait;
      const queued = rec.stats().queued;
      if (queued > maxQueued) maxQueued = queued;
    }
    await rec.flush();
    expect(maxQueued).toBeLessThanOrEqual(maxQueue);
    expect(rec.stats()).toMatchObject({ queued: 0, dropped: 0, spooled: total });

    const onDisk = await idsOnDisk();
    expect(onDisk.length).toBe(total);
    expect(new Set(onDisk).size).toBe(total);

    store.behavior = 'up';
    await rec.close();
    expect(store.rows.size).toBe(total);
    for (const id of sentIds) if (!store.rows.has(id)) throw new Error(`lost ${id}`);
    expect(store.duplicates).toBe(0);
    expect(spoolFiles()).toEqual([]);
  }, 120_000);
});

describe('spool replay on start', () => {
  it('replays the spool a previous run left at the same path', async () => {
    const down = new ControllableStore();
    down.behavior = 'fail';
    const first = recorder(down);
    const sent = records(30);
    for (const record of sent) first.enqueue(record);
    await first.close();
    expect(spoolFiles()).toHaveLength(1);

    const store = new ControllableStore();
    const second = recorder(store);
    await vi.waitFor(() => expect(store.rows.size).toBe(30));
    expectExactlyOnce(store, sent);
    await vi.waitFor(() => expect(spoolFiles()).toEqual([]));
    expect(second.stats()).toMatchObject({ replayed: 30, pendingSpoolFiles: 0 });
  });

  it('replays spools of dead processes in the directory, and not those of live ones', async () => {
    const spoolDir = join(dir, 'spool');
    const orphaned = records(12);
    const otherLive = records(2);
    mkdirSync(spoolDir, { recursive: true });
    writeFileSync(join(spoolDir, `${DEAD_PID}-abc.jsonl`), orphaned.map((r) => `${JSON.stringify(r)}\n`).join(''));
    // pid 1 always exists.
    writeFileSync(join(spoolDir, '1-live.jsonl'), otherLive.map((r) => `${JSON.stringify(r)}\n`).join(''));

    const store = new ControllableStore();
    const rec = recorder(store, { spool: { path: join(spoolDir, `${process.pid}-me.jsonl`) } });
    await rec.close();
    expectExactlyOnce(store, orphaned);
    expect(readdirSync(spoolDir)).toEqual(['1-live.jsonl']);
  });

  it('skips and counts malformed spool lines without losing the good ones', async () => {
    const spoolDir = join(dir, 'spool');
    mkdirSync(spoolDir, { recursive: true });
    const good = records(5);
    const lines = good.map((record) => JSON.stringify(record));
    lines.splice(1, 0, '{"this is": "not a record"}');
    lines.splice(3, 0, '%%% garbage');
    lines.push(JSON.stringify(makeRecord()).slice(0, 30));
    writeFileSync(join(spoolDir, 'test.jsonl'), `${lines.join('\n')}\n`);

    const store = new ControllableStore();
    const rec = recorder(store);
    await rec.close();
    expectExactlyOnce(store, good);
    expect(rec.stats().malformedSpoolLines).toBe(3);
    expect(spoolFiles()).toEqual([]);
  });

  it('resumes a replay that failed half-way without counting records twice', async () => {
    const spoolDir = join(dir, 'spool');
    mkdirSync(spoolDir, { recursive: true });
    const left = records(30);
    writeFileSync(join(spoolDir, 'test.jsonl'), left.map((r) => `${JSON.stringify(r)}\n`).join(''));

    const store = new ControllableStore();
    const clock = new ManualClock();
    // Let the first two batches of 10 in, then fail.
    const insert = store.insert.bind(store);
    let allowed = 2;
    store.insert = (batch) => {
      if (allowed-- <= 0) store.behavior = 'fail';
      return insert(batch);
    };
    const rec = recorder(store, { batchSize: 10, clock });
    await vi.waitFor(() => expect(rec.stats().storeHealthy).toBe(false));
    expect(store.rows.size).toBe(20);
    expect(rec.stats().replayed).toBe(20);

    store.behavior = 'up';
    allowed = Infinity;
    clock.advance(60_000);
    await rec.flush();
    expectExactlyOnce(store, left);
    // The first 20 went in once; the only repeat is the probe, which re-inserts the last stored record.
    const probeId = left[19]?.execution_id;
    for (const record of left) {
      expect(store.accepted.get(record.execution_id), record.execution_id).toBe(record.execution_id === probeId ? 2 : 1);
    }
    expect(rec.stats()).toMatchObject({ replayed: 30, storeHealthy: true });
  });
});

describe('records the store refuses', () => {
  async function rejectedOnDisk(): Promise<string[]> {
    const path = join(dir, 'spool', 'rejected-test.jsonl');
    const found: string[] = [];
    for await (const batch of readSpoolBatches(path, { batchSize: 1000 })) found.push(...batch.records.map((r) => r.execution_id));
    return found;
  }

  it('sets a refused record aside and stores the rest of its batch, without declaring an outage', async () => {
    const store = new ControllableStore();
    const errors: unknown[] = [];
    const rec = recorder(store, { batchSize: 64, onError: (error) => errors.push(error) });
    const warmup = records(3);
    for (const record of warmup) rec.enqueue(record);
    await rec.flush();

    const batch = records(64);
    const poison = batch[37] as ToolExecutionRecord;
    store.refuse.add(poison.execution_id);
    for (const record of batch) rec.enqueue(record);
    await rec.flush();

    expectExactlyOnce(store, [...warmup, ...batch.filter((record) => record !== poison)]);
    expect(rec.stats()).toMatchObject({ rejected: 1, storeHealthy: true, spooled: 0, written: 66, failedFlushes: 0 });
    expect(errors).toHaveLength(1);
    expect(RecordsRejectedError.isInstance(errors[0])).toBe(true);
    expect((errors[0] as RecordsRejectedError).executionIds).toEqual([poison.execution_id]);
    expect(await rejectedOnDisk()).toEqual([poison.execution_id]);
  });

  it('tells a refused record from an outage before anything was ever stored', async () => {
    const store = new ControllableStore();
    const rec = recorder(store, { batchSize: 10 });
    const batch = records(10);
    store.refuse.add(batch[0]?.execution_id ?? '');
    store.refuse.add(batch[4]?.execution_id ?? '');
    for (const record of batch) rec.enqueue(record);
    await rec.flush();
    expectExactlyOnce(store, batch.filter((_, i) => i !== 0 && i !== 4));
    expect(rec.stats()).toMatchObject({ rejected: 2, storeHealthy: true });
    expect((await rejectedOnDisk()).sort()).toEqual([batch[0]?.execution_id, batch[4]?.execution_id].sort());
  });

  it('does not mistake a record caught in failures that merely coincided for a refused one', async () => {
    const store = new ControllableStore();
    const errors: unknown[] = [];
    const rec = recorder(store, { batchSize: 8, onError: (error) => errors.push(error) });
    const warmup = records(2);
    for (const record of warmup) rec.enqueue(record);
    await rec.flush();

    const batch = records(8);
    // The batch, its half, its quarter and the record alone all fail; only the retry of the record alone succeeds.
    store.flaky.set(batch[6]?.execution_id ?? '', 4);
    for (const record of batch) rec.enqueue(record);
    await rec.flush();

    expectExactlyOnce(store, [...warmup, ...batch]);
    expect(rec.stats()).toMatchObject({ rejected: 0, storeHealthy: true, spooled: 0, failedFlushes: 0 });
    expect(errors).toEqual([]);
  });

  it('declares an outage, not a refused record, when the store goes down while isolating', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    const rec = recorder(store, { batchSize: 8, clock });
    const warmup = records(2);
    for (const record of warmup) rec.enqueue(record);
    await rec.flush();

    const batch = records(8);
    // The last record, so no later write in the bisection would notice the outage by itself.
    const suspect = batch[7]?.execution_id ?? '';
    store.flaky.set(suspect, 5);
    const insert = store.insert.bind(store);
    let suspectCalls = 0;
    store.insert = (records) => {
      const result = insert(records);
      // After the retry of the suspect alone, the whole store goes away.
      if (records.some((record) => record.execution_id === suspect) && ++suspectCalls === 5) store.behavior = 'fail';
      return result;
    };
    for (const record of batch) rec.enqueue(record);
    await rec.flush();
    expect(suspectCalls).toBe(5);
    expect(rec.stats()).toMatchObject({ rejected: 0, storeHealthy: false, spooled: 8 });

    store.behavior = 'up';
    clock.advance(60_000);
    await rec.flush();
    expectExactlyOnce(store, [...warmup, ...batch]);
    expect(rec.stats()).toMatchObject({ rejected: 0, storeHealthy: true });
  });

  it('declares an outage, not a refused record, when the health check fails too', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    const rec = recorder(store, { batchSize: 4, clock });
    const warmup = records(1);
    rec.enqueue(warmup[0] as ToolExecutionRecord);
    await rec.flush();
    const batch = records(4);
    store.flaky.set(batch[1]?.execution_id ?? '', 1);
    store.flaky.set(warmup[0]?.execution_id ?? '', 1);
    for (const record of batch) rec.enqueue(record);
    await rec.flush();
    expect(rec.stats()).toMatchObject({ rejected: 0, storeHealthy: false, spooled: 4 });
    clock.advance(60_000);
    await rec.flush();
    expectExactlyOnce(store, [...warmup, ...batch]);
    expect(rec.stats()).toMatchObject({ rejected: 0, storeHealthy: true, replayed: 4 });
  });

  it('treats the store going down mid-isolation as an outage, and isolates after recovery', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    const rec = recorder(store, { batchSize: 20, clock });
    const warmup = records(2);
    for (const record of warmup) rec.enqueue(record);
    await rec.flush();

    const batch = records(20);
    const poison = batch[5] as ToolExecutionRecord;
    store.refuse.add(poison.execution_id);
    // The batch fails because of the poison, and then the store is gone for the health check.
    const insert = store.insert.bind(store);
    store.insert = (records) => {
      const result = insert(records);
      if (records.some((record) => record.execution_id === poison.execution_id)) store.behavior = 'fail';
      return result;
    };
    for (const record of batch) rec.enqueue(record);
    await rec.flush();
    expect(rec.stats()).toMatchObject({ rejected: 0, storeHealthy: false, spooled: 20 });

    store.behavior = 'up';
    store.insert = insert;
    clock.advance(60_000);
    await rec.flush();
    expectExactlyOnce(store, [...warmup, ...batch.filter((record) => record !== poison)]);
    expect(rec.stats()).toMatchObject({ rejected: 1, storeHealthy: true, replayed: 19, pendingSpoolFiles: 0 });
    expect(await rejectedOnDisk()).toEqual([poison.execution_id]);
    expect(spoolFiles()).toEqual([join(dir, 'spool', 'rejected-test.jsonl')]);
  });

  it('counts and reports refused records it cannot keep when the spool is disabled', async () => {
    const store = new ControllableStore();
    const errors: unknown[] = [];
    const rec = recorder(store, { spool: false, batchSize: 4, onError: (error) => errors.push(error) });
    const batch = records(4);
    store.refuse.add(batch[2]?.execution_id ?? '');
    for (const record of batch) rec.enqueue(record);
    await rec.flush();
    expect(store.rows.size).toBe(3);
    expect(rec.stats().rejected).toBe(1);
    expect((errors[0] as RecordsRejectedError).keptAt).toBeNull();
  });
});

describe('store outage without a spool', () => {
  it('holds up to maxQueue in memory, drops the rest, and writes the held ones after recovery', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    store.behavior = 'fail';
    const rec = recorder(store, { spool: false, batchSize: 10, maxQueue: 25, clock });
    const sent = records(40);
    for (const record of sent) {
      rec.enqueue(record);
      await turn(1);
    }
    await rec.flush();
    expect(rec.stats()).toMatchObject({ queued: 25, dropped: 15, storeHealthy: false });

    store.behavior = 'up';
    clock.advance(60_000);
    await rec.flush();
    expect(rec.stats()).toMatchObject({ queued: 0, storeHealthy: true, written: 25 });
    expectExactlyOnce(store, sent.slice(0, 25));
  });

  it('blocks producers while the store is down and lets them through after recovery', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    store.behavior = 'fail';
    const rec = recorder(store, { spool: false, batchSize: 5, maxQueue: 10, overflow: 'block', clock });
    const sent = records(14);
    const waits = sent.map((record) => rec.enqueue(record));
    await rec.flush();
    expect(waits.filter((wait) => wait !== undefined)).toHaveLength(4);
    expect(rec.stats()).toMatchObject({ queued: 10, waiting: 4, dropped: 0 });

    store.behavior = 'up';
    clock.advance(60_000);
    await rec.flush();
    await Promise.all(waits);
    await rec.flush();
    expect([...store.rows.keys()]).toEqual(sent.map((record) => record.execution_id));
  });
});

describe('blocked producers with nowhere to put records', () => {
  it('drops a record that waited maxBlockMs for room, reports it once per outage, and keeps what is queued', async () => {
    const store = new ControllableStore();
    const clock = new ManualClock();
    store.behavior = 'fail';
    const errors: unknown[] = [];
    const rec = recorder(store, { spool: false, batchSize: 5, maxQueue: 10, overflow: 'block', maxBlockMs: 40, clock, onError: (e) => errors.push(e) });
    const sent = records(14);
    const waits = sent.map((record) => rec.enqueue(record));
    await rec.flush();
    expect(rec.stats()).toMatchObject({ queued: 10, waiting: 4, dropped: 0 });

    // The callers are let go: the store is down and there is no spool, so room would never come.
    await Promise.all(waits);
    expect(rec.stats()).toMatchObject({ queued: 10, waiting: 0, dropped: 4 });
    const late = records(2);
    await Promise.all(late.map((record) => rec.enqueue(record)));
    expect(rec.stats()).toMatchObject({ waiting: 0, dropped: 6 });
    const timeouts = errors.filter((e) => RecorderBlockTimeoutError.isInstance(e));
    expect(timeouts).toHaveLength(1);
    expect((timeouts[0] as RecorderBlockTimeoutError).message).toMatch(/waited 40 ms for room/);

    store.behavior = 'up';
    clock.advance(60_000);
    await rec.flush();
    expect([...store.rows.keys()]).toEqual(sent.slice(0, 10).map((record) => record.execution_id));

    // A new outage is reported again.
    store.behavior = 'fail';
    const second = records(12);
    const secondWaits = second.map((record) => rec.enqueue(record));
    await rec.flush();
    await Promise.all(secondWaits);
    expect(errors.filter((e) => RecorderBlockTimeoutError.isInstance(e))).toHaveLength(2);
  });

  it('does not drop a blocked record whose room comes back in time', async () => {
    const store = new ControllableStore();
    store.hold();
    const rec = recorder(store, { spool: false, batchSize: 5, maxQueue: 5, overflow: 'block', maxBlockMs: 5_000 });
    const sent = records(7);
    const waits = sent.map((record) => rec.enqueue(record));
    await turn();
    expect(rec.stats().waiting).toBe(2);
    store.release();
    await Promise.all(waits);
    await rec.flush();
    expect(rec.stats()).toMatchObject({ dropped: 0, written: 7 });
  });
});

describe('summary mode', () => {
  it('stores first-time successes as summaries and keeps failures and recoveries whole', async () => {
    const store = new ControllableStore();
    const rec = recorder(store, { successRecords: 'summary' });
    const plain = makeRecord({ input_params: { q: 'x'.repeat(100) } });
    const retried = makeRecord({ recovery: 'auto_recovered', retry_count: 1 });
    const failed = makeFailureRecord({ failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout' });
    for (const record of [plain, retried, failed]) rec.enqueue(record);
    await rec.flush();

    expect(store.rows.get(plain.execution_id)).toMatchObject({ summary_only: true, input_params: null, raw_output: null, attempts: [] });
    expect(store.rows.get(retried.execution_id)).toEqual(retried);
    expect(store.rows.get(failed.execution_id)).toEqual(failed);
  });
});

describe('options', () => {
  it('rejects invalid options with a ConfigError naming the field', () => {
    const store = new ControllableStore();
    const cases: Array<[Partial<RecorderOptions>, string]> = [
      [{ batchSize: 0 }, 'batchSize'],
      [{ maxQueue: 1.5 }, 'maxQueue'],
      [{ flushIntervalMs: -1 }, 'flushIntervalMs'],
      [{ retry: { initialDelayMs: 1000, maxDelayMs: 10 } }, 'retry.maxDelayMs'],
      [{ mode: 'eventual' as 'durable' }, 'mode'],
      [{ spool: { path: '' } }, 'spool.path'],
      [{ maxBlockMs: 0 }, 'maxBlockMs'],
    ];
    for (const [options, field] of cases) {
      let caught: unknown;
      try {
        createRecorder({ store, spool: false, ...options });
      } catch (error) {
        caught = error;
      }
      expect(ConfigError.isInstance(caught), field).toBe(true);
      expect((caught as ConfigError).field).toBe(field);
    }
  });

  it('caps batchSize at maxQueue so a full queue always makes a batch', async () => {
    const store = new ControllableStore();
    const rec = recorder(store, { batchSize: 100, maxQueue: 8 });
    for (const record of records(8)) rec.enqueue(record);
    await turn();
    expect(store.calls).toEqual([8]);
  });

  it('does not touch the disk while the store is healthy', async () => {
    const store = new ControllableStore();
    const rec = recorder(store);
    for (const record of records(50)) rec.enqueue(record);
    await rec.close();
    expect(existsSync(join(dir, 'spool'))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Against the real stores: kill the store mid-run and prove nothing is lost and nothing doubled.
// ---------------------------------------------------------------------------------------------

const HOUR = 3_600_000;

/**
 * Writes `perRound` records per round through the recorder, yielding between rounds so flushes,
 * probes and replays interleave with the writes. `between(round)` breaks and heals the store.
 */
async function writeContinuously(
  rec: Recorder,
  options: { rounds: number; perRound: number; between: (round: number) => Promise<void> | void },
): Promise<ToolExecutionRecord[]> {
  const sent: ToolExecutionRecord[] = [];
  for (let round = 0; round < options.rounds; round++) {
    await options.between(round);
    for (let i = 0; i < options.perRound; i++) {
      const record = makeRecord({ step_index: round * options.perRound + i, trace_id: `trace-${round}` });
      sent.push(record);
      const wait = rec.enqueue(record);
      if (wait !== undefined) await wait;
    }
    await sleep(5);
  }
  return sent;
}

/** Every sent id is stored, no other id is, and the rollups counted each record once. */
async function expectStoredExactlyOnce(store: Store, sent: readonly ToolExecutionRecord[]): Promise<void> {
  expect(await store.count()).toBe(sent.length);
  const stored = await store.query({ limit: sent.length + 100 });
  expect(stored).toHaveLength(sent.length);
  expect(new Set(stored.map((record) => record.execution_id))).toEqual(new Set(sent.map((record) => record.execution_id)));
  const stats = await store.toolStats({ since: 0, until: Date.now() + HOUR });
  expect(stats.reduce((sum, row) => sum + row.total, 0)).toBe(sent.length);
}

/** Stores and lock-holding connections opened by a block's tests, closed after each test. */
function sqliteFixtures(): { stores: Store[]; lockHolder(path: string): { lock(): void; unlock(): void } } {
  const stores: Store[] = [];
  const holders: Database.Database[] = [];
  afterEach(async () => {
    for (const holder of holders.splice(0)) if (holder.open) holder.close();
    for (const store of stores.splice(0)) await store.close();
  });
  return {
    stores,
    /**
     * A second connection that takes the write lock and keeps it past the store's busy_timeout.
     * Taking it waits for a write the store has in flight (a writer thread can be mid-transaction
     * at that moment, the more often on a loaded machine) instead of failing the test.
     */
    lockHolder(path) {
      const holder = new Database(path);
      holder.pragma('busy_timeout = 10000');
      holders.push(holder);
      return {
        lock: () => holder.exec('BEGIN EXCLUSIVE'),
        unlock: () => holder.exec('COMMIT'),
      };
    },
  };
}

/**
 * Writes records continuously (90 rounds of 20) through a recorder with short batches and retries,
 * while the store is out from round 20 to round 60; closes the recorder and returns what was sent,
 * the errors reported, and whether the recorder saw the store unhealthy during the outage.
 */
async function writeThroughOutage(
  store: Store,
  outage: { begin(): unknown; end(): unknown },
): Promise<{ rec: Recorder; sent: ToolExecutionRecord[]; errors: unknown[]; sawOutage: boolean }> {
  const errors: unknown[] = [];
  const rec = recorder(store, {
    batchSize: 25,
    flushIntervalMs: 10,
    retry: { initialDelayMs: 30, maxDelayMs: 120 },
    onError: (error) => errors.push(error),
  });
  let sawOutage = false;
  const sent = await writeContinuously(rec, {
    rounds: 90,
    perRound: 20,
    between: async (round) => {
      if (round === 20) await outage.begin();
      if (round > 20 && round < 60 && !rec.stats().storeHealthy) sawOutage = true;
      if (round === 60) await outage.end();
    },
  });
  await rec.close();
  return { rec, sent, errors, sawOutage };
}

/** Writes records continuously while another connection holds the lock for a while; nothing may be lost or doubled. */
async function expectNoLossUnderLock(store: Store, holder: { lock(): void; unlock(): void }): Promise<void> {
  const { rec, sent, errors, sawOutage } = await writeThroughOutage(store, { begin: () => holder.lock(), end: () => holder.unlock() });

  expect(sawOutage).toBe(true);
  expect(errors.length).toBeGreaterThanOrEqual(1);
  const stats = rec.stats();
  expect(stats.spooled).toBeGreaterThan(0);
  expect(stats).toMatchObject({ storeHealthy: true, dropped: 0, queued: 0, rejected: 0 });
  expect(stats.written + stats.replayed).toBe(sent.length);
  await expectStoredExactlyOnce(store, sent);
  expect(spoolFiles()).toEqual([]);
}

describe('with the SQLite store', () => {
  const { stores, lockHolder } = sqliteFixtures();

  it('loses nothing while the database is locked by another connection mid-run', async () => {
    const path = join(dir, 'faultline.db');
    const store = createSqliteStore({ path, busyTimeoutMs: 20 });
    stores.push(store);
    await expectNoLossUnderLock(store, lockHolder(path));
  });

  it('in durable mode, every acknowledged record is in the database or on disk, even during the lock', async () => {
    const path = join(dir, 'durable.db');
    const store = createSqliteStore({ path, busyTimeoutMs: 20 });
    stores.push(store);
    const holder = lockHolder(path);
    const rec = recorder(store, { mode: 'durable', batchSize: 10 });
    const acknowledged: ToolExecutionRecord[] = [];
    holder.lock();
    for (let i = 0; i < 15; i++) {
      const record = makeRecord({ step_index: i });
      await rec.enqueue(record);
      acknowledged.push(record);
    }
    // Nothing reached the database, so each acknowledged record must already be fsync'd to the spool.
    expect(new Set(await idsOnDisk())).toEqual(new Set(acknowledged.map((record) => record.execution_id)));
    holder.unlock();
    await rec.close();
    await expectStoredExactlyOnce(store, acknowledged);
  });

  it('replays what a previous process spooled when the database was unavailable', async () => {
    const path = join(dir, 'restart.db');
    const first = createSqliteStore({ path, busyTimeoutMs: 20 });
    stores.push(first);
    const holder = lockHolder(path);
    holder.lock();
    const before = recorder(first);
    const sent = records(40);
    for (const record of sent) before.enqueue(record);
    await before.close();
    expect((await idsOnDisk()).length).toBe(40);
    holder.unlock();

    const second = createSqliteStore({ path });
    stores.push(second);
    const after = recorder(second);
    await after.close();
    await expectStoredExactlyOnce(second, sent);
    expect(spoolFiles()).toEqual([]);
  });
});

describe('with the SQLite writer thread', () => {
  // Node 20 cannot run the TypeScript worker entry under vitest; see ts-worker.test-helpers.ts.
  const workers = mkdtempSync(join(tmpdir(), 'faultline-recorder-workers-'));
  const workerUrl = typeScriptWorkerUrl(new URL('../store/sqlite/sqlite-worker.ts', import.meta.url), workers);
  /**
   * The real worker, except that the thread dies on its 3rd insert request (a new one starts for
   * the next write), the first 4 times: each start costs a TypeScript boot here.
   */
  const crashingPath = join(workers, 'crashing-worker.mjs');
  const crashLog = join(workers, 'crashes.log');
  writeFileSync(
    crashingPath,
    `import { parentPort } from 'node:worker_threads';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
const log = ${JSON.stringify(crashLog)};
const crashes = existsSync(log) ? readFileSync(log, 'utf8').length : 0;
let inserts = 0;
parentPort.on('message', (m) => {
  if (m.op === 'insertRows' && ++inserts === 3 && crashes < 4) {
    appendFileSync(log, 'x');
    process.exit(5);
  }
});
await import(${JSON.stringify(workerUrl.href)});
`,
  );
  const { stores, lockHolder } = sqliteFixtures();
  afterAll(() => rmSync(workers, { recursive: true, force: true }));

  it('loses nothing while the database is locked by another connection mid-run', async () => {
    const path = join(dir, 'faultline.db');
    const store = await createSqliteWorkerStore({ path, busyTimeoutMs: 20, workerUrl });
    stores.push(store);
    await expectNoLossUnderLock(store, lockHolder(path));
  });

  it('loses nothing, and counts nothing twice, when the writer thread dies over and over mid-run', async () => {
    const store = await createSqliteWorkerStore({ path: join(dir, 'crashing.db'), workerUrl: pathToFileURL(crashingPath) });
    stores.push(store);
    const rec = recorder(store, { batchSize: 25, flushIntervalMs: 10, retry: { initialDelayMs: 30, maxDelayMs: 120 } });
    const sent = await writeContinuously(rec, { rounds: 60, perRound: 20, between: () => undefined });
    await rec.close();
    // A write the dying thread took fails; the recorder finds the store taking writes again (a new
    // thread) and sends the batch once more, so this is no outage to report.
    expect(readFileSync(crashLog, 'utf8')).toBe('xxxx');
    expect(rec.stats()).toMatchObject({ storeHealthy: true, dropped: 0, queued: 0, rejected: 0 });
    await expectStoredExactlyOnce(store, sent);
    expect(spoolFiles()).toEqual([]);
  });
});

const describePg = await describePostgres('recorder tests against PostgreSQL');

/**
 * A TCP proxy in front of PostgreSQL that can be taken down (every connection cut, new ones
 * refused) and brought back on the same port: a store outage the store cannot tell from a real one.
 */
class OutageProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (address !== null && typeof address === 'object') this.port = address.port;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Passes everything through to a real store, counting the inserts it failed. */
class FailureCountingStore implements Store {
  failures = 0;
  readonly kind: Store['kind'];
  constructor(private readonly inner: Store) {
    this.kind = inner.kind;
  }
  async insert(records: readonly ToolExecutionRecord[]): Promise<void> {
    try {
      await this.inner.insert(records);
    } catch (error) {
      this.failures++;
      throw error;
    }
  }
  get: Store['get'] = (id) => this.inner.get(id);
  query: Store['query'] = (query) => this.inner.query(query);
  count: Store['count'] = (query) => this.inner.count(query);
  toolStats: Store['toolStats'] = (filter) => this.inner.toolStats(filter);
  failureBreakdown: Store['failureBreakdown'] = (filter) => this.inner.failureBreakdown(filter);
  hourly: Store['hourly'] = (filter) => this.inner.hourly(filter);
  signatures: Store['signatures'] = (filter) => this.inner.signatures(filter);
  close: Store['close'] = () => this.inner.close();
}

describePg('with the PostgreSQL store', () => {
  const runId = randomBytes(4).toString('hex');
  let counter = 0;
  const schemas: string[] = [];
  let stores: Store[] = [];
  let proxy: OutageProxy | null = null;
  const target = new URL(PG_URL);

  function freshSchema(): string {
    const name = `faultline_recorder_${runId}_${counter++}`;
    schemas.push(name);
    return name;
  }

  function urlVia(port: number): string {
    const url = new URL(PG_URL);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return url.toString();
  }

  afterEach(async () => {
    for (const store of stores) await store.close();
    stores = [];
    await proxy?.stop();
    proxy = null;
  });

  afterAll(async () => {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      for (const name of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
    } finally {
      await admin.end();
    }
  });

  it('loses nothing when the server becomes unreachable mid-run and comes back', async () => {
    proxy = new OutageProxy(target.hostname, target.port === '' ? 5432 : Number(target.port));
    await proxy.start();
    const schema = freshSchema();
    const store = await createPostgresStore({ url: urlVia(proxy.port), schema, max: 4 });
    stores.push(store);
    const outage = proxy;
    const { rec, sent, errors, sawOutage } = await writeThroughOutage(store, { begin: () => outage.stop(), end: () => outage.start() });

    expect(sawOutage).toBe(true);
    expect(errors.length).toBeGreaterThanOrEqual(1);
    const stats = rec.stats();
    expect(stats.spooled).toBeGreaterThan(0);
    expect(stats).toMatchObject({ storeHealthy: true, dropped: 0, queued: 0 });
    expect(stats.written + stats.replayed).toBe(sent.length);

    const direct = await createPostgresStore({ url: PG_URL, schema });
    stores.push(direct);
    await expectStoredExactlyOnce(direct, sent);
    expect(spoolFiles()).toEqual([]);
  });

  it('loses nothing while its connections are terminated over and over', async () => {
    const schema = freshSchema();
    const applicationName = `faultline_rec_${runId}_${counter}`;
    const store = new FailureCountingStore(await createPostgresStore({ url: PG_URL, schema, applicationName, max: 4 }));
    stores.push(store);
    const killer = new pg.Client({ connectionString: PG_URL });
    killer.on('error', () => undefined);
    await killer.connect();
    const rec = recorder(store, { batchSize: 25, flushIntervalMs: 10, retry: { initialDelayMs: 20, maxDelayMs: 80 } });

    let killing = true;
    let terminated = 0;
    let sent: ToolExecutionRecord[] = [];
    try {
      const kills = (async () => {
        await sleep(100);
        while (killing) {
          const result = await killer.query<{ killed: boolean }>(
            'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1',
            [applicationName],
          );
          terminated += result.rows.filter((row) => row.killed).length;
          await sleep(3);
        }
      })();
      sent = await writeContinuously(rec, {
        rounds: 100,
        perRound: 20,
        between: (round) => {
          if (round === 70) killing = false;
        },
      });
      killing = false;
      await kills;
    } finally {
      killing = false;
      await killer.end();
    }
    await rec.close();

    expect(terminated).toBeGreaterThan(0);
    // The kills did hit writes in flight, and not one record was mistaken for a refused one.
    expect(store.failures).toBeGreaterThan(0);
    expect(rec.stats().rejected).toBe(0);
    expect(rec.stats()).toMatchObject({ storeHealthy: true, dropped: 0, queued: 0 });
    await expectStoredExactlyOnce(store, sent);
    expect(spoolFiles()).toEqual([]);
  });

  it('sets aside a record PostgreSQL refuses (a non-UUID id) and stores the rest', async () => {
    const schema = freshSchema();
    const store = await createPostgresStore({ url: PG_URL, schema });
    stores.push(store);
    const errors: unknown[] = [];
    const rec = recorder(store, { batchSize: 50, onError: (error) => errors.push(error) });
    const good = records(99);
    const poison = makeRecord({ execution_id: 'not-a-uuid' });
    for (const record of [...good.slice(0, 60), poison, ...good.slice(60)]) rec.enqueue(record);
    await rec.close();

    await expectStoredExactlyOnce(store, good);
    expect(rec.stats()).toMatchObject({ rejected: 1, storeHealthy: true, spooled: 0 });
    expect(errors.map((error) => RecordsRejectedError.isInstance(error))).toEqual([true]);
    expect((errors[0] as RecordsRejectedError).executionIds).toEqual(['not-a-uuid']);
  });

  it('in durable mode, acknowledges only records that are in the database or on disk', async () => {
    proxy = new OutageProxy(target.hostname, target.port === '' ? 5432 : Number(target.port));
    await proxy.start();
    const schema = freshSchema();
    const store = await createPostgresStore({ url: urlVia(proxy.port), schema, max: 2 });
    stores.push(store);
    const rec = recorder(store, { mode: 'durable' });
    const direct = await createPostgresStore({ url: PG_URL, schema });
    stores.push(direct);

    const first = makeRecord();
    await rec.enqueue(first);
    expect(await direct.get(first.execution_id)).not.toBeNull();

    await proxy.stop();
    const during = records(5);
    for (const record of during) await rec.enqueue(record);
    expect(new Set(await idsOnDisk())).toEqual(new Set(during.map((record) => record.execution_id)));

    await proxy.start();
    await rec.close();
    await expectStoredExactlyOnce(direct, [first, ...during]);
  });
});
