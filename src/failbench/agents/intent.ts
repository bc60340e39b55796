/**
 * A small, honest intent parser for the reference agents: it reads a task instruction in English
 * or Chinese and pulls out the slots the catalog's tools take (city, day, month, region, ids,
 * quoted texts, paths, ...), with regexes and keyword tables. It knows the world the way any
 * assistant does (city time zones, month names), never the scenario behind the instruction.
 */

export type Language = 'en' | 'zh';

/** A day as the user said it: relative to today (in some time zone) or a calendar date. */
export type DayRef = { kind: 'relative'; offset: number } | { kind: 'date'; date: string };

export interface City {
  /** The English name, as weather services spell it. */
  name: string;
  timeZone: string;
  names: readonly string[];
}

/** Common knowledge: major cities, their names in both languages, their time zones. */
export const CITIES: readonly City[] = [
  { name: 'Shanghai', timeZone: 'Asia/Shanghai', names: ['shanghai', '上海'] },
  { name: 'Beijing', timeZone: 'Asia/Shanghai', names: ['beijing', 'peking', '北京'] },
  { name: 'Guangzhou', timeZone: 'Asia/Shanghai', names: ['guangzhou', 'canton', '广州'] },
  { name: 'Shenzhen', timeZone: 'Asia/Shanghai', names: ['shenzhen', '深圳'] },
  { name: 'Hangzhou', timeZone: 'Asia/Shanghai', names: ['hangzhou', '杭州'] },
  { name: 'Chengdu', timeZone: 'Asia/Shanghai', names: ['chengdu', '成都'] },
  { name: 'Tokyo', timeZone: 'Asia/Tokyo', names: ['tokyo', '东京', '東京'] },
  { name: 'Singapore', timeZone: 'Asia/Singapore', names: ['singapore', '新加坡'] },
  { name: 'Sydney', timeZone: 'Australia/Sydney', names: ['sydney', '悉尼'] },
  { name: 'London', timeZone: 'Europe/London', names: ['london', '伦敦'] },
  { name: 'Paris', timeZone: 'Europe/Paris', names: ['paris', '巴黎'] },
  { name: 'Berlin', timeZone: 'Europe/Berlin', names: ['berlin', '柏林'] },
  { name: 'New York', timeZone: 'America/New_York', names: ['new york', '纽约'] },
  { name: 'San Francisco', timeZone: 'America/Los_Angeles', names: ['san francisco', '旧金山'] },
];

/** "Shanghai time", "北京时间": zones people name by a city, plus UTC. */
const ZONE_WORDS: readonly [RegExp, string][] = [
  [/\b(?:shanghai|beijing|china)\s+time\b|北京时间|上海时间/i, 'Asia/Shanghai'],
  [/\blondon\s+time\b|伦敦时间/i, 'Europe/London'],
  [/\bnew\s+york\s+time\b|纽约时间/i, 'America/New_York'],
  [/\btokyo\s+time\b|东京时间/i, 'Asia/Tokyo'],
  [/\bparis\s+time\b|巴黎时间/i, 'Europe/Paris'],
  [/\bsydney\s+time\b|悉尼时间/i, 'Australia/Sydney'],
  [/\bUTC\b|协调世界时/, 'UTC'],
];

/** Sales regions: the words people use for them. */
const REGION_WORDS: readonly [RegExp, string][] = [
  [/\bnorth(?:ern)?\b|华北/i, 'north'],
  [/\bsouth(?:ern)?\b|华南/i, 'south'],
  [/\beast(?:ern)?\b|华东/i, 'east'],
  [/\bwest(?:ern)?\b|华西|西南/i, 'west'],
  [/\bcentral\b|华中/i, 'central'],
  [/\ball regions\b|\bnationwide\b|全国/i, 'all'],
];

