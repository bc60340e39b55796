/**
 * A handful of tools that fail in the ways real tools do, for `faultline demo`. Each failure is
 * produced the way a real client would surface it (status codes, errno codes, hanging sockets),
 * so what the demo prints is the runtime's real classification, not a scripted answer.
 */
import { defineTool, type Tool } from '../runtime/define-tool.js';
import { BusinessError, HttpError } from '../runtime/tool-errors.js';

function errnoError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

export interface DemoState {
  ordersCreated: number;
  salesCalls: number;
  translateCalls: number;
}

export function createDemoTools(state: DemoState): Tool[] {
  return [
    defineTool({
      name: 'get_weather',
      description: 'Current weather for a city. Units: celsius or fahrenheit. 404 if the city is unknown.',
      input: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1 },
          unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius', 'x-synonyms': { c: 'celsius', f: 'fahrenheit' } },
        },
        required: ['city'],
      },
      output: { type: 'object', properties: { city: { type: 'string' }, temperature: { type: 'number' }, condition: { type: 'string' } }, required: ['city', 'temperature', 'condition'] },
      idempotent: true,
      execute: ({ city, unit }: { city: string; unit: string }) => ({ city, temperature: unit === 'celsius' ? 18 : 64, condition: 'cloudy' }),
    }),
    defineTool({
      name: 'search_documents',
      description: 'Full-text search over meeting notes. Returns no_results when nothing matches the filters.',
      input: { type: 'object', properties: { query: { type: 'string' }, date_from: { type: 'string', format: 'date' } }, required: ['query'] },
      idempotent: true,
      execute: ({ date_from }: { query: string; date_from?: string }) => {
        throw new BusinessError('no_results', `no documents since ${date_from ?? 'the beginning'}`);
      },
    }),
    defineTool({
      name: 'query_sales_data',
      description: 'Monthly sales by region. The database is sometimes briefly unavailable (503).',
      input: { type: 'object', properties: { month: { type: 'string' }, region: { type: 'string' } }, required: ['month'] },
      idempotent: true,
      execute: ({ month, region }: { month: string; region?: string }) => {
        state.salesCalls++;
        if (state.salesCalls <= 2) throw new HttpError(503, 'database connection timeout', { 'retry-after': '5' });
        return { month, region: region ?? 'all', records: 31 };
      },
    }),
    defineTool({
      name: 'translate_text',
      description: 'Machine translation. Rate limited: 429 with Retry-After.',
      input: { type: 'object', properties: { text: { type: 'string' }, to: { type: 'string' } }, required: ['text', 'to'] },
      idempotent: true,
      execute: ({ text, to }: { text: string; to: string }) => {
        state.translateCalls++;
        if (state.translateCalls === 1) throw new HttpError(429, 'too many requests', { 'retry-after': '20' });
        return { text: `[${to}] ${text}` };
      },
    }),
    defineTool({
      name: 'create_order',
      description: 'Creates an order (not idempotent). Slow under load: a timeout may still have created the order.',
      input: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } }, required: ['sku', 'qty'] },
      timeoutMs: 3000,
      execute: async (_args: { sku: string; qty: number }, ctx) => {
        state.ordersCreated++; // the write lands ...
        await ctx.clock.sleep(30_000); // ... and the response is lost
        return { order_id: `ORD-${state.ordersCreated}` };
      },
    }),
    defineTool({
      name: 'crm_lookup',
      description: 'Looks up a customer in the CRM. 401 when the API token has been revoked.',
      input: { type: 'object', properties: { email: { type: 'string' }, api_key: { type: 'string' } }, required: ['email'] },
      idempotent: true,
      execute: () => {
        throw new HttpError(401, 'invalid API token', { 'www-authenticate': 'Bearer' });
      },
    }),
    defineTool({
      name: 'geocode',
      description: 'Geocodes an address with the primary provider; falls back to geocode_backup while it is down.',
      input: { type: 'object', properties: { address: { type: 'string' } }, required: ['address'] },
      idempotent: true,
      retry: { maxRetries: 1, baseDelayMs: 500 },
      breaker: { failureThreshold: 3, cooldownMs: 60_000 },
      fallback: 'geocode_backup',
      execute: () => {
        throw errnoError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.7:443');
      },
    }),
    defineTool({
      name: 'geocode_backup',
      description: 'Secondary geocoder: coarser, always up.',
      input: { type: 'object', properties: { address: { type: 'string' } }, required: ['address'] },
      idempotent: true,
      execute: ({ address }: { address: string }) => ({ address, lat: 31.23, lon: 121.47, precision: 'city' }),
    }),
    defineTool({
      name: 'get_price',
      description: 'Current price of a product, as a number.',
      input: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
      output: { type: 'object', properties: { sku: { type: 'string' }, amount: { type: 'number' } }, required: ['sku', 'amount'] },
      idempotent: true,
      // The upstream started returning amounts as strings: schema drift.
      execute: ({ sku }: { sku: string }) => ({ sku, amount: '19.90' }),
    }),
  ];
}

/** The calls the demo makes: an agent's session, with its mistakes. */
export const DEMO_CALLS: readonly { tool: string; args: Record<string, unknown>; intent: string }[] = [
  { tool: 'get_weather', args: { city: 'Shanghai', unit: 'C' }, intent: 'weather in Shanghai' },
  { tool: 'get_weather', args: { unit: 'celsius' }, intent: 'weather tomorrow' },
  { tool: 'get_wether', args: { city: 'Paris' }, intent: 'weather in Paris' },
  { tool: 'search_documents', args: { query: 'project X meeting notes', date_from: '2026-03-22' }, intent: 'meeting notes from last week' },
  { tool: 'query_sales_data', args: { month: '2026-03', region: 'south' }, intent: 'sales report for March' },
  { tool: 'translate_text', args: { text: 'failure is data', to: 'zh' }, intent: 'translate the slogan' },
  { tool: 'create_order', args: { sku: 'SKU-1', qty: 2 }, intent: 'order two units' },
  { tool: 'crm_lookup', args: { email: 'ann@example.com', api_key: 'sk-demo-1234567890abcdefghijklmnop' }, intent: 'find the customer' },
  { tool: 'geocode', args: { address: '1 Bund Rd' }, intent: 'map the office' },
  { tool: 'geocode', args: { address: '2 Bund Rd' }, intent: 'map the warehouse' },
  { tool: 'geocode', args: { address: '3 Bund Rd' }, intent: 'map the store' },
  { tool: 'geocode', args: { address: '4 Bund Rd' }, intent: 'map the depot' },
  { tool: 'get_price', args: { sku: 'SKU-1' }, intent: 'price check' },
];
