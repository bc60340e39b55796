import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../core/clock.js';
import { createRuntime } from '../runtime/runtime.js';
import { CATALOG_TOOL_NAMES, createToolCatalog, DEFAULT_CATALOG_NOW } from './catalog.js';
import { harness } from './catalog.test-helpers.js';

describe('createToolCatalog', () => {
  it('has every domain, in a fixed order', () => {
    const { tools } = createToolCatalog({ seed: 1 });
    expect(tools.map((t) => t.name)).toEqual([...CATALOG_TOOL_NAMES]);
    expect(tools.length).toBeGreaterThanOrEqual(16);
  });

  it('annotates every tool consistently with its idempotency', () => {
    for (const tool of createToolCatalog().tools) {
      const a = tool.annotations;
      expect(a, tool.name).toBeDefined();
      expect(typeof a!.readOnlyHint, tool.name).toBe('boolean');
      expect(typeof a!.idempotentHint, tool.name).toBe('boolean');
      expect(typeof a!.destructiveHint, tool.name).toBe('boolean');
      if (a!.readOnlyHint) {
        expect(a!.idempotentHint, tool.name).toBe(true);
        expect(a!.destructiveHint, tool.name).toBe(false);
      }
      expect(tool.idempotent, tool.name).toBe(a!.readOnlyHint === true || a!.idempotentHint === true);
      if (tool.idempotencyKey) expect(tool.idempotent, tool.name).toBe(false);
    }
  });

  it('states error and retry semantics in every description', () => {
    for (const tool of createToolCatalog().tools) {
      expect(tool.description, tool.name).toMatch(/idempotent/i);
      if (tool.name !== 'list_files') expect(tool.description, tool.name).toMatch(/\b[45]\d\d [a-z_]+/);
      if (!tool.idempotent) expect(tool.description, tool.name).toMatch(/not idempotent/i);
      if (tool.idempotencyKey) expect(tool.description, tool.name).toMatch(/idempotency_key/);
    }
  });

  it('describes each write tool as non-idempotent or keyed exactly as declared', () => {
    const byName = new Map(createToolCatalog().tools.map((t) => [t.name, t]));
    expect(byName.get('create_order')).toMatchObject({ idempotent: false, idempotencyKey: true });
    expect(byName.get('create_refund')).toMatchObject({ idempotent: false, idempotencyKey: true });
    expect(byName.get('send_message')).toMatchObject({ idempotent: false, idempotencyKey: false });
    expect(byName.get('create_event')).toMatchObject({ idempotent: false, idempotencyKey: false });
    expect(byName.get('cancel_order')).toMatchObject({ idempotent: true });
    expect(byName.get('write_file')).toMatchObject({ idempotent: true });
  });

  it('is deterministic: the same seed gives the same data and the same answers', async () => {
    const a = createToolCatalog({ seed: 42 });
    const b = createToolCatalog({ seed: 42 });
    expect(b.state.snapshot()).toEqual(a.state.snapshot());
    expect(b.state.documents).toEqual(a.state.documents);
    const run = async (catalog: typeof a) => {
      const rt = createRuntime({ tools: catalog.tools, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }) });
      const out = [];
      for (const [tool, args] of [
        ['get_weather', { city: 'London', date: '2026-03-10' }],
        ['search_documents', { query: 'checkout redesign' }],
        ['create_order', { customer_id: 'CUS-002', items: [{ sku: 'SKU-1004', quantity: 1 }], idempotency_key: 'fixed-key-1' }],
        ['list_events', { date_from: '2026-03-29', date_to: '2026-04-05' }],
      ] as const) {
        const r = await rt.execute(tool, args);
        out.push(r.ok ? r.output : r.error);
      }
      return out;
    };
    expect(await run(b)).toEqual(await run(a));
    expect(b.state.snapshot()).toEqual(a.state.snapshot());
  });

  it('gives different data for a different seed', () => {
    const a = createToolCatalog({ seed: 1 }).state.snapshot();
    const b = createToolCatalog({ seed: 2 }).state.snapshot();
    expect(b.orders).not.toEqual(a.orders);
    expect(b.products.map((p) => p.stock)).not.toEqual(a.products.map((p) => p.stock));
  });

  it('dates the seeded history before `now`', () => {
    const now = Date.UTC(2025, 10, 1, 8);
    const { state } = createToolCatalog({ now });
    expect(state.anchor).toBe('2025-11-01T08:00:00.000Z');
    for (const o of state.orders) expect(Date.parse(o.created_at)).toBeLessThanOrEqual(now);
    for (const m of state.messages) expect(Date.parse(m.sent_at)).toBeLessThanOrEqual(now);
    for (const d of state.documents) expect(Date.parse(d.created_at)).toBeLessThanOrEqual(now);
  });

  it('refuses a non-integer seed', () => {
    expect(() => createToolCatalog({ seed: 1.5 })).toThrow(RangeError);
  });
});

