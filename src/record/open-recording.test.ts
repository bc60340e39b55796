import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { makeRecord } from './fixture.js';
import { checkRecordingTarget, openRecording, openRecordingNow, type Recording, type RecordingTarget } from './open-recording.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-open-recording-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function storedCount(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM tool_executions').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const opens: Array<{ name: string; open: (t: RecordingTarget) => Promise<Recording> }> = [
  { name: 'openRecording (a spec opens on first use)', open: (t) => Promise.resolve(openRecording(t)) },
  { name: 'openRecordingNow (a spec opens at once)', open: (t) => openRecordingNow(t) },
];

describe.each(opens)('$name', ({ open }) => {
  it('stores into a SQLite file it opened from a spec, and closes that store', async () => {
    const path = join(tempDir(), 'r.db');
    const recording = await open({ store: `sqlite:${path}`, recording: { spool: false } });
    expect(recording.recorder).toBeDefined();
    expect(recording.sink).toBe(recording.recorder);
    for (let i = 0; i < 5; i++) recording.sink!.enqueue(makeRecord({ step_index: i }));
    await recording.close();
    expect(storedCount(path)).toBe(5);
    // Closed: the store it opened answers no more.
    await expect(recording.store!.count({})).rejects.toThrow();
    // Closing twice is one close.
    await recording.close();
  });

  it("opens 'memory:' as a store of its own", async () => {
    const recording = await open({ store: 'memory:', recording: { spool: false } });
    recording.sink!.enqueue(makeRecord());
    await recording.recorder!.flush();
    expect(await recording.store!.count({})).toBe(1);
    await recording.close();
    await expect(recording.store!.count({})).rejects.toThrow();
  });

  it("flushes into a Store of the caller's and leaves it open", async () => {
    const store = createMemoryStore();
    const recording = await open({ store, recording: { spool: false } });
    expect(recording.store).toBe(store);
    recording.sink!.enqueue(makeRecord());
    await recording.close();
    expect(await store.count({})).toBe(1);
    await store.close();
  });

  it("uses a sink of the caller's as is and never closes it", async () => {
    const kept: ToolExecutionRecord[] = [];
    let closed = 0;
    const sink = { enqueue: (r: ToolExecutionRecord) => void kept.push(r), close: async () => void closed++ };
    const recording = await open({ recorder: sink });
    expect(recording.sink).toBe(sink);
    expect(recording.recorder).toBeUndefined();
    expect(recording.store).toBeUndefined();
    await recording.close();
    expect(closed).toBe(0);
  });

  it('gives no sink without a store or a sink', async () => {
    const recording = await open({});
    expect(recording).toMatchObject({ sink: undefined, store: undefined, recorder: undefined });
    await recording.close();
  });
});

describe('misuse', () => {
  const misuses: Array<{ target: unknown; field: string; message: RegExp }> = [
    { target: { store: 'memory:', recorder: { enqueue: () => undefined } }, field: 'store', message: /^pass either store or recorder, not both$/ },
    { target: { store: 42 }, field: 'store', message: /^store must be a spec \(.*\) or a Store with insert\(\), got number$/ },
    { target: { store: null }, field: 'store', message: /got null$/ },
    { target: { store: { path: 'x.db' } }, field: 'store', message: /got object$/ },
    { target: { recorder: (r: unknown) => r }, field: 'recorder', message: /^recorder must be an object with enqueue\(record\), got function$/ },
    { target: { recorder: {} }, field: 'recorder', message: /got object$/ },
  ];

  it.each(misuses)('throws one ConfigError for $target from every way of opening', async ({ target, field, message }) => {
    const caught: unknown[] = [];
    for (const attempt of [() => checkRecordingTarget(target as RecordingTarget), () => openRecording(target as RecordingTarget)]) {
      try {
        attempt();
      } catch (error) {
        caught.push(error);
      }
    }
    caught.push(await openRecordingNow(target as RecordingTarget).catch((error: unknown) => error));
    expect(caught).toHaveLength(3);
    for (const error of caught) {
      expect(ConfigError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ field, message: expect.stringMatching(message) });
    }
  });

  it('openRecordingNow reports a spec it cannot open; openRecording tells onError once a record comes', async () => {
    await expect(openRecordingNow({ store: 'nosuch://x' })).rejects.toThrow(ConfigError);
    const errors: unknown[] = [];
    const lazily = openRecording({ store: 'nosuch://x', recording: { spool: false, onError: (e) => errors.push(e) } });
    expect(errors).toEqual([]);
    lazily.sink!.enqueue(makeRecord());
    await lazily.recorder!.flush();
    expect(errors.some((e) => ConfigError.isInstance(e) && /unknown store/.test(e.message))).toBe(true);
    await lazily.close();
  });
});
