/**
 * From an instruction's intent to the tool calls that carry it out. A plan is a list of steps:
 * a main source of data or action, then the sinks the instruction names (save it to a file,
 * post it to a channel). Each step knows how to build its arguments from earlier results, how
 * to check its answer, and, for writes, how to look up whether it already happened.
 */
import type { CheckContext, Mismatch } from './check-result.js';
import { addDays, formatInZone, localDate, resolveDay, resolveMonth, wallTimeToInstant, type Intent, type Language } from './intent.js';

type Obj = Record<string, unknown>;
const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);
const arrayAt = (o: Obj | undefined, key: string): Obj[] => (Array.isArray(o?.[key]) ? (o[key] as unknown[]).map((x) => asObject(x) ?? {}) : []);

/** What earlier steps were called with and returned, by step key. */
export type StepOutputs = ReadonlyMap<string, { args: Obj; output: unknown }>;

/** How to find out whether a write already took effect, with a read. */
export interface Confirmation {
  tool: string;
  args: Obj;
  /** The entity the write created (in the write's own output shape), if the read shows it. */
  find(output: unknown, prior: StepOutputs): Obj | undefined;
}

export interface Step {
  key: string;
  tool: string;
  /** The call's arguments given earlier outputs; undefined when a needed output is missing. */
  args(prior: StepOutputs): Obj | undefined;
  /** Whether the step changes state (create, send, cancel, refund, write). */
  write: boolean;
  /**
   * Runs only when this holds. When it does not, `done` says whether the task is still done
   * ("cancel it if it has not shipped": it shipped, nothing to do) or cannot be (nothing to refund).
   */
  when?(prior: StepOutputs): { run: true } | { run: false; why: string; done: boolean };
  check: CheckContext;
  /**
   * What the answer must reflect of earlier steps (a read after the task's own write must show
   * it); the mismatches, empty when it does. A read that does not is stale.
   */
  verify?(output: unknown, prior: StepOutputs): Mismatch[];
  /** For writes: how to check state after an ambiguous failure. */
  confirm?(args: Obj): Confirmation | undefined;
  /** One line for the answer. */
  summary(output: unknown, args: Obj): string;
}

export interface PlanContext {
  nowMs: number;
  tools: ReadonlySet<string>;
  /** Stable per task: the seed of idempotency keys. */
  taskId: string;
}

export interface Plan {
  language: Language;
  steps: Step[];
}

/** The calendar's home zone, as its tool description says; used when the user names none. */
const CALENDAR_HOME = 'Asia/Shanghai';

const money = (cents: unknown) => (typeof cents === 'number' ? `$${(cents / 100).toFixed(2)}` : '?');

function weatherLine(o: Obj | undefined): string {
  if (o === undefined) return 'no weather data';
  const unit = o['unit'] === 'fahrenheit' ? '°F' : '°C';
  const parts = [`${String(o['city'])} on ${String(o['date'])}: ${String(o['condition'])}, ${String(o['temp_low'])} to ${String(o['temp_high'])} ${unit}`];
  if (o['humidity_pct'] !== undefined) parts.push(`humidity ${String(o['humidity_pct'])}%`);
  if (o['precipitation_mm'] !== undefined) parts.push(`precipitation ${String(o['precipitation_mm'])} mm`);
  if (o['wind_kph'] !== undefined) parts.push(`wind ${String(o['wind_kph'])} km/h`);
  const line = parts.join(', ');
  return o['as_of'] === undefined ? line : `${line} (${String(o['kind'] ?? 'report')} as of ${String(o['as_of'])})`;
}

function salesLine(o: Obj | undefined, args: Obj): string {
  const totals = asObject(o?.['totals']);
  if (o === undefined || totals === undefined) return `no sales figures for ${String(args['month'])}`;
  const through = o['complete'] === false && o['through'] !== undefined ? `, month to date through ${String(o['through'])}` : '';
  const rows = arrayAt(o, 'data');
  const span = rows.length === 0 ? 'no rows' : `periods ${String(rows[0]!['period'])} to ${String(rows[rows.length - 1]!['period'])}`;
  return `Sales, region ${String(o['region'])}, ${String(o['month'])}: revenue ${String(totals['revenue'])} CNY, ${String(totals['orders'])} orders, ${String(totals['units'])} units (${rows.length} ${String(o['granularity'])} rows, ${span}${through})`;
}

