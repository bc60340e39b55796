import { describe, expect, it } from 'vitest';
import type { UpstreamConnection } from './upstream.js';
import type { UpstreamLoss } from './upstream-loss.js';
import {
  closed,
  connectedTo,
  connectionLost,
  lossOf,
  nextRestart,
  reconnected,
  restartAttempted,
  restartsExhausted,
  serverAnswered,
  type RestartPolicy,
  type UpstreamState,
} from './upstream-state.js';

const connection = (pid: number) => ({ pid }) as unknown as UpstreamConnection;
const exited = (at: number): UpstreamLoss => ({ exit: { code: 1, signal: null }, at });
const policy: RestartPolicy = { maxRestarts: 3, initialDelayMs: 100, maxDelayMs: 250 };
const restarting = (state: UpstreamState) => {
  if (state.kind !== 'restarting') throw new Error(`expected restarting, got ${state.kind}`);
  return state;
};

describe('upstream state transitions', () => {
  it('an exit without a restart policy (or with maxRestarts 0) is lost for good', () => {
    const first = connection(1);
    expect(connectionLost(connectedTo(first), exited(5), undefined)).toEqual({ kind: 'lost', connection: first, loss: exited(5) });
    expect(connectionLost(connectedTo(first), exited(5), { ...policy, maxRestarts: 0 }).kind).toBe('lost');
    expect(lossOf(connectedTo(first))).toBeUndefined();
    expect(lossOf(connectionLost(connectedTo(first), exited(5), undefined))).toEqual(exited(5));
  });

  it('restarts with doubling waits, capped, and gives up once the attempts of the outage are used', () => {
    let state: UpstreamState = connectionLost(connectedTo(connection(1)), exited(5), policy);
    const delays: number[] = [];
    for (;;) {
      const next = nextRestart(restarting(state), policy);
      if (next.giveUp) break;
      delays.push(next.delayMs);
      state = restartAttempted(state);
    }
    expect(delays).toEqual([100, 200, 250]);
    expect(restarting(state).attempts).toBe(3);
    state = restartsExhausted(state);
    expect(state).toMatchObject({ kind: 'lost', loss: exited(5) });
  });

  it('counts the budget per outage: a restarted server that answered starts the next outage from 0', () => {
    let state = restartAttempted(restartAttempted(connectionLost(connectedTo(connection(1)), exited(5), policy)));
    state = reconnected(state, connection(2));
    expect(state).toMatchObject({ kind: 'connected', attempts: 2 });
    state = serverAnswered(state);
    expect(state).toMatchObject({ kind: 'connected', attempts: 0 });
    expect(restarting(connectionLost(state, exited(9), policy)).attempts).toBe(0);
  });

  it('a restarted server that exits before it answered goes on with the attempts of the same outage', () => {
    let state = restartAttempted(connectionLost(connectedTo(connection(1)), exited(5), policy));
    state = reconnected(state, connection(2));
    state = connectionLost(state, exited(7), policy);
    expect(state).toMatchObject({ kind: 'restarting', attempts: 1, loss: exited(7) });
    expect(state.connection).toEqual(connection(2));
  });

  it('a new session (same server, forgotten session) keeps the state connected', () => {
    const renewed = connection(3);
    expect(reconnected(connectedTo(connection(1)), renewed)).toEqual({ kind: 'connected', connection: renewed, attempts: 0 });
  });

  it('closed is final: no loss, restart or reconnection leaves it, and it keeps how the connection had ended', () => {
    const lost = connectionLost(connectedTo(connection(1)), exited(5), policy);
    const done = closed(lost);
    expect(done).toMatchObject({ kind: 'closed', loss: exited(5) });
    expect(closed(done)).toBe(done);
    expect(connectionLost(done, exited(6), policy)).toBe(done);
    expect(reconnected(done, connection(2))).toBe(done);
    expect(restartAttempted(done)).toBe(done);
    expect(closed(connectedTo(connection(1)))).toMatchObject({ kind: 'closed', loss: undefined });
  });
});
