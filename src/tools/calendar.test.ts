import { describe, expect, it } from 'vitest';
import { MAX_LIST_DAYS } from './calendar.js';
import { harness } from './catalog.test-helpers.js';

// Late at night on a Sunday in Shanghai: the seeded calendar is empty at 03:00 local.
const slot = { title: 'Release review', start: '2026-04-01T03:00', duration_minutes: 30 };

describe('create_event', () => {
  it('reads wall times in the given zone and answers with offsets and UTC', async () => {
    const h = harness();
    const e = await h.ok('create_event', { ...slot, timezone: 'Asia/Shanghai', attendees: ['ann@example.com'] });
    expect(e).toMatchObject({
      title: 'Release review',
      timezone: 'Asia/Shanghai',
      start: '2026-04-01T03:00:00+08:00',
      end: '2026-04-01T03:30:00+08:00',
      start_utc: '2026-03-31T19:00:00.000Z',
      end_utc: '2026-03-31T19:30:00.000Z',
      attendees: ['ann@example.com'],
      source: 'tool',
    });
  });

  it('defaults to the calendar zone, and honours explicit offsets over the zone', async () => {
    const h = harness();
    const local = await h.ok('create_event', { ...slot });
    expect(local.start_utc).toBe('2026-03-31T19:00:00.000Z');
    const withOffset = await h.ok('create_event', { title: 'UTC call', start: '2026-04-02T03:00:00Z', end: '2026-04-02T03:45:00Z', timezone: 'America/New_York', allow_overlap: true });
    expect(withOffset).toMatchObject({ start_utc: '2026-04-02T03:00:00.000Z', start: '2026-04-01T23:00:00-04:00', timezone: 'America/New_York' });
  });

  it('gets daylight saving time right', async () => {
    const h = harness();
    const before = await h.ok('create_event', { title: 'Before', start: '2026-10-24T09:00', duration_minutes: 60, timezone: 'Europe/London', allow_overlap: true });
    const after = await h.ok('create_event', { title: 'After', start: '2026-10-26T09:00', duration_minutes: 60, timezone: 'Europe/London', allow_overlap: true });
    expect(before.start_utc).toBe('2026-10-24T08:00:00.000Z');
    expect(after.start_utc).toBe('2026-10-26T09:00:00.000Z');
    expect(after.start).toBe('2026-10-26T09:00:00Z');
  });

  it('answers 409 conflict on overlap, naming the other event, unless allow_overlap is set', async () => {
    const h = harness();
    const first = await h.ok('create_event', slot);
    const clash = await h.fail('create_event', { ...slot, title: 'Other', start: '2026-04-01T03:15' });
    expect(clash).toMatchObject({ category: 'business', type: 'conflict', code: 'EVENT_OVERLAP' });
    expect(clash.body).toMatchObject({ conflicting_event_id: first.event_id });
    await h.ok('create_event', { ...slot, title: 'Other', start: '2026-04-01T03:30' });
    await h.ok('create_event', { ...slot, title: 'Other', start: '2026-04-01T03:15', allow_overlap: true });
  });

  it('is not idempotent: a blind retry is refused as an overlap, or doubles the event when overlaps are allowed', async () => {
    const h = harness();
    await h.ok('create_event', slot);
    expect((await h.fail('create_event', slot)).type).toBe('conflict');
    await h.ok('create_event', { ...slot, allow_overlap: true });
    expect(h.state.duplicates().events.extra).toBe(1);
  });

  it('rejects events in the past, too far ahead, backwards, or too long as boundary violations', async () => {
    const h = harness();
    expect(await h.fail('create_event', { ...slot, start: '2026-03-29T21:00' })).toMatchObject({ type: 'boundary_violation', code: 'EVENT_IN_PAST' });
    expect(await h.fail('create_event', { ...slot, start: '2027-04-01T03:00' })).toMatchObject({ type: 'boundary_violation', code: 'EVENT_TOO_FAR' });
    expect(await h.fail('create_event', { title: 'x', start: '2026-04-01T03:00', end: '2026-04-01T02:00' })).toMatchObject({ type: 'boundary_violation', code: 'END_BEFORE_START' });
    expect(await h.fail('create_event', { title: 'x', start: '2026-04-01T03:00', end: '2026-04-02T04:00' })).toMatchObject({ type: 'boundary_violation', code: 'EVENT_TOO_LONG' });
    // The clock reads 22:00 in Shanghai: 21:00 above was an hour ago, 23:00 is an hour away.
    await h.ok('create_event', { title: 'soon', start: '2026-03-29T23:00', duration_minutes: 15, allow_overlap: true });
  });

  it('rejects unknown zones, impossible times, and ambiguous end/duration', async () => {
    const h = harness();
    expect(await h.fail('create_event', { ...slot, timezone: 'Shanghai' })).toMatchObject({ type: 'enum_mismatch', code: 'INVALID_TIMEZONE' });
    expect(await h.fail('create_event', { ...slot, start: '2026-04-31T03:00' })).toMatchObject({ type: 'type_mismatch', code: 'INVALID_DATETIME' });
    expect(await h.fail('create_event', { ...slot, end: '2026-04-01T04:00' })).toMatchObject({ type: 'schema_mismatch', code: 'END_AND_DURATION' });
    const neither = await h.fail('create_event', { title: 'x', start: '2026-04-01T03:00' });
    expect(neither.stage).toBe('param_validation');
    expect(neither.issues?.map((i) => i.code)).toContain('missing_required');
    expect((await h.fail('create_event', { ...slot, start: 'next monday 9am' })).stage).toBe('param_validation');
  });
});