const GRANULARITY_WORDS: readonly [RegExp, string][] = [
  [/\bdaily\b|\bby day\b|\bper day\b|按天|每天|每日/i, 'daily'],
  [/\bweekly\b|\bby week\b|\bper week\b|按周|每周/i, 'weekly'],
  [/\bmonthly\b|\bby month\b|\bfor the whole month\b|按月|整月/i, 'monthly'],
];

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

const ZH_DIGITS: Record<string, number> = { 零: 0, 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9, 十: 10 };
const EN_NUMBERS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, a: 1, an: 1 };

/** 1-99 written with Chinese numerals (三, 十二, 二十五) or digits. */
export function chineseNumber(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  if (text === '') return undefined;
  if (text.length === 1) return ZH_DIGITS[text];
  const ten = text.indexOf('十');
  if (ten < 0) return undefined;
  const tens = ten === 0 ? 1 : ZH_DIGITS[text.slice(0, ten)];
  const ones = ten === text.length - 1 ? 0 : ZH_DIGITS[text.slice(ten + 1)];
  return tens === undefined || ones === undefined ? undefined : tens * 10 + ones;
}

/** A number written as digits, an English word, or Chinese numerals. */
export function numberWord(text: string): number | undefined {
  const lower = text.trim().toLowerCase();
  if (/^\d+$/.test(lower)) return Number(lower);
  return EN_NUMBERS[lower] ?? chineseNumber(lower);
}

export interface Intent {
  language: Language;
  text: string;
  /** The first city named (see `cities` for all of them). */
  city?: City;
  /** Every city named, in order: "Shanghai, Beijing and Tokyo". */
  cities: City[];
  /** The city as written, when it is not one the parser knows (a typo, a small town). */
  cityLiteral?: string;
  day?: DayRef;
  /** Wall-clock time of day, 24 h. */
  time?: { hour: number; minute: number };
  durationMinutes?: number;
  /** An explicitly named time zone ("Shanghai time", "UTC"). */
  timeZone?: string;
  /** YYYY-MM, or a month relative to the current one. */
  month?: { kind: 'absolute'; month: string } | { kind: 'relative'; offset: number };
  region?: string;
  /** Every region named, in order: "north, south and east". */
  regions: string[];
  granularity?: string;
  unit?: string;
  /** Values the user spelled out as `field "value"`: passed to the tool as given. */
  literals: Record<string, string>;
  /** Quoted texts in order of appearance. */
  quoted: string[];
  customerId?: string;
  items: { sku: string; quantity: number }[];
  orderId?: string;
  /** Every order id named, in order. */
  orderIds: string[];
  paymentId?: string;
  amountCents?: number;
  /** "Refund the rest", "全额退款". */
  refundRemaining: boolean;
  refundReason?: string;
  cancelReason?: string;
  channel?: string;
  /** Every channel named, in order. */
  channels: string[];
  paths: string[];
  /** "The last 7 days". */
  lastDays?: number;
  sortBy?: 'relevance' | 'date';
  orderStatus?: string;
  /** A condition on a later step: "if it has not shipped". */
  onlyIfNotShipped: boolean;
  /** "Even if it overlaps other meetings", "可以与其他会议重叠": book a slot that is taken. */
  allowOverlap: boolean;
  /** "And then tell me its status / the balance left": read the result back after the change. */
  reportAfter: boolean;
  /** Verbs that name what to do, in the order they appear. */
  verbs: Verb[];
}

export type Verb = 'weather' | 'sales' | 'search' | 'order' | 'order_status' | 'orders_list' | 'cancel' | 'post' | 'messages_list' | 'schedule' | 'events_list' | 'payment' | 'refund' | 'write' | 'read' | 'files_list';

