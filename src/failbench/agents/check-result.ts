/**
 * Self-verification (seed 000, section 1.2): a call that returned 200 is checked against what
 * was asked before anyone relies on it. Each check compares the answer with the request (the
 * date, the entity, the time zone, the range) or with itself (a UTC time that disagrees with
 * its local rendering, a total that disagrees with its list), never with knowledge of a fault.
 */

export type MismatchKind = 'date' | 'entity' | 'timezone' | 'stale' | 'range' | 'empty' | 'incomplete' | 'shape';

export interface Mismatch {
  kind: MismatchKind;
  field: string;
  expected?: unknown;
}

type Obj = Record<string, unknown>;
const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);
const arrayAt = (o: Obj, key: string): Obj[] => (Array.isArray(o[key]) ? (o[key] as unknown[]).map((x) => asObject(x) ?? {}) : []);

/** What the checks need to know besides the call: when "now" is, and what the user meant. */
export interface CheckContext {
  nowMs: number;
  /** The city the user asked about (weather), by its English name. */
  city?: string;
  /** The instant an event should start at. */
  startMs?: number;
}

/** A weather reading older than this is not "the weather" any more. */
const MAX_AGE_MS = 3 * 3_600_000;

const same = (a: unknown, b: unknown) => typeof a === 'string' && typeof b === 'string' ? a.trim().toLowerCase() === b.trim().toLowerCase() : a === b;

/**
 * A page that says it holds everything (fewer items than the limit, no note) while its own count
 * says there are more. A page that announces itself as partial is explained, not contradicted.
 */
function shortPage(o: Obj, list: string, countField: string, limit: unknown): Mismatch[] {
  if (saysPartial(o)) return [];
  const items = arrayAt(o, list);
  const count = o[countField];
  const offset = typeof o['offset'] === 'number' ? o['offset'] : 0;
  const cap = typeof limit === 'number' ? limit : Infinity;
  return typeof count === 'number' && count > offset + items.length && items.length < cap && items.length > 0 ? [{ kind: 'incomplete', field: list, expected: count }] : [];
}

function saysPartial(o: Obj): boolean {
  return ['warning', 'partial', 'note'].some((key) => typeof o[key] === 'string' && /partial|unavailable|missing|incomplete/i.test(o[key]));
}

function requireFields(o: Obj, fields: readonly string[]): Mismatch[] {
  return fields.filter((f) => o[f] === undefined).map((f) => ({ kind: 'shape' as const, field: f }));
}

