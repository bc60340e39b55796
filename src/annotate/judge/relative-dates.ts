/**
 * Reading relative dates and time zones out of an intent, in English and Chinese, for the
 * heuristic judge. Everything is relative to a reference instant passed in (the step's start):
 * nothing here reads the clock.
 */

const DAY_MS = 86_400_000;

/** A single day named relative to the reference day ("tomorrow" → 1, "昨天" → -1). */
export interface RelativeDay {
  text: string;
  offsetDays: number;
}

/** A trailing window of days ending on the reference day ("past 7 days", "过去7天"). */
export interface RelativeRange {
  text: string;
  days: number;
}

// Longer phrases first, so "day after tomorrow" is not read as "tomorrow".
const DAY_TERMS: readonly [RegExp, number][] = [
  [/\bday after tomorrow\b/i, 2],
  [/\bday before yesterday\b/i, -2],
  [/\btomorrow\b/i, 1],
  [/\byesterday\b/i, -1],
  [/\btoday\b|\btonight\b/i, 0],
  [/大后天/, 3],
  [/后天/, 2],
  [/前天/, -2],
  [/明天|明日/, 1],
  [/昨天|昨日/, -1],
  [/今天|今日|今晚/, 0],
];

const EN_NUMBERS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, ten: 10, fourteen: 14, thirty: 30 };

/** 一..九十九 as a number (enough for day counts). */
export function chineseNumber(text: string): number | undefined {
  const digits: Record<string, number> = { 一: 1, 二: 2, 两: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 };
  if (/^\d+$/.test(text)) return Number(text);
  const match = /^([一二两三四五六七八九])?(十)?([一二三四五六七八九])?$/.exec(text);
  if (match === null || text === '') return undefined;
  const [, tens, ten, ones] = match;
  if (ten === undefined) return tens === undefined ? undefined : digits[tens];
  return (tens === undefined ? 1 : digits[tens]!) * 10 + (ones === undefined ? 0 : digits[ones]!);
}

export function relativeRangeIn(intent: string): RelativeRange | undefined {
  const en = /\b(?:past|last|previous)\s+(\d+|one|two|three|four|five|six|seven|ten|fourteen|thirty)\s+days?\b/i.exec(intent);
  if (en !== null) {
    const n = /^\d+$/.test(en[1]!) ? Number(en[1]) : EN_NUMBERS[en[1]!.toLowerCase()];
    if (n !== undefined) return { text: en[0], days: n };
  }
  const week = /\b(?:past|last)\s+(?:one\s+)?week\b/i.exec(intent) ?? /(?:过去|最近|近)\s*(?:一|1)\s*(?:周|星期|个星期)/.exec(intent);
  if (week !== null) return { text: week[0], days: 7 };
  const zh = /(?:过去|最近|近)\s*(\d+|[一二两三四五六七八九十]+)\s*天/.exec(intent);
  if (zh !== null) {
    const n = chineseNumber(zh[1]!);
    if (n !== undefined) return { text: zh[0], days: n };
  }
  return undefined;
}

export function relativeDayIn(intent: string): RelativeDay | undefined {
  for (const [pattern, offsetDays] of DAY_TERMS) {
    const match = pattern.exec(intent);
    if (match !== null) return { text: match[0], offsetDays };
  }
  return undefined;
}

/** The calendar date (YYYY-MM-DD) `offsetDays` from the reference instant, seen at UTC offset `offsetMinutes`. */
export function dateAt(refMs: number, offsetMinutes: number, offsetDays = 0): string {
  return new Date(refMs + offsetMinutes * 60_000 + offsetDays * DAY_MS).toISOString().slice(0, 10);
}

export const addDays = (date: string, days: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** `+08:00` style. */
export function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

const ZONE_WORDS: readonly [RegExp, number][] = [
  [/北京时间|beijing time|china standard time/i, 480],
  [/东京时间|japan standard time|\bJST\b/i, 540],
  [/\bIST\b|india standard time/i, 330],
];

/**
 * The UTC offset (minutes) an intent states: `UTC+8`, `GMT-05:00`, 北京时间, JST; 0 for a bare
 * UTC/GMT/世界标准时间; undefined when it names none.
 */
export function offsetInIntent(intent: string): number | undefined {
  const explicit = /\b(?:UTC|GMT)\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?/i.exec(intent);
  if (explicit !== null) return (explicit[1] === '-' ? -1 : 1) * (Number(explicit[2]) * 60 + Number(explicit[3] ?? 0));
  for (const [pattern, minutes] of ZONE_WORDS) if (pattern.test(intent)) return minutes;
  if (mentionsUtc(intent)) return 0;
  return undefined;
}

/** Whether the intent asks for UTC (and not an offset from it). */
export const mentionsUtc = (intent: string): boolean => /\b(?:UTC|GMT)\b(?!\s*[+-]\s*\d)|世界标准时间|协调世界时|格林尼治时间/i.test(intent);

/** The offset of an IANA zone (or `UTC`) at an instant, in minutes; undefined for names Intl does not know. */
export function zoneOffsetMinutes(zone: string, atMs: number): number | undefined {
  try {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }).formatToParts(new Date(atMs));
    const name = parts.find((p) => p.type === 'timeZoneName')?.value ?? '';
    const match = /GMT([+-])(\d{2}):(\d{2})/.exec(name);
    if (match === null) return name === 'GMT' ? 0 : undefined;
    return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
  } catch {
    // An unknown zone name is just not evidence.
    return undefined;
  }
}
