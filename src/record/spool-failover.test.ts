import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeRecord } from './fixture.js';
import { createSpool } from './spool.js';
import { SpoolFailover } from './spool-failover.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'faultline-failover-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('SpoolFailover', () => {
  it('appends records to the spool file, fsyncing at most once per interval unless durable', () => {
    const spool = createSpool({ path: join(dir, 'spool', 'records.jsonl') });
    const failover = new SpoolFailover(spool, { durable: false, syncEveryMs: 60_000, report: () => undefined });
    expect(failover.append([makeRecord(), makeRecord()])).toBe(true);
    // Within the interval: written, not yet fsync'd.
    expect(failover.unsynced).toBe(true);
    failover.syncIfUnsynced();
    expect(failover.unsynced).toBe(false);
    const segment = spool.takeSpilled()!;
    expect(readFileSync(segment, 'utf8').trim().split('\n')).toHaveLength(2);

    const durable = new SpoolFailover(createSpool({ path: join(dir, 'durable.jsonl') }), { durable: true, syncEveryMs: 60_000, report: () => undefined });
    expect(durable.append([makeRecord()])).toBe(true);
    expect(durable.unsynced).toBe(false);
  });

  it('refuses appends for a pause after the disk fails, reports the error once, and works again', () => {
    // The spool's directory cannot be made: a regular file stands where it should be.
    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, 'not a directory');
    const reports: unknown[] = [];
    const failover = new SpoolFailover(createSpool({ path: join(blocked, 'records.jsonl') }), { durable: false, syncEveryMs: 1000, report: (e) => reports.push(e) });
    expect(failover.append([makeRecord()])).toBe(false);
    expect(failover.lastError).toBeInstanceOf(Error);
    expect(failover.canTake()).toBe(false);
    expect(failover.append([makeRecord()])).toBe(false);
    failover.retryNow();
    expect(failover.append([makeRecord()])).toBe(false);
    expect(reports).toHaveLength(1);

    rmSync(blocked);
    mkdirSync(blocked);
    failover.retryNow();
    expect(failover.append([makeRecord()])).toBe(true);
    expect(failover.canTake()).toBe(true);
    // Working again: the next failure is reported anew.
    failover.reportError(new Error('disk full'));
    expect(reports).toHaveLength(2);
  });
});
