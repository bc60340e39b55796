/**
 * `get_weather`: daily weather per city and date. Every (seed, city, date) has one fixed
 * answer drawn from the city's monthly climate, so a test can call twice and compare, and the
 * response names the date it is for, so a checker can tell "today" from "tomorrow" (seed 000's
 * canonical semantic error).
 */
import type { ToolSpec } from '../runtime/define-tool.js';
import { BusinessError, ParameterError } from '../runtime/tool-errors.js';
import { closestNames } from '../runtime/suggest.js';
import { keyedRandom, noise, pick, roundTo } from './seeded-random.js';
import { addDays, localIsoDate, parseIsoDate } from './zoned-time.js';

interface City {
  id: string;
  name: string;
  country: string;
  timeZone: string;
  aliases: readonly string[];
  /** Mean daily temperature per month, Celsius. */
  meanC: readonly number[];
  /** Typical gap between the day's high and low. */
  rangeC: number;
  /** Chance of a wet day per month. */
  wet: readonly number[];
  humidity: number;
}

/** Rough climate normals: enough for plausible, seasonal numbers. */
export const CITIES: readonly City[] = [
  { id: 'shanghai', name: 'Shanghai', country: 'CN', timeZone: 'Asia/Shanghai', aliases: ['上海', 'sha'], meanC: [4.8, 6.6, 10.4, 15.8, 21, 25, 29.1, 28.6, 24.8, 19.8, 13.9, 7.5], rangeC: 7, wet: [0.3, 0.33, 0.4, 0.4, 0.4, 0.5, 0.4, 0.4, 0.35, 0.25, 0.28, 0.25], humidity: 74 },
  { id: 'beijing', name: 'Beijing', country: 'CN', timeZone: 'Asia/Shanghai', aliases: ['北京', 'peking', 'pek'], meanC: [-3.1, 0.3, 6.7, 14.8, 20.8, 24.9, 26.7, 25.5, 20.8, 13.7, 5, -0.9], rangeC: 11, wet: [0.08, 0.1, 0.13, 0.17, 0.2, 0.33, 0.45, 0.4, 0.25, 0.15, 0.1, 0.07], humidity: 52 },
  { id: 'guangzhou', name: 'Guangzhou', country: 'CN', timeZone: 'Asia/Shanghai', aliases: ['广州', 'canton', 'can'], meanC: [13.9, 15.2, 18.1, 22.1, 25.8, 27.6, 28.8, 28.6, 27.5, 24.8, 20.3, 15.6], rangeC: 7, wet: [0.25, 0.35, 0.5, 0.55, 0.6, 0.65, 0.55, 0.55, 0.45, 0.2, 0.15, 0.15], humidity: 77 },
  { id: 'shenzhen', name: 'Shenzhen', country: 'CN', timeZone: 'Asia/Shanghai', aliases: ['深圳', 'szx'], meanC: [15.4, 16.4, 19, 22.9, 26.2, 27.9, 28.9, 28.7, 27.7, 25.3, 21.4, 17], rangeC: 6, wet: [0.2, 0.3, 0.4, 0.5, 0.55, 0.65, 0.6, 0.6, 0.5, 0.2, 0.15, 0.15], humidity: 75 },
  { id: 'hangzhou', name: 'Hangzhou', country: 'CN', timeZone: 'Asia/Shanghai', aliases: ['杭州', 'hgh'], meanC: [4.6, 6.8, 11, 16.8, 22, 25.4, 29.3, 28.6, 24.4, 19, 12.9, 6.8], rangeC: 8, wet: [0.35, 0.38, 0.45, 0.45, 0.45, 0.55, 0.4, 0.45, 0.38, 0.27, 0.3, 0.27], humidity: 76 },
  { id: 'chengdu', name: 'Chengdu', country: 'CN', timeZone: 'Asia/Shanghai', aliases: ['成都', 'ctu'], meanC: [5.6, 8.1, 12.4, 17.4, 21.6, 24.2, 25.8, 25.4, 21.7, 17.4, 12.4, 7.2], rangeC: 6, wet: [0.2, 0.25, 0.35, 0.4, 0.45, 0.5, 0.55, 0.5, 0.5, 0.45, 0.3, 0.2], humidity: 80 },
  { id: 'tokyo', name: 'Tokyo', country: 'JP', timeZone: 'Asia/Tokyo', aliases: ['東京', '东京', 'tyo'], meanC: [5.4, 6.1, 9.4, 14.3, 18.8, 21.9, 25.7, 26.9, 23.3, 18, 12.5, 7.7], rangeC: 8, wet: [0.15, 0.2, 0.35, 0.35, 0.35, 0.45, 0.4, 0.3, 0.4, 0.35, 0.25, 0.15], humidity: 63 },
  { id: 'singapore', name: 'Singapore', country: 'SG', timeZone: 'Asia/Singapore', aliases: ['新加坡', 'sin'], meanC: [26.5, 27.1, 27.5, 28, 28.3, 28.3, 27.9, 27.9, 27.6, 27.6, 27, 26.4], rangeC: 7, wet: [0.5, 0.35, 0.45, 0.5, 0.45, 0.45, 0.45, 0.45, 0.45, 0.5, 0.6, 0.6], humidity: 84 },
  { id: 'sydney', name: 'Sydney', country: 'AU', timeZone: 'Australia/Sydney', aliases: ['悉尼', 'syd'], meanC: [23.5, 23.4, 22.1, 19.5, 16.6, 14.2, 13.4, 14.5, 17, 19, 20.4, 22.1], rangeC: 8, wet: [0.4, 0.45, 0.45, 0.4, 0.4, 0.4, 0.3, 0.25, 0.3, 0.35, 0.4, 0.35], humidity: 65 },
  { id: 'london', name: 'London', country: 'GB', timeZone: 'Europe/London', aliases: ['伦敦', 'lon'], meanC: [5.2, 5.3, 7.6, 9.9, 13.3, 16.5, 18.7, 18.5, 15.7, 12, 8, 5.5], rangeC: 7, wet: [0.5, 0.4, 0.4, 0.35, 0.35, 0.3, 0.3, 0.33, 0.33, 0.45, 0.5, 0.5], humidity: 76 },
  { id: 'paris', name: 'Paris', country: 'FR', timeZone: 'Europe/Paris', aliases: ['巴黎', 'par'], meanC: [5, 5.6, 8.8, 11.5, 15.2, 18.3, 20.5, 20.3, 16.9, 13, 8.3, 5.5], rangeC: 8, wet: [0.33, 0.3, 0.33, 0.3, 0.33, 0.3, 0.25, 0.25, 0.27, 0.33, 0.35, 0.35], humidity: 74 },
  { id: 'berlin', name: 'Berlin', country: 'DE', timeZone: 'Europe/Berlin', aliases: ['柏林', 'ber'], meanC: [0.6, 2.3, 5.1, 10.2, 14.8, 17.9, 20.3, 19.7, 15.3, 10.5, 5.4, 1.9], rangeC: 8, wet: [0.35, 0.3, 0.3, 0.27, 0.3, 0.3, 0.3, 0.3, 0.27, 0.27, 0.3, 0.35], humidity: 74 },
  { id: 'new-york', name: 'New York', country: 'US', timeZone: 'America/New_York', aliases: ['纽约', 'nyc', 'new york city'], meanC: [0.5, 1.8, 5.8, 11.7, 17.1, 22.3, 25.3, 24.7, 20.9, 14.6, 8.9, 3.3], rangeC: 8, wet: [0.35, 0.32, 0.35, 0.35, 0.37, 0.33, 0.33, 0.3, 0.28, 0.28, 0.3, 0.35], humidity: 63 },
  { id: 'san-francisco', name: 'San Francisco', country: 'US', timeZone: 'America/Los_Angeles', aliases: ['旧金山', 'sf', 'sfo'], meanC: [10.7, 12, 12.8, 13.6, 14.6, 15.8, 16.4, 17, 17.7, 16.6, 13.6, 10.9], rangeC: 8, wet: [0.35, 0.35, 0.3, 0.2, 0.1, 0.04, 0.01, 0.02, 0.05, 0.12, 0.27, 0.35], humidity: 72 },
];