/** Keyword tables for the verbs; a verb's position is where its first keyword appears. */
const VERB_WORDS: readonly [Verb, RegExp][] = [
  ['weather', /weather|forecast|temperature|天气|气温|预报/i],
  ['sales', /sales|revenue|销售|营收|销售额/i],
  ['search', /\bsearch\b|\bfind (?:the )?documents?\b|\blook for\b|搜索|查找.*文档|检索/i],
  ['order', /\bplace an order\b|\border (?:\d+|one|two|three|four|five|a|an)\b|\bbuy\b|下单|订购|购买/i],
  ['order_status', /\bstatus of order\b|\bwhere is order\b|\bcheck order\b|\blook up order\b|订单.*(?:状态|进度)|查询订单|查一下订单/i],
  ['orders_list', /\blist (?:the |all )?(?:\w+ )?orders\b|\bwhich orders\b|列出.*订单|有哪些订单/i],
  ['cancel', /\bcancel\b|取消/i],
  ['post', /\bpost\b|\bsend\b|\bannounce\b|\bnotify\b|\btell\b|发(?:送|到|布)|通知|发一条/i],
  ['messages_list', /\blatest messages\b|\brecent messages\b|\bwhat (?:was|has been) said\b|最近的消息|最新消息/i],
  ['schedule', /\bschedule\b|\bbook\b|\bset up a meeting\b|安排|预约|预订会议|创建.*日程/i],
  ['events_list', /\bwhat(?:'s| is) on (?:my|the) calendar\b|\blist (?:my |the )?events\b|\bmeetings? (?:do i have|are there)\b|日程|有哪些会议|日历上/i],
  ['payment', /\blook up payment\b|\bcheck payment\b|\bstatus of payment\b|查询支付|查一下支付|支付.*状态/i],
  ['refund', /refund|退款/i],
  ['write', /\bsave\b|\bwrite\b|\bstore\b|保存|写入|写到/i],
  ['read', /\bread\b|\bopen\b|\bshow me the file\b|读取|打开|查看文件/i],
  ['files_list', /\blist (?:the )?files\b|\bwhich files\b|列出.*文件|有哪些文件/i],
];

function detectLanguage(text: string): Language {
  const han = (text.match(/\p{Script=Han}/gu) ?? []).length;
  return han >= 2 ? 'zh' : 'en';
}

function parseCities(text: string): { cities: City[]; literal?: string } {
  const lower = text.toLowerCase();
  const found: { city: City; at: number }[] = [];
  for (const city of CITIES) {
    let first: number | undefined;
    for (const name of city.names) {
      const re = /\p{Script=Han}/u.test(name) ? new RegExp(name, 'g') : new RegExp(`\\b${name}\\b`, 'g');
      for (const m of lower.matchAll(re)) {
        const after = lower.slice(m.index + name.length);
        // "Shanghai time" names a zone, not a city the question is about.
        if (/^\s*time\b/i.test(after) || after.startsWith('时间')) continue;
        if (first === undefined || m.index < first) first = m.index;
      }
    }
    if (first !== undefined) found.push({ city, at: first });
  }
  if (found.length > 0) return { cities: found.sort((a, b) => a.at - b.at).map((f) => f.city) };
  const literal = /\b(?:weather|forecast)\s+(?:in|for)\s+([A-Z][A-Za-z]+(?:\s[A-Z][A-Za-z]+)?)/.exec(text) ?? /([\p{Script=Han}A-Za-z]{2,}?)(?:明天|今天|昨天|后天|前天)?的天气/u.exec(text);
  return literal?.[1] === undefined ? { cities: [] } : { cities: [], literal: literal[1] };
}

function parseDay(text: string): DayRef | undefined {
  const iso = /\b(\d{4}-\d{2}-\d{2})\b/.exec(text);
  if (iso !== null) return { kind: 'date', date: iso[1]! };
  const zhDate = /(\d{4})年(\d{1,2})月(\d{1,2})[日号]/.exec(text);
  if (zhDate !== null) return { kind: 'date', date: `${zhDate[1]}-${zhDate[2]!.padStart(2, '0')}-${zhDate[3]!.padStart(2, '0')}` };
  const relative: readonly [RegExp, number][] = [
    [/\bday after tomorrow\b|后天/i, 2],
    [/\bday before yesterday\b|前天/i, -2],
    [/\btomorrow\b|明天|明日/i, 1],
    [/\byesterday\b|昨天|昨日/i, -1],
    [/\btoday\b|今天|今日/i, 0],
  ];
  for (const [re, offset] of relative) if (re.test(text)) return { kind: 'relative', offset };
  const inDays = /\bin (\d+|\w+) days\b|(\d+|[一二三四五六七八九十]+)天后/i.exec(text);
  if (inDays !== null) {
    const n = numberWord(inDays[1] ?? inDays[2] ?? '');
    if (n !== undefined) return { kind: 'relative', offset: n };
  }
  return undefined;
}

function parseTime(text: string): { hour: number; minute: number } | undefined {
  const clock = /\b(?:at\s+)?([01]?\d|2[0-3]):([0-5]\d)\b/.exec(text);
  if (clock !== null) return { hour: Number(clock[1]), minute: Number(clock[2]) };
  const ampm = /\b(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*(am|pm)\b/i.exec(text);
  if (ampm !== null) {
    const h = Number(ampm[1]) % 12;
    return { hour: ampm[3]!.toLowerCase() === 'pm' ? h + 12 : h, minute: Number(ampm[2] ?? 0) };
  }
  const zh = /(上午|早上|早晨|中午|下午|晚上)?([零一二两三四五六七八九十\d]{1,3})点(半|([零一二三四五六七八九十\d]{1,3})分)?/.exec(text);
  if (zh !== null) {
    const h = chineseNumber(zh[2]!);
    if (h === undefined || h > 23) return undefined;
    const afternoon = zh[1] === '下午' || zh[1] === '晚上' || (zh[1] === '中午' && h < 11);
    const minute = zh[3] === '半' ? 30 : zh[4] !== undefined ? (chineseNumber(zh[4]) ?? 0) : 0;
    return { hour: afternoon && h < 12 ? h + 12 : h, minute };
  }
  return undefined;
}

function parseDuration(text: string): number | undefined {
  const en = /\bfor\s+(\d+|an?|one|two|half an)\s*(minutes?|mins?|hours?|h)\b/i.exec(text);
  if (en !== null) {
    if (/half/i.test(en[1]!)) return 30;
    const n = numberWord(en[1]!);
    if (n !== undefined) return /^h/i.test(en[2]!) ? n * 60 : n;
  }
  if (/半(?:个)?小时/.test(text)) return 30;
  const zh = /([零一二两三四五六七八九十\d]+)\s*(分钟|个小时|小时)/.exec(text);
  if (zh !== null) {
    const n = chineseNumber(zh[1]!);
    if (n !== undefined) return zh[2] === '分钟' ? n : n * 60;
  }
  return undefined;
}

function parseMonth(text: string): Intent['month'] {
  const iso = /\b(\d{4})-(0[1-9]|1[0-2])\b(?!-\d)/.exec(text);
  if (iso !== null) return { kind: 'absolute', month: `${iso[1]}-${iso[2]}` };
  const zh = /(\d{4})年(\d{1,2})月(?!\d{1,2}[日号])/.exec(text);
  if (zh !== null) return { kind: 'absolute', month: `${zh[1]}-${zh[2]!.padStart(2, '0')}` };
  const en = new RegExp(`\\b(${MONTHS.join('|')}|${MONTHS.map((m) => m.slice(0, 3)).join('|')})\\.?\\s+(\\d{4})\\b`, 'i').exec(text);
  if (en !== null) {
    const index = MONTHS.findIndex((m) => m.startsWith(en[1]!.toLowerCase().slice(0, 3)));
    return { kind: 'absolute', month: `${en[2]}-${String(index + 1).padStart(2, '0')}` };
  }
  if (/\blast month\b|\bprevious month\b|上个月|上月/i.test(text)) return { kind: 'relative', offset: -1 };
  if (/\bthis month\b|\bmonth to date\b|本月|这个月/i.test(text)) return { kind: 'relative', offset: 0 };
  return undefined;
}

function firstMatch(text: string, table: readonly [RegExp, string][]): string | undefined {
  let best: { value: string; at: number } | undefined;
  for (const [re, value] of table) {
    const m = re.exec(text);
    if (m !== null && (best === undefined || m.index < best.at)) best = { value, at: m.index };
  }
  return best?.value;
}

/** `unit "farenheit"`, `粒度“dayly”`: a value for a named field, spelled by the user. */
function parseLiterals(text: string): Record<string, string> {
  const fields: readonly [RegExp, string][] = [
    [/\b(?:unit|单位)\s*(?:[:：=]|为|是)?\s*["“「]([^"”」]+)["”」]/i, 'unit'],
    [/\b(?:granularity|粒度)\s*(?:[:：=]|为|是)?\s*["“「]([^"”」]+)["”」]/i, 'granularity'],
    [/\b(?:region|区域|地区)\s*(?:[:：=]|为|是)?\s*["“「]([^"”」]+)["”」]/i, 'region'],
    [/\b(?:reason|原因)\s*(?:[:：=]|为|是)?\s*["“「]([^"”」]+)["”」]/i, 'reason'],
    [/\b(?:status|状态)\s*(?:[:：=]|为|是)?\s*["“「]([^"”」]+)["”」]/i, 'status'],
  ];
  const out: Record<string, string> = {};
  for (const [re, field] of fields) {
    // \b does not fire before a Chinese word, so the Chinese alternatives are matched without it.
    const m = re.exec(text) ?? new RegExp(re.source.replace('\\b', ''), re.flags).exec(text);
    if (m?.[1] !== undefined) out[field] = m[1];
  }
  return out;
}

function parseQuoted(text: string, literals: Record<string, string>): string[] {
  const out: string[] = [];
  const taken = new Set(Object.values(literals));
  for (const m of text.matchAll(/"([^"]+)"|“([^”]+)”|「([^」]+)」/g)) {
    const value = m[1] ?? m[2] ?? m[3];
    if (value !== undefined && !taken.has(value)) out.push(value);
  }
  return out;
}

function parseItems(text: string): { sku: string; quantity: number }[] {
  const items: { sku: string; quantity: number }[] = [];
  const seen = new Set<string>();
  const patterns = [
    /(\d+|one|two|three|four|five|six|seven|eight|nine|ten|an?|[一二两三四五六七八九十]+)\s*(?:x|×|units? of|pieces? of|件|个|台|套)?\s*(SKU-\d{4})/gi,
    /(SKU-\d{4})\s*(?:x|×|\*)\s*(\d+)/gi,
    /(SKU-\d{4})\s*(?:数量|qty)\s*[:：]?\s*(\d+|[一二两三四五六七八九十]+)/gi,
  ];
  for (const [i, re] of patterns.entries()) {
    for (const m of text.matchAll(re)) {
      const sku = (i === 0 ? m[2] : m[1])!.toUpperCase();
      const quantity = numberWord((i === 0 ? m[1] : m[2])!);
      if (quantity !== undefined && !seen.has(sku)) {
        items.push({ sku, quantity });
        seen.add(sku);
      }
    }
  }
  for (const m of text.matchAll(/SKU-\d{4}/gi)) {
    const sku = m[0].toUpperCase();
    if (!seen.has(sku)) {
      items.push({ sku, quantity: 1 });
      seen.add(sku);
    }
  }
  return items;
}

function parseAmount(text: string): number | undefined {
  const cents = /(\d+)\s*(?:cents|美分)/i.exec(text);
  if (cents !== null) return Number(cents[1]);
  const dollars = /\$\s*(\d+(?:\.\d{1,2})?)|(\d+(?:\.\d{1,2})?)\s*(?:USD|dollars|美元)/i.exec(text);
  if (dollars !== null) return Math.round(Number(dollars[1] ?? dollars[2]) * 100);
  return undefined;
}

function parseLastDays(text: string): number | undefined {
  const en = /\b(?:last|past|previous)\s+(\d+|\w+)\s+days\b/i.exec(text);
  if (en !== null) return numberWord(en[1]!);
  const zh = /(?:过去|最近|近)\s*([零一二两三四五六七八九十\d]+)\s*天/.exec(text);
  if (zh !== null) return chineseNumber(zh[1]!);
  if (/\b(?:last|past) week\b|过去一周|最近一周|上周/i.test(text)) return 7;
  if (/\b(?:last|past) month\b|过去一个月|最近一个月/i.test(text)) return 30;
  return undefined;
}

const ORDER_STATUS_WORDS: readonly [RegExp, string][] = [
  [/\bpending\b|待处理/i, 'pending'],
  [/\bprocessing\b|处理中/i, 'processing'],
  [/\bshipped\b|已发货/i, 'shipped'],
  [/\bdelivered\b|已送达|已签收/i, 'delivered'],
  [/\bcancell?ed\b|已取消/i, 'cancelled'],
];

/** Every match of a keyword table, in the order they appear, each value once. */
function allMatches(text: string, table: readonly [RegExp, string][]): string[] {
  const found: { value: string; at: number }[] = [];
  for (const [re, value] of table) {
    const m = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`).exec(text);
    if (m !== null) found.push({ value, at: m.index });
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.value);
}

const unique = (values: readonly string[]) => [...new Set(values)];

function parseVerbs(text: string): Verb[] {
  const found: { verb: Verb; at: number }[] = [];
  for (const [verb, re] of VERB_WORDS) {
    const m = re.exec(text);
    if (m !== null) found.push({ verb, at: m.index });
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.verb);
}

/** Reads an instruction. Pure: the same text always gives the same intent. */
export function parseIntent(text: string): Intent {
  const literals = parseLiterals(text);
  const { cities, literal } = parseCities(text);
  const city = cities[0];
  const orderIds = unique([...text.matchAll(/\bORD-\d{5,}\b/gi)].map((m) => m[0].toUpperCase()));
  const regions = literals['region'] !== undefined ? [literals['region']] : allMatches(text, REGION_WORDS);
  const intent: Intent = {
    language: detectLanguage(text),
    text,
    cities,
    regions,
    orderIds,
    channels: unique([...text.matchAll(/#([A-Za-z0-9][A-Za-z0-9_-]*)/g)].map((m) => m[1]!.toLowerCase())),
    allowOverlap: /\beven if it (?:overlaps|clashes)\b|\bdouble[- ]book\b|\boverlap(?:s|ping)? (?:is|are) fine\b|可以(?:与[^，。]*)?重叠|允许重叠|即使(?:时间)?冲突/i.test(text),
    reportAfter: /\b(?:then|and) (?:tell me|report|confirm|check) (?:its|the) (?:final |new |current )?(?:status|balance|refundable|remaining)|\bwhat (?:is|'s) left to refund\b|(?:然后|并|再)(?:告诉我|确认|查一下)(?:它的|其|订单的|支付的)?(?:最新|最终|当前)?(?:状态|剩余|可退)/i.test(text),
    literals,
    quoted: parseQuoted(text, literals),
    items: parseItems(text),
    // A sentence's full stop is not part of the path it ends with.
    paths: [...text.matchAll(/(?:^|[\s(（"“:：,，])(\/[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*)/g)].map((m) => m[1]!.replace(/\.+$/, '')).filter((p) => p.length > 1),
    // "the remaining refundable balance" a user asks about afterwards is not what to refund.
    refundRemaining: /\brefund (?:the )?(?:remaining|rest|full|entire|whole)\b|\b(?:full|entire|whole) (?:refund|amount|balance)\b|\brefund (?:it )?(?:in full|fully)\b|全额|全部退/i.test(text),
    onlyIfNotShipped: /\bif it (?:has not|hasn't|has not yet) shipped\b|\bif it is still (?:pending|processing)\b|如果(?:还)?(?:没有|未)发货|若未发货/i.test(text),
    verbs: parseVerbs(text),
  };
  if (city !== undefined) intent.city = city;
  if (literal !== undefined) intent.cityLiteral = literal;
  const set = <K extends keyof Intent>(key: K, value: Intent[K] | undefined) => {
    if (value !== undefined) intent[key] = value;
  };
  set('day', parseDay(text));
  set('time', parseTime(text));
  set('durationMinutes', parseDuration(text));
  set('timeZone', firstMatch(text, ZONE_WORDS));
  set('month', parseMonth(text));
  set('region', regions[0]);
  set('granularity', literals['granularity'] ?? firstMatch(text, GRANULARITY_WORDS));
  set('unit', literals['unit'] ?? (/fahrenheit|华氏/i.test(text) ? 'fahrenheit' : /celsius|摄氏/i.test(text) ? 'celsius' : undefined));
  set('customerId', /\bCUS-\d{3}\b/i.exec(text)?.[0].toUpperCase());
  set('orderId', orderIds[0]);
  set('paymentId', /\bPAY-\d{4,}\b/i.exec(text)?.[0].toUpperCase());
  set('amountCents', parseAmount(text));
  set('refundReason', literals['reason'] ?? (/duplicate|重复/i.test(text) ? 'duplicate' : /fraud|欺诈/i.test(text) ? 'fraudulent' : undefined));
  set('cancelReason', /duplicate|重复/i.test(text) ? 'duplicate' : /fraud|欺诈/i.test(text) ? 'fraud' : undefined);
  set('channel', intent.channels[0]);
  set('lastDays', parseLastDays(text));
  set('sortBy', /most relevant|relevance|相关/i.test(text) ? 'relevance' : /\bnewest\b|\blatest\b|\bmost recent\b|最新/i.test(text) ? 'date' : undefined);
  set('orderStatus', literals['status'] ?? firstMatch(text, ORDER_STATUS_WORDS));
  return intent;
}

// ---------------------------------------------------------------------------------------------
// Calendar arithmetic the parser's callers need: "tomorrow" is a different date in Sydney.
// ---------------------------------------------------------------------------------------------

const dateFormatters = new Map<string, Intl.DateTimeFormat>();

/** YYYY-MM-DD of the day containing `ms` in `timeZone`. */
export function localDate(ms: number, timeZone: string): string {
  let f = dateFormatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dateFormatters.set(timeZone, f);
  }
  return f.format(new Date(ms));
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The calendar date a DayRef names, as seen in `timeZone` at `nowMs`. */
export function resolveDay(day: DayRef, nowMs: number, timeZone: string): string {
  return day.kind === 'date' ? day.date : addDays(localDate(nowMs, timeZone), day.offset);
}

export function resolveMonth(month: NonNullable<Intent['month']>, nowMs: number): string {
  if (month.kind === 'absolute') return month.month;
  const d = new Date(nowMs);
  const index = d.getUTCFullYear() * 12 + d.getUTCMonth() + month.offset;
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/** The zone's offset from UTC at `ms`, in minutes. */
export function zoneOffsetMinutes(ms: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60_000);
}

/** The instant a wall-clock time on a date in `timeZone` denotes. */
export function wallTimeToInstant(date: string, hour: number, minute: number, timeZone: string): number {
  const naive = Date.parse(`${date}T${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00Z`);
  const first = naive - zoneOffsetMinutes(naive, timeZone) * 60_000;
  return naive - zoneOffsetMinutes(first, timeZone) * 60_000;
}

/** RFC 3339 with the zone's offset: 2026-03-30T07:00:00+08:00. */
export function formatInZone(ms: number, timeZone: string): string {
  const offset = zoneOffsetMinutes(ms, timeZone);
  const local = new Date(ms + offset * 60_000).toISOString().slice(0, 19);
  if (offset === 0) return `${local}Z`;
  const abs = Math.abs(offset);
  return `${local}${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