describe('list_events', () => {
  it('lists the events of local days, shown in the requested zone', async () => {
    const h = harness();
    const created = await h.ok('create_event', slot);
    const shanghai = await h.ok('list_events', { date_from: '2026-04-01', date_to: '2026-04-01' });
    expect(shanghai.events.map((e: { event_id: string }) => e.event_id)).toContain(created.event_id);
    // 03:00 on April 1 in Shanghai is still March 31 in London.
    const london = await h.ok('list_events', { date_from: '2026-04-01', date_to: '2026-04-01', timezone: 'Europe/London' });
    expect(london.events.map((e: { event_id: string }) => e.event_id)).not.toContain(created.event_id);
    const londonDayBefore = await h.ok('list_events', { date_from: '2026-03-31', date_to: '2026-03-31', timezone: 'Europe/London' });
    const shown = londonDayBefore.events.find((e: { event_id: string }) => e.event_id === created.event_id);
    expect(shown).toMatchObject({ start: '2026-03-31T20:00:00+01:00', event_timezone: 'Asia/Shanghai', start_utc: '2026-03-31T19:00:00.000Z' });
  });

  it('sorts by start and includes seeded events', async () => {
    const h = harness();
    const r = await h.ok('list_events', { date_from: '2026-03-15', date_to: '2026-04-28', timezone: 'UTC' });
    expect(r.events.length).toBeGreaterThan(10);
    const starts = r.events.map((e: { start_utc: string }) => e.start_utc);
    expect([...starts].sort()).toEqual(starts);
  });

  it('rejects inverted and over-wide windows, and unknown zones', async () => {
    const h = harness();
    expect(await h.fail('list_events', { date_from: '2026-04-02', date_to: '2026-04-01' })).toMatchObject({ type: 'boundary_violation', code: 'INVALID_DATE_RANGE' });
    const wide = await h.fail('list_events', { date_from: '2026-01-01', date_to: '2026-06-30' });
    expect(wide).toMatchObject({ type: 'boundary_violation', code: 'RANGE_TOO_WIDE' });
    expect(wide.body).toMatchObject({ max_days: MAX_LIST_DAYS });
    await h.ok('list_events', { date_from: '2026-01-01', date_to: '2026-04-02' });
    expect((await h.fail('list_events', { date_from: '2026-04-01', date_to: '2026-04-02', timezone: 'China/Beijing' })).code).toBe('INVALID_TIMEZONE');
  });
});