describe('catalog state', () => {
  it('snapshots plain JSON that is a copy, not a view', async () => {
    const h = harness();
    await h.ok('create_order', { customer_id: 'CUS-001', items: [{ sku: 'SKU-1001', quantity: 1 }] });
    const snap = h.state.snapshot();
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
    expect(snap.files.map((f) => f.path)).toEqual([...snap.files.map((f) => f.path)].sort());
    snap.orders.length = 0;
    snap.calls['create_order'] = 99;
    expect(h.state.orders.length).toBeGreaterThan(0);
    expect(h.state.calls['create_order']).toBe(1);
  });

  it('counts runs per tool, but not calls refused before reaching the tool', async () => {
    const h = harness();
    await h.ok('get_weather', { city: 'Paris' });
    await h.fail('get_weather', { city: 'Atlantis' });
    await h.fail('get_weather', { city: 'Paris', unit: 'kelvin' });
    const snap = h.state.snapshot();
    expect(snap.calls['get_weather']).toBe(2);
    expect(snap.calls['send_message']).toBe(0);
    expect(Object.keys(snap.calls).sort()).toEqual([...CATALOG_TOOL_NAMES].sort());
  });

  it('reports duplicate writes across domains, and none for replays', async () => {
    const h = harness();
    const order = { customer_id: 'CUS-004', items: [{ sku: 'SKU-1002', quantity: 1 }] };
    await h.ok('create_order', order);
    await h.ok('create_order', order);
    await h.ok('create_order', order);
    await h.ok('create_order', { ...order, idempotency_key: 'k-00000001' });
    await h.ok('create_order', { ...order, idempotency_key: 'k-00000001' });
    await h.ok('send_message', { channel: 'general', text: 'hello' });
    await h.ok('send_message', { channel: 'general', text: 'hello' });
    const snap = h.state.snapshot();
    expect(snap.duplicates.orders.extra).toBe(3);
    expect(snap.duplicates.orders.groups).toHaveLength(1);
    expect(snap.duplicates.orders.groups[0]!.ids).toHaveLength(4);
    expect(snap.duplicates.messages.extra).toBe(1);
    expect(snap.duplicates.events.extra).toBe(0);
    expect(snap.idempotent_replays).toEqual({ create_order: 1 });
    expect(snap.calls['create_order']).toBe(5);
  });
});

describe('catalog: dry runs (lost_write)', () => {
  const WRITES: [string, Record<string, unknown>][] = [
    ['create_order', { customer_id: 'CUS-004', items: [{ sku: 'SKU-1002', quantity: 2 }], idempotency_key: 'k-dry-00001' }],
    ['send_message', { channel: 'general', text: 'hello' }],
    ['create_event', { title: 'Dry', start: '2026-04-01T07:00', duration_minutes: 30 }],
    ['create_refund', { payment_id: 'PAY-2003', amount_cents: 500, reason: 'duplicate', idempotency_key: 'k-dry-00002' }],
    ['write_file', { path: '/notes/dry.md', content: 'x' }],
    ['cancel_order', { order_id: 'ORD-10017', reason: 'customer_request' }],
  ];

  it.each(WRITES)('%s answers as the real call would, and changes nothing: ids, stock, keys and all', async (tool, args) => {
    const dry = createToolCatalog({ seed: 1 });
    const real = createToolCatalog({ seed: 1 });
    const clock = createVirtualClock({ startMs: DEFAULT_CATALOG_NOW, autoAdvance: false });
    const ctx = (dryRun: boolean) => ({ signal: new AbortController().signal, attempt: 0, idempotencyKey: 'ctx-key-1', traceId: 't', toolName: tool, clock, ...(dryRun ? { dryRun } : {}) });
    const run = (catalog: typeof dry, dryRun: boolean) => {
      const t = catalog.tools.find((x) => x.name === tool)!;
      const validated = t.validateInput(args);
      if (!validated.ok) throw new Error(JSON.stringify(validated.issues));
      return t.execute(validated.value, ctx(dryRun));
    };
    const before = dry.state.snapshot();
    const answered = await run(dry, true);
    const after = dry.state.snapshot();
    expect({ ...after, calls: {} }).toEqual({ ...before, calls: {} });
    expect(after.calls[tool]).toBe(1);
    // The same answer as the real call in an identical world, and the real call, afterwards,
    // still gets it: the dry run took no id and remembered no key.
    expect(answered).toEqual(await run(real, false));
    expect(await run(dry, false)).toEqual(answered);
  });
});

describe('catalog: only some tools, and shared seed data', () => {
  it('defines only the named tools, in catalog order, while the state still counts every tool', () => {
    const { tools, state } = createToolCatalog({ seed: 3, only: ['create_order', 'get_weather'] });
    expect(tools.map((t) => t.name)).toEqual(['get_weather', 'create_order']);
    expect(Object.keys(state.calls)).toEqual([...CATALOG_TOOL_NAMES]);
    expect(() => createToolCatalog({ only: ['no_such_tool'] })).toThrow(/no tool "no_such_tool"/);
  });

  it('catalogs with the same seed start equal but never share mutable state', () => {
    const a = createToolCatalog({ seed: 9 });
    const b = createToolCatalog({ seed: 9 });
    expect(a.state.snapshot()).toEqual(b.state.snapshot());
    a.state.orders[0]!.status = 'cancelled';
    a.state.products[0]!.stock = -1;
    expect(b.state.orders[0]!.status).not.toBe('cancelled');
    expect(b.state.products[0]!.stock).not.toBe(-1);
    expect(createToolCatalog({ seed: 9 }).state.snapshot()).toEqual(b.state.snapshot());
  });
});
