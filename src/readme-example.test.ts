/**
 * The README's API example, run for real against a loopback HTTP server, so the first code a
 * new user copies keeps working.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, defineTool, openStore } from './index.js';

let server: Server;
let base = '';
const dir = mkdtempSync(join(tmpdir(), 'faultline-readme-'));
beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const city = url.searchParams.get('city');
    if (city !== 'Paris') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unknown city' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ temperature: url.searchParams.get('unit') === 'celsius' ? 18 : 64 }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('the README API example', () => {
  it('runs as written', async () => {
    const getWeather = defineTool({
      name: 'get_weather',
      description: 'Weather for a city. 404 when the city is unknown.',
      input: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1 },
          unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius', 'x-synonyms': { c: 'celsius', f: 'fahrenheit' } },
        },
        required: ['city'],
      },
      output: { type: 'object', properties: { temperature: { type: 'number' } }, required: ['temperature'] },
      idempotent: true,
      timeoutMs: 3000,
      retry: { maxRetries: 3, baseDelayMs: 200, factor: 2, maxDelayMs: 5000 },
      execute: async ({ city, unit }: { city: string; unit: string }, { signal }) => {
        const res = await fetch(`${base}/v1?city=${encodeURIComponent(city)}&unit=${unit}`, { signal });
        return res.ok ? res.json() : res; // a non-ok Response is classified by its status and Retry-After
      },
    });

    const path = join(dir, 'faultline.db');
    const rt = createRuntime({ tools: [getWeather], store: `sqlite:${path}` });
    const session = rt.session({ agent: 'support-bot', model: 'gpt-4o' });
    const r = await session.execute('get_weather', { city: 'Paris', unit: 'C' }, { intent: 'weather in Paris tomorrow' });
    expect(r).toMatchObject({ ok: true, output: { temperature: 18 } });
    const missing = await session.execute('get_weather', { city: 'Atlantis' });
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect([missing.error.category, missing.error.type, missing.feedback.action]).toEqual(['business', 'not_found', 'try_alternative']);
    await rt.close();

    const store = await openStore(path);
    expect(await store.count()).toBe(2);
    const [first] = await store.query({ limit: 1 });
    expect(first?.context_snapshot).toEqual({ intent: 'weather in Paris tomorrow', agent: 'support-bot', model: 'gpt-4o' });
    await store.close();
  });
});
