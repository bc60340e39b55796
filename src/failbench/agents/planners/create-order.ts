/** The create order domain's main step: placing an order for a customer. */
import type { Confirmation, DomainPlanner, Obj } from '../plan-step.js';
import { asObject, arrayAt, orderLine, idempotencyKey } from '../step-parts.js';

export const createOrderPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('create_order') && (verbs.has('order') || intent.items.length > 0) && intent.customerId !== undefined && intent.items.length > 0,
  plan(intent, ctx, h) {
    const { has, utcToday, base, startIso } = h;
    const quoted = intent.quoted;
    const customer = intent.customerId;
    const items = intent.items.map((i) => ({ sku: i.sku, quantity: i.quantity }));
    return {
      key: 'main',
      tool: 'create_order',
      write: true,
      check: base,
      args: () => ({ customer_id: customer, items, ...(quoted[0] !== undefined ? { note: quoted[0] } : {}), idempotency_key: idempotencyKey(ctx, 'order') }),
      ...(has('list_orders')
        ? {
            confirm: (args: Obj): Confirmation => ({
              tool: 'list_orders',
              args: { customer_id: customer, created_from: utcToday, limit: 50 },
              find: (output) =>
                arrayAt(asObject(output), 'orders').find(
                  (o) => String(o['created_at']) >= startIso && items.every((w) => arrayAt(o, 'items').some((g) => g['sku'] === w.sku && g['quantity'] === w.quantity)) && (args['note'] === undefined || o['note'] === args['note']),
                ),
            }),
          }
        : {}),
      summary: (o) => orderLine(asObject(o)),
    };
  },
};
