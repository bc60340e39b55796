/**
 * The mock tool catalog: weather, sales analytics, document search, orders, messaging, calendar,
 * payments and files, all seeded from one number and all reading time from `ctx.clock`. Same
 * seed, same data; the state is inspectable, so a checker can count what the agent really did.
 */
import { defineTool, type Tool, type ToolSpec } from '../runtime/define-tool.js';
import { CALENDAR_TIME_ZONE, calendarTools, seedEvents, type CalendarEvent } from './calendar.js';
import { createCatalogState, type CatalogContext, type CatalogState } from './catalog-state.js';
import { documentTools, seedDocuments, type StoredDocument } from './documents.js';
import { fileTools, seedFiles, type StoredFile } from './files.js';
import { IdempotencyKeys } from './idempotency-keys.js';
import { SEED_CHANNELS, messagingTools, seedMessages, type Channel, type Message } from './messaging.js';
import { orderTools, seedCustomers, seedOrders, seedProducts, type Customer, type Order, type Product } from './orders.js';
import { paymentTools, seedPayments, type Payment, type Refund } from './payments.js';
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
  /**
   * Only these tools are defined (still in catalog order), e.g. the few a FailBench scenario
   * offers; the state is the whole catalog's either way. Default: every tool.
   * @throws RangeError for a name the catalog does not have.
   */
  only?: readonly string[];
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

/** The seeded data a catalog starts from; each catalog mutates its own copy. */
interface SeedData {
  customers: Customer[];
  products: Product[];
  orders: Order[];
  channels: Channel[];
  messages: Message[];
  events: CalendarEvent[];
  payments: Payment[];
  refunds: Refund[];
  files: StoredFile[];
  /** The last number of each id sequence (ORD, MSG, EVT, RFD) in the seeded data. */
  lastIds: Record<string, number>;
}

/** What catalogs with the same seed and anchor share: generated once, never handed out mutable. */
interface SeedCacheEntry {
  /** Pristine: only ever copied. */
  data: SeedData;
  /** How to copy it: a plain tree (no shared or non-plain objects) copies much faster by hand. */
  copy: (data: SeedData) => SeedData;
  /** Read-only by contract, and frozen so that no catalog can change another's corpus. */
  documents: readonly StoredDocument[];
  /** The search tool over `documents`: it only reads its index. Built on first use. */
  documentSpecs?: ToolSpec<any, unknown>[];
}

/**
 * Generating the seed data (time-zone arithmetic, the search index) costs milliseconds, far
 * more than copying it, and a FailBench suite builds hundreds of catalogs from one seed, so
 * the data is generated once per (seed, anchor) and copied.
 */
const seedCache = new Map<string, SeedCacheEntry>();
const MAX_CACHED_SEEDS = 32;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return Array.isArray(value) ? proto === Array.prototype : proto === Object.prototype;
}

/** True when every object under `value` is a plain object or array, reached exactly once. */
function isPlainTree(value: unknown, seen = new Set<object>()): boolean {
  if (value === null || typeof value !== 'object') return typeof value !== 'function' && typeof value !== 'symbol' && typeof value !== 'bigint';
  if (seen.has(value) || !isPlain(value)) return false;
  seen.add(value);
  for (const key of Object.keys(value)) if (!isPlainTree((value as Record<string, unknown>)[key], seen)) return false;
  return true;
}

/** A deep copy of a plain tree (see {@link isPlainTree}); several times faster than structuredClone. */
function copyTree<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyTree(value[i] as unknown);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = copyTree((value as Record<string, unknown>)[key]);
  return out as T;
}

function seedEntry(seed: number, anchorMs: number): SeedCacheEntry {
  const key = `${seed}\u0000${anchorMs}`;
  let entry = seedCache.get(key);
  if (entry !== undefined) return entry;
  const customers = seedCustomers(seed);
  const products = seedProducts(seed);
  const orders = seedOrders(seed, anchorMs, customers, products);
  const { payments, refunds } = seedPayments(seed, anchorMs, orders);
  const messages = seedMessages(seed, anchorMs);
  const events = seedEvents(seed, anchorMs);
  const data: SeedData = {
    customers,
    products,
    orders,
    channels: SEED_CHANNELS.map((c) => ({ ...c })),
    messages,
    events,
    payments,
    refunds,
    files: seedFiles(seed, anchorMs),
    lastIds: {
      ORD: lastNumber(orders.map((o) => o.order_id)),
      MSG: lastNumber(messages.map((m) => m.message_id)),
      EVT: lastNumber(events.map((e) => e.event_id)),
      RFD: lastNumber(refunds.map((r) => r.refund_id)),
    },
  };
  entry = { data, copy: isPlainTree(data) ? copyTree : structuredClone, documents: deepFreeze(seedDocuments(seed, anchorMs)) };
  if (seedCache.size >= MAX_CACHED_SEEDS) seedCache.clear();
  seedCache.set(key, entry);
  return entry;
}

