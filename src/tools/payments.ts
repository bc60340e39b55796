/**
 * Payments and refunds: `get_payment` and `create_refund`. A refund moves money and cannot be
 * taken back, so it follows the payment-API playbook: not idempotent, but an idempotency key
 * makes a retry return the first refund instead of refunding twice.
 */
import type { ToolSpec } from '../runtime/define-tool.js';
import { BusinessError, ParameterError } from '../runtime/tool-errors.js';
import type { CatalogContext } from './catalog-state.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_MIN_LENGTH } from './idempotency-keys.js';
import type { Order } from './orders.js';
import { keyedRandom, randomInt } from './seeded-random.js';
import { DAY_MS } from './zoned-time.js';

export type PaymentStatus = 'authorized' | 'captured' | 'failed' | 'partially_refunded' | 'refunded';

export interface Payment {
  payment_id: string;
  order_id: string | null;
  customer_id: string;
  amount_cents: number;
  currency: 'USD';
  status: PaymentStatus;
  refunded_cents: number;
  created_at: string;
}

export type RefundReason = 'requested_by_customer' | 'duplicate' | 'fraudulent';

export interface Refund {
  refund_id: string;
  payment_id: string;
  amount_cents: number;
  currency: 'USD';
  reason: RefundReason;
  status: 'succeeded';
  created_at: string;
  idempotency_key: string | null;
  source: 'seed' | 'tool';
}

/** Refunds are accepted for this long after the payment. */
export const REFUND_WINDOW_DAYS = 180;

/**
 * One captured payment per seeded order that was not cancelled, plus a few edge cases: an
 * authorization never captured, a failed charge, one already fully refunded, one partially
 * refunded, and one too old to refund.
 */
export function seedPayments(seed: number, anchorMs: number, orders: readonly Order[]): { payments: Payment[]; refunds: Refund[] } {
  const payments: Payment[] = [];
  const refunds: Refund[] = [];
  let n = 2000;
  for (const order of orders) {
    if (order.status === 'cancelled') continue;
    payments.push({
      payment_id: `PAY-${++n}`,
      order_id: order.order_id,
      customer_id: order.customer_id,
      amount_cents: order.total_cents,
      currency: 'USD',
      status: 'captured',
      refunded_cents: 0,
      created_at: order.created_at,
    });
  }
  const random = keyedRandom(seed, 'payments');
  const extra = (status: PaymentStatus, ageDays: number): Payment => ({
    payment_id: `PAY-${++n}`,
    order_id: null,
    customer_id: `CUS-${String(randomInt(random, 1, 20)).padStart(3, '0')}`,
    amount_cents: randomInt(random, 20, 400) * 100 - 1,
    currency: 'USD',
    status,
    refunded_cents: 0,
    created_at: new Date(Math.floor((anchorMs - ageDays * DAY_MS) / 1000) * 1000).toISOString(),
  });
  const authorized = extra('authorized', 1);
  const failed = extra('failed', 3);
  const refunded = extra('refunded', 20);
  const partial = extra('partially_refunded', 12);
  const old = extra('captured', REFUND_WINDOW_DAYS + 20);
  payments.push(authorized, failed, refunded, partial, old);
  refunded.refunded_cents = refunded.amount_cents;
  partial.refunded_cents = Math.floor(partial.amount_cents / 3);
  let r = 0;
  for (const p of [refunded, partial]) {
    refunds.push({
      refund_id: `RFD-${String(++r).padStart(4, '0')}`,
      payment_id: p.payment_id,
      amount_cents: p.refunded_cents,
      currency: 'USD',
      reason: 'requested_by_customer',
      status: 'succeeded',
      created_at: new Date(Date.parse(p.created_at) + 2 * DAY_MS).toISOString(),
      idempotency_key: null,
      source: 'seed',
    });
  }
  return { payments, refunds };
}

interface RefundArgs {
  payment_id: string;
  amount_cents?: number;
  reason: RefundReason;
  idempotency_key?: string;
}

export type PaymentView = Payment & { refundable_cents: number; refunds: string[] };

