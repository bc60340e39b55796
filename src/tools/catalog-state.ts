/**
 * The mutable world behind the mock tools, kept inspectable so that a checker can ask what
 * actually happened: how many orders exist, whether the same message went out twice, how often
 * each tool really ran. Tools mutate it only through their own `execute`.
 */
import { canonicalJson } from '../core/params-hash.js';
import type { CalendarEvent } from './calendar.js';
import type { StoredDocument } from './documents.js';
import type { StoredFile } from './files.js';
import type { IdempotencyKeys } from './idempotency-keys.js';
import type { Channel, Message } from './messaging.js';
import type { Customer, Order, Product } from './orders.js';
import type { Payment, Refund } from './payments.js';

/** Groups of entities with the same content created by separate tool calls. */
export interface DuplicateGroup {
  /** The ids, oldest first. */
  ids: string[];
  /** What they share, e.g. `CUS-003 SKU-1002x2`. */
  key: string;
}

export interface DuplicateSummary {
  groups: DuplicateGroup[];
  /** Entities beyond the first in each group: the number of unwanted repeats. */
  extra: number;
}

export interface DuplicateReport {
  orders: DuplicateSummary;
  messages: DuplicateSummary;
  events: DuplicateSummary;
  refunds: DuplicateSummary;
}

export interface CatalogSnapshot {
  seed: number;
  anchor: string;
  orders: Order[];
  products: Product[];
  messages: Message[];
  events: CalendarEvent[];
  payments: Payment[];
  refunds: Refund[];
  files: StoredFile[];
  /** Times each tool's `execute` ran (requests refused before reaching the tool do not count). */
  calls: Record<string, number>;
  /** Requests answered from an idempotency key instead of being executed again, per tool. */
  idempotent_replays: Record<string, number>;
  duplicates: DuplicateReport;
}

export interface CatalogState {
  readonly seed: number;
  /** The instant the seeded history ends (ISO). */
  readonly anchor: string;
  readonly customers: readonly Customer[];
  readonly products: Product[];
  readonly orders: Order[];
  readonly channels: readonly Channel[];
  readonly messages: Message[];
  /** The calendar's home zone: where wall times without an offset are read. */
  readonly calendarTimeZone: string;
  readonly events: CalendarEvent[];
  readonly payments: Payment[];
  readonly refunds: Refund[];
  /** By path. */
  readonly files: Map<string, StoredFile>;
  readonly documents: readonly StoredDocument[];
  readonly calls: Record<string, number>;
  readonly idempotentReplays: Record<string, number>;
  /** Plain JSON: a deep copy, safe to serialize, compare and keep. */
  snapshot(): CatalogSnapshot;
  /** Entities created more than once with the same content by separate tool calls. */
  duplicates(): DuplicateReport;
}

/** What the domain tool factories share besides the state: id sequences and idempotency keys. */
export interface CatalogContext {
  readonly state: CatalogState;
  readonly seed: number;
  readonly idempotency: IdempotencyKeys;
  /** The next id in a sequence: nextId('ORD') is `ORD-10041` when the seed made forty orders. */
  nextId(prefix: string): string;
  noteReplay(toolName: string): void;
}

function groupDuplicates<T>(items: readonly T[], include: (item: T) => boolean, id: (item: T) => string, key: (item: T) => string): DuplicateSummary {
  const groups = new Map<string, string[]>();
  for (const item of items) {
    if (!include(item)) continue;
    const k = key(item);
    const ids = groups.get(k);
    if (ids === undefined) groups.set(k, [id(item)]);
    else ids.push(id(item));
  }
  const found: DuplicateGroup[] = [];
  for (const [k, ids] of groups) if (ids.length > 1) found.push({ ids, key: k });
  return { groups: found, extra: found.reduce((n, g) => n + g.ids.length - 1, 0) };
}

export interface StateParts {
  seed: number;
  anchorMs: number;
  customers: Customer[];
  products: Product[];
  orders: Order[];
  channels: Channel[];
  messages: Message[];
  calendarTimeZone: string;
  events: CalendarEvent[];
  payments: Payment[];
  refunds: Refund[];
  files: StoredFile[];
  documents: StoredDocument[];
}

export function createCatalogState(parts: StateParts): CatalogState {
  const state: CatalogState = {
    seed: parts.seed,
    anchor: new Date(parts.anchorMs).toISOString(),
    customers: parts.customers,
    products: parts.products,
    orders: parts.orders,
    channels: parts.channels,
    messages: parts.messages,
    calendarTimeZone: parts.calendarTimeZone,
    events: parts.events,
    payments: parts.payments,
    refunds: parts.refunds,
    files: new Map(parts.files.map((f) => [f.path, f])),
    documents: parts.documents,
    calls: {},
    idempotentReplays: {},
    duplicates() {
      const byTool = (item: { source: string }) => item.source === 'tool';
      return {
        orders: groupDuplicates(state.orders, byTool, (o) => o.order_id, (o) =>
          `${o.customer_id} ${o.items.map((i) => `${i.sku}x${i.quantity}`).sort().join(',')}${o.note === null ? '' : ` ${canonicalJson(o.note)}`}`,
        ),
        messages: groupDuplicates(state.messages, byTool, (m) => m.message_id, (m) => `#${m.channel} ${m.thread_id ?? ''} ${canonicalJson(m.text)}`),
        events: groupDuplicates(state.events, byTool, (e) => e.event_id, (e) => `${e.start_utc}/${e.end_utc} ${canonicalJson(e.title)}`),
        refunds: groupDuplicates(state.refunds, byTool, (r) => r.refund_id, (r) => `${r.payment_id} ${r.amount_cents} ${r.reason}`),
      };
    },
    snapshot() {
      const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
      return {
        seed: state.seed,
        anchor: state.anchor,
        orders: copy(state.orders),
        products: copy(state.products),
        messages: copy(state.messages),
        events: copy(state.events),
        payments: copy(state.payments),
        refunds: copy(state.refunds),
        files: copy([...state.files.values()].sort((a, b) => a.path.localeCompare(b.path))),
        calls: { ...state.calls },
        idempotent_replays: { ...state.idempotentReplays },
        duplicates: state.duplicates(),
      };
    },
  };
  return state;
}
