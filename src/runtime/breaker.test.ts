import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConsecutiveBreaker } from './breaker.js';

describe('ConsecutiveBreaker', () => {
  it('opens after N consecutive failures; a success in between resets the count', () => {
    const b = new ConsecutiveBreaker({ failureThreshold: 3, cooldownMs: 1000 });
    b.onFailure(0);
    b.onFailure(0);
    b.onSuccess();
    b.onFailure(0);
    b.onFailure(0);
    expect(b.currentState).toBe('closed');
    expect(b.onFailure(0)).toBe(true);
    expect(b.currentState).toBe('open');
    expect(b.admit(999)).toBe('reject');
  });

  it('lets exactly one probe through after the cooldown; the probe decides', () => {
    const b = new ConsecutiveBreaker({ failureThreshold: 1, cooldownMs: 1000 });
    b.onFailure(0);
    expect(b.peek(1000)).toBe('half_open');
    expect(b.admit(1000)).toBe('probe');
    expect(b.admit(1000)).toBe('reject');
    expect(b.onFailure(1500)).toBe(true);
    expect(b.currentState).toBe('open');
    expect(b.admit(2000)).toBe('reject');
    expect(b.admit(2500)).toBe('probe');
    b.onSuccess();
    expect(b.currentState).toBe('closed');
    expect(b.admit(2500)).toBe('allow');
    expect(b.snapshot().trips).toBe(2);
  });

  it('a neutral outcome frees the probe slot without closing', () => {
    const b = new ConsecutiveBreaker({ failureThreshold: 1, cooldownMs: 10 });
    b.onFailure(0);
    expect(b.admit(10)).toBe('probe');
    b.onNeutral();
    expect(b.currentState).toBe('half_open');
    expect(b.admit(10)).toBe('probe');
  });

  it('snapshots restore the same behaviour', () => {
    const a = new ConsecutiveBreaker({ failureThreshold: 2, cooldownMs: 100 });
    a.onFailure(5);
    a.onFailure(5);
    const b = new ConsecutiveBreaker({ failureThreshold: 2, cooldownMs: 100 });
    b.restore(JSON.parse(JSON.stringify(a.snapshot())));
    expect(b.admit(50)).toBe('reject');
    expect(b.admit(105)).toBe('probe');
  });

  type Op = { kind: 'call'; ok: boolean; counted: boolean; dt: number };
  const opArb: fc.Arbitrary<Op> = fc.record({
    kind: fc.constant('call' as const),
    ok: fc.boolean(),
    counted: fc.boolean(),
    dt: fc.integer({ min: 0, max: 400 }),
  });

  it('invariants hold over random call sequences', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 1000 }), fc.array(opArb, { maxLength: 200 }), (threshold, cooldown, ops) => {
        const b = new ConsecutiveBreaker({ failureThreshold: threshold, cooldownMs: cooldown });
        let now = 0;
        let consecutiveCounted = 0;
        for (const op of ops) {
          now += op.dt;
          const before = b.snapshot();
          const admission = b.admit(now);
          if (admission === 'reject') {
            // Rejections only ever happen while open (within the cooldown) or while a probe is out.
            expect(before.state).not.toBe('closed');
            if (before.state === 'open') expect(now - (before.openedAt ?? 0)).toBeLessThan(cooldown);
            continue;
          }
          if (admission === 'allow') expect(b.currentState).toBe('closed');
          if (op.ok) {
            b.onSuccess();
            consecutiveCounted = 0;
            expect(b.currentState).toBe('closed');
          } else if (op.counted) {
            const wasProbe = admission === 'probe';
            const opened = b.onFailure(now);
            consecutiveCounted++;
            // The circuit opens on the threshold-th consecutive counted failure, or on a failed probe; never earlier.
            if (wasProbe) expect(opened).toBe(true);
            else expect(opened).toBe(consecutiveCounted >= threshold);
            if (opened) consecutiveCounted = 0;
          } else {
            // Parameter errors and the like never change the state.
            const state = b.currentState;
            b.onNeutral();
            expect(b.currentState).toBe(state);
          }
        }
      }),
    );
  });
});
