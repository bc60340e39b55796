/**
 * Moves ISO-8601 dates and date-times by a fixed amount while keeping their exact textual form
 * (precision, `T` or space, `Z` or offset). Semantic drift and staleness must look like what a
 * real service returns, only wrong: a reformatted timestamp would give the fault away.
 */

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:([T ])(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** Whether `text` is an ISO-8601 date (`2026-03-29`) or date-time (`2026-03-29T14:23:11Z`). */
export function isIsoTimestamp(text: string, requireTime = false): boolean {
  const m = ISO.exec(text);
  if (m === null) return false;
  if (requireTime && m[4] === undefined) return false;
  return !Number.isNaN(wallClock(m));
}

function wallClock(m: RegExpExecArray): number {
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const millis = Number(`${(m[8] ?? '.').slice(1)}000`.slice(0, 3));
  const ms = Date.UTC(year, month - 1, day, Number(m[5] ?? 0), Number(m[6] ?? 0), Number(m[7] ?? 0), millis);
  const check = new Date(ms);
  // Date.UTC rolls 2026-02-30 over to March; a string that is not a real date is not shifted.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return Number.NaN;
  return ms;
}

const ZONE = /^([+-])(\d{2}):?(\d{2})?$/;

/**
 * The instant an ISO-8601 timestamp names, in epoch ms: a date alone is midnight UTC; a date-time
 * must carry its zone (`Z`, `+08`, `+0800` or `+08:00`), since without one it would mean whatever
 * zone the machine reading it runs in. Undefined for anything else. `Date.parse` is not used: it
 * reads a zone-less date-time as local time and an offset written `+08` as nothing at all.
 */
export function isoInstant(text: string): number | undefined {
  const m = ISO.exec(text);
  if (m === null) return undefined;
  const wall = wallClock(m);
  if (Number.isNaN(wall)) return undefined;
  if (m[4] === undefined) return wall;
  if (Number(m[5]) > 23 || Number(m[6]) > 59 || Number(m[7] ?? 0) > 59 || m[9] === undefined) return undefined;
  if (m[9] === 'Z') return wall;
  const [, sign, hours, minutes = '00'] = ZONE.exec(m[9])!;
  if (Number(hours) > 23 || Number(minutes) > 59) return undefined;
  const offsetMs = (Number(hours) * 60 + Number(minutes)) * 60_000;
  return sign === '+' ? wall - offsetMs : wall + offsetMs;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * `text` moved by `deltaMs` on its own wall clock (the offset label is kept), or undefined when
 * it is not an ISO timestamp. Date-only values move by whole days, and only when `deltaMs` is a
 * whole number of days; `requireTime` leaves them alone entirely.
 */
export function shiftIsoTimestamp(text: string, deltaMs: number, requireTime = false): string | undefined {
  const m = ISO.exec(text);
  if (m === null) return undefined;
  const base = wallClock(m);
  if (Number.isNaN(base)) return undefined;
  const hasTime = m[4] !== undefined;
  if (!hasTime && (requireTime || deltaMs % DAY_MS !== 0)) return undefined;
  const d = new Date(base + deltaMs);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  if (!hasTime) return date;
  let time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  if (m[7] !== undefined) time += `:${pad(d.getUTCSeconds())}`;
  if (m[8] !== undefined) {
    const written = m[8].slice(1);
    let digits = pad(d.getUTCMilliseconds(), 3);
    // Keep the precision as written when the new value fits it (".5" stays one digit).
    if (written.length < 3 && /^0*$/.test(digits.slice(written.length))) digits = digits.slice(0, written.length);
    // Digits below a millisecond cannot move (deltas are whole ms), so they are kept as written.
    time += `.${digits}${written.slice(3)}`;
  }
  return `${date}${m[4]}${time}${m[9] ?? ''}`;
}
