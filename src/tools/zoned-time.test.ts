import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, formatZoned, isValidTimeZone, localIsoDate, offsetMinutes, parseDateTime, parseIsoDate, startOfLocalDay, toInstant } from './zoned-time.js';

describe('ISO dates', () => {
  it('accepts real dates only', () => {
    expect(parseIsoDate('2026-03-29')).toBe(Date.UTC(2026, 2, 29));
    expect(parseIsoDate('2026-02-30')).toBeUndefined();
    expect(parseIsoDate('2026-3-29')).toBeUndefined();
    expect(parseIsoDate('tomorrow')).toBeUndefined();
    expect(parseIsoDate('2028-02-29')).toBe(Date.UTC(2028, 1, 29));
  });

  it('does day arithmetic across month and year ends', () => {
    expect(addDays('2026-03-31', 1)).toBe('2026-04-01');
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
    expect(daysBetween('2026-03-01', '2026-03-29')).toBe(28);
  });
});

describe('time zones', () => {
  it('knows offsets, including daylight saving time', () => {
    expect(offsetMinutes(Date.UTC(2026, 2, 29, 12), 'Asia/Shanghai')).toBe(480);
    // Europe/London switches to BST at 01:00 UTC on 2026-03-29.
    expect(offsetMinutes(Date.UTC(2026, 2, 29, 0, 30), 'Europe/London')).toBe(0);
    expect(offsetMinutes(Date.UTC(2026, 2, 29, 1, 30), 'Europe/London')).toBe(60);
    expect(offsetMinutes(Date.UTC(2026, 0, 15), 'America/New_York')).toBe(-300);
  });

  it('names the local day of an instant', () => {
    const at = Date.UTC(2026, 2, 29, 14);
    expect(localIsoDate(at, 'UTC')).toBe('2026-03-29');
    expect(localIsoDate(at, 'Australia/Sydney')).toBe('2026-03-30');
    expect(localIsoDate(at, 'America/Los_Angeles')).toBe('2026-03-29');
  });

  it('formats RFC 3339 with the zone offset', () => {
    expect(formatZoned(Date.UTC(2026, 2, 30, 1), 'Asia/Shanghai')).toBe('2026-03-30T09:00:00+08:00');
    expect(formatZoned(Date.UTC(2026, 2, 30, 1), 'UTC')).toBe('2026-03-30T01:00:00Z');
    expect(formatZoned(Date.UTC(2026, 0, 15, 14), 'America/New_York')).toBe('2026-01-15T09:00:00-05:00');
  });

  it('reads wall times in a zone, and instants with offsets as they are', () => {
    const local = parseDateTime('2026-10-26T09:00');
    const instant = parseDateTime('2026-10-26T09:00:00+08:00');
    expect(local?.kind).toBe('local');
    expect(toInstant(local!, 'Europe/London')).toBe(Date.UTC(2026, 9, 26, 9));
    expect(toInstant(parseDateTime('2026-10-24T09:00')!, 'Europe/London')).toBe(Date.UTC(2026, 9, 24, 8));
    expect(toInstant(instant!, 'Europe/London')).toBe(Date.UTC(2026, 9, 26, 1));
    // Sydney falls back at 16:00Z on April 4: 01:00 local on the 5th is still daylight time (+11),
    // though a guess made with the offset in force at 01:00Z (+10) lands an hour late.
    expect(toInstant(parseDateTime('2026-04-05T01:00')!, 'Australia/Sydney')).toBe(Date.UTC(2026, 3, 4, 14));
    expect(toInstant(parseDateTime('2026-04-05T04:00')!, 'Australia/Sydney')).toBe(Date.UTC(2026, 3, 4, 18));
    expect(parseDateTime('2026-02-30T09:00')).toBeUndefined();
    expect(parseDateTime('2026-03-30T25:00')).toBeUndefined();
  });

  it('finds where a local day starts', () => {
    expect(startOfLocalDay('2026-03-30', 'Asia/Shanghai')).toBe(Date.UTC(2026, 2, 29, 16));
    expect(startOfLocalDay('2026-03-30', 'UTC')).toBe(Date.UTC(2026, 2, 30));
  });

  it('validates zone names', () => {
    expect(isValidTimeZone('Asia/Shanghai')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });
});
