/**
 * A calendar: `create_event` and `list_events`, time-zone aware. Events are stored as UTC
 * instants plus the zone they were planned in, and shown in whichever zone the caller asks
 * for, because "9:00 on Monday" means nothing until someone says where. Wall times without an
 * offset are read in the given zone; the answer always carries offsets, so a checker can see
 * when an agent meant Shanghai time and booked UTC.
 */
import type { ToolSpec } from '../runtime/define-tool.js';
import { BusinessError, ParameterError } from '../runtime/tool-errors.js';
import type { CatalogContext } from './catalog-state.js';
import { keyedRandom, pick, randomInt } from './seeded-random.js';
import { DAY_MS, addDays, daysBetween, formatZoned, isValidTimeZone, localIsoDate, parseDateTime, startOfLocalDay, toInstant } from './zoned-time.js';

export interface CalendarEvent {
  event_id: string;
  title: string;
  /** UTC instants, `...Z`. */
  start_utc: string;
  end_utc: string;
  /** The zone the event was planned in. */
  timezone: string;
  /** RFC 3339 in `timezone`, e.g. `2026-03-30T09:00:00+08:00`. */
  start: string;
  end: string;
  attendees: string[];
  location: string | null;
  created_at: string;
  source: 'seed' | 'tool';
}

export const CALENDAR_TIME_ZONE = 'Asia/Shanghai';
/** The widest window list_events serves in one call. */
export const MAX_LIST_DAYS = 92;
export const MAX_EVENT_HOURS = 24;
export const BOOKING_HORIZON_DAYS = 365;

const SEED_TITLES = ['Project X weekly sync', 'Apollo design review', '1:1 with manager', 'Sales pipeline review', 'Customer call: Acme', 'Hiring debrief', 'Borealis retro', '项目X 周会'];
const SEED_ZONES = ['Asia/Shanghai', 'Asia/Shanghai', 'America/New_York', 'Europe/London'];

export function seedEvents(seed: number, anchorMs: number): CalendarEvent[] {
  const events: CalendarEvent[] = [];
  const anchorDay = localIsoDate(anchorMs, CALENDAR_TIME_ZONE);
  for (let i = 0; i < 24; i++) {
    const random = keyedRandom(seed, 'event', i);
    const zone = pick(random, SEED_ZONES);
    const day = addDays(anchorDay, randomInt(random, -14, 30));
    const startMs = startOfLocalDay(day, zone) + randomInt(random, 9, 16) * 3_600_000 + pick(random, [0, 30]) * 60_000;
    const endMs = startMs + pick(random, [30, 45, 60, 90]) * 60_000;
    const title = pick(random, SEED_TITLES);
    events.push({
      event_id: '',
      title,
      start_utc: new Date(startMs).toISOString(),
      end_utc: new Date(endMs).toISOString(),
      timezone: zone,
      start: formatZoned(startMs, zone),
      end: formatZoned(endMs, zone),
      attendees: [`${pick(random, ['li.wei', 'ana.souza', 'tom.becker', 'priya.nair'])}@example.com`],
      location: random() < 0.5 ? 'Video call' : 'Room 3A',
      created_at: new Date(Math.min(anchorMs, startMs) - 7 * DAY_MS).toISOString(),
      source: 'seed',
    });
  }
  events.sort((a, b) => a.start_utc.localeCompare(b.start_utc) || a.title.localeCompare(b.title));
  events.forEach((e, i) => (e.event_id = `EVT-${String(i + 1).padStart(4, '0')}`));
  return events;
}

/** RFC 3339 date-time, with or without an offset (then read in `timezone`). */
const DATE_TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?([Zz]|[+-]\\d{2}:\\d{2})?$';

interface CreateArgs {
  title: string;
  start: string;
  end?: string;
  duration_minutes?: number;
  timezone?: string;
  attendees?: string[];
  location?: string;
  allow_overlap: boolean;
}

interface ListArgs {
  date_from: string;
  date_to: string;
  timezone?: string;
}

export interface ListedEvent {
  event_id: string;
  title: string;
  /** In the zone the list was requested in. */
  start: string;
  end: string;
  start_utc: string;
  end_utc: string;
  event_timezone: string;
  attendees: string[];
  location: string | null;
}

