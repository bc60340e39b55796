import { describe, expect, it } from 'vitest';
import { harness } from './catalog.test-helpers.js';
import { SOLD_OUT_SKU } from './orders.js';

const HOUR = 3_600_000;
const basket = { customer_id: 'CUS-003', items: [{ sku: 'SKU-1001', quantity: 2 }] };

describe('create_order', () => {
  it('places an order, takes the stock and makes it readable and listable', async () => {
    const h = harness();
    const stockBefore = h.state.products.find((p) => p.sku === 'SKU-1001')!.stock;
    const order = await h.ok('create_order', { ...basket, note: 'leave at the door' });
    expect(order).toMatchObject({ customer_id: 'CUS-003', status: 'pending', total_cents: 2 * 2499, currency: 'USD', note: 'leave at the door', replayed: false, source: 'tool' });
    expect(order.order_id).toBe('ORD-10041');
    expect(order.created_at).toBe('2026-03-29T14:00:00.000Z');
    expect(h.state.products.find((p) => p.sku === 'SKU-1001')!.stock).toBe(stockBefore - 2);
    const { replayed: _replayed, ...stored } = order;
    expect(await h.ok('get_order', { order_id: order.order_id })).toEqual(stored);
    const listed = await h.ok('list_orders', { customer_id: 'CUS-003' });
    expect(listed.orders[0].order_id).toBe(order.order_id);
  });

  it('merges repeated SKUs into one line', async () => {
    const order = await harness().ok('create_order', { customer_id: 'CUS-001', items: [{ sku: 'SKU-1003', quantity: 1 }, { sku: 'SKU-1003', quantity: 2 }] });
    expect(order.items).toEqual([{ sku: 'SKU-1003', quantity: 3, unit_price_cents: 3999 }]);
  });

  it('is not idempotent: two calls without a key place two orders, and the state shows the duplicate', async () => {
    const h = harness();
    const a = await h.ok('create_order', basket);
    const b = await h.ok('create_order', basket);
    expect(b.order_id).not.toBe(a.order_id);
    expect(h.state.orders.filter((o) => o.source === 'tool')).toHaveLength(2);
    const dup = h.state.duplicates().orders;
    expect(dup.extra).toBe(1);
    expect(dup.groups).toEqual([{ ids: [a.order_id, b.order_id], key: 'CUS-003 SKU-1001x2' }]);
  });

  it('deduplicates on an idempotency key argument: same key, same order, stock taken once', async () => {
    const h = harness();
    const stockBefore = h.state.products.find((p) => p.sku === 'SKU-1001')!.stock;
    const first = await h.ok('create_order', { ...basket, idempotency_key: 'order-key-0001' });
    const retry = await h.ok('create_order', { ...basket, idempotency_key: 'order-key-0001' });
    expect(retry.order_id).toBe(first.order_id);
    expect(retry.replayed).toBe(true);
    expect(h.state.orders.filter((o) => o.source === 'tool')).toHaveLength(1);
    expect(h.state.products.find((p) => p.sku === 'SKU-1001')!.stock).toBe(stockBefore - 2);
    expect(h.state.idempotentReplays['create_order']).toBe(1);
    expect(h.state.calls['create_order']).toBe(2);
    expect(h.state.duplicates().orders.extra).toBe(0);
  });

  it('deduplicates on the runtime idempotency key (ctx.idempotencyKey)', async () => {
    const h = harness();
    const a = await h.ok('create_order', basket, { idempotencyKey: 'runtime-key-1' });
    const b = await h.ok('create_order', basket, { idempotencyKey: 'runtime-key-1' });
    expect(b.order_id).toBe(a.order_id);
    expect(h.state.orders.filter((o) => o.source === 'tool')).toHaveLength(1);
    expect(h.state.orders.at(-1)!.idempotency_key).toBe('runtime-key-1');
  });

  it('answers 422 when a key is reused with different items', async () => {
    const h = harness();
    await h.ok('create_order', { ...basket, idempotency_key: 'order-key-0002' });
    const e = await h.fail('create_order', { customer_id: 'CUS-003', items: [{ sku: 'SKU-1001', quantity: 3 }], idempotency_key: 'order-key-0002' });
    expect(e).toMatchObject({ category: 'parameter', type: 'schema_mismatch', code: 'IDEMPOTENCY_KEY_REUSED', status: 422 });
    expect(h.state.orders.filter((o) => o.source === 'tool')).toHaveLength(1);
  });

  it('does not remember a key whose request failed, so a corrected retry goes through', async () => {
    const h = harness();
    expect((await h.fail('create_order', { customer_id: 'CUS-999', items: basket.items, idempotency_key: 'order-key-0003' })).type).toBe('not_found');
    expect((await h.ok('create_order', { customer_id: 'CUS-999', items: basket.items, idempotency_key: 'order-key-0003' }).catch(() => 'failed'))).toBe('failed');
    const order = await h.ok('create_order', { ...basket, idempotency_key: 'order-key-0004' });
    expect(order.replayed).toBe(false);
  });

  it('answers not_found for unknown customers and SKUs, and conflict for missing stock', async () => {
    const h = harness();
    expect(await h.fail('create_order', { customer_id: 'CUS-099', items: basket.items })).toMatchObject({ type: 'not_found', code: 'CUSTOMER_NOT_FOUND' });
    expect(await h.fail('create_order', { customer_id: 'CUS-001', items: [{ sku: 'SKU-9999', quantity: 1 }] })).toMatchObject({ type: 'not_found', code: 'PRODUCT_NOT_FOUND' });
    const stock = await h.fail('create_order', { customer_id: 'CUS-001', items: [{ sku: SOLD_OUT_SKU, quantity: 1 }] });
    expect(stock).toMatchObject({ category: 'business', type: 'conflict', code: 'INSUFFICIENT_STOCK' });
    expect(stock.body).toMatchObject({ sku: SOLD_OUT_SKU, requested: 1, available: 0 });
    expect(h.state.orders.filter((o) => o.source === 'tool')).toHaveLength(0);
  });

  it('rejects out-of-range quantities and empty baskets at validation', async () => {
    const h = harness();
    expect((await h.fail('create_order', { customer_id: 'CUS-001', items: [{ sku: 'SKU-1001', quantity: 101 }] })).type).toBe('boundary_violation');
    expect((await h.fail('create_order', { customer_id: 'CUS-001', items: [] })).type).toBe('boundary_violation');
    expect((await h.fail('create_order', { customer_id: 'CUS-001', items: [{ sku: 'SKU-1001', quantity: 0 }] })).stage).toBe('param_validation');
  });
});

