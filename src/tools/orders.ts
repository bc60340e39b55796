/**
 * Orders: `create_order`, `get_order`, `list_orders`, `cancel_order`. Orders move through their
 * lifecycle on the virtual clock (pending -> processing after 10 minutes -> shipped after
 * 2 hours -> delivered after 3 days), so "cancel it" has a deadline: once shipped, cancelling
 * is a 409 conflict. Creating is not idempotent; an idempotency key makes a retry safe.
 */
import type { ToolContext, ToolSpec } from '../runtime/define-tool.js';
import { BusinessError, ParameterError } from '../runtime/tool-errors.js';
import type { CatalogContext } from './catalog-state.js';
import { IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENCY_KEY_MIN_LENGTH } from './idempotency-keys.js';
import { keyedRandom, pick, randomInt } from './seeded-random.js';

export interface Customer {
  customer_id: string;
  name: string;
  email: string;
}

export interface Product {
  sku: string;
  name: string;
  price_cents: number;
  stock: number;
}

export type OrderStatus = 'pending' | 'processing' | 'shipped' | 'delivered' | 'cancelled';

export interface OrderItem {
  sku: string;
  quantity: number;
  unit_price_cents: number;
}

export interface Order {
  order_id: string;
  customer_id: string;
  items: OrderItem[];
  total_cents: number;
  currency: 'USD';
  status: OrderStatus;
  note: string | null;
  created_at: string;
  updated_at: string;
  shipped_at: string | null;
  cancelled_at: string | null;
  cancel_reason: string | null;
  /** The key the order was deduplicated on (the caller's, or one the transport made up for this request). */
  idempotency_key: string | null;
  source: 'seed' | 'tool';
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Age at which an order enters each status. */
const LIFECYCLE: readonly [OrderStatus, number][] = [
  ['delivered', 72 * HOUR],
  ['shipped', 2 * HOUR],
  ['processing', 10 * MINUTE],
  ['pending', 0],
];

export const ORDER_ID_BASE = 10_000;

function statusForAge(ageMs: number): OrderStatus {
  for (const [status, from] of LIFECYCLE) if (ageMs >= from) return status;
  return 'pending';
}

/** Moves every live order to the status its age implies at `nowMs`. Statuses never move backwards. */
export function settleOrders(orders: Order[], nowMs: number): void {
  const rank: Record<OrderStatus, number> = { pending: 0, processing: 1, shipped: 2, delivered: 3, cancelled: 4 };
  for (const order of orders) {
    if (order.status === 'cancelled') continue;
    const createdMs = Date.parse(order.created_at);
    const next = statusForAge(nowMs - createdMs);
    if (rank[next] <= rank[order.status]) continue;
    const shippedAtMs = createdMs + 2 * HOUR;
    if (order.shipped_at === null && rank[next] >= rank.shipped) order.shipped_at = new Date(shippedAtMs).toISOString();
    const enteredMs = createdMs + (LIFECYCLE.find(([s]) => s === next)?.[1] ?? 0);
    order.status = next;
    order.updated_at = new Date(enteredMs).toISOString();
  }
}

const FIRST = ['Ann', 'Bo', 'Chen', 'Dana', 'Eli', 'Fang', 'Gus', 'Hui', 'Ines', 'Jun', 'Kai', 'Lena', 'Min', 'Noor', 'Omar', 'Pia', 'Qing', 'Rui', 'Sam', 'Tao'];
const LAST = ['Li', 'Wang', 'Zhang', 'Liu', 'Chen', 'Smith', 'Garcia', 'Kim', 'Tanaka', 'Novak'];
const PRODUCTS: readonly [string, string, number][] = [
  ['SKU-1001', 'Wireless mouse', 2499],
  ['SKU-1002', 'Mechanical keyboard', 8999],
  ['SKU-1003', 'USB-C hub', 3999],
  ['SKU-1004', '27" monitor', 27999],
  ['SKU-1005', 'Laptop stand', 4599],
  ['SKU-1006', 'Noise-cancelling headphones', 19999],
  ['SKU-1007', 'Webcam 1080p', 5999],
  ['SKU-1008', 'Desk lamp', 3499],
  ['SKU-1009', 'Ergonomic chair', 34999],
  ['SKU-1010', 'Standing desk', 49999],
  ['SKU-1011', 'Cable organizer', 999],
  ['SKU-1012', 'Portable SSD 1TB', 10999],
];
/** Sold out from the start, so "insufficient stock" can be met without ordering 100 of something. */
export const SOLD_OUT_SKU = 'SKU-1010';

export function seedCustomers(seed: number): Customer[] {
  return Array.from({ length: 20 }, (_, i) => {
    const random = keyedRandom(seed, 'customer', i);
    const first = pick(random, FIRST);
    const last = pick(random, LAST);
    return { customer_id: `CUS-${String(i + 1).padStart(3, '0')}`, name: `${first} ${last}`, email: `${first}.${last}${i + 1}@example.com`.toLowerCase() };
  });
}

export function seedProducts(seed: number): Product[] {
  return PRODUCTS.map(([sku, name, price]) => ({ sku, name, price_cents: price, stock: sku === SOLD_OUT_SKU ? 0 : randomInt(keyedRandom(seed, 'stock', sku), 5, 60) }));
}

export function seedOrders(seed: number, anchorMs: number, customers: readonly Customer[], products: readonly Product[]): Order[] {
  const orders: Order[] = [];
  for (let i = 0; i < 40; i++) {
    const random = keyedRandom(seed, 'order', i);
    // Mostly delivered history, and a share of recent orders in each earlier status at the anchor.
    const bucket = i % 8;
    const ageMs =
      bucket === 0 ? randomInt(random, 1, 9) * MINUTE : bucket === 1 ? randomInt(random, 15, 110) * MINUTE : bucket === 2 ? randomInt(random, 3, 60) * HOUR : randomInt(random, 4 * 24, 60 * 24) * HOUR;
    const createdMs = Math.floor((anchorMs - ageMs) / 1000) * 1000;
    const lines = new Map<string, OrderItem>();
    for (let n = randomInt(random, 1, 3); n > 0; n--) {
      const product = pick(random, products);
      const line = lines.get(product.sku);
      if (line !== undefined) line.quantity++;
      else lines.set(product.sku, { sku: product.sku, quantity: randomInt(random, 1, 3), unit_price_cents: product.price_cents });
    }
    const items = [...lines.values()];
    const created = new Date(createdMs).toISOString();
    orders.push({
      order_id: `ORD-${ORDER_ID_BASE + i + 1}`,
      customer_id: pick(random, customers).customer_id,
      items,
      total_cents: items.reduce((s, l) => s + l.quantity * l.unit_price_cents, 0),
      currency: 'USD',
      status: 'pending',
      note: null,
      created_at: created,
      updated_at: created,
      shipped_at: null,
      cancelled_at: null,
      cancel_reason: null,
      idempotency_key: null,
      source: 'seed',
    });
    if (i % 9 === 4) {
      const order = orders[orders.length - 1]!;
      const at = new Date(createdMs + 5 * MINUTE).toISOString();
      Object.assign(order, { status: 'cancelled', cancelled_at: at, updated_at: at, cancel_reason: 'customer_request' });
    }
  }
  settleOrders(orders, anchorMs);
  return orders;
}

interface CreateOrderArgs {
  customer_id: string;
  items: { sku: string; quantity: number }[];
  note?: string;
  idempotency_key?: string;
}

interface ListOrdersArgs {
  customer_id?: string;
  status?: OrderStatus;
  created_from?: string;
  created_to?: string;
  limit: number;
  offset: number;
}

const ORDER_ID = { type: 'string', pattern: '^ORD-\\d{5,}$', description: 'Order id, e.g. "ORD-10007".' } as const;
const CUSTOMER_ID = { type: 'string', pattern: '^CUS-\\d{3}$', description: 'Customer id, e.g. "CUS-003".' } as const;
const IDEMPOTENCY_KEY = {
  type: 'string',
  minLength: IDEMPOTENCY_KEY_MIN_LENGTH,
  maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
  description: 'Any unique string you choose; send the same key when retrying the same request so it is not executed twice.',
} as const;

/** The argument wins over the context's key, so an agent talking to the tool directly can choose it. */
function chosenKey(args: { idempotency_key?: string }, ctx: ToolContext): string {
  return args.idempotency_key ?? ctx.idempotencyKey;
}

function notFound(orderId: string): BusinessError {
  return new BusinessError('not_found', `order ${orderId} does not exist`, { code: 'ORDER_NOT_FOUND', details: { order_id: orderId } });
}

export function orderTools(catalog: CatalogContext): ToolSpec<any, unknown>[] {
  const { state } = catalog;
  const findOrder = (id: string) => state.orders.find((o) => o.order_id === id);

  const createOrder: ToolSpec<CreateOrderArgs, Order & { replayed: boolean }> = {
    name: 'create_order',
    description:
      'Places an order for a customer (prices in USD cents). Not idempotent: every call without a key places a new order, even after a timeout in which the first one went through. ' +
      'Pass idempotency_key (or the Idempotency-Key header) to retry safely: the same key with the same items returns the original order (replayed=true) instead of a new one. ' +
      'Errors: 404 not_found for an unknown customer or SKU; 409 conflict when a SKU lacks stock (details give what is available); ' +
      '422 when an idempotency key is reused with different parameters; 400 for invalid items (quantity 1-100, at most 20 lines).',
    input: {
      type: 'object',
      properties: {
        customer_id: CUSTOMER_ID,
        items: {
          type: 'array',
          minItems: 1,
          maxItems: 20,
          items: {
            type: 'object',
            properties: { sku: { type: 'string', pattern: '^SKU-\\d{4}$' }, quantity: { type: 'integer', minimum: 1, maximum: 100 } },
            required: ['sku', 'quantity'],
            additionalProperties: false,
          },
        },
        note: { type: 'string', maxLength: 500 },
        idempotency_key: IDEMPOTENCY_KEY,
      },
      required: ['customer_id', 'items'],
      additionalProperties: false,
    },
    idempotent: false,
    idempotencyKey: true,
    annotations: { title: 'Create order', readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
    execute(args, ctx) {
      const now = ctx.clock.now();
      settleOrders(state.orders, now);
      const key = chosenKey(args, ctx);
      const request = { customer_id: args.customer_id, items: args.items, note: args.note ?? null };
      const lookup = catalog.idempotency.check('create_order', key, request);
      if (lookup.replayOf !== undefined) {
        catalog.noteReplay('create_order');
        return { ...structuredClone(findOrder(lookup.replayOf)!), replayed: true };
      }
      if (!state.customers.some((c) => c.customer_id === args.customer_id)) {
        throw new BusinessError('not_found', `customer ${args.customer_id} does not exist`, { code: 'CUSTOMER_NOT_FOUND', details: { customer_id: args.customer_id } });
      }
      const wanted = new Map<string, number>();
      for (const item of args.items) wanted.set(item.sku, (wanted.get(item.sku) ?? 0) + item.quantity);
      const lines: OrderItem[] = [];
      for (const [sku, quantity] of wanted) {
        const product = state.products.find((p) => p.sku === sku);
        if (product === undefined) throw new BusinessError('not_found', `product ${sku} does not exist`, { code: 'PRODUCT_NOT_FOUND', details: { sku } });
        if (product.stock < quantity) {
          throw new BusinessError('conflict', `not enough stock for ${sku}: ${quantity} requested, ${product.stock} available`, {
            code: 'INSUFFICIENT_STOCK',
            details: { sku, requested: quantity, available: product.stock },
          });
        }
        lines.push({ sku, quantity, unit_price_cents: product.price_cents });
      }
      for (const line of lines) state.products.find((p) => p.sku === line.sku)!.stock -= line.quantity;
      const created = new Date(now).toISOString();
      const order: Order = {
        order_id: catalog.nextId('ORD'),
        customer_id: args.customer_id,
        items: lines,
        total_cents: lines.reduce((s, l) => s + l.quantity * l.unit_price_cents, 0),
        currency: 'USD',
        status: 'pending',
        note: args.note ?? null,
        created_at: created,
        updated_at: created,
        shipped_at: null,
        cancelled_at: null,
        cancel_reason: null,
        idempotency_key: key,
        source: 'tool',
      };
      state.orders.push(order);
      lookup.remember(order.order_id);
      return { ...structuredClone(order), replayed: false };
    },
  };

  const getOrder: ToolSpec<{ order_id: string }, Order> = {
    name: 'get_order',
    description: 'Fetches one order with its current status (pending, processing, shipped, delivered, cancelled). Errors: 404 not_found for an unknown order id. Read-only and idempotent: safe to retry.',
    input: { type: 'object', properties: { order_id: ORDER_ID }, required: ['order_id'], additionalProperties: false },
    idempotent: true,
    annotations: { title: 'Get order', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args, ctx) {
      settleOrders(state.orders, ctx.clock.now());
      const order = findOrder(args.order_id);
      if (order === undefined) throw notFound(args.order_id);
      return structuredClone(order);
    },
  };

  const listOrders: ToolSpec<ListOrdersArgs, { total: number; offset: number; limit: number; orders: Order[] }> = {
    name: 'list_orders',
    description:
      'Lists orders, newest first, optionally by customer, status and creation day (created_from/created_to: inclusive UTC days, YYYY-MM-DD). ' +
      'An empty list (total 0) means no order matches. Errors: 400 boundary_violation when created_from is after created_to or offset is past the last order. Read-only and idempotent: safe to retry.',
    input: {
      type: 'object',
      properties: {
        customer_id: CUSTOMER_ID,
        status: { enum: ['pending', 'processing', 'shipped', 'delivered', 'cancelled'], 'x-synonyms': { canceled: 'cancelled', open: 'pending', in_transit: 'shipped' } },
        created_from: { type: 'string', format: 'date' },
        created_to: { type: 'string', format: 'date' },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        offset: { type: 'integer', minimum: 0, default: 0 },
      },
      additionalProperties: false,
    },
    idempotent: true,
    annotations: { title: 'List orders', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args, ctx) {
      const now = ctx.clock.now();
      settleOrders(state.orders, now);
      if (args.created_from !== undefined && args.created_to !== undefined && args.created_from > args.created_to) {
        throw new ParameterError('boundary_violation', `created_from (${args.created_from}) is after created_to (${args.created_to})`, {
          code: 'INVALID_DATE_RANGE',
          details: { created_from: args.created_from, created_to: args.created_to },
        });
      }
      const nowIso = new Date(now).toISOString();
      const matching = state.orders
        .filter(
          (o) =>
            o.created_at <= nowIso &&
            (args.customer_id === undefined || o.customer_id === args.customer_id) &&
            (args.status === undefined || o.status === args.status) &&
            (args.created_from === undefined || o.created_at.slice(0, 10) >= args.created_from) &&
            (args.created_to === undefined || o.created_at.slice(0, 10) <= args.created_to),
        )
        .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.order_id.localeCompare(a.order_id));
      if (args.offset > 0 && args.offset >= matching.length) {
        throw new ParameterError('boundary_violation', `offset ${args.offset} is past the last of ${matching.length} orders`, {
          code: 'OFFSET_OUT_OF_RANGE',
          details: { parameter: 'offset', received: args.offset, total: matching.length },
        });
      }
      return { total: matching.length, offset: args.offset, limit: args.limit, orders: structuredClone(matching.slice(args.offset, args.offset + args.limit)) };
    },
  };

  const cancelOrder: ToolSpec<{ order_id: string; reason: string }, Order> = {
    name: 'cancel_order',
    description:
      'Cancels an order that has not shipped yet (orders ship about 2 hours after they are placed) and puts its stock back. ' +
      'Errors: 404 not_found for an unknown order id; 409 conflict when the order has already shipped, been delivered or been cancelled (details give the current status). ' +
      'Idempotent in effect: repeating a cancel changes nothing, but the repeat answers 409 conflict, so after a timeout call get_order to see whether it went through.',
    input: {
      type: 'object',
      properties: {
        order_id: ORDER_ID,
        reason: {
          enum: ['customer_request', 'duplicate', 'fraud', 'other'],
          default: 'customer_request',
          'x-synonyms': { customer: 'customer_request', requested_by_customer: 'customer_request', duplicate_order: 'duplicate', dup: 'duplicate', fraudulent: 'fraud' },
        },
      },
      required: ['order_id'],
      additionalProperties: false,
    },
    idempotent: true,
    annotations: { title: 'Cancel order', readOnlyHint: false, idempotentHint: true, destructiveHint: true, openWorldHint: false },
    execute(args, ctx) {
      const now = ctx.clock.now();
      settleOrders(state.orders, now);
      const order = findOrder(args.order_id);
      if (order === undefined) throw notFound(args.order_id);
      if (order.status !== 'pending' && order.status !== 'processing') {
        throw new BusinessError(
          'conflict',
          order.status === 'cancelled' ? `order ${order.order_id} is already cancelled` : `order ${order.order_id} has already ${order.status === 'shipped' ? 'shipped' : 'been delivered'} and can no longer be cancelled`,
          { code: order.status === 'cancelled' ? 'ORDER_ALREADY_CANCELLED' : 'ORDER_ALREADY_SHIPPED', details: { order_id: order.order_id, status: order.status, shipped_at: order.shipped_at } },
        );
      }
      const at = new Date(now).toISOString();
      Object.assign(order, { status: 'cancelled', cancelled_at: at, updated_at: at, cancel_reason: args.reason });
      for (const line of order.items) {
        const product = state.products.find((p) => p.sku === line.sku);
        if (product !== undefined) product.stock += line.quantity;
      }
      return structuredClone(order);
    },
  };

  return [createOrder, getOrder, listOrders, cancelOrder];
}