function searchLine(o: Obj | undefined, args: Obj): string {
  const results = arrayAt(o, 'results');
  if (o === undefined || results.length === 0) return `No documents match "${String(args['query'])}"${args['date_from'] === undefined ? '' : ` between ${String(args['date_from'])} and ${String(args['date_to'])}`}`;
  const top = results.slice(0, 3).map((r) => `${String(r['id'])} "${String(r['title'])}" (${String(r['date'] ?? String(r['created_at']).slice(0, 10))})`);
  return `${String(o['total'])} documents match "${String(args['query'])}"; top: ${top.join('; ')}`;
}

function orderLine(o: Obj | undefined): string {
  if (o === undefined) return 'no order';
  const items = arrayAt(o, 'items').map((i) => `${String(i['quantity'])} x ${String(i['sku'])}`).join(', ');
  return `Order ${String(o['order_id'])} for ${String(o['customer_id'])}: ${items}, total ${money(o['total_cents'])}, status ${String(o['status'])}`;
}

function eventLine(o: Obj | undefined): string {
  if (o === undefined) return 'no event';
  return `"${String(o['title'])}" ${String(o['event_id'])}: ${String(o['start'])} to ${String(o['end'])} (${String(o['timezone'] ?? o['event_timezone'] ?? '')})`;
}

function paymentLine(o: Obj | undefined): string {
  if (o === undefined) return 'no payment';
  return `Payment ${String(o['payment_id'])}: ${String(o['status'])}, amount ${money(o['amount_cents'])}, refundable ${money(o['refundable_cents'])}`;
}

/** The text a sink step writes or posts: what the source steps found (all of them, or nothing). */
function reportText(sources: readonly Step[], prior: StepOutputs): string | undefined {
  const lines: string[] = [];
  for (const source of sources) {
    const done = prior.get(source.key);
    if (done === undefined) return undefined;
    lines.push(source.summary(done.output, done.args));
  }
  return lines.join('\n');
}

/**
 * One intent per entity when the instruction names several of the kind its main step reads
 * ("the weather in Shanghai, Beijing and Tokyo", "orders ORD-10019 and ORD-10020", "north and
 * south sales"): each becomes a step of its own.
 */
function perEntity(intent: Intent, has: (tool: string) => boolean): Intent[] {
  const verbs = new Set(intent.verbs);
  if (intent.cities.length > 1 && has('get_weather')) return intent.cities.map((city) => ({ ...intent, city, cities: [city] }));
  if (intent.regions.length > 1 && has('query_sales_data') && intent.literals['region'] === undefined) return intent.regions.map((region) => ({ ...intent, region, regions: [region] }));
  if (intent.orderIds.length > 1 && has('get_order') && !verbs.has('cancel')) return intent.orderIds.map((orderId) => ({ ...intent, orderId, orderIds: [orderId] }));
  return [intent];
}

function idempotencyKey(ctx: PlanContext, step: string): string {
  return `${ctx.taskId}-${step}`;
}

/** Builds the plan for an intent with the tools at hand; undefined when the task is not understood. */
export function buildPlan(intent: Intent, ctx: PlanContext): Plan | undefined {
  const has = (tool: string) => ctx.tools.has(tool);
  const verbs = new Set(intent.verbs);
  const utcToday = localDate(ctx.nowMs, 'UTC');
  const steps: Step[] = [];
  const base: CheckContext = { nowMs: ctx.nowMs };
  const startIso = new Date(ctx.nowMs).toISOString();

  // "Post "A" to #x and "B" to #y": one post per channel, each with its own text.
  if (intent.channels.length > 1 && intent.quoted.length === intent.channels.length && has('send_message') && !intent.verbs.some((v) => v !== 'post')) {
    intent.channels.forEach((channel, i) => {
      const text = intent.quoted[i]!;
      steps.push(messageStep(i === 0 ? 'main' : `main-${i + 1}`, channel, () => text, base, startIso, has));
    });
    return { language: intent.language, steps };
  }

  const helpers = { has, verbs, utcToday, base, startIso, steps };
  const sources: Step[] = [];
  for (const [i, one] of perEntity(intent, has).entries()) {
    const step = mainStep(one, ctx, helpers);
    if (step === undefined) return undefined;
    if (i > 0) step.key = `main-${i + 1}`;
    sources.push(step);
  }
  const main = sources[0]!;
  steps.push(...sources);

  const mainWrites = main.write;
  const writeTarget = intent.paths.length > 0 && has('write_file') && verbs.has('write') && main.tool !== 'write_file' ? intent.paths[intent.paths.length - 1] : undefined;
  if (writeTarget !== undefined && !(main.tool === 'read_file' && intent.paths.length < 2)) {
    steps.push({
      key: 'report',
      tool: 'write_file',
      write: true,
      check: base,
      args: (prior) => {
        const text = reportText(sources, prior);
        return text === undefined ? undefined : { path: writeTarget, content: `${text}\n` };
      },
      ...fileConfirm(has),
      summary: (o) => `Saved ${String(asObject(o)?.['path'] ?? writeTarget)} (version ${String(asObject(o)?.['version'] ?? '?')})`,
    });
  }
  const after = reportAfter(intent, main, base, has);
  if (after !== undefined) steps.push(after);
  if (intent.channel !== undefined && has('send_message') && main.tool !== 'send_message' && !mainWrites) {
    const channel = intent.channel;
    steps.push(messageStep('notify', channel, (prior) => reportText(sources, prior), base, startIso, has));
  }
  return { language: intent.language, steps };
}

