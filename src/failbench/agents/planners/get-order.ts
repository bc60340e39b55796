/** The get order domain's main step: one order by id. */
import type { DomainPlanner } from '../plan-step.js';
import { asObject, orderLine } from '../step-parts.js';

export const getOrderPlanner: DomainPlanner = {
  claims: (intent, { has }) => has('get_order') && intent.orderId !== undefined,
  plan(intent, _ctx, h) {
    const { base } = h;
    const orderId = intent.orderId;
    return { key: 'main', tool: 'get_order', write: false, check: base, args: () => ({ order_id: orderId }), summary: (o) => orderLine(asObject(o)) };
  },
};