/** Days of history kept, and days of forecast offered, around the city's local today. */
export const WEATHER_HISTORY_DAYS = 92;
export const WEATHER_FORECAST_DAYS = 14;

function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/[\s_.-]+/g, ' ');
}

const CITY_INDEX = new Map<string, City>();
for (const city of CITIES) {
  for (const name of [city.id, city.name, ...city.aliases]) CITY_INDEX.set(normalizeName(name), city);
}

export function findCity(name: string): City | undefined {
  const normalized = normalizeName(name);
  // "Shanghai, China" and "Paris, FR" are how people (and models) write cities.
  return CITY_INDEX.get(normalized) ?? CITY_INDEX.get(normalizeName(normalized.split(',')[0] ?? ''));
}

type Condition = 'sunny' | 'partly_cloudy' | 'cloudy' | 'fog' | 'light_rain' | 'rain' | 'thunderstorm' | 'snow';

export interface DailyWeather {
  city: string;
  country: string;
  timezone: string;
  date: string;
  kind: 'observed' | 'forecast';
  unit: 'celsius' | 'fahrenheit';
  condition: Condition;
  temp_high: number;
  temp_low: number;
  temp_mean: number;
  humidity_pct: number;
  precipitation_mm: number;
  wind_kph: number;
  /** The moment this answer was produced (virtual time). */
  as_of: string;
}

