/** The cancel order domain's main step: cancelling an order, after reading its status when only an unshipped one may go. */
import type { Confirmation, DomainPlanner } from '../plan-step.js';
import { asObject, orderLine } from '../step-parts.js';

export const cancelOrderPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('cancel_order') && verbs.has('cancel') && intent.orderId !== undefined,
  plan(intent, _ctx, h) {
    const { has, base } = h;
    const orderId = intent.orderId;
    if (has('get_order') && intent.onlyIfNotShipped) h.steps.push({ key: 'baseline', tool: 'get_order', write: false, check: base, args: () => ({ order_id: orderId }), summary: (o) => orderLine(asObject(o)) });
    return {
      key: 'main',
      tool: 'cancel_order',
      write: true,
      check: base,
      args: () => ({ order_id: orderId, reason: intent.cancelReason ?? 'customer_request' }),
      when: (prior) => {
        const order = asObject(prior.get('baseline')?.output);
        if (order === undefined || order['status'] === 'pending' || order['status'] === 'processing') return { run: true };
        return { run: false, why: `order ${orderId} is already ${String(order['status'])}, so it was not cancelled`, done: true };
      },
      ...(has('get_order')
        ? { confirm: (): Confirmation => ({ tool: 'get_order', args: { order_id: orderId }, find: (output) => (asObject(output)?.['status'] === 'cancelled' ? asObject(output) : undefined) }) }
        : {}),
      summary: (o) => `Order ${orderId} is ${String(asObject(o)?.['status'] ?? 'cancelled')}`,
    };
  },
  reportAfter(intent, main, { base, has }) {
    if (!has('get_order') || intent.orderId === undefined) return undefined;
    const orderId = intent.orderId;
    return {
      key: 'report',
      tool: 'get_order',
      write: false,
      check: base,
      args: () => ({ order_id: orderId }),
      verify: (output, prior) => {
        const cancelled = asObject(prior.get(main.key)?.output)?.['status'] === 'cancelled';
        return cancelled && asObject(output)?.['status'] !== 'cancelled' ? [{ kind: 'stale', field: 'status', expected: 'cancelled' }] : [];
      },
      summary: (o) => `Now: ${orderLine(asObject(o))}`,
    };
  },
};
