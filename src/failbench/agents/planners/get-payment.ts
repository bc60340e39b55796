/** The get payment domain's main step: one payment by id. */
import type { DomainPlanner } from '../plan-step.js';
import { asObject, paymentLine } from '../step-parts.js';

export const getPaymentPlanner: DomainPlanner = {
  claims: (intent, { has }) => has('get_payment') && intent.paymentId !== undefined,
  plan(intent, _ctx, h) {
    const { base } = h;
    const paymentId = intent.paymentId;
    return { key: 'main', tool: 'get_payment', write: false, check: base, args: () => ({ payment_id: paymentId }), summary: (o) => paymentLine(asObject(o)) };
  },
};
