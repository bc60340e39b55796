import { describe, expect, it } from 'vitest';
import { at, trajectory, type StepSpec } from '../trajectory.test-helpers.js';
import { backoffViolation } from './backoff-violation.js';
import { blindRetry } from './blind-retry.js';
import { cascadeFailure } from './cascade-failure.js';
import { idempotencyRisk } from './idempotency-risk.js';
import { ignoredError } from './ignored-error.js';
import { loopFailure } from './loop-failure.js';

const down = { category: 'system', kind: 'server_error' } as const;
const timeout = { category: 'network', kind: 'timeout', status: 'timeout' } as const;
const badParam = { category: 'parameter', kind: 'missing_required' } as const;

describe('loopFailure', () => {
  it('labels the 4th and later failures of one call, whatever the key order and interleaving', () => {
    const f = (params: unknown): StepSpec => ({ tool: 'fetch', params, fail: down });
    const t = trajectory([f({ a: 1, b: 2 }), f({ b: 2, a: 1 }), { tool: 'other' }, f({ a: 1, b: 2 }), f({ a: 1, b: 2 }), f({ a: 1, b: 2 })]);
    const labels = loopFailure(t);
    expect(at(labels)).toEqual([5, 6]);
    expect(labels[0]).toMatchObject({ name: 'loop_failure', confidence: 0.9, decision_step: 4 });
  });

  it('does not count three failures, changed arguments, or successes', () => {
    const t = trajectory([
      { tool: 'fetch', params: { a: 1 }, fail: down },
      { tool: 'fetch', params: { a: 1 }, fail: down },
      { tool: 'fetch', params: { a: 1 }, fail: down },
      { tool: 'fetch', params: { a: 2 }, fail: down },
      { tool: 'fetch', params: { a: 1 } },
    ]);
    expect(loopFailure(t)).toEqual([]);
  });
});

describe('idempotencyRisk', () => {
  it('labels a write repeated after an ambiguous failure without a state check', () => {
    const t = trajectory([{ tool: 'create_order', params: { sku: 'A' }, fail: timeout }, { tool: 'create_order', params: { sku: 'A' } }]);
    const labels = idempotencyRisk(t);
    expect(at(labels)).toEqual([2]);
    expect(labels[0]).toMatchObject({ confidence: 0.6, decision_step: 1 });
  });

  it('labels sendMessage / book-flight style names, and not reads, setters, failures with no effect, checks or keys', () => {
    expect(at(idempotencyRisk(trajectory([{ tool: 'sendMessage', fail: down }, { tool: 'sendMessage' }])))).toEqual([2]);
    expect(at(idempotencyRisk(trajectory([{ tool: 'book-flight', fail: down }, { tool: 'calculate' }, { tool: 'book-flight' }])))).toEqual([3]);
    expect(idempotencyRisk(trajectory([{ tool: 'get_order', fail: timeout }, { tool: 'get_order' }]))).toEqual([]);
    expect(idempotencyRisk(trajectory([{ tool: 'update_profile', fail: timeout }, { tool: 'update_profile' }]))).toEqual([]);
    expect(idempotencyRisk(trajectory([{ tool: 'create_order', fail: badParam }, { tool: 'create_order' }]))).toEqual([]);
    expect(idempotencyRisk(trajectory([{ tool: 'pay', fail: { category: 'network', kind: 'connection_refused' } }, { tool: 'pay' }]))).toEqual([]);
    expect(idempotencyRisk(trajectory([{ tool: 'create_order', fail: timeout }, { tool: 'list_orders' }, { tool: 'create_order' }]))).toEqual([]);
    const keyed = { sku: 'A', idempotency_key: 'k1' };
    expect(idempotencyRisk(trajectory([{ tool: 'create_order', params: keyed, fail: timeout }, { tool: 'create_order', params: keyed }]))).toEqual([]);
  });

  it('lets a declaration win over the name', () => {
    const t = trajectory([{ tool: 'create_order', fail: timeout }, { tool: 'create_order' }]);
    expect(idempotencyRisk(t, { idempotent: { create_order: true } })).toEqual([]);
    const u = trajectory([{ tool: 'upsert_row', fail: timeout }, { tool: 'upsert_row' }]);
    expect(idempotencyRisk(u)).toEqual([]);
    expect(at(idempotencyRisk(u, { idempotent: { upsert_row: false } }))).toEqual([2]);
  });
});

