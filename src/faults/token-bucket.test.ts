import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fullBucket, takeToken, type TokenBucketOptions } from './token-bucket.js';

describe('token bucket', () => {
  it('a full bucket grants its capacity, then says how long until the next token', () => {
    const options: TokenBucketOptions = { capacity: 2, refillPerSec: 4 };
    let state = fullBucket(options, 0);
    const results = [0, 0, 0, 100, 249, 250].map((now) => {
      const r = takeToken(state, options, now);
      state = r.state;
      return r.granted ? 'ok' : r.waitMs;
    });
    expect(results).toEqual(['ok', 'ok', 250, 150, 1, 'ok']);
  });

  it('never grants more than capacity plus what refilled, and waiting the advertised time always works', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.double({ min: 0.1, max: 20, noNaN: true }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 60 }),
        (capacity, refillPerSec, gaps) => {
          const options = { capacity, refillPerSec };
          let state = fullBucket(options, 0);
          let now = 0;
          let granted = 0;
          for (const gap of gaps) {
            now += gap;
            const r = takeToken(state, options, now);
            state = r.state;
            if (r.granted) granted++;
            else {
              const retry = takeToken(state, options, now + r.waitMs);
              expect(retry.granted).toBe(true);
            }
          }
          expect(granted).toBeLessThanOrEqual(capacity + Math.floor((now * refillPerSec) / 1000) + 1);
        },
      ),
    );
  });
});
