/** The weather domain's main step: the weather in a city on a day. */
import { resolveDay } from '../intent.js';
import type { DomainPlanner, Obj } from '../plan-step.js';
import { asObject } from '../step-parts.js';

function weatherLine(o: Obj | undefined): string {
  if (o === undefined) return 'no weather data';
  const unit = o['unit'] === 'fahrenheit' ? '°F' : '°C';
  const parts = [`${String(o['city'])} on ${String(o['date'])}: ${String(o['condition'])}, ${String(o['temp_low'])} to ${String(o['temp_high'])} ${unit}`];
  if (o['humidity_pct'] !== undefined) parts.push(`humidity ${String(o['humidity_pct'])}%`);
  if (o['precipitation_mm'] !== undefined) parts.push(`precipitation ${String(o['precipitation_mm'])} mm`);
  if (o['wind_kph'] !== undefined) parts.push(`wind ${String(o['wind_kph'])} km/h`);
  const line = parts.join(', ');
  return o['as_of'] === undefined ? line : `${line} (${String(o['kind'] ?? 'report')} as of ${String(o['as_of'])})`;
}

export const weatherPlanner: DomainPlanner = {
  claims: (intent, { has, verbs }) => has('get_weather') && (verbs.has('weather') || intent.city !== undefined || intent.cityLiteral !== undefined),
  plan(intent, ctx, h) {
    const { base } = h;
    const city = intent.city;
    const zone = city?.timeZone ?? 'UTC';
    const date = intent.day === undefined ? undefined : resolveDay(intent.day, ctx.nowMs, zone);
    const name = city?.name ?? intent.cityLiteral;
    if (name === undefined) return undefined;
    return {
      key: 'main',
      tool: 'get_weather',
      write: false,
      check: { ...base, ...(city !== undefined ? { city: city.name } : {}) },
      args: () => ({ city: name, ...(date !== undefined ? { date } : {}), ...(intent.unit !== undefined ? { unit: intent.unit } : {}) }),
      summary: (o) => weatherLine(asObject(o)),
    };
  },
};