describe('cascadeFailure', () => {
  it('labels later writes on the failed call\'s entity, or with placeholders, while it stays failed', () => {
    const t = trajectory([
      { tool: 'get_reservation', params: { reservation_id: 'ZFA04Y' }, fail: { category: 'business', kind: 'not_found' } },
      { tool: 'cancel_reservation', params: { reservation_id: 'ZFA04Y' } },
      { tool: 'send_email', params: { to: 'unknown', body: 'cancelled' } },
      { tool: 'search_flights', params: { reservation_id: 'ZFA04Y' } },
    ]);
    const labels = cascadeFailure(t);
    expect(at(labels)).toEqual([2, 3]);
    expect(labels[0]).toMatchObject({ name: 'cascade_failure', decision_step: 1, confidence: 0.65 });
    expect(labels[1]!.reason).toContain('placeholder "unknown"');
  });

  it('does not label after a recovery, unrelated writes, or reads', () => {
    const t = trajectory([
      { tool: 'get_user', params: { user_id: 'mia_li_3668' }, fail: down },
      { tool: 'get_user', params: { user_id: 'mia_li_3668' } },
      { tool: 'update_user', params: { user_id: 'mia_li_3668' } },
    ]);
    expect(cascadeFailure(t)).toEqual([]);
    expect(cascadeFailure(trajectory([{ tool: 'get_user', params: { user_id: 'u_1234' }, fail: down }, { tool: 'send_email', params: { to: 'a@b.c' } }]))).toEqual([]);
  });
});

describe('ignoredError', () => {
  it('labels an unrecovered failure the agent proceeded past, or that a successful run hid', () => {
    const proceeded = trajectory([{ tool: 'charge', fail: down, decision: { action: 'proceed' } }, { tool: 'send_receipt' }], { outcome: 'failure' });
    expect(ignoredError(proceeded)).toMatchObject([{ name: 'ignored_error', step_index: 1, confidence: 0.7 }]);
    const claimed = trajectory([{ tool: 'lookup' }, { tool: 'charge', fail: down }], { outcome: 'success' });
    expect(at(ignoredError(claimed))).toEqual([2]);
  });

  it('does not label recovered failures, fallbacks, or failed runs that stopped', () => {
    expect(ignoredError(trajectory([{ tool: 'charge', fail: down }, { tool: 'charge' }], { outcome: 'success' }))).toEqual([]);
    expect(ignoredError(trajectory([{ tool: 'weather_a', fail: down }, { tool: 'weather_b' }], { outcome: 'success' }))).toEqual([]);
    expect(ignoredError(trajectory([{ tool: 'charge', fail: down }], { outcome: 'failure' }))).toEqual([]);
  });
});

describe('blindRetry', () => {
  it('labels the identical repeat after a parameter or auth error', () => {
    const t = trajectory([{ tool: 'create_user', params: { age: -1 }, fail: badParam }, { tool: 'create_user', params: { age: -1 } }]);
    expect(blindRetry(t)).toMatchObject([{ name: 'blind_retry', step_index: 2, decision_step: 1, confidence: 0.85 }]);
    const auth = trajectory([{ tool: 'list_files', fail: { category: 'auth', kind: 'unauthorized' } }, { tool: 'list_files' }]);
    expect(at(blindRetry(auth))).toEqual([2]);
  });

  it('does not label fixed arguments, waitable errors, or an auth repeat after another call', () => {
    expect(blindRetry(trajectory([{ tool: 'create_user', params: { age: -1 }, fail: badParam }, { tool: 'create_user', params: { age: 30 } }]))).toEqual([]);
    expect(blindRetry(trajectory([{ tool: 'fetch', fail: down }, { tool: 'fetch' }]))).toEqual([]);
    expect(blindRetry(trajectory([{ tool: 'list_files', fail: { category: 'auth', kind: 'unauthorized' } }, { tool: 'refresh_token' }, { tool: 'list_files' }]))).toEqual([]);
  });
});

