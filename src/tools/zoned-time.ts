/**
 * Calendar days and wall-clock times in IANA time zones, with nothing but Intl. The mock tools
 * speak ISO dates (`2026-03-29`) and RFC 3339 times, and the bugs they exist to surface are the
 * ones where an agent mixes up UTC and local time, so the conversions here must be exact.
 */

const DAY_MS = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Epoch ms of UTC midnight of a strict `YYYY-MM-DD`, or undefined if it is not a real date. */
export function parseIsoDate(text: string): number | undefined {
  const m = ISO_DATE.exec(text);
  if (m === null) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(year, month - 1, day);
  const back = new Date(ms);
  // Date.UTC rolls 2026-02-30 over to March; a real date survives the round trip.
  if (back.getUTCFullYear() !== year || back.getUTCMonth() !== month - 1 || back.getUTCDate() !== day) return undefined;
  return ms;
}

/** `YYYY-MM-DD` of the UTC day containing `ms`. */
export function formatIsoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function addDays(isoDate: string, days: number): string {
  const ms = parseIsoDate(isoDate);
  if (ms === undefined) throw new RangeError(`not an ISO date: ${isoDate}`);
  return formatIsoDate(ms + days * DAY_MS);
}

/** Whole days from `a` to `b` (both ISO dates). */
export function daysBetween(a: string, b: string): number {
  return Math.round((parseIsoDate(b)! - parseIsoDate(a)!) / DAY_MS);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function isValidTimeZone(timeZone: string): boolean {
  if (timeZone === '') return false;
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallTime(ms: number, timeZone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts['year']!, month: parts['month']!, day: parts['day']!, hour: parts['hour']!, minute: parts['minute']!, second: parts['second']! };
}

/** The zone's offset from UTC at instant `ms`, in minutes (Asia/Shanghai: 480). */
export function offsetMinutes(ms: number, timeZone: string): number {
  const w = wallTime(ms, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / 60_000);
}

/** `YYYY-MM-DD` of the local day containing `ms` in `timeZone`. */
export function localIsoDate(ms: number, timeZone: string): string {
  const w = wallTime(ms, timeZone);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}`;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function formatOffset(minutes: number): string {
  if (minutes === 0) return 'Z';
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** RFC 3339 with the zone's offset at that instant: `2026-03-30T09:00:00+08:00`. */
export function formatZoned(ms: number, timeZone: string): string {
  const w = wallTime(ms, timeZone);
  return `${w.year}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${formatOffset(offsetMinutes(ms, timeZone))}`;
}

/**
 * The instant at which the wall clock in `timeZone` reads the given local time. Two passes,
 * because the offset to subtract is the one in force at the answer, not at the guess. Local
 * times skipped by a DST jump resolve to the instant just after the gap, as calendar apps do.
 */
export function zonedTimeToUtc(local: WallTime, timeZone: string): number {
  const naive = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  const first = naive - offsetMinutes(naive, timeZone) * 60_000;
  const second = naive - offsetMinutes(first, timeZone) * 60_000;
  return second;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$/i;

/** A time as an agent may send it: with an offset (an instant) or without (wall time in a zone). */
export type ParsedDateTime = { kind: 'instant'; ms: number } | { kind: 'local'; wall: WallTime };

/** Parses RFC 3339 date-times, with or without an offset; undefined if malformed or impossible. */
export function parseDateTime(text: string): ParsedDateTime | undefined {
  const m = DATE_TIME.exec(text);
  if (m === null) return undefined;
  const wall: WallTime = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]), hour: Number(m[4]), minute: Number(m[5]), second: Number(m[6] ?? 0) };
  const day = parseIsoDate(`${m[1]}-${m[2]}-${m[3]}`);
  if (day === undefined || wall.hour > 23 || wall.minute > 59 || wall.second > 59) return undefined;
  const zone = m[7];
  if (zone === undefined) return { kind: 'local', wall };
  const offset = zone.toUpperCase() === 'Z' ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  return { kind: 'instant', ms: Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second) - offset * 60_000 };
}

/** The instant a parsed date-time denotes, reading wall times in `timeZone`. */
export function toInstant(parsed: ParsedDateTime, timeZone: string): number {
  return parsed.kind === 'instant' ? parsed.ms : zonedTimeToUtc(parsed.wall, timeZone);
}

/** UTC instant at which local day `isoDate` begins in `timeZone`. */
export function startOfLocalDay(isoDate: string, timeZone: string): number {
  const [y, m, d] = isoDate.split('-').map(Number) as [number, number, number];
  return zonedTimeToUtc({ year: y, month: m, day: d, hour: 0, minute: 0, second: 0 }, timeZone);
}

export { DAY_MS };