const checks: Record<string, (output: Obj, args: Obj, ctx: CheckContext) => Mismatch[]> = {
  get_weather(o, args, ctx) {
    const out = requireFields(o, ['date', 'city']);
    if (out.length > 0) return out;
    if (args['date'] !== undefined && o['date'] !== args['date']) out.push({ kind: 'date', field: 'date', expected: args['date'] });
    if (ctx.city !== undefined && !same(o['city'], ctx.city)) out.push({ kind: 'entity', field: 'city', expected: ctx.city });
    if (typeof o['as_of'] === 'string') {
      const age = ctx.nowMs - Date.parse(o['as_of']);
      if (Math.abs(age) > MAX_AGE_MS) out.push({ kind: age > 0 ? 'stale' : 'timezone', field: 'as_of' });
    }
    return out;
  },
  query_sales_data(o, args) {
    const out = requireFields(o, ['month', 'region', 'totals']);
    if (out.length > 0) return out;
    if (o['month'] !== args['month']) out.push({ kind: 'date', field: 'month', expected: args['month'] });
    if (args['region'] !== undefined && o['region'] !== args['region']) out.push({ kind: 'entity', field: 'region', expected: args['region'] });
    const rows = arrayAt(o, 'data');
    if (rows.some((r) => typeof r['period'] === 'string' && !r['period'].startsWith(String(args['month'])))) out.push({ kind: 'date', field: 'data.period', expected: args['month'] });
    if (typeof o['records'] === 'number' && o['records'] > 0 && rows.length === 0) out.push({ kind: 'empty', field: 'data' });
    else if (!saysPartial(o) && rows.length > 0) {
      // The rows must add up to the totals they come with, and be as many as `records` says.
      const totals = asObject(o['totals']);
      const sum = rows.reduce((n, r) => n + (typeof r['revenue'] === 'number' ? r['revenue'] : 0), 0);
      const off = typeof totals?.['revenue'] === 'number' && Math.abs(sum - totals['revenue']) > 0.5 + rows.length * 0.01;
      if ((typeof o['records'] === 'number' && o['records'] !== rows.length) || off) out.push({ kind: 'incomplete', field: 'data', expected: o['records'] });
    }
    return out;
  },
  search_documents(o, args) {
    const out = requireFields(o, ['results']);
    if (out.length > 0) return out;
    const results = arrayAt(o, 'results');
    const from = args['date_from'];
    const to = args['date_to'];
    for (const r of results) {
      const day = String(r['date'] ?? r['created_at'] ?? '').slice(0, 10);
      if ((typeof from === 'string' && day < from) || (typeof to === 'string' && day > to)) {
        out.push({ kind: 'range', field: 'results.date', expected: `${String(from ?? '')}..${String(to ?? '')}` });
        break;
      }
    }
    if (typeof o['total'] === 'number' && o['total'] > 0 && results.length === 0) out.push({ kind: 'empty', field: 'results' });
    else out.push(...shortPage(o, 'results', 'total', args['limit']));
    return out;
  },
  create_order(o, args) {
    const out = requireFields(o, ['order_id', 'customer_id', 'items']);
    if (out.length > 0) return out;
    if (o['customer_id'] !== args['customer_id']) out.push({ kind: 'entity', field: 'customer_id', expected: args['customer_id'] });
    const wanted = (args['items'] as Obj[] | undefined) ?? [];
    const got = arrayAt(o, 'items');
    if (wanted.some((w) => !got.some((g) => g['sku'] === w['sku'] && g['quantity'] === w['quantity']))) out.push({ kind: 'entity', field: 'items', expected: wanted });
    return out;
  },
  get_order(o, args) {
    return o['order_id'] === args['order_id'] ? [] : [{ kind: 'entity', field: 'order_id', expected: args['order_id'] }];
  },
  cancel_order(o, args) {
    const out: Mismatch[] = [];
    if (o['order_id'] !== args['order_id']) out.push({ kind: 'entity', field: 'order_id', expected: args['order_id'] });
    if (o['status'] !== 'cancelled') out.push({ kind: 'entity', field: 'status', expected: 'cancelled' });
    return out;
  },
  list_orders(o, args) {
    const orders = arrayAt(o, 'orders');
    const out: Mismatch[] = [];
    if (args['customer_id'] !== undefined && orders.some((x) => x['customer_id'] !== args['customer_id'])) out.push({ kind: 'entity', field: 'orders.customer_id', expected: args['customer_id'] });
    if (args['status'] !== undefined && orders.some((x) => x['status'] !== args['status'])) out.push({ kind: 'entity', field: 'orders.status', expected: args['status'] });
    if (typeof o['total'] === 'number' && o['total'] > 0 && orders.length === 0) out.push({ kind: 'empty', field: 'orders' });
    else out.push(...shortPage(o, 'orders', 'total', o['limit'] ?? args['limit']));
    return out;
  },
  send_message(o, args) {
    const out = requireFields(o, ['message_id', 'channel']);
    if (out.length > 0) return out;
    if (!same(o['channel'], String(args['channel']).replace(/^#/, ''))) out.push({ kind: 'entity', field: 'channel', expected: args['channel'] });
    if (o['text'] !== undefined && o['text'] !== args['text']) out.push({ kind: 'entity', field: 'text', expected: args['text'] });
    return out;
  },
  list_messages(o, args) {
    const messages = arrayAt(o, 'messages');
    const channel = String(args['channel']).replace(/^#/, '');
    return messages.some((m) => !same(m['channel'], channel)) ? [{ kind: 'entity', field: 'messages.channel', expected: channel }] : [];
  },
  create_event(o, args, ctx) {
    const out = requireFields(o, ['event_id', 'start', 'start_utc']);
    if (out.length > 0) return out;
    if (o['title'] !== undefined && o['title'] !== args['title']) out.push({ kind: 'entity', field: 'title', expected: args['title'] });
    if (Date.parse(String(o['start'])) !== Date.parse(String(o['start_utc']))) out.push({ kind: 'timezone', field: 'start' });
    else if (ctx.startMs !== undefined && Date.parse(String(o['start_utc'])) !== ctx.startMs) out.push({ kind: 'timezone', field: 'start_utc', expected: new Date(ctx.startMs).toISOString() });
    if (args['timezone'] !== undefined && o['timezone'] !== undefined && o['timezone'] !== args['timezone']) out.push({ kind: 'timezone', field: 'timezone', expected: args['timezone'] });
    return out;
  },
  list_events(o, args) {
    const out: Mismatch[] = [];
    if (args['timezone'] !== undefined && o['timezone'] !== undefined && o['timezone'] !== args['timezone']) out.push({ kind: 'timezone', field: 'timezone', expected: args['timezone'] });
    for (const e of arrayAt(o, 'events')) {
      if (Date.parse(String(e['start'])) !== Date.parse(String(e['start_utc'])) || Date.parse(String(e['end'])) !== Date.parse(String(e['end_utc']))) {
        out.push({ kind: 'timezone', field: 'events.start' });
        break;
      }
    }
    return out;
  },
  get_payment(o, args) {
    return o['payment_id'] === args['payment_id'] ? [] : [{ kind: 'entity', field: 'payment_id', expected: args['payment_id'] }];
  },
  create_refund(o, args) {
    const out = requireFields(o, ['refund_id', 'payment_id']);
    if (out.length > 0) return out;
    if (o['payment_id'] !== args['payment_id']) out.push({ kind: 'entity', field: 'payment_id', expected: args['payment_id'] });
    if (args['amount_cents'] !== undefined && o['amount_cents'] !== args['amount_cents']) out.push({ kind: 'entity', field: 'amount_cents', expected: args['amount_cents'] });
    return out;
  },
  write_file(o, args) {
    return o['path'] === args['path'] ? [] : [{ kind: 'entity', field: 'path', expected: args['path'] }];
  },
  read_file(o, args) {
    const out = requireFields(o, ['path', 'content']);
    if (out.length > 0) return out;
    return o['path'] === args['path'] ? [] : [{ kind: 'entity', field: 'path', expected: args['path'] }];
  },
  list_files(o, args) {
    const prefix = String(args['prefix'] ?? '/');
    if (arrayAt(o, 'files').some((f) => !String(f['path']).startsWith(prefix))) return [{ kind: 'entity', field: 'files.path', expected: prefix }];
    return shortPage(o, 'files', 'total', args['limit']);
  },
};

/** What in `output` contradicts the request `args` to `tool`. Empty when it checks out. */
export function checkResult(tool: string, args: Obj, output: unknown, ctx: CheckContext): Mismatch[] {
  const o = asObject(output);
  if (o === undefined) return [{ kind: 'shape', field: '(output)' }];
  return checks[tool]?.(o, args, ctx) ?? [];
}

/** Field names a result says it is missing: a `warning` / `partial` note, or fields left out. */
export function missingParts(tool: string, output: unknown): string[] {
  const o = asObject(output);
  if (o === undefined) return [];
  const missing: string[] = [];
  for (const key of ['warning', 'partial', 'note']) {
    const note = o[key];
    if (typeof note !== 'string' || !/partial|unavailable|missing|incomplete/i.test(note)) continue;
    // "partial result: humidity_pct, wind_kph unavailable; 3 of 10 items returned"
    const fields = /:\s*([^;]+?)\s+unavailable/i.exec(note)?.[1];
    if (fields !== undefined) missing.push(...fields.split(/\s*,\s*/));
    const items = /(\d+) of (\d+) items returned/i.exec(note);
    if (items !== null) missing.push(`${Number(items[2]) - Number(items[1])} of ${items[2]} items`);
    if (fields === undefined && items === null) missing.push(note);
  }
  if (missing.length === 0 && tool === 'get_weather') {
    // The forecast promises these; a reading without them is incomplete even if nobody says so.
    for (const f of ['humidity_pct', 'precipitation_mm', 'wind_kph']) if (o[f] === undefined) missing.push(f);
  }
  return missing;
}
