import { describe, expect, it } from 'vitest';
import { createVirtualClock, systemClock } from './clock.js';

describe('virtual clock', () => {
  it('auto-advances through sleeps in order without real time passing', async () => {
    const clock = createVirtualClock({ startMs: 0 });
    const order: string[] = [];
    const started = Date.now();
    await Promise.all([
      clock.sleep(30_000).then(() => order.push(`b@${clock.now()}`)),
      clock.sleep(10_000).then(() => order.push(`a@${clock.now()}`)),
    ]);
    expect(order).toEqual(['a@10000', 'b@30000']);
    expect(clock.slept).toBe(40_000);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('manual mode moves only on advance, firing due timers', async () => {
    const clock = createVirtualClock({ startMs: 0, autoAdvance: false });
    const fired: number[] = [];
    clock.schedule(100, () => fired.push(100));
    const cancel = clock.schedule(50, () => fired.push(50));
    cancel();
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([100]);
    expect(clock.now()).toBe(100);
  });

  it('sleep rejects when its signal aborts', async () => {
    const clock = createVirtualClock({ autoAdvance: false });
    const controller = new AbortController();
    const p = clock.sleep(1000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.pending).toBe(0);
  });

  it('does not auto-advance while held, and resumes when the last hold is released', async () => {
    const clock = createVirtualClock({ startMs: 0 });
    const release = clock.hold();
    const second = clock.hold();
    let woke = false;
    void clock.sleep(5_000).then(() => (woke = true));
    // Real time passes (as for I/O on a socket); virtual time must not jump past it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(woke).toBe(false);
    expect(clock.now()).toBe(0);
    release();
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(woke).toBe(false);
    second();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(woke).toBe(true);
    expect(clock.now()).toBe(5_000);
  });
});

describe('system clock deadlines', () => {
  it('fires scheduled callbacks in time order and skips cancelled ones', async () => {
    const fired: string[] = [];
    const now = Date.now();
    systemClock.schedule(now + 30, () => fired.push('30'));
    systemClock.schedule(now + 10, () => fired.push('10'));
    const cancel = systemClock.schedule(now + 20, () => fired.push('20'));
    cancel();
    await systemClock.sleep(60);
    expect(fired).toEqual(['10', '30']);
  });

  it('handles many cancelled deadlines without firing them', async () => {
    let fired = 0;
    const now = Date.now();
    for (let i = 0; i < 10_000; i++) systemClock.schedule(now + 15, () => fired++)();
    systemClock.schedule(now + 15, () => fired++);
    await systemClock.sleep(40);
    expect(fired).toBe(1);
  });
});