export function paymentTools(catalog: CatalogContext): ToolSpec<any, unknown>[] {
  const { state } = catalog;

  function findPayment(id: string): Payment {
    const payment = state.payments.find((p) => p.payment_id === id);
    if (payment === undefined) throw new BusinessError('not_found', `payment ${id} does not exist`, { code: 'PAYMENT_NOT_FOUND', details: { payment_id: id } });
    return payment;
  }

  const view = (p: Payment): PaymentView => ({
    ...p,
    refundable_cents: p.status === 'captured' || p.status === 'partially_refunded' ? p.amount_cents - p.refunded_cents : 0,
    refunds: state.refunds.filter((r) => r.payment_id === p.payment_id).map((r) => r.refund_id),
  });

  const getPayment: ToolSpec<{ payment_id: string }, PaymentView> = {
    name: 'get_payment',
    description:
      'Fetches a payment: amount, status (authorized, captured, failed, partially_refunded, refunded), how much is still refundable and its refunds. ' +
      'Use it to check whether a refund went through before retrying one. Errors: 404 not_found for an unknown payment id. Read-only and idempotent: safe to retry.',
    input: { type: 'object', properties: { payment_id: { type: 'string', pattern: '^PAY-\\d{4,}$' } }, required: ['payment_id'], additionalProperties: false },
    idempotent: true,
    annotations: { title: 'Get payment', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute: (args) => view(findPayment(args.payment_id)),
  };

  const createRefund: ToolSpec<RefundArgs, Refund & { replayed: boolean; payment: PaymentView }> = {
    name: 'create_refund',
    description:
      'Refunds a captured payment, fully (default: whatever is still refundable) or partly (amount_cents). ' +
      'Not idempotent: every call without a key refunds again, even after a timeout in which the first refund went through. ' +
      'Pass idempotency_key (or the Idempotency-Key header) to retry safely: the same key and parameters return the original refund (replayed=true). ' +
      'Errors: 404 not_found for an unknown payment; 400 boundary_violation when amount_cents exceeds what is refundable (details give the maximum); ' +
      `409 conflict when the payment is already fully refunded; 412 precondition_failed when it was never captured, failed, or is older than ${REFUND_WINDOW_DAYS} days; ` +
      '422 when an idempotency key is reused with different parameters.',
    input: {
      type: 'object',
      properties: {
        payment_id: { type: 'string', pattern: '^PAY-\\d{4,}$' },
        amount_cents: { type: 'integer', minimum: 1, description: 'Amount to refund in cents; omit for the full refundable amount.' },
        reason: {
          enum: ['requested_by_customer', 'duplicate', 'fraudulent'],
          default: 'requested_by_customer',
          'x-synonyms': { customer_request: 'requested_by_customer', customer: 'requested_by_customer', dup: 'duplicate', duplicate_charge: 'duplicate', fraud: 'fraudulent' },
        },
        idempotency_key: { type: 'string', minLength: IDEMPOTENCY_KEY_MIN_LENGTH, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, description: 'Any unique string; send the same key when retrying the same refund.' },
      },
      required: ['payment_id'],
      additionalProperties: false,
    },
    idempotent: false,
    idempotencyKey: true,
    annotations: { title: 'Create refund', readOnlyHint: false, idempotentHint: false, destructiveHint: true, openWorldHint: false },
    execute(args, ctx) {
      const now = ctx.clock.now();
      const key = args.idempotency_key ?? ctx.idempotencyKey;
      const lookup = catalog.idempotency.check('create_refund', key, { payment_id: args.payment_id, amount_cents: args.amount_cents ?? null, reason: args.reason });
      if (lookup.replayOf !== undefined) {
        catalog.noteReplay('create_refund');
        const original = state.refunds.find((r) => r.refund_id === lookup.replayOf)!;
        return { ...original, replayed: true, payment: view(findPayment(original.payment_id)) };
      }
      const payment = findPayment(args.payment_id);
      if (payment.status === 'refunded') {
        throw new BusinessError('conflict', `payment ${payment.payment_id} is already fully refunded`, {
          code: 'ALREADY_REFUNDED',
          details: { payment_id: payment.payment_id, refunded_cents: payment.refunded_cents },
        });
      }
      if (payment.status === 'authorized' || payment.status === 'failed') {
        throw new BusinessError('precondition_failed', `payment ${payment.payment_id} is ${payment.status}: only captured payments can be refunded`, {
          code: 'PAYMENT_NOT_CAPTURED',
          details: { payment_id: payment.payment_id, status: payment.status },
        });
      }
      if (now - Date.parse(payment.created_at) > REFUND_WINDOW_DAYS * DAY_MS) {
        throw new BusinessError('precondition_failed', `payment ${payment.payment_id} is older than the ${REFUND_WINDOW_DAYS}-day refund window`, {
          code: 'REFUND_WINDOW_EXPIRED',
          details: { payment_id: payment.payment_id, created_at: payment.created_at, window_days: REFUND_WINDOW_DAYS },
        });
      }
      const refundable = payment.amount_cents - payment.refunded_cents;
      const amount = args.amount_cents ?? refundable;
      if (amount > refundable) {
        throw new ParameterError('boundary_violation', `amount_cents ${amount} exceeds the ${refundable} cents still refundable on ${payment.payment_id}`, {
          code: 'REFUND_EXCEEDS_BALANCE',
          details: { parameter: 'amount_cents', received: amount, max: refundable },
        });
      }
      payment.refunded_cents += amount;
      payment.status = payment.refunded_cents === payment.amount_cents ? 'refunded' : 'partially_refunded';
      const refund: Refund = {
        refund_id: catalog.nextId('RFD'),
        payment_id: payment.payment_id,
        amount_cents: amount,
        currency: 'USD',
        reason: args.reason,
        status: 'succeeded',
        created_at: new Date(now).toISOString(),
        idempotency_key: key,
        source: 'tool',
      };
      state.refunds.push(refund);
      lookup.remember(refund.refund_id);
      return { ...refund, replayed: false, payment: view(payment) };
    },
  };

  return [getPayment, createRefund];
}