describe('order lifecycle and cancel_order', () => {
  it('ships orders two hours after they are placed, on the virtual clock', async () => {
    const h = harness();
    const order = await h.ok('create_order', basket);
    await h.clock.advance(15 * 60_000);
    expect((await h.ok('get_order', { order_id: order.order_id })).status).toBe('processing');
    await h.clock.advance(2 * HOUR);
    const shipped = await h.ok('get_order', { order_id: order.order_id });
    expect(shipped).toMatchObject({ status: 'shipped', shipped_at: '2026-03-29T16:00:00.000Z' });
    await h.clock.advance(72 * HOUR);
    expect((await h.ok('get_order', { order_id: order.order_id })).status).toBe('delivered');
  });

  it('cancels an unshipped order and puts the stock back', async () => {
    const h = harness();
    const stockBefore = h.state.products.find((p) => p.sku === 'SKU-1001')!.stock;
    const order = await h.ok('create_order', basket);
    const cancelled = await h.ok('cancel_order', { order_id: order.order_id, reason: 'duplicate_order' });
    expect(cancelled).toMatchObject({ status: 'cancelled', cancel_reason: 'duplicate', cancelled_at: '2026-03-29T14:00:00.000Z' });
    expect(h.state.products.find((p) => p.sku === 'SKU-1001')!.stock).toBe(stockBefore);
  });

  it('answers 409 conflict for an order already cancelled (the repeat changes nothing)', async () => {
    const h = harness();
    const order = await h.ok('create_order', basket);
    await h.ok('cancel_order', { order_id: order.order_id });
    const stock = h.state.products.find((p) => p.sku === 'SKU-1001')!.stock;
    const again = await h.fail('cancel_order', { order_id: order.order_id });
    expect(again).toMatchObject({ type: 'conflict', code: 'ORDER_ALREADY_CANCELLED' });
    expect(again.body).toMatchObject({ status: 'cancelled' });
    expect(h.state.products.find((p) => p.sku === 'SKU-1001')!.stock).toBe(stock);
  });

  it('answers 409 conflict once the order has shipped', async () => {
    const h = harness();
    const order = await h.ok('create_order', basket);
    await h.clock.advance(3 * HOUR);
    const e = await h.fail('cancel_order', { order_id: order.order_id });
    expect(e).toMatchObject({ category: 'business', type: 'conflict', code: 'ORDER_ALREADY_SHIPPED' });
    expect(e.body).toMatchObject({ status: 'shipped' });
    expect((await h.ok('get_order', { order_id: order.order_id })).status).toBe('shipped');
  });

  it('answers 404 not_found for unknown orders, and rejects malformed ids at validation', async () => {
    const h = harness();
    expect(await h.fail('get_order', { order_id: 'ORD-99999' })).toMatchObject({ type: 'not_found', code: 'ORDER_NOT_FOUND' });
    expect(await h.fail('cancel_order', { order_id: 'ORD-99999' })).toMatchObject({ type: 'not_found' });
    expect((await h.fail('get_order', { order_id: '10001' })).stage).toBe('param_validation');
  });

  it('seeds orders in every status', async () => {
    const statuses = new Set(harness().state.orders.map((o) => o.status));
    expect([...statuses].sort()).toEqual(['cancelled', 'delivered', 'pending', 'processing', 'shipped']);
  });
});

describe('list_orders', () => {
  it('filters by status, customer and creation day, newest first', async () => {
    const h = harness();
    const shipped = await h.ok('list_orders', { status: 'shipped', limit: 100 });
    expect(shipped.orders.length).toBeGreaterThan(0);
    for (const o of shipped.orders) expect(o.status).toBe('shipped');
    const all = await h.ok('list_orders', { limit: 100 });
    const created = all.orders.map((o: { created_at: string }) => o.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    const day = await h.ok('list_orders', { created_from: '2026-03-29', created_to: '2026-03-29', limit: 100 });
    for (const o of day.orders) expect(o.created_at.startsWith('2026-03-29')).toBe(true);
    expect(day.total).toBe(h.state.orders.filter((o) => o.created_at.startsWith('2026-03-29')).length);
    const none = await h.ok('list_orders', { customer_id: 'CUS-020', status: 'pending', created_from: '2020-01-01', created_to: '2020-01-02' });
    expect(none).toMatchObject({ total: 0, orders: [] });
  });

  it('rejects inverted ranges and offsets past the end', async () => {
    const h = harness();
    expect(await h.fail('list_orders', { created_from: '2026-03-29', created_to: '2026-03-01' })).toMatchObject({ type: 'boundary_violation', code: 'INVALID_DATE_RANGE' });
    expect(await h.fail('list_orders', { offset: 40 })).toMatchObject({ type: 'boundary_violation', code: 'OFFSET_OUT_OF_RANGE' });
    expect((await h.ok('list_orders', { offset: 39 })).orders).toHaveLength(1);
  });
});
