import { describe, expect, it } from 'vitest';
import { harness, type Harness } from './catalog.test-helpers.js';
import { REFUND_WINDOW_DAYS } from './payments.js';

function paymentWith(h: Harness, predicate: (p: Harness['state']['payments'][number]) => boolean): string {
  const payment = h.state.payments.find(predicate);
  if (payment === undefined) throw new Error('no such seeded payment');
  return payment.payment_id;
}

const fresh = (h: Harness) => paymentWith(h, (p) => p.status === 'captured' && p.order_id !== null);

describe('get_payment', () => {
  it('shows the amount, status and what is still refundable', async () => {
    const h = harness();
    const id = paymentWith(h, (p) => p.status === 'partially_refunded');
    const p = await h.ok('get_payment', { payment_id: id });
    expect(p.status).toBe('partially_refunded');
    expect(p.refundable_cents).toBe(p.amount_cents - p.refunded_cents);
    expect(p.refunds).toHaveLength(1);
    expect(await h.fail('get_payment', { payment_id: 'PAY-9999' })).toMatchObject({ type: 'not_found', code: 'PAYMENT_NOT_FOUND' });
  });
});

describe('create_refund', () => {
  it('refunds part, then the rest, then answers 409 conflict', async () => {
    const h = harness();
    const id = fresh(h);
    const total = h.state.payments.find((p) => p.payment_id === id)!.amount_cents;
    const part = await h.ok('create_refund', { payment_id: id, amount_cents: 500 });
    expect(part).toMatchObject({ payment_id: id, amount_cents: 500, status: 'succeeded', reason: 'requested_by_customer', replayed: false });
    expect(part.payment).toMatchObject({ status: 'partially_refunded', refundable_cents: total - 500 });
    const rest = await h.ok('create_refund', { payment_id: id, reason: 'fraud' });
    expect(rest).toMatchObject({ amount_cents: total - 500, reason: 'fraudulent' });
    expect(rest.payment).toMatchObject({ status: 'refunded', refundable_cents: 0 });
    expect(await h.fail('create_refund', { payment_id: id })).toMatchObject({ category: 'business', type: 'conflict', code: 'ALREADY_REFUNDED' });
  });

  it('answers a boundary violation, with the maximum, when the amount exceeds the balance', async () => {
    const h = harness();
    const id = fresh(h);
    const total = h.state.payments.find((p) => p.payment_id === id)!.amount_cents;
    const e = await h.fail('create_refund', { payment_id: id, amount_cents: total + 1 });
    expect(e).toMatchObject({ category: 'parameter', type: 'boundary_violation', code: 'REFUND_EXCEEDS_BALANCE' });
    expect(e.body).toMatchObject({ max: total });
    expect(h.state.refunds.filter((r) => r.source === 'tool')).toHaveLength(0);
  });

  it('answers 412 precondition_failed for uncaptured, failed and too-old payments', async () => {
    const h = harness();
    for (const status of ['authorized', 'failed'] as const) {
      const e = await h.fail('create_refund', { payment_id: paymentWith(h, (p) => p.status === status) });
      expect(e).toMatchObject({ type: 'precondition_failed', code: 'PAYMENT_NOT_CAPTURED' });
    }
    const old = paymentWith(h, (p) => p.status === 'captured' && Date.parse(h.state.anchor) - Date.parse(p.created_at) > REFUND_WINDOW_DAYS * 86_400_000);
    expect(await h.fail('create_refund', { payment_id: old })).toMatchObject({ type: 'precondition_failed', code: 'REFUND_WINDOW_EXPIRED' });
    expect(await h.fail('create_refund', { payment_id: 'PAY-9999' })).toMatchObject({ type: 'not_found' });
  });

  it('is not idempotent without a key: the same refund twice moves money twice', async () => {
    const h = harness();
    const id = fresh(h);
    await h.ok('create_refund', { payment_id: id, amount_cents: 100 });
    await h.ok('create_refund', { payment_id: id, amount_cents: 100 });
    expect(h.state.payments.find((p) => p.payment_id === id)!.refunded_cents).toBe(200);
    expect(h.state.duplicates().refunds.extra).toBe(1);
  });

  it('replays the first refund for the same idempotency key, and refuses the key with other parameters', async () => {
    const h = harness();
    const id = fresh(h);
    const first = await h.ok('create_refund', { payment_id: id, amount_cents: 100, idempotency_key: 'refund-key-01' });
    const again = await h.ok('create_refund', { payment_id: id, amount_cents: 100, idempotency_key: 'refund-key-01' });
    expect(again.refund_id).toBe(first.refund_id);
    expect(again.replayed).toBe(true);
    expect(h.state.payments.find((p) => p.payment_id === id)!.refunded_cents).toBe(100);
    expect(h.state.idempotentReplays['create_refund']).toBe(1);
    const reused = await h.fail('create_refund', { payment_id: id, amount_cents: 200, idempotency_key: 'refund-key-01' });
    expect(reused).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', status: 422, category: 'parameter' });
    expect(h.state.duplicates().refunds.extra).toBe(0);
  });
});