describe('backoffViolation', () => {
  const limited = (retryAfter: unknown): NonNullable<StepSpec['fail']> => ({ category: 'rate_limit', kind: 'rate_limited', body: retryAfter });

  it('labels a repeat sooner than Retry-After, from headers, body or feedback, by timestamps', () => {
    const t = trajectory([
      { tool: 'search', params: { q: 'x' }, fail: limited({ headers: { 'Retry-After': '30' } }), at: '2026-03-29T12:00:00Z' },
      { tool: 'search', params: { q: 'x' }, fail: limited({ retry_after: 10 }), at: '2026-03-29T12:00:05Z' },
      { tool: 'search', params: { q: 'x' }, fail: limited({ feedback: { retry_after_ms: 2000 } }), at: '2026-03-29T12:00:20Z' },
      { tool: 'search', params: { q: 'x' }, at: '2026-03-29T12:00:21Z' },
    ]);
    const labels = backoffViolation(t);
    expect(at(labels)).toEqual([2, 4]);
    expect(labels[0]).toMatchObject({ decision_step: 1, confidence: 0.9 });
    expect(labels[0]!.reason).toContain('5s after step 1, which asked to wait 30s');
  });

  it('uses the logged wait without timestamps, and labels nothing without evidence or after a long enough wait', () => {
    const logged = trajectory([{ tool: 'search', fail: limited({ retry_after: 30 }), decision: { action: 'wait_and_retry', wait_seconds: 3 } }, { tool: 'search' }]);
    expect(at(backoffViolation(logged))).toEqual([2]);
    expect(backoffViolation(trajectory([{ tool: 'search', fail: limited({ retry_after: 30 }) }, { tool: 'search' }]))).toEqual([]);
    const waited = trajectory([
      { tool: 'search', fail: limited({ retry_after: 'Sun, 29 Mar 2026 12:00:30 GMT' }), at: '2026-03-29T12:00:00Z' },
      { tool: 'search', at: '2026-03-29T12:00:31Z' },
    ]);
    expect(backoffViolation(waited)).toEqual([]);
  });
});

describe('every rule', () => {
  // annotateTrajectory skips the rules for a trajectory without a failed step: they must have nothing to say there.
  it('labels nothing in a trajectory without a failed step, whatever else it holds', () => {
    const rules = [loopFailure, idempotencyRisk, cascadeFailure, ignoredError, blindRetry, backoffViolation];
    const specs: StepSpec[] = [
      { tool: 'create_order', params: { sku: 'A', idempotency_key: 'k' }, body: { retry_after: 30 } },
      { tool: 'create_order', params: { sku: 'A', idempotency_key: 'k' }, decision: { action: 'proceed' } },
      { tool: 'send_email', params: { to: 'unknown', order: 'ORD-1234' }, body: { error: 'looks like one', status: 500 } },
      { tool: 'send_email', params: { to: 'unknown', order: 'ORD-1234' }, at: '2026-03-01T00:00:01Z', decision: { action: 'retry' } },
    ];
    for (const outcome of ['success', 'failure', 'partial', 'unknown'] as const) {
      const t = trajectory(specs, { outcome });
      const unanswered = { ...t, steps: t.steps.map((s, i) => (i === 3 ? { ...s, status: null } : s)) };
      for (const rule of rules) {
        expect(rule(t)).toEqual([]);
        expect(rule(unanswered)).toEqual([]);
      }
    }
  });
});
