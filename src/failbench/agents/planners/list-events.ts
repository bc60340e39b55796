/** The list events domain's main step: the calendar events of a day, where no event can be booked. */
import { resolveDay } from '../intent.js';
import type { DomainPlanner } from '../plan-step.js';
import { asObject, arrayAt, CALENDAR_HOME } from '../step-parts.js';

export const listEventsPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => !has('create_event') && has('list_events') && (verbs.has('events_list') || intent.day !== undefined),
  plan(intent, ctx, h) {
    const { base } = h;
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
};
