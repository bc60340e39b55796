/**
 * The offline semantic judge (the default; an LLM judge is the other option in seed 000 2.2).
 * A call can succeed (HTTP 200) and still miss the intent; these checks catch the cases a
 * program can see: a relative date resolved to the wrong day, a UTC/local time mix-up, an
 * entity (city, id) other than the one the intent names, and an empty result from filters
 * narrower than asked.
 */
import type { Label } from '../label.js';
import { isReadLikeName, isSucceeded, stepTimeMs } from '../step-facts.js';
import { DeferredJson, jsonValue } from '../../core/deferred-json.js';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory-types.js';
import { addDays, dateAt, formatOffset, mentionsUtc, offsetInIntent, relativeDayIn, relativeRangeIn, zoneOffsetMinutes } from './relative-dates.js';

/** Per-check precision estimates; a step's label takes the highest of its findings. */
export const JUDGE_CONFIDENCE = {
  relative_date: 0.75,
  date_range: 0.7,
  timezone: 0.7,
  city: 0.7,
  id_typo: 0.8,
  id_write: 0.6,
  empty_result: 0.5,
} as const;

export type JudgeCheck = keyof typeof JUDGE_CONFIDENCE;

export interface JudgeFinding {
  check: JudgeCheck;
  reason: string;
}

export interface HeuristicJudgeOptions {
  /**
   * The intent a step served. Default: the step's own `intent` when the log kept one (seed
   * 000's step log), else the trajectory's `task_description`.
   */
  intentOf?: (step: TrajectoryStep, trajectory: Trajectory) => string | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

interface Scalar {
  key: string;
  value: string;
}

/** Every string or number leaf, with its key (the last path segment). */
function scalars(value: unknown, key = '', out: Scalar[] = []): Scalar[] {
  if (typeof value === 'string') out.push({ key, value });
  else if (typeof value === 'number' && Number.isFinite(value)) out.push({ key, value: String(value) });
  else if (Array.isArray(value)) for (const item of value) scalars(item, key, out);
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) scalars(v, k, out);
  return out;
}

const DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?)?$/i;

interface DateValue {
  key: string;
  value: string;
  date: string;
  /** Minutes east of UTC, when the value carried a zone. */
  offset?: number;
  hasTime: boolean;
}