const ID_WIDTHS: Record<string, number> = { ORD: 5, MSG: 6, EVT: 4, RFD: 4 };

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
  let wanted: Set<string> | undefined;
  if (options.only !== undefined) {
    wanted = new Set(options.only);
    for (const name of wanted) if (!(CATALOG_TOOL_NAMES as readonly string[]).includes(name)) throw new RangeError(`the catalog has no tool "${name}"`);
  }

  const shared = seedEntry(seed, anchorMs);
  const data = shared.copy(shared.data);
  const documents = shared.documents;
  const state = createCatalogState({
    seed,
    anchorMs,
    customers: data.customers,
    products: data.products,
    orders: data.orders,
    channels: data.channels,
    messages: data.messages,
    calendarTimeZone: CALENDAR_TIME_ZONE,
    events: data.events,
    payments: data.payments,
    refunds: data.refunds,
    files: data.files,
    documents: documents as StoredDocument[],
  });

  const sequences = new Map<string, { last: number; width: number }>(Object.entries(ID_WIDTHS).map(([prefix, width]) => [prefix, { last: data.lastIds[prefix] ?? 0, width }]));
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
    // Shared specs, with this catalog's own copy of their schemas (tools expose them).
    ...(wanted === undefined || wanted.has('search_documents')
      ? (shared.documentSpecs ??= documentTools(documents)).map((spec) => ({
          ...spec,
          input: structuredClone(spec.input),
          ...(spec.output !== undefined ? { output: structuredClone(spec.output) } : {}),
        }))
      : []),
    ...orderTools(context),
    ...messagingTools(context),
    ...calendarTools(context),
    ...paymentTools(context),
    ...fileTools(context),
  ];
  // Every tool counts from 0, defined or not, in the catalog's order.
  for (const name of CATALOG_TOOL_NAMES) state.calls[name] = 0;
  for (const spec of specs) state.calls[spec.name] = 0;

  /**
   * Runs a call as a dry run (`ctx.dryRun`, a lost_write): it answers as it would, and the state
   * is put back as it was, ids and idempotency keys included. The catalog's tools are
   * synchronous, so no other call can run in between and see, or lose, a change.
   */
  const dryRun = (run: () => unknown): unknown => {
    const saved = {
      orders: copyTree(state.orders),
      products: copyTree(state.products),
      messages: copyTree(state.messages),
      events: copyTree(state.events),
      payments: copyTree(state.payments),
      refunds: copyTree(state.refunds),
      files: copyTree([...state.files.values()]),
      sequences: [...sequences].map(([prefix, s]) => [prefix, s.last] as const),
      keys: context.idempotency.save(),
      replays: { ...state.idempotentReplays },
    };
    const restore = () => {
      state.orders.splice(0, Infinity, ...saved.orders);
      state.products.splice(0, Infinity, ...saved.products);
      state.messages.splice(0, Infinity, ...saved.messages);
      state.events.splice(0, Infinity, ...saved.events);
      state.payments.splice(0, Infinity, ...saved.payments);
      state.refunds.splice(0, Infinity, ...saved.refunds);
      state.files.clear();
      for (const file of saved.files) state.files.set(file.path, file);
      for (const [prefix, last] of saved.sequences) sequences.get(prefix)!.last = last;
      context.idempotency.restore(saved.keys);
      for (const key of Object.keys(state.idempotentReplays)) delete state.idempotentReplays[key];
      Object.assign(state.idempotentReplays, saved.replays);
    };
    try {
      return run();
    } finally {
      restore();
    }
  };
  const tools = specs
    .filter((spec) => wanted === undefined || wanted.has(spec.name))
    .map((spec) =>
      defineTool({
        ...spec,
        execute: (args: unknown, ctx) => {
          state.calls[spec.name] = (state.calls[spec.name] ?? 0) + 1;
          return ctx.dryRun === true ? dryRun(() => spec.execute(args, ctx)) : spec.execute(args, ctx);
        },
      }),
    );
  return { tools, state };
}