/**
 * "...and tell me the balance left / its status": the read that reports the result of the task's
 * own change. It must show the change: a payment without the refund just made, or an order still
 * open after its cancellation, is an answer from before the change.
 */
function reportAfter(intent: Intent, main: Step, base: CheckContext, has: (tool: string) => boolean): Step | undefined {
  if (!intent.reportAfter) return undefined;
  if (main.tool === 'create_refund' && has('get_payment') && intent.paymentId !== undefined) {
    const paymentId = intent.paymentId;
    return {
      key: 'report',
      tool: 'get_payment',
      write: false,
      check: base,
      args: () => ({ payment_id: paymentId }),
      verify: (output, prior) => {
        const refundId = asObject(prior.get(main.key)?.output)?.['refund_id'];
        const refunds = asObject(output)?.['refunds'];
        return typeof refundId === 'string' && !(Array.isArray(refunds) && refunds.includes(refundId)) ? [{ kind: 'stale', field: 'refunds', expected: refundId }] : [];
      },
      summary: (o) => `Now: ${paymentLine(asObject(o))}`,
    };
  }
  if (main.tool === 'cancel_order' && has('get_order') && intent.orderId !== undefined) {
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
  }
  return undefined;
}

interface Helpers {
  has: (tool: string) => boolean;
  verbs: ReadonlySet<string>;
  utcToday: string;
  base: CheckContext;
  startIso: string;
  /** Where a main step puts the lookups it needs before it runs (a payment's state before a refund). */
  steps: Step[];
}

/** A file write is there when reading the path gives back the content written. */
function fileConfirm(has: (t: string) => boolean): Pick<Step, 'confirm'> {
  if (!has('read_file')) return {};
  return {
    confirm: (args: Obj): Confirmation => ({
      tool: 'read_file',
      args: { path: args['path'] },
      find: (output) => {
        const f = asObject(output);
        return f !== undefined && f['content'] === args['content'] ? { path: f['path'], size: f['size'], version: f['version'], created_at: f['created_at'], updated_at: f['updated_at'] } : undefined;
      },
    }),
  };
}

function messageStep(key: string, channel: string, text: (prior: StepOutputs) => string | undefined, base: CheckContext, startIso: string, has: (t: string) => boolean): Step {
  return {
    key,
    tool: 'send_message',
    write: true,
    check: base,
    args: (prior) => {
      const t = text(prior);
      return t === undefined ? undefined : { channel: `#${channel}`, text: t };
    },
    ...(has('list_messages')
      ? {
          confirm: (args: Obj): Confirmation => ({
            tool: 'list_messages',
            // A minute back, so that a post made at this very instant is inside the window.
            args: { channel: `#${channel}`, since: new Date(Date.parse(startIso) - 60_000).toISOString(), limit: 50 },
            find: (output) => arrayAt(asObject(output), 'messages').find((m) => m['text'] === args['text'] && m['author'] === 'agent'),
          }),
        }
      : {}),
    summary: (o) => `Posted to #${String(asObject(o)?.['channel'] ?? channel)} (${String(asObject(o)?.['message_id'] ?? '?')})`,
  };
}

/** Returned by a planner whose domain the intent is not about: the next one is asked. */
const NOT_MINE = Symbol('not mine');