function dateValues(args: readonly Scalar[]): DateValue[] {
  const out: DateValue[] = [];
  for (const { key, value } of args) {
    const match = DATE.exec(value.trim());
    if (match === null) continue;
    const zone = match[4];
    const d: DateValue = { key, value, date: match[1]!, hasTime: match[2] !== undefined };
    if (zone !== undefined) {
      if (zone.toUpperCase() === 'Z') d.offset = 0;
      else {
        const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
        d.offset = (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
      }
    }
    out.push(d);
  }
  return out;
}

const START_KEY = /from|start|begin|since|after|min/i;
const END_KEY = /(?:^|_|[a-z])(?:to|end|until|till|before|max)$|^to$|^end/i;
const ZONE_KEY = /^(?:tz|timezone|time_zone|timeZone|zone)$/;

/** The offset the step's own arguments imply: a zone argument, else the first zoned date-time. */
function offsetInParams(args: readonly Scalar[], dates: readonly DateValue[], atMs: number): number | undefined {
  for (const { key, value } of args) {
    if (ZONE_KEY.test(key)) {
      const offset = zoneOffsetMinutes(value, atMs);
      if (offset !== undefined) return offset;
    }
  }
  return dates.find((d) => d.offset !== undefined)?.offset;
}

const RELATIVE_WORDS = /^(?:today|tomorrow|yesterday|今天|明天|昨天|今日|明日|昨日|后天|前天)$/i;

// A date with a time, as a zoned date-time value starts (see DATE).
const DATE_TIME = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/i;

/** A step's arguments as the checks read them, worked out once per step, when a check first needs them. */
class StepArgs {
  #scalars: Scalar[] | undefined;
  #dates: DateValue[] | undefined;

  constructor(private readonly step: TrajectoryStep) {}

  /** Every string or number leaf, with its key. */
  get scalars(): Scalar[] {
    return (this.#scalars ??= scalars(jsonValue(this.step.input_params)));
  }

  get dates(): DateValue[] {
    return (this.#dates ??= dateValues(this.scalars));
  }

  /** False when the arguments surely hold no date with a time: deferred ones are searched as text, unparsed. */
  mayHoldDateTime(): boolean {
    const params = this.step.input_params;
    // A value's characters stand in its JSON text as they are, unless a \u escape spells them.
    return !(params instanceof DeferredJson) || params.text.includes('\\u') || DATE_TIME.test(params.text);
  }
}

function dateChecks(intent: string, step: TrajectoryStep, args: StepArgs, findings: JudgeFinding[]): void {
  const refMs = stepTimeMs(step);
  if (refMs === undefined) return;
  const dates = args.dates;
  const offset = offsetInIntent(intent) ?? offsetInParams(args.scalars, dates, refMs) ?? 0;
  const zone = offset === 0 ? 'UTC' : `UTC${formatOffset(offset)}`;
  const today = dateAt(refMs, offset);
  const range = relativeRangeIn(intent);
  if (range !== undefined) {
    const from = addDays(today, -range.days);
    const starts = dates.filter((d) => START_KEY.test(d.key));
    const ends = dates.filter((d) => END_KEY.test(d.key) && !START_KEY.test(d.key));
    const start = (starts.length > 0 ? starts : dates).map((d) => d.date).sort()[0];
    const end = (ends.length > 0 ? ends : dates).map((d) => d.date).sort().reverse()[0];
    if (start !== undefined && start > from) {
      findings.push({ check: 'date_range', reason: `intent "${range.text}" means from ${from} (${zone}), but the call starts at ${start}` });
    } else if (end !== undefined && end < today) {
      findings.push({ check: 'date_range', reason: `intent "${range.text}" runs to ${today} (${zone}), but the call ends at ${end}` });
    }
    return;
  }
  const day = relativeDayIn(intent);
  if (day === undefined) return;
  const expected = dateAt(refMs, offset, day.offsetDays);
  const words = args.scalars.filter((s) => RELATIVE_WORDS.test(s.value.trim()));
  const wrongWord = words.find((w) => relativeDayIn(w.value)?.offsetDays !== day.offsetDays);
  if (wrongWord !== undefined) {
    findings.push({ check: 'relative_date', reason: `intent says "${day.text}" but the call passed ${wrongWord.key}=${JSON.stringify(wrongWord.value)}` });
    return;
  }
  if (dates.length > 0 && !dates.some((d) => d.date === expected)) {
    const shown = dates.map((d) => `${d.key}=${d.value}`).join(', ');
    findings.push({ check: 'relative_date', reason: `intent says "${day.text}", which is ${expected} (${zone}) at the step's time, but the call asked for ${shown}` });
  }
}

function timezoneChecks(intent: string, args: StepArgs, findings: JudgeFinding[]): void {
  // Every finding below is about a zoned date-time among the arguments.
  if (!args.mayHoldDateTime()) return;
  const dates = args.dates.filter((d) => d.hasTime);
  const zoned = dates.filter((d): d is DateValue & { offset: number } => d.offset !== undefined);
  const local = zoned.find((d) => d.offset !== 0);
  const zoneParam = args.scalars.find((s) => ZONE_KEY.test(s.key));
  const asksUtc = mentionsUtc(intent) && offsetInIntent(intent) === 0;
  if (local !== undefined && asksUtc) {
    findings.push({ check: 'timezone', reason: `intent asks for UTC, but ${local.key}=${local.value} is local time (${formatOffset(local.offset)})` });
    return;
  }
  const utcKeyed = zoned.find((d) => /utc$/i.test(d.key) && d.offset !== 0);
  if (utcKeyed !== undefined) {
    findings.push({ check: 'timezone', reason: `${utcKeyed.key} is meant to be UTC but holds ${utcKeyed.value} (${formatOffset(utcKeyed.offset)})` });
    return;
  }
  if (zoneParam !== undefined && local !== undefined && /^(?:utc|etc\/utc|z|gmt)$/i.test(zoneParam.value.trim())) {
    findings.push({ check: 'timezone', reason: `${zoneParam.key}=${zoneParam.value} but ${local.key}=${local.value} carries ${formatOffset(local.offset)}` });
    return;
  }
  const offsets = new Set(zoned.map((d) => d.offset));
  if (offsets.size > 1) {
    findings.push({ check: 'timezone', reason: `the call mixes time zones: ${zoned.map((d) => `${d.key}=${d.value}`).join(', ')}` });
    return;
  }
  const stated = offsetInIntent(intent);
  const utcValue = zoned.find((d) => d.offset === 0);
  if (stated !== undefined && stated !== 0 && utcValue !== undefined && !asksUtc) {
    findings.push({ check: 'timezone', reason: `intent is in UTC${formatOffset(stated)}, but ${utcValue.key}=${utcValue.value} is UTC, ${Math.abs(stated) / 60} hours off if it was meant as local time` });
  }
}

/** Cities by canonical name, with the spellings an intent or an argument may use. */
const CITIES: Record<string, readonly string[]> = {
  shanghai: ['shanghai', '上海'],
  beijing: ['beijing', 'peking', '北京'],
  shenzhen: ['shenzhen', '深圳'],
  guangzhou: ['guangzhou', 'canton', '广州'],
  hangzhou: ['hangzhou', '杭州'],
  chengdu: ['chengdu', '成都'],
  wuhan: ['wuhan', '武汉'],
  nanjing: ['nanjing', '南京'],
  "xi'an": ["xi'an", 'xian', '西安'],
  'hong kong': ['hong kong', '香港'],
  taipei: ['taipei', '台北'],
  tokyo: ['tokyo', '东京', '東京'],
  osaka: ['osaka', '大阪'],
  seoul: ['seoul', '首尔'],
  singapore: ['singapore', '新加坡'],
  london: ['london', '伦敦'],
  paris: ['paris', '巴黎'],
  berlin: ['berlin', '柏林'],
  madrid: ['madrid', '马德里'],
  rome: ['rome', '罗马'],
  moscow: ['moscow', '莫斯科'],
  sydney: ['sydney', '悉尼'],
  'new york': ['new york', 'nyc', '纽约'],
  'los angeles': ['los angeles', '洛杉矶'],
  'san francisco': ['san francisco', '旧金山'],
  seattle: ['seattle', '西雅图'],
  chicago: ['chicago', '芝加哥'],
  boston: ['boston', '波士顿'],
  houston: ['houston', '休斯顿'],
  denver: ['denver', '丹佛'],
  miami: ['miami', '迈阿密'],
  dallas: ['dallas', '达拉斯'],
  atlanta: ['atlanta', '亚特兰大'],
  philadelphia: ['philadelphia', '费城'],
  phoenix: ['phoenix', '凤凰城'],
  detroit: ['detroit', '底特律'],
  toronto: ['toronto', '多伦多'],
};

const hasCjk = (s: string): boolean => /[\u3400-\u9fff]/.test(s);

/** Per city, a test of whether lower-cased text names it; compiled once, not per step. */
const CITY_MATCHERS: readonly [string, (lower: string) => boolean][] = Object.entries(CITIES).map(([city, names]) => {
  const tests = names.map((n): ((lower: string) => boolean) => {
    if (hasCjk(n)) return (lower) => lower.includes(n);
    const word = new RegExp(`(?<![a-z])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![a-z])`);
    return (lower) => word.test(lower);
  });
  return [city, (lower) => tests.some((test) => test(lower))];
});

// Every step of a trajectory is checked against the same intent: remember the last answer.
let lastCitiesText: string | undefined;
let lastCities: ReadonlySet<string> = new Set();

function citiesIn(text: string): ReadonlySet<string> {
  if (text === lastCitiesText) return lastCities;
  const lower = text.toLowerCase();
  const found = new Set<string>();
  for (const [city, names] of CITY_MATCHERS) if (names(lower)) found.add(city);
  lastCitiesText = text;
  lastCities = found;
  return found;
}

/** Each spelling to its city (the first city listing it), built once: this is asked per argument. */
const CITY_BY_NAME: ReadonlyMap<string, string> = (() => {
  const byName = new Map<string, string>();
  for (const [city, names] of Object.entries(CITIES)) for (const name of names) if (!byName.has(name)) byName.set(name, city);
  return byName;
})();

function cityOf(value: string): string | undefined {
  const lower = value.trim().toLowerCase().replace(/,.*$/, '').replace(/市$/, '');
  return CITY_BY_NAME.get(lower);
}

const LOCATION_KEY = /city|location|place|destination|origin|region|area|^from$|^to$|address|^q$|^query$/i;

function cityChecks(intent: string, step: TrajectoryStep, args: StepArgs, findings: JudgeFinding[]): void {
  const wanted = citiesIn(intent);
  if (wanted.size === 0) return;
  const asked = args.scalars.filter((s) => LOCATION_KEY.test(s.key)).map((s) => ({ ...s, city: cityOf(s.value) }));
  const wrong = asked.find((a) => a.city !== undefined && !wanted.has(a.city));
  if (wrong !== undefined) {
    findings.push({ check: 'city', reason: `intent names ${[...wanted].join(', ')}, but the call asked for ${wrong.key}=${JSON.stringify(wrong.value)}` });
    return;
  }
  if (!asked.some((a) => a.city !== undefined)) return;
  const answered = scalars(jsonValue(step.response.body)).filter((s) => LOCATION_KEY.test(s.key)).map((s) => ({ ...s, city: cityOf(s.value) }));
  const off = answered.find((a) => a.city !== undefined && !wanted.has(a.city));
  if (off !== undefined) findings.push({ check: 'city', reason: `intent names ${[...wanted].join(', ')}, but the result is for ${off.key}=${JSON.stringify(off.value)}` });
}

/**
 * Letter runs → a, digit runs → 9 (ASCII ones; anything else kept): `mia_li_3668` → `a_a_9`,
 * `ZFA04Y` → `a9a`. A loop rather than two replaces: it runs on every id argument of a log.
 */
function shapeOf(id: string): string {
  let out = '';
  let run = 0; // 1 in a letter run, 2 in a digit run
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) {
      if (run !== 1) out += 'a';
      run = 1;
    } else if (c >= 48 && c <= 57) {
      if (run !== 2) out += '9';
      run = 2;
    } else {
      out += id[i];
      run = 0;
    }
  }
  return out;
}

/** The ids an intent names, with their lower-case spellings and shapes. */
interface NamedIds {
  ids: string[];
  lower: ReadonlySet<string>;
  shapes: readonly string[];
}

// As with cities: every step of a trajectory asks about the same intent.
let lastIdsText: string | undefined;
let lastIds: NamedIds = { ids: [], lower: new Set(), shapes: [] };

/** Identifier-like tokens in an intent: 5+ characters with a digit, not a date or a plain small number. */
function idsIn(intent: string): NamedIds {
  if (intent === lastIdsText) return lastIds;
  const ids = findIds(intent);
  lastIds = { ids, lower: new Set(ids.map((n) => n.toLowerCase())), shapes: ids.map(shapeOf) };
  lastIdsText = intent;
  return lastIds;
}

function findIds(intent: string): string[] {
  const tokens = intent.match(/[A-Za-z0-9][A-Za-z0-9_-]{3,}[A-Za-z0-9]/g) ?? [];
  return tokens.filter((t) => /\d/.test(t) && !/^\d{4}-\d{2}(?:-\d{2})?$/.test(t) && !(/^\d+$/.test(t) && t.length < 5));
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

const ID_KEY = /(?:^|_|[a-z])(?:id|Id|ID)$|^id$/;

// Argument keys are few and repeat on every step: each one's kind is worked out once (bounded).
const kindsOfKeys = new Map<string, string>();

/** The kind of thing an id key names: `payment_id` → `payment`, `userId` → `user`; '' for a bare `id`. */
function idKindOfKey(key: string): string {
  let kind = kindsOfKeys.get(key);
  if (kind === undefined) {
    kind = kindOfKey(key);
    if (kindsOfKeys.size >= 4096) kindsOfKeys.clear();
    kindsOfKeys.set(key, kind);
  }
  return kind;
}

function kindOfKey(key: string): string {
  return key.replace(/(?:_?id|Id|ID)$/, '').replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase().replace(/[^a-z_]/g, '').replace(/^_+|_+$/g, '');
}

// The noun before an id in an intent: "order W123", "user id mia_li_3668", "订单 W123".
const KIND_BEFORE = /([A-Za-z]+|[\u4e00-\u9fff]{1,4})(?:\s*(?:id|ID|number|no\.?|#|号|编号))?\s*[:：#]?\s*$/;
const ZH_KINDS: Record<string, string> = { 订单: 'order', 用户: 'user', 账号: 'account', 账户: 'account', 预订: 'reservation', 预约: 'reservation', 航班: 'flight', 支付: 'payment', 付款: 'payment', 发票: 'invoice', 工单: 'ticket' };

// Every step with a candidate id asks for the kinds of the same trajectory and intent, and each
// answer reads all the steps' arguments: the last answer is kept (keyed by the steps array, which
// annotators never change in place, and the intent, which gives the named ids).
let lastKindsSteps: readonly TrajectoryStep[] | undefined;
let lastKindsIntent: string | undefined;
let lastKinds: ReadonlyMap<string, string> = new Map();

function idKindsIn(intent: string, named: readonly string[], trajectory: Trajectory): ReadonlyMap<string, string> {
  if (trajectory.steps === lastKindsSteps && intent === lastKindsIntent) return lastKinds;
  lastKinds = findIdKinds(intent, named, trajectory);
  lastKindsSteps = trajectory.steps;
  lastKindsIntent = intent;
  return lastKinds;
}

/**
 * The kind of each id the intent names, when something says it: an argument of the trajectory
 * that carries it (`user_id: "mia_li_3668"` → user), else the noun written before it ("order
 * W123"). Unknown kinds are left out.
 */
function findIdKinds(intent: string, named: readonly string[], trajectory: Trajectory): Map<string, string> {
  const kinds = new Map<string, string>();
  const wanted = new Set(named.map((n) => n.toLowerCase()));
  for (const s of trajectory.steps) {
    for (const { key, value } of scalars(jsonValue(s.input_params))) {
      const lower = value.toLowerCase();
      if (!wanted.has(lower) || kinds.has(lower) || !ID_KEY.test(key)) continue;
      const kind = idKindOfKey(key);
      if (kind !== '') kinds.set(lower, kind);
    }
  }
  // A noun before an id counts only as a kind the trajectory's own id keys use ("order W123" with
  // an `order_id` argument somewhere), so "You are mia_li_3668" names no kind.
  const keyKinds = new Set<string>();
  for (const s of trajectory.steps) for (const { key } of scalars(jsonValue(s.input_params))) if (ID_KEY.test(key)) keyKinds.add(idKindOfKey(key));
  for (const id of named) {
    const lower = id.toLowerCase();
    if (kinds.has(lower)) continue;
    const at = intent.indexOf(id);
    const before = at < 0 ? null : KIND_BEFORE.exec(intent.slice(Math.max(0, at - 24), at));
    const word = before?.[1];
    if (word === undefined) continue;
    const kind = ZH_KINDS[word] ?? (/^[A-Za-z]+$/.test(word) ? word.toLowerCase().replace(/s$/, '') : undefined);
    if (kind !== undefined && keyKinds.has(kind)) kinds.set(lower, kind);
  }
  return kinds;
}

/** Whether `value` appears in a result the agent had read before `step`. */
function shownEarlier(trajectory: Trajectory, step: TrajectoryStep, value: string): boolean {
  for (const s of trajectory.steps) {
    if (s === step || s.step_index >= step.step_index) break;
    const text = s.response.text ?? (typeof jsonValue(s.response.body) === 'string' ? (jsonValue(s.response.body) as string) : JSON.stringify(jsonValue(s.response.body) ?? null));
    if (text.includes(value)) return true;
  }
  return false;
}

/** Whether an id of `keyKind` may be the same kind of thing as the named id: unknown kinds do not rule it out. */
const sameKind = (keyKind: string, namedKind: string | undefined): boolean => keyKind === '' || namedKind === undefined || keyKind === namedKind || keyKind.endsWith(`_${namedKind}`) || namedKind.endsWith(`_${keyKind}`);

/**
 * An id argument that the intent contradicts: a near miss (same shape, edit distance 1 or 2 from
 * an id the intent names: a mis-copied id), or, for a write, a different id of the shape and
 * length of the only such id the intent names. Only ids of one kind are compared: a
 * `payment_id` is not a user's id however alike their shapes (the kind is the key's noun, and
 * for the named id the argument that carried it or the noun before it in the intent). Reads with
 * other ids are left alone: looking up the user's other reservations is exploration, not a mistake.
 */
function idChecks(intent: string, trajectory: Trajectory, step: TrajectoryStep, args: StepArgs, findings: JudgeFinding[]): void {
  const { ids: named, lower: lowerNamed, shapes } = idsIn(intent);
  if (named.length === 0) return;
  let kinds: ReadonlyMap<string, string> | undefined;
  for (const { key, value } of args.scalars) {
    if (!ID_KEY.test(key) || lowerNamed.has(value.toLowerCase())) continue;
    const shape = shapeOf(value);
    if (!shapes.includes(shape)) continue;
    // An id an earlier result gave the agent (a payment method on the user's profile) was read,
    // not mis-copied from the intent.
    if (shownEarlier(trajectory, step, value)) continue;
    kinds ??= idKindsIn(intent, named, trajectory);
    const keyKind = idKindOfKey(key);
    const sameShape = named.filter((n, i) => shapes[i] === shape && sameKind(keyKind, kinds!.get(n.toLowerCase())));
    const near = sameShape.find((n) => n.length === value.length && editDistance(n.toLowerCase(), value.toLowerCase()) <= 2);
    if (near !== undefined) {
      findings.push({ check: 'id_typo', reason: `intent names ${near}, but the call passed ${key}=${JSON.stringify(value)} (a near miss)` });
      return;
    }
    // Equal length too: ids of one kind have a fixed width, and `credit_card_4421486` is not a user id.
    if (sameShape.length === 1 && sameShape[0]!.length === value.length && !isReadLikeName(step.tool_name)) {
      findings.push({ check: 'id_write', reason: `intent names ${sameShape[0]}, but ${step.tool_name} acted on ${key}=${JSON.stringify(value)}` });
      return;
    }
  }
}

const PAGING_KEY = /^(?:q|query|keyword|keywords|text|limit|offset|page|page_size|per_page|cursor|sort|sort_by|order|order_by|fields)$/i;
const LIST_KEY = /^(?:results|items|data|records|rows|hits|list|orders|documents|entries)$/i;

function isEmptyResult(body: unknown): boolean {
  if (Array.isArray(body)) return body.length === 0;
  if (typeof body === 'string') return body.trim() === '[]';
  if (!isRecord(body)) return false;
  const lists = Object.entries(body).filter(([k, v]) => LIST_KEY.test(k) && Array.isArray(v));
  const total = body['total'] ?? body['count'] ?? body['total_count'];
  if (lists.length > 0) return lists.every(([, v]) => (v as unknown[]).length === 0) && (total === undefined || total === 0);
  return total === 0;
}

// What a body `isEmptyResult` answers true for must hold: a list key with an empty list, or a
// count key with a number that parses to 0 (written from 0 or -0, or one that underflows:
// `1e-400`). A deferred body with neither (and no escape that could spell a key) is not empty,
// unparsed; most bodies with a `total` or `rows` are not empty, and parsing them costs.
const EMPTY_LIST = /"(?:results|items|data|records|rows|hits|list|orders|documents|entries)"\s*:\s*\[\s*\]/i;
const ZERO_COUNT = /"(?:total|count|total_count)"\s*:\s*-?(?:0|[1-9]\d*(?:\.\d*)?[eE]-)/i;

/** `isEmptyResult` of a step's body; a deferred body that cannot be empty is not parsed for it. */
function hasEmptyResult(step: TrajectoryStep): boolean {
  const body = step.response.body;
  if (body instanceof DeferredJson) {
    const text = body.text.trim();
    // Deferred bodies are JSON-looking text; one that does not parse stays text, empty only as "[]".
    const maybe = text.startsWith('[') ? /^\[\s*\]$/.test(text) : text.includes('\\u') || EMPTY_LIST.test(text) || ZERO_COUNT.test(text);
    if (!maybe) return false;
  }
  return isEmptyResult(jsonValue(body));
}

/** A call's filters: its arguments other than paging and search text, with a value. */
function filtersOf(params: unknown): [string, unknown][] {
  return isRecord(params) ? Object.entries(params).filter(([k, v]) => !PAGING_KEY.test(k) && v !== null && v !== '') : [];
}

/**
 * The arguments a tool cannot be called without: those its declaration requires, else those
 * every one of two or more calls of it in the trajectory passes. They narrow nothing, whatever
 * their number.
 */
function requiredArguments(trajectory: Trajectory, tool: string): Set<string> {
  const declared = trajectory.tools?.find((t) => t.name === tool)?.parameters;
  if (isRecord(declared) && Array.isArray(declared['required'])) return new Set(declared['required'].filter((k): k is string => typeof k === 'string'));
  let common: Set<string> | undefined;
  let calls = 0;
  for (const s of trajectory.steps) {
    if (s.tool_name !== tool) continue;
    calls++;
    const keys = new Set(filtersOf(jsonValue(s.input_params)).map(([k]) => k));
    common = common === undefined ? keys : new Set([...common].filter((k) => keys.has(k)));
  }
  // One call shows what was passed, not what must be.
  return calls < 2 || common === undefined ? new Set() : common;
}

/** Whether `after` asks for more than `before`: a filter dropped, or a range's start moved earlier or its end later. */
function isLoosening(before: readonly [string, unknown][], after: readonly [string, unknown][]): boolean {
  const later = new Map(after);
  for (const [key, value] of before) {
    if (!later.has(key)) return true;
    const next = later.get(key);
    if (typeof value !== typeof next || (typeof value !== 'string' && typeof value !== 'number')) continue;
    const widerStart = START_KEY.test(key) && (next as string | number) < value;
    const widerEnd = END_KEY.test(key) && !START_KEY.test(key) && (next as string | number) > value;
    if (widerStart || widerEnd) return true;
  }
  return false;
}

function emptyResultCheck(trajectory: Trajectory, at: number, findings: JudgeFinding[]): void {
  const step = trajectory.steps[at]!;
  if (!hasEmptyResult(step)) return;
  const required = requiredArguments(trajectory, step.tool_name);
  // Where and when are the request itself (a range narrower than asked is the date-range
  // check's); what narrows a search is an attribute on top of them: an author, a tag, a status.
  const filters = filtersOf(jsonValue(step.input_params)).filter(([k, v]) => !required.has(k) && !LOCATION_KEY.test(k) && !(typeof v === 'string' && DATE.test(v.trim())));
  const next = trajectory.steps[at + 1];
  // Loosened: the agent called the same tool again with a filter dropped. The same filters with
  // other values is another search (another date, another route), not a looser one.
  const loosened = next !== undefined && next.tool_name === step.tool_name && isLoosening(filtersOf(jsonValue(step.input_params)), filtersOf(jsonValue(next.input_params)));
  const narrowRange = findings.some((f) => f.check === 'date_range');
  if (filters.length < 3 && !loosened && !narrowRange) return;
  const why = narrowRange ? 'a date range narrower than the intent' : loosened ? 'filters the agent itself had to loosen next' : `${filters.length} optional filters (${filters.map(([k]) => k).join(', ')})`;
  findings.push({ check: 'empty_result', reason: `${step.tool_name} returned nothing under ${why}` });
}

/** The findings for one step (exported for tests and for a reviewer's "why"). */
export function judgeStep(trajectory: Trajectory, at: number, options: HeuristicJudgeOptions = {}): JudgeFinding[] {
  const step = trajectory.steps[at];
  if (step === undefined || !isSucceeded(step)) return [];
  const intent = options.intentOf?.(step, trajectory) ?? step.intent ?? trajectory.task_description;
  const findings: JudgeFinding[] = [];
  if (intent !== null && intent !== '') {
    const args = new StepArgs(step);
    dateChecks(intent, step, args, findings);
    timezoneChecks(intent, args, findings);
    cityChecks(intent, step, args, findings);
    idChecks(intent, trajectory, step, args, findings);
  }
  emptyResultCheck(trajectory, at, findings);
  return findings;
}

/**
 * `semantic_error`: a call that succeeded but missed the intent (seed 000 1.2). Checks the
 * intent (see `HeuristicJudgeOptions.intentOf`) against each successful step's arguments and
 * result:
 * - relative dates (today / tomorrow / yesterday / day after tomorrow / past N days / past
 *   week, and 今天 / 明天 / 昨天 / 后天 / 前天 / 过去N天 / 最近N天 / 过去一周), resolved at the
 *   step's own start time (`started_at`; steps without one are not date-checked, since an import
 *   time is no reference) in the zone the intent or the arguments state, UTC otherwise;
 * - UTC versus local time: a zoned time where the intent or a `*_utc` key or a `timezone: UTC`
 *   argument asks for UTC, mixed offsets in one call, or UTC times under an intent in a local zone;
 * - entities: a city other than the intent's in a location argument or in the result; an id
 *   that is a near miss of one the intent names, or a write on a different id of the same shape;
 * - an empty result under over-narrow filters (3+ filters, a narrower date range than the intent,
 *   or the same tool called right after with changed arguments).
 * One label per step, with the most confident finding's confidence and all reasons.
 */
export function heuristicJudge(trajectory: Trajectory, options: HeuristicJudgeOptions = {}): Label[] {
  const labels: Label[] = [];
  trajectory.steps.forEach((step, i) => {
    const findings = judgeStep(trajectory, i, options);
    if (findings.length === 0) return;
    labels.push({
      name: 'semantic_error',
      step_index: step.step_index,
      confidence: Math.max(...findings.map((f) => JUDGE_CONFIDENCE[f.check])),
      reason: findings.map((f) => f.reason).join('; '),
    });
  });
  return labels;
}
