import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StoreHealth } from './store-health.js';

describe('StoreHealth', () => {
  let now = 0;
  let probes = 0;
  const clock = { now: () => now };
  const make = () => new StoreHealth({ initialDelayMs: 100, maxDelayMs: 350, clock, probe: () => probes++ });

  beforeEach(() => {
    vi.useFakeTimers();
    now = 0;
    probes = 0;
  });
  afterEach(() => vi.useRealTimers());

  it('reports only the failure that starts an outage, and probes after the initial delay', () => {
    const health = make();
    expect(health.healthy).toBe(true);
    expect(health.failed(false, false)).toBe(true);
    expect(health.healthy).toBe(false);
    expect(health.probeScheduled).toBe(true);
    // A write started before the outage was noticed: the scheduled probe stays as it is.
    expect(health.failed(false, false)).toBe(false);
    vi.advanceTimersByTime(99);
    expect(probes).toBe(0);
    vi.advanceTimersByTime(1);
    expect(probes).toBe(1);
    expect(health.probeScheduled).toBe(false);
  });

  it('doubles the backoff on each failed probe up to maxDelayMs, and resets it on recovery', () => {
    const health = make();
    health.failed(false, false);
    expect(health.probeDelayMs).toBe(100);
    health.failed(true, false);
    expect(health.probeDelayMs).toBe(200);
    health.failed(true, false);
    expect(health.probeDelayMs).toBe(350);
    health.failed(true, false);
    expect(health.probeDelayMs).toBe(350);
    health.recovered();
    expect(health.healthy).toBe(true);
    expect(health.probeScheduled).toBe(false);
    expect(health.probeDelayMs).toBe(100);
    vi.advanceTimersByTime(1000);
    expect(probes).toBe(0);
  });

  it('says a probe is due by its clock once the delay has passed', () => {
    const health = make();
    health.failed(false, false);
    expect(health.probeDue()).toBe(false);
    now = 100;
    expect(health.probeDue()).toBe(true);
  });

  it('schedules no probe once closed', () => {
    const health = make();
    expect(health.failed(false, true)).toBe(true);
    expect(health.probeScheduled).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(probes).toBe(0);
  });

  it('keeps the last record of a confirmed batch as the health-check record', () => {
    const health = make();
    health.remember([]);
    expect(health.lastStored).toBeNull();
    const a = { execution_id: 'a' } as never;
    const b = { execution_id: 'b' } as never;
    health.remember([a, b]);
    expect(health.lastStored).toBe(b);
  });
});
