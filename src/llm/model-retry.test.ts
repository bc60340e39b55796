import { describe, expect, it } from 'vitest';
import type { ModelAttemptResult, ModelFailure } from './model-endpoint-error.js';
import { DEFAULT_MODEL_RETRY, modelRetryDelay, withModelRetry, type ModelRetryEvent } from './model-retry.js';
import { recordingClock } from './fake-model-server.test-helpers.js';

const half = () => 0.5;
const fail = (kind: ModelFailure['kind'], extra: Partial<ModelFailure> = {}): ModelFailure => ({ kind, message: kind, ...extra });

describe('modelRetryDelay', () => {
  it('retries transient kinds with growing, jittered backoff', () => {
    const options = { ...DEFAULT_MODEL_RETRY, baseDelayMs: 100, factor: 2, maxDelayMs: 1000 };
    expect([1, 2, 3].map((n) => modelRetryDelay(fail('server'), n, options, half))).toEqual([75, 150, 300]);
    for (const kind of ['rate_limit', 'connection', 'timeout', 'malformed'] as const) expect(modelRetryDelay(fail(kind), 1, options, half)).toBe(75);
  });

  it('never retries rejected or aborted requests, nor past maxAttempts', () => {
    expect(modelRetryDelay(fail('rejected', { status: 401 }), 1, DEFAULT_MODEL_RETRY, half)).toBeUndefined();
    expect(modelRetryDelay(fail('aborted'), 1, DEFAULT_MODEL_RETRY, half)).toBeUndefined();
    expect(modelRetryDelay(fail('server'), 4, DEFAULT_MODEL_RETRY, half)).toBeUndefined();
  });

  it('waits exactly what Retry-After says, up to the cap', () => {
    expect(modelRetryDelay(fail('rate_limit', { retryAfterMs: 7000 }), 1, DEFAULT_MODEL_RETRY, half)).toBe(7000);
    expect(modelRetryDelay(fail('server', { retryAfterMs: 0 }), 1, DEFAULT_MODEL_RETRY, half)).toBe(0);
    expect(modelRetryDelay(fail('rate_limit', { retryAfterMs: 61_000 }), 1, DEFAULT_MODEL_RETRY, half)).toBeUndefined();
  });
});

describe('withModelRetry', () => {
  const script = (...results: ModelAttemptResult<string>[]) => {
    let i = 0;
    return async () => results[Math.min(i++, results.length - 1)]!;
  };

  it('returns the first success with the attempt count, notifying each retry', async () => {
    const clock = recordingClock();
    const events: ModelRetryEvent[] = [];
    const result = await withModelRetry(script({ ok: false, failure: fail('rate_limit', { retryAfterMs: 30 }) }, { ok: false, failure: fail('connection') }, { ok: true, value: 'yes' }), {
      provider: 'p',
      options: { ...DEFAULT_MODEL_RETRY, baseDelayMs: 10 },
      clock,
      random: half,
      signal: new AbortController().signal,
      onRetry: (e) => {
        events.push(e);
        throw new Error('a broken listener is ignored');
      },
    });
    expect(result).toEqual({ ok: true, value: 'yes', attempts: 3 });
    expect(clock.waits).toEqual([30, 15]);
    expect(events.map((e) => [e.attempt, e.failure.kind, e.delayMs])).toEqual([
      [1, 'rate_limit', 30],
      [2, 'connection', 15],
    ]);
  });

  it('ends as aborted when the scenario is cancelled during a wait', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await withModelRetry(script({ ok: false, failure: fail('server') }), { provider: 'p', options: DEFAULT_MODEL_RETRY, clock: recordingClock(), random: half, signal: controller.signal });
    expect(result).toMatchObject({ ok: false, failure: { kind: 'aborted' }, attempts: 1 });
  });
});
