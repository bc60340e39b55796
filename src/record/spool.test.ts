import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeRecord } from './fixture.js';
import {
  createSpool,
  defaultSpoolPath,
  isProcessAlive,
  parseSpoolLine,
  readSpoolBatches,
  type SpoolBatch,
} from './spool.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

/** Above the largest pid_max Linux allows (2^22), so never alive. */
const DEAD_PID = 999_999_999;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'faultline-spool-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function readAll(path: string, batchSize = 1000, fromLine = 0): Promise<SpoolBatch[]> {
  const batches: SpoolBatch[] = [];
  for await (const batch of readSpoolBatches(path, { batchSize, fromLine })) batches.push(batch);
  return batches;
}

function openDescriptorsFor(path: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(join('/proc/self/fd', fd)) === path) count++;
    } catch {
      // The descriptor closed between listing and reading it.
    }
  }
  return count;
}

function ids(records: readonly ToolExecutionRecord[]): string[] {
  return records.map((record) => record.execution_id);
}

describe('Spool.spillSync', () => {
  it('writes one JSON line per record into the next segment, creating the directory on first use', () => {
    const path = join(dir, 'nested', 'a', 'spool.jsonl');
    const spool = createSpool({ path });
    expect(existsSync(join(dir, 'nested'))).toBe(false);
    const records = [makeRecord(), makeRecord(), makeRecord()];
    spool.spillSync(records.slice(0, 2), false);
    spool.spillSync(records.slice(2), true);
    expect(spool.hasSpilled).toBe(true);
    const segment = join(dir, 'nested', 'a', 'spool.1.jsonl');
    expect(spool.takeSpilled()).toBe(segment);
    expect(spool.hasSpilled).toBe(false);
    expect(openDescriptorsFor(segment)).toBe(0);

    const lines = readFileSync(segment, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines.slice(0, -1).map((line) => JSON.parse(line) as ToolExecutionRecord)).toEqual(records);
    // The next spill starts the next segment; nothing spilled, nothing to take.
    spool.spillSync([makeRecord()], false);
    expect(spool.takeSpilled()).toBe(join(dir, 'nested', 'a', 'spool.2.jsonl'));
    expect(spool.takeSpilled()).toBeNull();
  });

  it('throws when the file cannot be written, and works again once it can', () => {
    const blocker = join(dir, 'blocked');
    writeFileSync(blocker, 'a file where the spool directory should be');
    const spool = createSpool({ path: join(blocker, 'spool.jsonl') });
    const record = makeRecord();
    expect(() => spool.spillSync([record], false)).toThrow();
    expect(spool.hasSpilled).toBe(false);

    rmSync(blocker);
    mkdirSync(blocker);
    spool.spillSync([record], true);
    const segment = spool.takeSpilled()!;
    const lines = readFileSync(segment, 'utf8').trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as ToolExecutionRecord).execution_id)).toEqual([record.execution_id]);
  });

  it('does not touch the disk for an empty batch', () => {
    const spool = createSpool({ path: join(dir, 'x', 'spool.jsonl') });
    spool.spillSync([], false);
    spool.spillSync([], true);
    expect(existsSync(join(dir, 'x'))).toBe(false);
  });

  it('close() closes the current segment and leaves it on disk for a later replay', async () => {
    const spool = createSpool({ path: join(dir, '123-abc.jsonl') });
    const record = makeRecord();
    spool.spillSync([record], false);
    await spool.close();
    expect(spool.hasSpilled).toBe(false);
    expect(openDescriptorsFor(join(dir, '123-abc.1.jsonl'))).toBe(0);
    expect(ids((await readAll(join(dir, '123-abc.1.jsonl'))).flatMap((b) => b.records))).toEqual([record.execution_id]);
  });
});

