import { createRuntime, defineTool, HttpError, BusinessError } from '../dist/index.js';
const inputSchema = { type: 'object', properties: { city: { type: 'string', minLength: 1 }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city'] };
let i = 0;
const tool = defineTool({ name: 'get_weather', description: 'w', input: inputSchema, idempotent: true, execute: async (a) => {
  const k = i++ % 10;
  if (k === 8) throw new HttpError(404, `no forecast for ${a.city}`, {}, { error: 'not_found', city: a.city });
  if (k === 9) throw new BusinessError('no_results', 'nothing matched');
  return { city: a.city, temperature: 18, condition: 'cloudy', forecast: [{ day: 1, hi: 20, lo: 12 }, { day: 2, hi: 19, lo: 11 }] };
}});
const mode = process.argv[2];
const records = [];
const rt = createRuntime({ tools: [tool], recorder: { enqueue: mode === 'keep' ? (r) => void records.push(r) : () => undefined } });
const N = 200000;
for (let rep = 0; rep < 2; rep++) {
let t0 = process.hrtime.bigint();
for (let j = 0; j < N; j++) await rt.execute('get_weather', { city: 'Paris', unit: 'celsius', days: 3 }, { traceId: 't' + (j/10|0), intent: 'weather for the trip' });
console.log(mode, 'runtime only', N/(Number(process.hrtime.bigint()-t0)/1e9));
}
