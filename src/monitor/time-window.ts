/**
 * Reading report windows as people write them: `--since 24h` on the command line, `?since=7d` on
 * the dashboard. One parser, so both accept the same text and say the same thing about bad text.
 */
import { durationMsOf } from '../core/duration-text.js';
import { ConfigError } from '../core/errors.js';

// A date, optionally with a time and an offset; without an offset the time is taken as UTC,
// like every timestamp faultline stores.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

function parseIsoDate(text: string): number {
  const match = ISO_DATE.exec(text);
  if (match === null) return NaN;
  // Date.parse rolls 2026-02-30 over to March 2; a day the month does not have is a typo.
  const [year, month, day] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return NaN;
  const hasTime = text.length > 10;
  return Date.parse(hasTime && match[1] === undefined ? `${text.replace(' ', 'T')}Z` : text.replace(' ', 'T'));
}

/**
 * A window end: an ISO date, or now when absent. `name` is how messages call it.
 * @throws ConfigError for anything else.
 */
export function parseUntil(text: string | undefined, nowMs: number, name = '--until'): number {
  if (text === undefined) return nowMs;
  const ms = parseIsoDate(text.trim());
  if (Number.isNaN(ms)) throw new ConfigError(`invalid ${name} ${JSON.stringify(text)}: expected an ISO date like 2026-03-29T14:00Z`, name);
  return ms;
}

/**
 * A window start: a duration back from `untilMs` (`90m`, `24h`, `7d`) or an ISO date before it.
 * `name` is how messages call it.
 * @throws ConfigError for anything else.
 */
export function parseSince(text: string, untilMs: number, name = '--since'): number {
  const trimmed = text.trim();
  const duration = durationMsOf(trimmed, name);
  let since: number;
  if (duration !== undefined) {
    since = untilMs - duration;
  } else {
    since = parseIsoDate(trimmed);
    if (Number.isNaN(since)) {
      throw new ConfigError(`invalid ${name} ${JSON.stringify(text)}: expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z`, name);
    }
  }
  if (since >= untilMs) throw new ConfigError(`invalid ${name} ${JSON.stringify(text)}: it is not before the end of the window (${new Date(untilMs).toISOString()})`, name);
  return since;
}

/** A window as the UTC ISO-8601 pair reports print. */
export function isoWindow(since: number, until: number): { since: string; until: string } {
  return { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
}
