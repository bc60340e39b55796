/**
 * The mock tool catalog: weather, sales analytics, document search, orders, messaging, calendar,
 * payments and files, all seeded from one number and all reading time from `ctx.clock`. Same
 * seed, same data; the state is inspectable, so a checker can count what the agent really did.
 */
import { defineTool, type Tool, type ToolSpec } from '../runtime/define-tool.js';
import { CALENDAR_TIME_ZONE, calendarTools, seedEvents } from './calendar.js';
import { createCatalogState, type CatalogContext, type CatalogState } from './catalog-state.js';
import { documentTools, seedDocuments } from './documents.js';
import { fileTools, seedFiles } from './files.js';
import { IdempotencyKeys } from './idempotency-keys.js';
import { SEED_CHANNELS, messagingTools, seedMessages } from './messaging.js';
import { orderTools, seedCustomers, seedOrders, seedProducts } from './orders.js';
import { paymentTools, seedPayments } from './payments.js';
import { salesTools } from './sales.js';
import { weatherTools } from './weather.js';

/** 2026-03-29T14:00:00Z: the moment seed 000's example logs were written. */
export const DEFAULT_CATALOG_NOW = Date.UTC(2026, 2, 29, 14, 0, 0);

export interface ToolCatalogOptions {
  /** Same seed, same data. Default 1. */
  seed?: number;
  /**
   * Epoch ms at which the seeded history ends (orders, messages, documents are dated before
   * it). Run the tools on a clock that starts here. Default {@link DEFAULT_CATALOG_NOW}, never
   * the wall clock, so that a seed means the same data on every day.
   */
  now?: number;
}

export interface ToolCatalog {
  tools: Tool[];
  state: CatalogState;
}

/** The order tools are listed in, by domain. */
export const CATALOG_TOOL_NAMES = [
  'get_weather',
  'query_sales_data',
  'search_documents',
  'create_order',
  'get_order',
  'list_orders',
  'cancel_order',
  'send_message',
  'list_messages',
  'create_event',
  'list_events',
  'get_payment',
  'create_refund',
  'write_file',
  'read_file',
  'list_files',
] as const;

function lastNumber(ids: readonly string[]): number {
  let max = 0;
  for (const id of ids) max = Math.max(max, Number(id.slice(id.lastIndexOf('-') + 1)) || 0);
  return max;
}

/**
 * Creates the catalog.
 *
 * @example
 * const { tools, state } = createToolCatalog({ seed: 7 });
 * const rt = createRuntime({ tools, clock: createVirtualClock({ startMs: DEFAULT_CATALOG_NOW }) });
 * await rt.execute('create_order', { customer_id: 'CUS-001', items: [{ sku: 'SKU-1001', quantity: 1 }] });
 * state.duplicates().orders.extra; // 0 unless the agent ordered the same thing twice
 */
export function createToolCatalog(options: ToolCatalogOptions = {}): ToolCatalog {
  const seed = options.seed ?? 1;
  const anchorMs = options.now ?? DEFAULT_CATALOG_NOW;
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${String(seed)}`);
  if (!Number.isFinite(anchorMs)) throw new RangeError(`now must be epoch milliseconds, got ${String(anchorMs)}`);

  const customers = seedCustomers(seed);
  const products = seedProducts(seed);
  const orders = seedOrders(seed, anchorMs, customers, products);
  const { payments, refunds } = seedPayments(seed, anchorMs, orders);
  const messages = seedMessages(seed, anchorMs);
  const events = seedEvents(seed, anchorMs);
  const documents = seedDocuments(seed, anchorMs);
  const state = createCatalogState({
    seed,
    anchorMs,
    customers,
    products,
    orders,
    channels: SEED_CHANNELS.map((c) => ({ ...c })),
    messages,
    calendarTimeZone: CALENDAR_TIME_ZONE,
    events,
    payments,
    refunds,
    files: seedFiles(seed, anchorMs),
    documents,
  });

  const sequences = new Map<string, { last: number; width: number }>([
    ['ORD', { last: lastNumber(orders.map((o) => o.order_id)), width: 5 }],
    ['MSG', { last: lastNumber(messages.map((m) => m.message_id)), width: 6 }],
    ['EVT', { last: lastNumber(events.map((e) => e.event_id)), width: 4 }],
    ['RFD', { last: lastNumber(refunds.map((r) => r.refund_id)), width: 4 }],
  ]);
  const context: CatalogContext = {
    state,
    seed,
    idempotency: new IdempotencyKeys(),
    nextId(prefix) {
      const sequence = sequences.get(prefix);
      if (sequence === undefined) throw new RangeError(`no id sequence "${prefix}"`);
      sequence.last++;
      return `${prefix}-${String(sequence.last).padStart(sequence.width, '0')}`;
    },
    noteReplay(toolName) {
      state.idempotentReplays[toolName] = (state.idempotentReplays[toolName] ?? 0) + 1;
    },
  };

  const specs: ToolSpec<any, unknown>[] = [
    ...weatherTools(seed),
    ...salesTools(seed),
    ...documentTools(documents),
    ...orderTools(context),
    ...messagingTools(context),
    ...calendarTools(context),
    ...paymentTools(context),
    ...fileTools(context),
  ];
  for (const spec of specs) state.calls[spec.name] = 0;
  const tools = specs.map((spec) =>
    defineTool({
      ...spec,
      execute: (args: unknown, ctx) => {
        state.calls[spec.name] = (state.calls[spec.name] ?? 0) + 1;
        return spec.execute(args, ctx);
      },
    }),
  );
  return { tools, state };
}
