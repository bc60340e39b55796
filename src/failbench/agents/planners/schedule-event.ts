/** The schedule event domain's main step: booking a calendar event at a wall time in a zone. */
import { formatInZone, resolveDay, wallTimeToInstant } from '../intent.js';
import type { Confirmation, DomainPlanner, Obj } from '../plan-step.js';
import { asObject, arrayAt, CALENDAR_HOME } from '../step-parts.js';

function eventLine(o: Obj | undefined): string {
  if (o === undefined) return 'no event';
  return `"${String(o['title'])}" ${String(o['event_id'])}: ${String(o['start'])} to ${String(o['end'])} (${String(o['timezone'] ?? o['event_timezone'] ?? '')})`;
}

export const scheduleEventPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('create_event') && verbs.has('schedule') && intent.quoted[0] !== undefined && intent.time !== undefined,
  plan(intent, ctx, h) {
    const { has, base } = h;
    const quoted = intent.quoted;
    const time = intent.time;
    // Claimed only with a time; the check carries that to the compiler.
    if (time === undefined) return undefined;
    const zone = intent.timeZone ?? CALENDAR_HOME;
    const day = resolveDay(intent.day ?? { kind: 'relative', offset: 0 }, ctx.nowMs, zone);
    const startMs = wallTimeToInstant(day, time.hour, time.minute, zone);
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
};