/**
 * A domain's main step, as a table: each planner reads the intent and the tools at hand and
 * plans the step (undefined: the domain is right but there is no step to take), or says the
 * intent is not its domain's.
 */
interface MainPlanner {
  domain: string;
  plan(intent: Intent, ctx: PlanContext, h: Helpers): Step | undefined | typeof NOT_MINE;
}

const MAIN_PLANNERS: readonly MainPlanner[] = [
  {
    domain: 'refund',
    plan(intent, ctx, h) {
      const { has, verbs, base } = h;
      if (!(has('create_refund') && verbs.has('refund') && intent.paymentId !== undefined)) return NOT_MINE;
      const paymentId = intent.paymentId;
      if (has('get_payment')) h.steps.push({ key: 'baseline', tool: 'get_payment', write: false, check: base, args: () => ({ payment_id: paymentId }), summary: (o) => paymentLine(asObject(o)) });
      const amount = intent.refundRemaining ? undefined : intent.amountCents;
      return {
        key: 'main',
        tool: 'create_refund',
        write: true,
        check: base,
        args: () => ({
          payment_id: paymentId,
          ...(amount !== undefined ? { amount_cents: amount } : {}),
          reason: intent.refundReason ?? 'requested_by_customer',
          idempotency_key: idempotencyKey(ctx, 'refund'),
        }),
        when: (prior) => {
          const payment = asObject(prior.get('baseline')?.output);
          if (payment === undefined) return { run: true };
          return typeof payment['refundable_cents'] === 'number' && payment['refundable_cents'] <= 0
            ? { run: false, why: `payment ${paymentId} has nothing left to refund (status ${String(payment['status'])})`, done: false }
            : { run: true };
        },
        ...(has('get_payment')
          ? {
              confirm: (args: Obj): Confirmation => ({
                tool: 'get_payment',
                args: { payment_id: paymentId },
                find: (output, prior) => {
                  const p = asObject(output);
                  const refunds = Array.isArray(p?.['refunds']) ? (p['refunds'] as string[]) : [];
                  const before = asObject(prior.get('baseline')?.output)?.['refunds'];
                  const known = Array.isArray(before) ? (before as string[]) : [];
                  const added = refunds.filter((r) => !known.includes(r));
                  const baseline = asObject(prior.get('baseline')?.output);
                  const amount = args['amount_cents'] ?? baseline?.['refundable_cents'];
                  return added.length > 0 ? { refund_id: added[added.length - 1], payment_id: paymentId, amount_cents: amount, payment: p } : undefined;
                },
              }),
            }
          : {}),
        summary: (o) => {
          const r = asObject(o);
          return `Refunded ${money(r?.['amount_cents'])} on ${paymentId} (${String(r?.['refund_id'] ?? '?')})`;
        },
      };
    },
  },
  {
    domain: 'cancel order',
    plan(intent, _ctx, h) {
      const { has, verbs, base } = h;
      if (!(has('cancel_order') && verbs.has('cancel') && intent.orderId !== undefined)) return NOT_MINE;
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
  },
  {
    domain: 'create order',
    plan(intent, ctx, h) {
      const { has, verbs, utcToday, base, startIso } = h;
      const quoted = intent.quoted;
      if (!(has('create_order') && (verbs.has('order') || intent.items.length > 0) && intent.customerId !== undefined && intent.items.length > 0)) return NOT_MINE;
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
  },
  {
    domain: 'schedule event',
    plan(intent, ctx, h) {
      const { has, verbs, base } = h;
      const quoted = intent.quoted;
      if (!(has('create_event') && verbs.has('schedule') && quoted[0] !== undefined && intent.time !== undefined)) return NOT_MINE;
      const zone = intent.timeZone ?? CALENDAR_HOME;
      const day = resolveDay(intent.day ?? { kind: 'relative', offset: 0 }, ctx.nowMs, zone);
      const startMs = wallTimeToInstant(day, intent.time.hour, intent.time.minute, zone);
      const title = quoted[0];
      return {
        key: 'main',
        tool: 'create_event',
        write: true,
        check: { ...base, startMs },
        args: () => ({ title, start: formatInZone(startMs, zone), duration_minutes: intent.durationMinutes ?? 30, timezone: zone, ...(intent.allowOverlap ? { allow_overlap: true } : {}) }),
        ...(has('list_events')
          ? {
              confirm: (): Confirmation => ({
                tool: 'list_events',
                args: { date_from: day, date_to: day, timezone: zone },
                find: (output) => {
                  const e = arrayAt(asObject(output), 'events').find((x) => x['title'] === title && Date.parse(String(x['start_utc'])) === startMs);
                  return e === undefined ? undefined : { ...e, timezone: e['event_timezone'] };
                },
              }),
            }
          : {}),
        summary: (o) => `Booked ${eventLine(asObject(o))}`,
      };
    },
  },
  {
    domain: 'weather',
    plan(intent, ctx, h) {
      const { has, verbs, base } = h;
      if (!(has('get_weather') && (verbs.has('weather') || intent.city !== undefined || intent.cityLiteral !== undefined))) return NOT_MINE;
      const city = intent.city;
      const zone = city?.timeZone ?? 'UTC';
      const date = intent.day === undefined ? undefined : resolveDay(intent.day, ctx.nowMs, zone);
      const name = city?.name ?? intent.cityLiteral;
      if (name === undefined) return undefined;
      return {
        key: 'main',
        tool: 'get_weather',
        write: false,
        check: { ...base, ...(city !== undefined ? { city: city.name } : {}) },
        args: () => ({ city: name, ...(date !== undefined ? { date } : {}), ...(intent.unit !== undefined ? { unit: intent.unit } : {}) }),
        summary: (o) => weatherLine(asObject(o)),
      };
    },
  },
  {
    domain: 'sales',
    plan(intent, ctx, h) {
      const { has, verbs, base } = h;
      if (!(has('query_sales_data') && (verbs.has('sales') || intent.month !== undefined))) return NOT_MINE;
      const month = resolveMonth(intent.month ?? { kind: 'relative', offset: 0 }, ctx.nowMs);
      return {
        key: 'main',
        tool: 'query_sales_data',
        write: false,
        check: base,
        args: () => ({ month, region: intent.region ?? 'all', granularity: intent.granularity ?? 'monthly' }),
        summary: (o, args) => salesLine(asObject(o), args),
      };
    },
  },
  {
    domain: 'search documents',
    plan(intent, _ctx, h) {
      const { has, utcToday, base } = h;
      const quoted = intent.quoted;
      if (!(has('search_documents') && quoted[0] !== undefined)) return NOT_MINE;
      const query = quoted[0];
      const range = intent.lastDays === undefined ? {} : { date_from: addDays(utcToday, -intent.lastDays), date_to: utcToday };
      return {
        key: 'main',
        tool: 'search_documents',
        write: false,
        check: base,
        args: () => ({ query, ...range, sort_by: intent.sortBy ?? 'relevance', limit: 10 }),
        summary: (o, args) => searchLine(asObject(o), args),
      };
    },
  },
  {
    domain: 'list events',
    plan(intent, ctx, h) {
      const { has, verbs, base } = h;
      if (!(!has('create_event') && has('list_events') && (verbs.has('events_list') || intent.day !== undefined))) return NOT_MINE;
      const zone = intent.timeZone ?? CALENDAR_HOME;
      const day = resolveDay(intent.day ?? { kind: 'relative', offset: 0 }, ctx.nowMs, zone);
      return {
        key: 'main',
        tool: 'list_events',
        write: false,
        check: base,
        args: () => ({ date_from: day, date_to: day, timezone: zone }),
        summary: (o) => {
          const events = arrayAt(asObject(o), 'events');
          return events.length === 0 ? `No events on ${day} (${zone})` : `${events.length} events on ${day} (${zone}): ${events.map((e) => `"${String(e['title'])}" ${String(e['start'])}`).join('; ')}`;
        },
      };
    },
  },
  {
    domain: 'read file',
    plan(intent, _ctx, h) {
      const { has, verbs, base } = h;
      if (!(has('read_file') && intent.paths[0] !== undefined && (verbs.has('read') || !verbs.has('write') || intent.paths.length > 1))) return NOT_MINE;
      const path = intent.paths[0];
      return {
        key: 'main',
        tool: 'read_file',
        write: false,
        check: base,
        args: () => ({ path }),
        summary: (o) => {
          const f = asObject(o);
          const content = String(f?.['content'] ?? '').trim();
          return `${String(f?.['path'] ?? path)} (version ${String(f?.['version'] ?? '?')}): ${content.length > 300 ? `${content.slice(0, 300)}...` : content}`;
        },
      };
    },
  },
  {
    domain: 'write file',
    plan(intent, _ctx, h) {
      const { has, verbs, base } = h;
      const quoted = intent.quoted;
      if (!(has('write_file') && verbs.has('write') && intent.paths[0] !== undefined && quoted[0] !== undefined)) return NOT_MINE;
      const path = intent.paths[0];
      const content = quoted[0];
      return {
        key: 'main',
        tool: 'write_file',
        write: true,
        check: base,
        args: () => ({ path, content: `${content}\n` }),
        ...fileConfirm(has),
        summary: (o) => `Saved ${path} (version ${String(asObject(o)?.['version'] ?? '?')})`,
      };
    },
  },
  {
    domain: 'list files',
    plan(intent, _ctx, h) {
      const { has, verbs, base } = h;
      if (!(has('list_files') && (verbs.has('files_list') || intent.paths[0] !== undefined))) return NOT_MINE;
      const prefix = intent.paths[0] ?? '/';
      return {
        key: 'main',
        tool: 'list_files',
        write: false,
        check: base,
        args: () => ({ prefix: prefix.endsWith('/') ? prefix : `${prefix}/`, limit: 100 }),
        summary: (o) => {
          const files = arrayAt(asObject(o), 'files');
          return `${files.length} files under ${prefix}: ${files.map((f) => String(f['path'])).join(', ')}`;
        },
      };
    },
  },
  {
    domain: 'get order',
    plan(intent, _ctx, h) {
      const { has, base } = h;
      if (!(has('get_order') && intent.orderId !== undefined)) return NOT_MINE;
      const orderId = intent.orderId;
      return { key: 'main', tool: 'get_order', write: false, check: base, args: () => ({ order_id: orderId }), summary: (o) => orderLine(asObject(o)) };
    },
  },
  {
    domain: 'list orders',
    plan(intent, _ctx, h) {
      const { has, base } = h;
      if (!(has('list_orders') && intent.customerId !== undefined)) return NOT_MINE;
      const customer = intent.customerId;
      return {
        key: 'main',
        tool: 'list_orders',
        write: false,
        check: base,
        args: () => ({ customer_id: customer, ...(intent.orderStatus !== undefined ? { status: intent.orderStatus } : {}), limit: 20 }),
        summary: (o) => {
          const orders = arrayAt(asObject(o), 'orders');
          return `${String(asObject(o)?.['total'] ?? orders.length)} orders for ${customer}${intent.orderStatus === undefined ? '' : ` (${intent.orderStatus})`}: ${orders.map((x) => `${String(x['order_id'])} (${String(x['customer_id'])}, ${String(x['status'])})`).join(', ')}`;
        },
      };
    },
  },
  {
    domain: 'get payment',
    plan(intent, _ctx, h) {
      const { has, base } = h;
      if (!(has('get_payment') && intent.paymentId !== undefined)) return NOT_MINE;
      const paymentId = intent.paymentId;
      return { key: 'main', tool: 'get_payment', write: false, check: base, args: () => ({ payment_id: paymentId }), summary: (o) => paymentLine(asObject(o)) };
    },
  },
  {
    domain: 'send message',
    plan(intent, _ctx, h) {
      const { has, base, startIso } = h;
      const quoted = intent.quoted;
      if (!(has('send_message') && intent.channel !== undefined && quoted[0] !== undefined)) return NOT_MINE;
      const text = quoted[0];
      return messageStep('main', intent.channel, () => text, base, startIso, has);
    },
  },
  {
    domain: 'list messages',
    plan(intent, _ctx, h) {
      const { has, base } = h;
      if (!(has('list_messages') && intent.channel !== undefined)) return NOT_MINE;
      const channel = intent.channel;
      return {
        key: 'main',
        tool: 'list_messages',
        write: false,
        check: base,
        args: () => ({ channel: `#${channel}`, limit: 5 }),
        summary: (o) => {
          const messages = arrayAt(asObject(o), 'messages');
          return `Latest in #${channel}: ${messages.map((m) => `${String(m['message_id'])} (#${String(m['channel'])}) ${String(m['author'])}: "${String(m['text'])}"`).join('; ')}`;
        },
      };
    },
  },
];

function mainStep(intent: Intent, ctx: PlanContext, h: Helpers): Step | undefined {
  for (const planner of MAIN_PLANNERS) {
    const step = planner.plan(intent, ctx, h);
    if (step !== NOT_MINE) return step;
  }
  return undefined;
}
