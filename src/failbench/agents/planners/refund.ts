/** The refund domain's main step: a refund on a payment, after reading what is left to refund. */
import type { Confirmation, DomainPlanner, Obj } from '../plan-step.js';
import { asObject, money, paymentLine, idempotencyKey } from '../step-parts.js';

export const refundPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('create_refund') && verbs.has('refund') && intent.paymentId !== undefined,
  plan(intent, ctx, h) {
    const { has, base } = h;
    const paymentId = intent.paymentId;
    if (has('get_payment')) h.steps.push({ key: 'baseline', tool: 'get_payment', write: false, check: base, args: () => ({ payment_id: paymentId }), summary: (o) => paymentLine(asObject(o)) });
    const amount = intent.refundRemaining ? undefined : intent.amountCents;
    return {
      key: 'main',
      tool: 'create_refund',
      write: true,
      check: base,
      args: () => ({
        payment_id: paymentId,
        ...(amount !== undefined ? { amount_cents: amount } : {}),
        reason: intent.refundReason ?? 'requested_by_customer',
        idempotency_key: idempotencyKey(ctx, 'refund'),
      }),
      when: (prior) => {
        const payment = asObject(prior.get('baseline')?.output);
        if (payment === undefined) return { run: true };
        return typeof payment['refundable_cents'] === 'number' && payment['refundable_cents'] <= 0
          ? { run: false, why: `payment ${paymentId} has nothing left to refund (status ${String(payment['status'])})`, done: false }
          : { run: true };
      },
      ...(has('get_payment')
        ? {
            confirm: (args: Obj): Confirmation => ({
              tool: 'get_payment',
              args: { payment_id: paymentId },
              find: (output, prior) => {
                const p = asObject(output);
                const refunds = Array.isArray(p?.['refunds']) ? (p['refunds'] as string[]) : [];
                const before = asObject(prior.get('baseline')?.output)?.['refunds'];
                const known = Array.isArray(before) ? (before as string[]) : [];
                const added = refunds.filter((r) => !known.includes(r));
                const baseline = asObject(prior.get('baseline')?.output);
                const amount = args['amount_cents'] ?? baseline?.['refundable_cents'];
                return added.length > 0 ? { refund_id: added[added.length - 1], payment_id: paymentId, amount_cents: amount, payment: p } : undefined;
              },
            }),
          }
        : {}),
      summary: (o) => {
        const r = asObject(o);
        return `Refunded ${money(r?.['amount_cents'])} on ${paymentId} (${String(r?.['refund_id'] ?? '?')})`;
      },
    };
  },
  reportAfter(intent, main, { base, has }) {
    if (!has('get_payment') || intent.paymentId === undefined) return undefined;
    const paymentId = intent.paymentId;
    return {
      key: 'report',
      tool: 'get_payment',
      write: false,
      check: base,
      args: () => ({ payment_id: paymentId }),
      verify: (output, prior) => {
        const refundId = asObject(prior.get(main.key)?.output)?.['refund_id'];
        const refunds = asObject(output)?.['refunds'];
        return typeof refundId === 'string' && !(Array.isArray(refunds) && refunds.includes(refundId)) ? [{ kind: 'stale', field: 'refunds', expected: refundId }] : [];
      },
      summary: (o) => `Now: ${paymentLine(asObject(o))}`,
    };
  },
};
