import { createRuntime, defineTool, HttpError, BusinessError } from '../dist/index.js';
const inputSchema = { type: 'object', properties: { city: { type: 'string', minLength: 1 }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' }, days: { type: 'integer', minimum: 1, maximum: 7 } }, required: ['city'] };
const ok = defineTool({ name: 'ok', description: 'w', input: inputSchema, idempotent: true, execute: async (a) => ({ city: a.city, temperature: 18, condition: 'cloudy', forecast: [{ day: 1, hi: 20, lo: 12 }, { day: 2, hi: 19, lo: 11 }] }) });
const nf = defineTool({ name: 'nf', description: 'w', input: inputSchema, idempotent: true, execute: async (a) => { throw new HttpError(404, `no forecast for ${a.city}`, {}, { error: 'not_found', city: a.city }); } });
const br = defineTool({ name: 'br', description: 'w', input: inputSchema, idempotent: true, execute: async (a) => { throw new BusinessError('no_results', 'nothing matched'); } });
const rt = createRuntime({ tools: [ok, nf, br], recorder: { enqueue: () => undefined } });
for (const [name, opts] of [['ok', {}], ['ok', { traceId: 'x', intent: 'weather for the trip' }], ['nf', {}], ['nf', { traceId: 'x', intent: 'weather for the trip' }], ['br', {}]]) {
  const N = 50000;
  for (let j = 0; j < 10000; j++) await rt.execute(name, { city: 'Paris', unit: 'celsius', days: 3 }, opts);
  const t0 = process.hrtime.bigint();
  for (let j = 0; j < N; j++) await rt.execute(name, { city: 'Paris', unit: 'celsius', days: 3 }, opts);
  console.log(name, JSON.stringify(opts), (Number(process.hrtime.bigint()-t0)/N/1000).toFixed(2), 'us');
}