describe('Spool.claimLeftovers', () => {
  function writeSpoolFile(name: string, records: readonly ToolExecutionRecord[]): void {
    writeFileSync(join(dir, name), records.map((record) => `${JSON.stringify(record)}\n`).join(''));
  }

  it('claims its own leftovers and those of dead processes, and leaves live owners and foreign names alone', async () => {
    const own = [makeRecord(), makeRecord()];
    const ownSegment = [makeRecord()];
    const dead = [makeRecord()];
    const deadSegment = [makeRecord()];
    writeSpoolFile('me.jsonl', own);
    writeSpoolFile('me.4.jsonl', ownSegment);
    writeSpoolFile(`${DEAD_PID}-ffff.jsonl`, dead);
    writeSpoolFile(`${DEAD_PID}-ffff.2.jsonl`, deadSegment);
    writeSpoolFile('4242-live.jsonl', [makeRecord()]);
    writeSpoolFile(`${process.pid}-mine-elsewhere.jsonl`, [makeRecord()]);
    writeSpoolFile('notes.jsonl', [makeRecord()]);
    writeFileSync(join(dir, `${DEAD_PID}-empty.jsonl`), '');

    const spool = createSpool({ path: join(dir, 'me.jsonl'), isAlive: (pid) => pid === 4242 || pid === process.pid });
    const claimed = await spool.claimLeftovers();

    // Own segments keep their numbers; everything claimed after them gets numbers above the highest.
    expect(claimed[0]).toBe(join(dir, 'me.4.jsonl'));
    expect(claimed.slice(1).sort()).toEqual([join(dir, 'me.5.jsonl'), join(dir, 'me.6.jsonl'), join(dir, 'me.7.jsonl')]);
    const claimedIds = new Set<string>();
    for (const path of claimed) for (const batch of await readAll(path)) for (const id of ids(batch.records)) claimedIds.add(id);
    expect(claimedIds).toEqual(new Set(ids([...own, ...ownSegment, ...dead, ...deadSegment])));

    expect(readdirSync(dir).sort()).toEqual(
      [`${process.pid}-mine-elsewhere.jsonl`, '4242-live.jsonl', 'me.4.jsonl', 'me.5.jsonl', 'me.6.jsonl', 'me.7.jsonl', 'notes.jsonl'].sort(),
    );

    // The next spill must not write into a claimed segment.
    spool.spillSync([makeRecord()], false);
    expect(spool.takeSpilled()).toBe(join(dir, 'me.8.jsonl'));
    await spool.close();
  });

  it('returns nothing when the directory does not exist', async () => {
    const spool = createSpool({ path: join(dir, 'missing', 'me.jsonl') });
    expect(await spool.claimLeftovers()).toEqual([]);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('treats a file that another claimer renamed first as already taken', async () => {
    writeSpoolFile(`${DEAD_PID}-a.jsonl`, [makeRecord()]);
    writeSpoolFile(`${DEAD_PID}-b.jsonl`, [makeRecord()]);
    // Another process claims `-a` between this one's listing of the directory and its rename.
    const elsewhere = join(dir, 'claimed-elsewhere');
    const first = createSpool({
      path: join(dir, '1-first.jsonl'),
      pid: 1,
      isAlive: () => {
        if (existsSync(join(dir, `${DEAD_PID}-a.jsonl`))) renameSync(join(dir, `${DEAD_PID}-a.jsonl`), elsewhere);
        return false;
      },
    });
    const claimed = first.claimLeftoversSync();
    expect(claimed).toEqual([join(dir, '1-first.1.jsonl')]);
    expect(existsSync(elsewhere)).toBe(true);
    // Two claimers in one directory: each file goes to exactly one of them.
    writeSpoolFile(`${DEAD_PID}-c.jsonl`, [makeRecord()]);
    const second = createSpool({ path: join(dir, '2-second.jsonl'), pid: 2, isAlive: (pid) => pid === 1 || pid === 2 });
    const third = createSpool({ path: join(dir, '3-third.jsonl'), pid: 3, isAlive: (pid) => pid === 1 || pid === 2 || pid === 3 });
    const [b, c] = await Promise.all([second.claimLeftovers(), third.claimLeftovers()]);
    expect([...b, ...c]).toHaveLength(1);
    expect(existsSync(join(dir, `${DEAD_PID}-c.jsonl`))).toBe(false);
  });
});

describe('readSpoolBatches', () => {
  it('yields batches of at most batchSize and reports malformed lines without throwing', async () => {
    const records = Array.from({ length: 7 }, () => makeRecord());
    const lines = records.map((record) => JSON.stringify(record));
    lines.splice(2, 0, '{"execution_id": ');
    lines.splice(5, 0, '');
    lines.splice(6, 0, '[1,2]');
    lines.push(JSON.stringify(records[0]).slice(0, 40));
    const path = join(dir, 'mixed.jsonl');
    writeFileSync(path, lines.join('\n'));

    const batches = await readAll(path, 3);
    expect(batches.map((batch) => batch.records.length)).toEqual([3, 3, 1]);
    expect(ids(batches.flatMap((batch) => batch.records))).toEqual(ids(records));
    expect(batches.flatMap((batch) => batch.malformedLines)).toEqual([2, 6, 10]);
    expect(batches.at(-1)?.nextLine).toBe(11);
  });

  it('resumes from a line number without re-reading earlier lines', async () => {
    const records = Array.from({ length: 5 }, () => makeRecord());
    const path = join(dir, 'resume.jsonl');
    writeFileSync(path, records.map((record) => `${JSON.stringify(record)}\n`).join(''));
    const first = await readAll(path, 2);
    expect(first.map((batch) => batch.nextLine)).toEqual([2, 4, 5]);
    const rest = await readAll(path, 2, first[0]?.nextLine ?? 0);
    expect(ids(rest.flatMap((batch) => batch.records))).toEqual(ids(records.slice(2)));
  });

  it('yields nothing for a missing file', async () => {
    expect(await readAll(join(dir, 'nope.jsonl'))).toEqual([]);
  });

  it('stops reading early without leaking the file when the consumer breaks', async () => {
    const path = join(dir, 'early.jsonl');
    writeFileSync(path, Array.from({ length: 10 }, () => `${JSON.stringify(makeRecord())}\n`).join(''));
    let seen = 0;
    for await (const batch of readSpoolBatches(path, { batchSize: 2 })) {
      seen += batch.records.length;
      break;
    }
    expect(seen).toBe(2);
    // Closing the stream is asynchronous; the descriptor must be gone shortly after.
    await vi.waitFor(() => expect(openDescriptorsFor(path)).toBe(0));
  });
});

describe('parseSpoolLine', () => {
  it('accepts objects with an execution_id and nothing else', () => {
    const record = makeRecord();
    expect(parseSpoolLine(JSON.stringify(record))).toEqual(record);
    expect(parseSpoolLine('null')).toBeNull();
    expect(parseSpoolLine('[]')).toBeNull();
    expect(parseSpoolLine('"text"')).toBeNull();
    expect(parseSpoolLine('{"execution_id": 5}')).toBeNull();
    expect(parseSpoolLine('{"execution_id": ""}')).toBeNull();
    expect(parseSpoolLine('{not json')).toBeNull();
  });
});

describe('process helpers', () => {
  it('isProcessAlive tells the current process from a pid that cannot exist', () => {
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(DEAD_PID)).toBe(false);
  });

  it('defaultSpoolPath names the file after the pid, under .faultline/spool', () => {
    const path = defaultSpoolPath('/srv/app', 321);
    expect(path).toMatch(/^\/srv\/app\/\.faultline\/spool\/321-[0-9a-f]{12}\.jsonl$/);
    expect(defaultSpoolPath('/srv/app', 321)).not.toBe(path);
  });
});
