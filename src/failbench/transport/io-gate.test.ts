import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../core/clock.js';
import { createIoGate } from './io-gate.js';

const realTime = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the I/O gate of a run', () => {
  it('holds virtual time while a request is on the wire, and lets it run when the request is parked on a virtual wait', async () => {
    const clock = createVirtualClock({ startMs: 0 });
    const gate = createIoGate(clock);
    let timedOut = false;
    // The runtime's 10 s timeout for the call, armed as the request goes out.
    clock.schedule(10_000, () => (timedOut = true));
    const request = gate.begin();
    expect(gate.holding).toBe(true);
    await realTime(30);
    expect(timedOut).toBe(false);
    expect(clock.now()).toBe(0);

    // The proxy holds the request for 2 s of virtual time (an injected delay): time may run now.
    const delay = gate.serverClock.sleep(2_000);
    expect(gate.holding).toBe(false);
    await delay;
    expect(clock.now()).toBe(2_000);
    // The proxy writes its answer: real I/O again.
    expect(gate.holding).toBe(true);
    await realTime(30);
    expect(timedOut).toBe(false);

    request.settle();
    // The client has its answer, but the proxy has not recorded the request yet.
    expect(gate.holding).toBe(true);
    gate.recorded();
    expect(gate.holding).toBe(false);
    await realTime(30);
    expect(timedOut).toBe(true);
    expect(clock.now()).toBe(10_000);
  });

  it('lets the client time out a request the proxy holds, and holds again until the proxy has let go of it', async () => {
    const clock = createVirtualClock({ startMs: 0 });
    const gate = createIoGate(clock);
    const request = gate.begin();
    const gone = new AbortController();
    // A hang: the proxy waits far longer than the client will.
    const hang = gate.serverClock.sleep(86_400_000, gone.signal).catch(() => 'cancelled');
    clock.schedule(5_000, () => request.settle());
    await realTime(30);
    expect(clock.now()).toBe(5_000);
    // The client gave up; the proxy's wait is still armed until the socket's close reaches it.
    expect(gate.holding).toBe(true);
    await realTime(30);
    expect(clock.now()).toBe(5_000);
    gone.abort(new Error('the client went away'));
    expect(await hang).toBe('cancelled');
    gate.recorded();
    expect(gate.holding).toBe(false);
    await gate.drained();
  });

  it('drained() waits for every request to be settled and recorded', async () => {
    const gate = createIoGate(createVirtualClock({ startMs: 0 }));
    const request = gate.begin();
    let drained = false;
    const waiting = gate.drained().then(() => (drained = true));
    request.settle();
    await realTime(5);
    expect(drained).toBe(false);
    gate.recorded();
    await waiting;
    expect(drained).toBe(true);
  });
});
