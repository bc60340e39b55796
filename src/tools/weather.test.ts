import { describe, expect, it } from 'vitest';
import { harness } from './catalog.test-helpers.js';
import { WEATHER_FORECAST_DAYS, WEATHER_HISTORY_DAYS } from './weather.js';

describe('get_weather', () => {
  it('answers for the date asked, and says which date that is', async () => {
    const h = harness();
    const w = await h.ok('get_weather', { city: 'Shanghai', date: '2026-03-30' });
    expect(w).toMatchObject({ city: 'Shanghai', country: 'CN', timezone: 'Asia/Shanghai', date: '2026-03-30', kind: 'forecast', unit: 'celsius' });
    expect(w.temp_high).toBeGreaterThan(w.temp_low);
    expect(typeof w.condition).toBe('string');
    expect(w.as_of).toBe('2026-03-29T14:00:00.000Z');
    const past = await h.ok('get_weather', { city: 'Shanghai', date: '2026-03-20' });
    expect(past.kind).toBe('observed');
  });

  it('defaults to today in the city, not in UTC', async () => {
    const h = harness(); // 2026-03-29T14:00Z: already the 30th in Sydney
    expect((await h.ok('get_weather', { city: 'Sydney' })).date).toBe('2026-03-30');
    expect((await h.ok('get_weather', { city: 'New York' })).date).toBe('2026-03-29');
  });

  it('gives one fixed answer per city and date, and converts units', async () => {
    const h = harness();
    const a = await h.ok('get_weather', { city: 'Beijing', date: '2026-03-01' });
    const b = await h.ok('get_weather', { city: '北京', date: '2026-03-01' });
    expect(b).toEqual(a);
    const f = await h.ok('get_weather', { city: 'beijing', date: '2026-03-01', unit: 'F' });
    expect(f.unit).toBe('fahrenheit');
    expect(f.temp_high).toBeCloseTo((a.temp_high * 9) / 5 + 32, 0);
    const other = await h.ok('get_weather', { city: 'Beijing', date: '2026-03-02' });
    expect(other).not.toEqual({ ...a, date: '2026-03-02' });
  });

  it('is seasonal: Beijing is colder in January than in July', async () => {
    const h = harness({ now: Date.UTC(2026, 6, 31) });
    let jan = 0;
    let jul = 0;
    const h2 = harness({ now: Date.UTC(2026, 1, 15) });
    for (let d = 1; d <= 10; d++) {
      jul += (await h.ok('get_weather', { city: 'Beijing', date: `2026-07-${String(d).padStart(2, '0')}` })).temp_mean;
      jan += (await h2.ok('get_weather', { city: 'Beijing', date: `2026-01-${String(d + 10).padStart(2, '0')}` })).temp_mean;
    }
    expect(jul / 10).toBeGreaterThan(jan / 10 + 15);
  });

  it('accepts common ways of naming a city', async () => {
    const h = harness();
    expect((await h.ok('get_weather', { city: 'paris, FR' })).city).toBe('Paris');
    expect((await h.ok('get_weather', { city: 'NYC' })).city).toBe('New York');
  });

  it('answers 404 not_found for an unknown city, suggesting close names', async () => {
    const e = await harness().fail('get_weather', { city: 'Shangai' });
    expect(e).toMatchObject({ category: 'business', type: 'not_found', code: 'CITY_NOT_FOUND' });
    expect(e.body).toMatchObject({ suggestions: ['Shanghai'] });
  });

  it('rejects dates outside the data range as boundary violations with the valid range', async () => {
    const h = harness();
    const future = await h.fail('get_weather', { city: 'Shanghai', date: '2026-04-13' });
    expect(future).toMatchObject({ category: 'parameter', type: 'boundary_violation', code: 'DATE_OUT_OF_RANGE' });
    expect(future.body).toMatchObject({ min: '2025-12-27', max: '2026-04-12', today: '2026-03-29' });
    expect(WEATHER_FORECAST_DAYS).toBe(14);
    await h.ok('get_weather', { city: 'Shanghai', date: '2026-04-12' });
    const past = await h.fail('get_weather', { city: 'Shanghai', date: '2025-12-26' });
    expect(past.type).toBe('boundary_violation');
    expect(WEATHER_HISTORY_DAYS).toBe(92);
  });

  it('moves its window with the virtual clock', async () => {
    const h = harness();
    expect((await h.fail('get_weather', { city: 'Tokyo', date: '2026-04-20' })).type).toBe('boundary_violation');
    await h.clock.advance(10 * 86_400_000);
    const w = await h.ok('get_weather', { city: 'Tokyo', date: '2026-04-20' });
    expect(w.as_of).toBe('2026-04-08T14:00:00.000Z');
  });

  it('refuses relative and impossible dates at validation', async () => {
    const h = harness();
    const relative = await h.fail('get_weather', { city: 'Shanghai', date: 'tomorrow' });
    expect(relative).toMatchObject({ stage: 'param_validation', category: 'parameter' });
    expect(relative.issues?.[0]).toMatchObject({ path: 'date', code: 'format_mismatch' });
    expect((await h.fail('get_weather', { city: 'Shanghai', date: '2026-02-30' })).stage).toBe('param_validation');
    expect((await h.fail('get_weather', { date: '2026-03-29' })).issues?.[0]?.code).toBe('missing_required');
  });
});