/** The seeded weather of one city on one day, in Celsius. */
export function dailyWeatherC(seed: number, city: City, date: string): Omit<DailyWeather, 'kind' | 'unit' | 'as_of'> {
  const random = keyedRandom(seed, 'weather', city.id, date);
  const month = Number(date.slice(5, 7)) - 1;
  const mean = (city.meanC[month] ?? 15) + noise(random, 4);
  const wet = random() < (city.wet[month] ?? 0.3);
  const high = mean + city.rangeC / 2 + noise(random, 1.5);
  const low = mean - city.rangeC / 2 + noise(random, 1.5);
  let condition: Condition;
  let precipitation = 0;
  if (wet) {
    condition = mean < 1 ? 'snow' : high > 26 && random() < 0.4 ? 'thunderstorm' : pick(random, ['light_rain', 'light_rain', 'rain'] as const);
    precipitation = roundTo(condition === 'light_rain' ? 0.5 + random() * 4 : 4 + random() * 30, 1);
  } else {
    condition = pick(random, ['sunny', 'sunny', 'partly_cloudy', 'partly_cloudy', 'cloudy', 'fog'] as const);
  }
  const humidity = Math.max(15, Math.min(100, Math.round(city.humidity + noise(random, 12) + (wet ? 12 : 0))));
  return {
    city: city.name,
    country: city.country,
    timezone: city.timeZone,
    date,
    condition,
    temp_high: roundTo(Math.max(high, low + 1), 1),
    temp_low: roundTo(low, 1),
    temp_mean: roundTo(mean, 1),
    humidity_pct: humidity,
    precipitation_mm: precipitation,
    wind_kph: roundTo(4 + random() * 26, 1),
  };
}

const toF = (c: number) => roundTo((c * 9) / 5 + 32, 1);

interface WeatherArgs {
  city: string;
  date?: string;
  unit: 'celsius' | 'fahrenheit';
}

export function weatherTools(seed: number): ToolSpec<any, unknown>[] {
  const getWeather: ToolSpec<WeatherArgs, DailyWeather> = {
    name: 'get_weather',
    description:
      `Daily weather for a city on one calendar day (ISO date YYYY-MM-DD, in the city's local time zone; default: today there). ` +
      `The response's "date" is the day it describes, and "kind" says whether it is observed (past days) or a forecast (today and later). ` +
      `Covers the last ${WEATHER_HISTORY_DAYS} days and the next ${WEATHER_FORECAST_DAYS}. ` +
      `Errors: 400 boundary_violation when the date is outside that range (details give the valid range); 400 for a malformed date such as "tomorrow"; ` +
      `404 not_found for an unknown city (details suggest close names). Read-only and idempotent: safe to retry.`,
    input: {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 1, maxLength: 80, description: 'City name in English or Chinese, e.g. "Shanghai" or "上海".' },
        date: { type: 'string', format: 'date', description: 'ISO calendar date YYYY-MM-DD in the city\'s local time. Relative words like "tomorrow" are not accepted.' },
        unit: {
          enum: ['celsius', 'fahrenheit'],
          default: 'celsius',
          'x-synonyms': { c: 'celsius', f: 'fahrenheit', metric: 'celsius', imperial: 'fahrenheit', 摄氏: 'celsius', 华氏: 'fahrenheit' },
        },
      },
      required: ['city'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        country: { type: 'string' },
        timezone: { type: 'string' },
        date: { type: 'string', format: 'date' },
        kind: { enum: ['observed', 'forecast'] },
        unit: { enum: ['celsius', 'fahrenheit'] },
        condition: { type: 'string' },
        temp_high: { type: 'number' },
        temp_low: { type: 'number' },
        temp_mean: { type: 'number' },
        humidity_pct: { type: 'integer' },
        precipitation_mm: { type: 'number' },
        wind_kph: { type: 'number' },
        as_of: { type: 'string' },
      },
      required: ['city', 'date', 'kind', 'unit', 'condition', 'temp_high', 'temp_low', 'temp_mean'],
    },
    idempotent: true,
    annotations: { title: 'Get weather', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args, ctx) {
      const city = findCity(args.city);
      if (city === undefined) {
        const suggestions = closestNames(args.city, CITIES.map((c) => c.name));
        throw new BusinessError('not_found', `unknown city "${args.city}"`, { code: 'CITY_NOT_FOUND', details: { city: args.city, suggestions } });
      }
      const now = ctx.clock.now();
      const today = localIsoDate(now, city.timeZone);
      const date = args.date ?? today;
      if (parseIsoDate(date) === undefined) {
        throw new ParameterError('type_mismatch', `date must be a real calendar date YYYY-MM-DD, got "${date}"`, { code: 'INVALID_DATE', details: { parameter: 'date', received: date } });
      }
      const min = addDays(today, -WEATHER_HISTORY_DAYS);
      const max = addDays(today, WEATHER_FORECAST_DAYS);
      if (date < min || date > max) {
        throw new ParameterError('boundary_violation', `no weather data for ${date}: ${city.name} has data from ${min} to ${max}`, {
          code: 'DATE_OUT_OF_RANGE',
          details: { parameter: 'date', received: date, min, max, today },
        });
      }
      const c = dailyWeatherC(seed, city, date);
      const fahrenheit = args.unit === 'fahrenheit';
      return {
        ...c,
        kind: date < today ? 'observed' : 'forecast',
        unit: args.unit,
        temp_high: fahrenheit ? toF(c.temp_high) : c.temp_high,
        temp_low: fahrenheit ? toF(c.temp_low) : c.temp_low,
        temp_mean: fahrenheit ? toF(c.temp_mean) : c.temp_mean,
        as_of: new Date(now).toISOString(),
      };
    },
  };
  return [getWeather];
}
