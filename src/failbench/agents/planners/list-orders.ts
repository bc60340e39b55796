/** The list orders domain's main step: a customer's orders. */
import type { DomainPlanner } from '../plan-step.js';
import { asObject, arrayAt } from '../step-parts.js';

export const listOrdersPlanner: DomainPlanner = {
  claims: (intent, { has }) => has('list_orders') && intent.customerId !== undefined,
  plan(intent, _ctx, h) {
    const { base } = h;
    const customer = intent.customerId;
    return {
      key: 'main',
      tool: 'list_orders',
      write: false,
      check: base,
      args: () => ({ customer_id: customer, ...(intent.orderStatus !== undefined ? { status: intent.orderStatus } : {}), limit: 20 }),
      summary: (o) => {
        const orders = arrayAt(asObject(o), 'orders');
        return `${String(asObject(o)?.['total'] ?? orders.length)} orders for ${customer}${intent.orderStatus === undefined ? '' : ` (${intent.orderStatus})`}: ${orders.map((x) => `${String(x['order_id'])} (${String(x['customer_id'])}, ${String(x['status'])})`).join(', ')}`;
      },
    };
  },
};
