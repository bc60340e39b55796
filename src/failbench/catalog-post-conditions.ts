/**
 * Post-conditions for the mock catalog's tools, as their authors would declare them with
 * `verify` (runtime/post-conditions.ts): each compares an answer with its own request (the
 * entity, the date, the window, the channel asked for) or with itself (a local time that
 * disagrees with its UTC twin, a page shorter than its own count), never with a fault plan.
 * FailBench turns them on with the `post-conditions` capability, so the bench measures what the
 * runtime's semantic checks are worth; without it the tools declare none, as a tool that was
 * never annotated.
 */
import type { PostConditionIssue, Verify } from '../runtime/post-conditions.js';
import { findCity } from '../tools/index.js';

type Obj = Record<string, unknown>;
const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);
const listAt = (o: Obj, key: string): Obj[] => (Array.isArray(o[key]) ? (o[key] as unknown[]).map((x) => asObject(x) ?? {}) : []);
const norm = (v: unknown): unknown => (typeof v === 'string' ? v.trim().toLowerCase().replace(/^#/, '') : v);

/** Weather readings older than this are not current (the forecast is refreshed hourly). */
const WEATHER_MAX_AGE_MS = 3 * 3_600_000;

/** `field` of the answer must be the request's `arg`, when both are there. */
function echo(o: Obj, args: Obj, field: string, arg = field): PostConditionIssue[] {
  const expected = args[arg];
  const actual = o[field];
  if (expected === undefined || actual === undefined || norm(expected) === norm(actual)) return [];
  return [{ field, expected, actual }];
}

/** Every item of a list must carry the request's `arg` in `field`. */
function echoEach(o: Obj, list: string, args: Obj, field: string, arg = field): PostConditionIssue[] {
  const expected = args[arg];
  if (expected === undefined) return [];
  const i = listAt(o, list).findIndex((item) => item[field] !== undefined && norm(item[field]) !== norm(expected));
  return i < 0 ? [] : [{ field: `${list}[${i}].${field}`, expected, actual: listAt(o, list)[i]![field] }];
}

/** A page with fewer items than its own count says exist, below the limit, and no note saying why. */
function shortPage(o: Obj, list: string, countField: string, limit: unknown): PostConditionIssue[] {
  const note = ['warning', 'partial', 'note'].some((k) => typeof o[k] === 'string');
  const items = listAt(o, list).length;
  const count = o[countField];
  const offset = typeof o['offset'] === 'number' ? o['offset'] : 0;
  const cap = typeof limit === 'number' ? limit : Infinity;
  if (note || typeof count !== 'number' || items === 0 || items >= cap || count <= offset + items) return [];
  return [{ type: 'result_mismatch', field: list, expected: `${count - offset} items`, actual: `${items} items`, message: `response field "${list}" has ${items} items but the response's "${countField}" says ${count}` }];
}

const VERIFY: Readonly<Record<string, (o: Obj, args: Obj, now: number) => PostConditionIssue[]>> = {
  get_weather(o, args, now) {
    // The request may name the city in another language; the answer names it in English.
    const city = typeof args['city'] === 'string' ? findCity(args['city'])?.name : undefined;
    const out = echo(o, args, 'date');
    if (city !== undefined && typeof o['city'] === 'string' && norm(o['city']) !== norm(city)) out.push({ field: 'city', expected: city, actual: o['city'] });
    const asOf = typeof o['as_of'] === 'string' ? Date.parse(o['as_of']) : Number.NaN;
    if (now - asOf > WEATHER_MAX_AGE_MS) out.push({ type: 'stale_result', field: 'as_of', expected: 'at most 3 h old', actual: o['as_of'], message: `response field "as_of" is ${String(o['as_of'])}, more than 3 h old` });
    return out;
  },
  query_sales_data(o, args) {
    const out = [...echo(o, args, 'month'), ...echo(o, args, 'region')];
    const rows = listAt(o, 'data');
    const i = rows.findIndex((r) => typeof r['period'] === 'string' && typeof args['month'] === 'string' && !r['period'].startsWith(args['month']));
    if (i >= 0) out.push({ field: `data[${i}].period`, expected: args['month'], actual: rows[i]!['period'] });
    if (typeof o['records'] === 'number' && !['warning', 'partial', 'note'].some((k) => typeof o[k] === 'string') && rows.length > 0 && o['records'] !== rows.length) {
      out.push({ field: 'data', expected: `${o['records']} rows`, actual: `${rows.length} rows`, message: `response field "data" has ${rows.length} rows but "records" says ${String(o['records'])}` });
    }
    return out;
  },
  search_documents(o, args) {
    const from = typeof args['date_from'] === 'string' ? args['date_from'] : undefined;
    const to = typeof args['date_to'] === 'string' ? args['date_to'] : undefined;
    const results = listAt(o, 'results');
    const i = results.findIndex((r) => {
      const day = String(r['date'] ?? r['created_at'] ?? '').slice(0, 10);
      return day !== '' && ((from !== undefined && day < from) || (to !== undefined && day > to));
    });
    if (i >= 0) return [{ type: 'out_of_window', field: `results[${i}].date`, expected: { from: from ?? null, to: to ?? null }, actual: results[i]!['date'] ?? results[i]!['created_at'] }];
    return shortPage(o, 'results', 'total', args['limit']);
  },
  create_order: (o, args) => echo(o, args, 'customer_id'),
  get_order: (o, args) => echo(o, args, 'order_id'),
  cancel_order: (o, args) => echo(o, args, 'order_id'),
  list_orders: (o, args) => [...echoEach(o, 'orders', args, 'customer_id'), ...echoEach(o, 'orders', args, 'status'), ...shortPage(o, 'orders', 'total', o['limit'] ?? args['limit'])],
  send_message: (o, args) => [...echo(o, args, 'channel'), ...echo(o, args, 'text')],
  list_messages: (o, args) => echoEach(o, 'messages', args, 'channel'),
  create_event(o, args) {
    const out = [...echo(o, args, 'title'), ...echo(o, args, 'timezone')];
    if (o['start'] !== undefined && o['start_utc'] !== undefined && Date.parse(String(o['start'])) !== Date.parse(String(o['start_utc']))) {
      out.push({ field: 'start', expected: o['start_utc'], actual: o['start'], message: `response field "start" (${String(o['start'])}) is not the instant of "start_utc" (${String(o['start_utc'])})` });
    }
    return out;
  },
  list_events(o, args) {
    const out = echo(o, args, 'timezone');
    const i = listAt(o, 'events').findIndex((e) => Date.parse(String(e['start'])) !== Date.parse(String(e['start_utc'])));
    if (i >= 0) out.push({ field: `events[${i}].start`, message: `response field "events[${i}].start" is not the instant of its "start_utc"` });
    return out;
  },
  get_payment: (o, args) => echo(o, args, 'payment_id'),
  create_refund: (o, args) => [...echo(o, args, 'payment_id'), ...echo(o, args, 'amount_cents')],
  write_file: (o, args) => echo(o, args, 'path'),
  read_file: (o, args) => echo(o, args, 'path'),
  list_files(o, args) {
    const prefix = typeof args['prefix'] === 'string' ? args['prefix'] : undefined;
    const files = listAt(o, 'files');
    const i = prefix === undefined ? -1 : files.findIndex((f) => typeof f['path'] === 'string' && !f['path'].startsWith(prefix));
    if (i >= 0) return [{ field: `files[${i}].path`, expected: `${prefix!}…`, actual: files[i]!['path'] }];
    return shortPage(o, 'files', 'total', args['limit']);
  },
};

/** The catalog tool's post-condition, or undefined for a tool without one. */
export function catalogVerify(toolName: string): Verify | undefined {
  const check = VERIFY[toolName];
  if (check === undefined) return undefined;
  return (args, output, ctx) => {
    const o = asObject(output);
    const a = asObject(args);
    return o === undefined || a === undefined ? undefined : check(o, a, ctx.now);
  };
}
