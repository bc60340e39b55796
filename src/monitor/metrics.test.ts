import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { register as globalRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../record/types.js';
import { bucketOf, bucketValueMs } from '../store/duration-sketch.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { failureCell } from '../store/rollup.js';
import { createMetrics, createStoreMetrics, METRIC_NAMES, type MetricsHandler } from './metrics.js';
import { MONITOR_NOW, monitorDataset } from './monitor-dataset.test-helpers.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the text exposition format (enough of it for prom-client's output). */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function value(samples: readonly Sample[], name: string, labels: Record<string, string>): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.keys(labels).length === Object.keys(s.labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`ambiguous sample ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

/** Expected counters, computed from the records directly. */
function expectedCounts(records: readonly ToolExecutionRecord[]) {
  const calls = new Map<string, number>();
  const failures = new Map<string, number>();
  const retries = new Map<string, number>();
  const trips = new Map<string, number>();
  const durations = new Map<string, { count: number; sum: number }>();
  const bump = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
  for (const r of records) {
    bump(calls, `${r.tool_name}/${r.status}`);
    if (r.status !== 'success') {
      const c = failureCell(r);
      bump(failures, `${r.tool_name}/${c.failure_stage}/${c.failure_category}/${c.failure_type}`);
    }
    bump(retries, r.tool_name, r.retry_count);
    bump(trips, r.tool_name, r.breaker_state === 'open' && r.status !== 'rejected' ? 1 : 0);
    const d = durations.get(r.tool_name) ?? { count: 0, sum: 0 };
    d.count += 1;
    d.sum += r.duration_ms / 1000;
    durations.set(r.tool_name, d);
  }
  return { calls, failures, retries, trips, durations };
}

function checkCounters(samples: readonly Sample[], records: readonly ToolExecutionRecord[]): void {
  const expected = expectedCounts(records);
  for (const [key, n] of expected.calls) {
    const [tool, status] = key.split('/') as [string, string];
    expect(value(samples, METRIC_NAMES.calls, { tool, status }), key).toBe(n);
  }
  const failureSamples = samples.filter((s) => s.name === METRIC_NAMES.failures);
  expect(failureSamples).toHaveLength(expected.failures.size);
  for (const [key, n] of expected.failures) {
    const [tool, stage, category, type] = key.split('/') as [string, string, string, string];
    expect(value(samples, METRIC_NAMES.failures, { tool, stage, category, type }), key).toBe(n);
  }
  for (const [tool, n] of expected.retries) expect(value(samples, METRIC_NAMES.retries, { tool }), tool).toBe(n);
  for (const [tool, n] of expected.trips) expect(value(samples, METRIC_NAMES.breakerTrips, { tool }), tool).toBe(n);
  for (const [tool, d] of expected.durations) {
    expect(value(samples, `${METRIC_NAMES.duration}_count`, { tool })).toBe(d.count);
    expect(value(samples, `${METRIC_NAMES.duration}_sum`, { tool })).toBeCloseTo(d.sum, 6);
    expect(value(samples, `${METRIC_NAMES.duration}_bucket`, { tool, le: '+Inf' })).toBe(d.count);
  }
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Mounts a handler on a real server on the loopback interface and returns its base URL. */
async function serve(handler: MetricsHandler): Promise<string> {
  const server = createServer((req, res) => (req.url === '/metrics' ? handler(req, res) : res.writeHead(404).end()));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('createMetrics (live, fed by onRecord)', () => {
  it('counts calls, failures, retries, trips and durations per tool', async () => {
    const records = monitorDataset();
    const metrics = createMetrics();
    for (const r of records) metrics.observe(r);
    const samples = parseExposition(await metrics.registry.metrics());
    checkCounters(samples, records);
    expect(value(samples, METRIC_NAMES.calls, { tool: 'search_flights', status: 'timeout' })).toBe(4);
    expect(value(samples, METRIC_NAMES.breakerTrips, { tool: 'search_flights' })).toBe(2);
    // Real buckets here: the three 7.9 s timeouts of 13:00 and the one of 12:00 are over 5 s, nothing is over 10 s.
    const flights = records.filter((r) => r.tool_name === 'search_flights');
    expect(value(samples, `${METRIC_NAMES.duration}_bucket`, { tool: 'search_flights', le: '5' })).toBe(flights.length - 4);
    expect(value(samples, `${METRIC_NAMES.duration}_bucket`, { tool: 'search_flights', le: '10' })).toBe(flights.length);
    // The last search_flights call was rejected by an open circuit; get_weather's breaker never opened.
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: 'search_flights' })).toBe(1);
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: 'get_weather' })).toBe(0);
  });

  it('keeps to its own registry, so two instances and the global registry do not collide', async () => {
    const a = createMetrics();
    const b = createMetrics({ buckets: [1] });
    const [first] = monitorDataset();
    a.observe(first!);
    expect(await b.registry.metrics()).not.toContain('get_weather');
    expect(await globalRegistry.metrics()).not.toContain('faultline_');
    expect(b.registry).not.toBe(a.registry);
  });

  it('serves the exposition over HTTP from a mountable handler', async () => {
    const metrics = createMetrics();
    for (const r of monitorDataset().slice(0, 50)) metrics.observe(r);
    const base = await serve(metrics.handler);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const samples = parseExposition(await res.text());
    expect(value(samples, METRIC_NAMES.calls, { tool: 'get_weather', status: 'success' })).toBe(25);
    const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('createStoreMetrics (from the rollups, per scrape)', () => {
  it('serves the same counters as the live feed, plus recent percentiles and breaker states', async () => {
    const records = monitorDataset();
    const store = createMemoryStore();
    await store.insert(records);
    const metrics = createStoreMetrics(store, { now: () => MONITOR_NOW });
    const base = await serve(metrics.handler);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    const samples = parseExposition(await res.text());
    checkCounters(samples, records);
    // The store keeps no bucket counts to expose, only sum and count.
    expect(samples.filter((s) => s.name === `${METRIC_NAMES.duration}_bucket` && s.labels['le'] !== '+Inf')).toStrictEqual([]);
    // 13:00-14:30 for search_flights: 50 calls, the top 3 are the 7.9 s timeouts.
    expect(value(samples, METRIC_NAMES.recentDuration, { tool: 'search_flights', quantile: '0.95' })).toBeCloseTo(bucketValueMs(bucketOf(7900)) / 1000, 9);
    // Within the last 5 minutes only search_flights was called, and its circuit was open.
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: 'search_flights' })).toBe(1);
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: 'get_weather' })).toBe(0);
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: 'send_email' })).toBe(0);
    await store.close();
  });

  it('keeps counters cumulative as time moves on and records arrive', async () => {
    const records = monitorDataset();
    const store = createMemoryStore();
    await store.insert(records);
    let now = MONITOR_NOW;
    // Never re-read the cached hours, so that moving them from re-read to cached is what is tested.
    const metrics = createStoreMetrics(store, { now: () => now, rereadMs: Infinity });
    const scrape = async () => {
      await metrics.refresh();
      return parseExposition(await metrics.registry.metrics());
    };
    checkCounters(await scrape(), records);

    // Hours 13 and 14 move from the re-read part into the cached part: nothing counted twice.
    now = MONITOR_NOW + 3 * 3_600_000;
    checkCounters(await scrape(), records);

    const late = monitorDataset()
      .slice(-5)
      .map((r, i) => ({ ...r, execution_id: `fffff${i}00-0000-7000-8000-000000000000`, created_at: new Date(now - 60_000).toISOString(), breaker_state: 'closed' as const }));
    await store.insert(late);
    const after = await scrape();
    checkCounters(after, [...records, ...late]);
    expect(value(after, METRIC_NAMES.breakerOpen, { tool: 'search_flights' })).toBe(0);
    await store.close();
  });

  it('picks up records stored into already cached hours on the next re-read', async () => {
    const records = monitorDataset();
    const store = createMemoryStore();
    await store.insert(records);
    let now = MONITOR_NOW;
    const metrics = createStoreMetrics(store, { now: () => now, rereadMs: 10 * 60_000 });
    const scrape = async () => {
      await metrics.refresh();
      return parseExposition(await metrics.registry.metrics());
    };
    await scrape();
    // An import of last week's logs lands in hours that are cached by now.
    const imported = records.slice(0, 3).map((r, i) => ({ ...r, execution_id: `00000000-000${i}-7000-8000-000000000000` }));
    await store.insert(imported);
    now += 5 * 60_000;
    checkCounters(await scrape(), records);
    now += 5 * 60_000;
    checkCounters(await scrape(), [...records, ...imported]);
    await store.close();
  });

  it('answers 500 with one line when the store cannot be read', async () => {
    const store = createMemoryStore();
    const metrics = createStoreMetrics(store);
    await store.close();
    const res = await fetch(`${await serve(metrics.handler)}/metrics`);
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).toMatch(/^faultline metrics unavailable: .+\n$/);
    expect(body.split('\n')).toHaveLength(2);
  });
});