function zoneOrThrow(timeZone: string | undefined, fallback: string): string {
  const zone = timeZone ?? fallback;
  if (!isValidTimeZone(zone)) {
    throw new ParameterError('enum_mismatch', `"${zone}" is not an IANA time zone name (for example Asia/Shanghai, Europe/London, UTC)`, {
      code: 'INVALID_TIMEZONE',
      details: { parameter: 'timezone', received: zone },
    });
  }
  return zone;
}

function instantOrThrow(parameter: string, text: string, zone: string): number {
  const parsed = parseDateTime(text);
  if (parsed === undefined) {
    throw new ParameterError('type_mismatch', `${parameter} is not a real date-time: "${text}"`, { code: 'INVALID_DATETIME', details: { parameter, received: text } });
  }
  return toInstant(parsed, zone);
}

export function calendarTools(catalog: CatalogContext): ToolSpec<any, unknown>[] {
  const { state } = catalog;
  const home = state.calendarTimeZone;

  const create: ToolSpec<CreateArgs, CalendarEvent> = {
    name: 'create_event',
    description:
      `Creates a calendar event. start/end are RFC 3339 date-times; without an offset they are wall-clock times in "timezone" (IANA name, default ${home}). ` +
      'Give end or duration_minutes. The response shows the event in its zone (with offset) and in UTC. ' +
      'NOT idempotent and takes no idempotency key: each call creates a new event; after a timeout, call list_events before retrying. ' +
      `Errors: 400 boundary_violation when the event starts in the past, more than ${BOOKING_HORIZON_DAYS} days ahead, ends before it starts or lasts over ${MAX_EVENT_HOURS} h; ` +
      '400 enum_mismatch for an unknown time zone; 409 conflict when it overlaps another event (details name it; set allow_overlap to book anyway).',
    input: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200 },
        start: { type: 'string', pattern: DATE_TIME_PATTERN, description: 'e.g. "2026-03-30T09:00:00+08:00", or "2026-03-30T09:00" read in timezone.' },
        end: { type: 'string', pattern: DATE_TIME_PATTERN },
        duration_minutes: { type: 'integer', minimum: 5, maximum: MAX_EVENT_HOURS * 60 },
        timezone: { type: 'string', minLength: 1, maxLength: 64, description: `IANA time zone, default ${home}.` },
        attendees: { type: 'array', maxItems: 50, uniqueItems: true, items: { type: 'string', format: 'email' } },
        location: { type: 'string', maxLength: 200 },
        allow_overlap: { type: 'boolean', default: false },
      },
      required: ['title', 'start'],
      anyOf: [{ required: ['end'] }, { required: ['duration_minutes'] }],
      additionalProperties: false,
    },
    idempotent: false,
    annotations: { title: 'Create event', readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: false },
    execute(args, ctx) {
      const now = ctx.clock.now();
      const zone = zoneOrThrow(args.timezone, home);
      if (args.end !== undefined && args.duration_minutes !== undefined) {
        throw new ParameterError('schema_mismatch', 'give either end or duration_minutes, not both', { code: 'END_AND_DURATION', details: { end: args.end, duration_minutes: args.duration_minutes } });
      }
      const startMs = instantOrThrow('start', args.start, zone);
      const endMs = args.end !== undefined ? instantOrThrow('end', args.end, zone) : startMs + args.duration_minutes! * 60_000;
      if (endMs <= startMs) {
        throw new ParameterError('boundary_violation', `the event ends (${formatZoned(endMs, zone)}) before it starts (${formatZoned(startMs, zone)})`, {
          code: 'END_BEFORE_START',
          details: { start: formatZoned(startMs, zone), end: formatZoned(endMs, zone) },
        });
      }
      if (endMs - startMs > MAX_EVENT_HOURS * 3_600_000) {
        throw new ParameterError('boundary_violation', `events last at most ${MAX_EVENT_HOURS} hours`, { code: 'EVENT_TOO_LONG', details: { max_hours: MAX_EVENT_HOURS } });
      }
      if (startMs < now) {
        throw new ParameterError('boundary_violation', `the event would start in the past: ${formatZoned(startMs, zone)} is before now (${formatZoned(now, zone)})`, {
          code: 'EVENT_IN_PAST',
          details: { start: formatZoned(startMs, zone), now: formatZoned(now, zone) },
        });
      }
      if (startMs > now + BOOKING_HORIZON_DAYS * DAY_MS) {
        throw new ParameterError('boundary_violation', `events can be booked at most ${BOOKING_HORIZON_DAYS} days ahead`, {
          code: 'EVENT_TOO_FAR',
          details: { start: formatZoned(startMs, zone), max: formatZoned(now + BOOKING_HORIZON_DAYS * DAY_MS, zone) },
        });
      }
      if (!args.allow_overlap) {
        const clash = state.events.find((e) => Date.parse(e.start_utc) < endMs && Date.parse(e.end_utc) > startMs);
        if (clash !== undefined) {
          throw new BusinessError('conflict', `the slot overlaps "${clash.title}" (${formatZoned(Date.parse(clash.start_utc), zone)} to ${formatZoned(Date.parse(clash.end_utc), zone)})`, {
            code: 'EVENT_OVERLAP',
            details: { conflicting_event_id: clash.event_id, start: formatZoned(Date.parse(clash.start_utc), zone), end: formatZoned(Date.parse(clash.end_utc), zone) },
          });
        }
      }
      const event: CalendarEvent = {
        event_id: catalog.nextId('EVT'),
        title: args.title,
        start_utc: new Date(startMs).toISOString(),
        end_utc: new Date(endMs).toISOString(),
        timezone: zone,
        start: formatZoned(startMs, zone),
        end: formatZoned(endMs, zone),
        attendees: [...(args.attendees ?? [])],
        location: args.location ?? null,
        created_at: new Date(now).toISOString(),
        source: 'tool',
      };
      state.events.push(event);
      return structuredClone(event);
    },
  };

  const list: ToolSpec<ListArgs, { timezone: string; date_from: string; date_to: string; events: ListedEvent[] }> = {
    name: 'list_events',
    description:
      `Lists events overlapping the local days date_from..date_to (inclusive, YYYY-MM-DD) in "timezone" (default ${home}); times are shown in that zone and in UTC. ` +
      `An empty list means a free calendar. Errors: 400 boundary_violation when date_from is after date_to or the window exceeds ${MAX_LIST_DAYS} days; ` +
      '400 enum_mismatch for an unknown time zone. Read-only and idempotent: safe to retry.',
    input: {
      type: 'object',
      properties: {
        date_from: { type: 'string', format: 'date' },
        date_to: { type: 'string', format: 'date' },
        timezone: { type: 'string', minLength: 1, maxLength: 64 },
      },
      required: ['date_from', 'date_to'],
      additionalProperties: false,
    },
    idempotent: true,
    annotations: { title: 'List events', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args) {
      const zone = zoneOrThrow(args.timezone, home);
      if (args.date_from > args.date_to) {
        throw new ParameterError('boundary_violation', `date_from (${args.date_from}) is after date_to (${args.date_to})`, { code: 'INVALID_DATE_RANGE', details: { date_from: args.date_from, date_to: args.date_to } });
      }
      const span = daysBetween(args.date_from, args.date_to) + 1;
      if (span > MAX_LIST_DAYS) {
        throw new ParameterError('boundary_violation', `the window is ${span} days; at most ${MAX_LIST_DAYS} per call`, { code: 'RANGE_TOO_WIDE', details: { days: span, max_days: MAX_LIST_DAYS } });
      }
      const fromMs = startOfLocalDay(args.date_from, zone);
      const toMs = startOfLocalDay(addDays(args.date_to, 1), zone);
      const events = state.events
        .filter((e) => Date.parse(e.start_utc) < toMs && Date.parse(e.end_utc) > fromMs)
        .sort((a, b) => a.start_utc.localeCompare(b.start_utc) || a.event_id.localeCompare(b.event_id))
        .map((e) => ({
          event_id: e.event_id,
          title: e.title,
          start: formatZoned(Date.parse(e.start_utc), zone),
          end: formatZoned(Date.parse(e.end_utc), zone),
          start_utc: e.start_utc,
          end_utc: e.end_utc,
          event_timezone: e.timezone,
          attendees: [...e.attendees],
          location: e.location,
        }));
      return { timezone: zone, date_from: args.date_from, date_to: args.date_to, events };
    },
  };

  return [create, list];
}
