import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createVirtualClock } from '../core/clock.js';
import { createToolCatalog, DEFAULT_CATALOG_NOW, type ToolCatalog } from './catalog.js';
import { DRY_RUN_META } from '../faults/dry-run.js';
import { createMockToolMcpServer, IDEMPOTENCY_KEY_META, type MockToolMcpServerOptions } from './mcp-server.js';

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function connect(options: MockToolMcpServerOptions): Promise<Client> {
  const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
  await createMockToolMcpServer(options).connect(serverEnd);
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientEnd);
  return client;
}

const call = (c: Client, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) =>
  c.request({ method: 'tools/call', params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) } }, CallToolResultSchema);

describe('the mock tool catalog over MCP', () => {
  it('lists the tools with their schemas and annotations, and runs them on the catalog state', async () => {
    const catalog = createToolCatalog({ seed: 1, only: ['get_order', 'create_order'] });
    const c = await connect({ catalog, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }) });
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(catalog.tools.map((t) => t.name));
    expect(tools.map((t) => t.name).sort()).toEqual(['create_order', 'get_order']);
    expect(tools.map((t) => t.inputSchema)).toEqual(catalog.tools.map((t) => t.inputSchema));
    const order = catalog.state.orders[0]!;
    const result = await call(c, 'get_order', { order_id: order.order_id });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ order_id: order.order_id });
    expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  });

  it('answers a tool failure with its HTTP status and body, as the MCP fault proxy answers an injected one', async () => {
    const c = await connect({ catalog: createToolCatalog({ seed: 1, only: ['get_order'] }) });
    const missing = await call(c, 'get_order', { order_id: 'ORD-99999' });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toMatchObject({ status: 404, body: { error: { type: 'not_found', code: 'ORDER_NOT_FOUND' } } });
    // 400s are JSON-RPC errors: the caller must fix the request.
    const bad = await call(c, 'get_order', { order_id: 42 }).catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(McpError);
    expect((bad as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((bad as McpError).data).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ARGUMENTS' } } });
  });

  it('routes each call to the world its _meta names, with the idempotency key it carries', async () => {
    const worlds = new Map<string, ToolCatalog>([
      ['a', createToolCatalog({ seed: 1, only: ['create_order'] })],
      ['b', createToolCatalog({ seed: 1, only: ['create_order'] })],
    ]);
    const clock = createVirtualClock({ startMs: DEFAULT_CATALOG_NOW });
    const c = await connect({
      catalog: createToolCatalog({ seed: 1 }),
      worldOf: (meta) => {
        const catalog = worlds.get(String(meta?.['run']));
        return catalog === undefined ? undefined : { catalog, clock };
      },
    });
    const args = { customer_id: 'CUS-001', items: [{ sku: 'SKU-1001', quantity: 1 }] };
    const first = await call(c, 'create_order', args, { run: 'a', [IDEMPOTENCY_KEY_META]: 'k1' });
    const again = await call(c, 'create_order', args, { run: 'a', [IDEMPOTENCY_KEY_META]: 'k1' });
    expect((again.structuredContent as { order_id: string }).order_id).toBe((first.structuredContent as { order_id: string }).order_id);
    expect(worlds.get('a')!.state.orders.filter((o) => o.source === 'tool')).toHaveLength(1);
    expect(worlds.get('b')!.state.orders.filter((o) => o.source === 'tool')).toHaveLength(0);
    const nowhere = await call(c, 'create_order', args, { run: 'z' }).catch((error: unknown) => error);
    expect((nowhere as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('runs a call its _meta marks as a dry run without applying it: the answer of the real call, no order', async () => {
    const catalog = createToolCatalog({ seed: 1, only: ['create_order'] });
    const c = await connect({ catalog, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }) });
    const args = { customer_id: 'CUS-001', items: [{ sku: 'SKU-1001', quantity: 1 }] };
    const dry = await call(c, 'create_order', args, { [DRY_RUN_META]: true, [IDEMPOTENCY_KEY_META]: 'k1' });
    expect(dry.structuredContent).toMatchObject({ order_id: 'ORD-10041', replayed: false });
    expect(catalog.state.orders.filter((o) => o.source === 'tool')).toHaveLength(0);
    const real = await call(c, 'create_order', args, { [IDEMPOTENCY_KEY_META]: 'k1' });
    expect(real.structuredContent).toMatchObject({ order_id: 'ORD-10041', replayed: false });
    expect(catalog.state.orders.filter((o) => o.source === 'tool')).toHaveLength(1);
  });
});
