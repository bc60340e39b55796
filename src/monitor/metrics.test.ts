import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { register as globalRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { defineTool } from '../runtime/define-tool.js';
import { createRuntime } from '../runtime/runtime.js';
import { bucketOf, bucketValueMs } from '../store/duration-sketch.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { failureCell } from '../store/rollup.js';
import { createMetrics, createStoreMetrics, DEFAULT_MAX_TOOLS, METRIC_NAMES, OTHER_TOOLS_LABEL, UNKNOWN_TOOL_LABEL, type MetricsHandler } from './metrics.js';
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

/** How a test expects a record to be labelled; by default, by its tool name. */
type LabelOf = (record: ToolExecutionRecord) => string;
const byName: LabelOf = (r) => r.tool_name;

/** Expected counters, computed from the records directly, each counted under `labelOf(record)`. */
function expectedCounts(records: readonly ToolExecutionRecord[], labelOf: LabelOf = byName) {
  const calls = new Map<string, number>();
  const failures = new Map<string, number>();
  const retries = new Map<string, number>();
  const trips = new Map<string, number>();
  const durations = new Map<string, { count: number; sum: number }>();
  const bump = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
  for (const r of records) {
    const tool = labelOf(r);
    bump(calls, `${tool}/${r.status}`);
    if (r.status !== 'success') {
      const c = failureCell(r);
      bump(failures, `${tool}/${c.failure_stage}/${c.failure_category}/${c.failure_type}`);
    }
    bump(retries, tool, r.retry_count);
    bump(trips, tool, r.breaker_state === 'open' && r.status !== 'rejected' ? 1 : 0);
    const d = durations.get(tool) ?? { count: 0, sum: 0 };
    d.count += 1;
    d.sum += r.duration_ms / 1000;
    durations.set(tool, d);
  }
  return { calls, failures, retries, trips, durations };
}

function checkCounters(samples: readonly Sample[], records: readonly ToolExecutionRecord[], labelOf: LabelOf = byName): void {
  const expected = expectedCounts(records, labelOf);
  const callSamples = samples.filter((s) => s.name === METRIC_NAMES.calls && s.value > 0);
  expect(callSamples).toHaveLength(expected.calls.size);
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

/** Every `tool` label value in the exposition, of any metric: the series count per metric is bounded by it. */
function toolLabels(samples: readonly Sample[]): string[] {
  return [...new Set(samples.flatMap((s) => (s.labels['tool'] === undefined ? [] : [s.labels['tool']])))].sort();
}

/**
 * Records of calls of tool names a model made up, made by a real runtime (which has one tool,
 * `get_weather`), so they carry what the runtime really records for them.
 */
async function hallucinatedCalls(names: readonly string[]): Promise<ToolExecutionRecord[]> {
  const records: ToolExecutionRecord[] = [];
  const rt = createRuntime({
    tools: [defineTool({ name: 'get_weather', description: 'weather', input: { type: 'object', properties: {} }, execute: () => ({ ok: true }) })],
    onRecord: (r) => records.push(r),
  });
  for (const name of names) await rt.execute(name, {});
  await rt.close();
  return records;
}

const madeUpNames = (n: number) => Array.from({ length: n }, (_, i) => `made_up_tool_${i}`);

/** An MCP server answering -32601 for a tool it used to list: a real tool's `unknown_tool` failure. */
const droppedByServer = (tool: string) =>
  makeFailureRecord({ tool_name: tool, failure_stage: 'request_build', failure_category: 'parameter', failure_type: 'unknown_tool', error_code: 'JSONRPC_-32601' });

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

  it('counts every call of a made-up tool name under one (unknown) series', async () => {
    const hallucinated = await hallucinatedCalls(madeUpNames(300));
    expect(new Set(hallucinated.map((r) => r.failure_type))).toStrictEqual(new Set(['unknown_tool']));
    // A tool that has its label keeps it for an unknown_tool failure of its own.
    const listFiles = [makeRecord({ tool_name: 'list_files' }), droppedByServer('list_files')];
    const records = [makeRecord(), listFiles[0]!, ...hallucinated, listFiles[1]!];
    const metrics = createMetrics();
    for (const r of records) metrics.observe(r);
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('made_up_tool_');
    const samples = parseExposition(text);
    expect(toolLabels(samples)).toStrictEqual([UNKNOWN_TOOL_LABEL, 'get_weather', 'list_files'].sort());
    const labelOf: LabelOf = (r) => (r.tool_name.startsWith('made_up_tool_') ? UNKNOWN_TOOL_LABEL : r.tool_name);
    checkCounters(samples, records, labelOf);
    expect(value(samples, METRIC_NAMES.calls, { tool: UNKNOWN_TOOL_LABEL, status: 'rejected' })).toBe(300);
    expect(value(samples, METRIC_NAMES.failures, { tool: UNKNOWN_TOOL_LABEL, stage: 'request_build', category: 'parameter', type: 'unknown_tool' })).toBe(300);
    expect(value(samples, METRIC_NAMES.failures, { tool: 'list_files', stage: 'request_build', category: 'parameter', type: 'unknown_tool' })).toBe(1);
  });

  it('gives at most maxTools names a label, first come first served, and sums the rest under (other)', async () => {
    const at = (tool: string, extra: Partial<ToolExecutionRecord> = {}) => makeRecord({ tool_name: tool, ...extra });
    const records = [
      // Spelling a fold label is no way to a label of one's own, nor to one of the maxTools.
      at(OTHER_TOOLS_LABEL, { duration_ms: 40 }),
      at('tool_a'),
      at('tool_b', { retry_count: 2, duration_ms: 900 }),
      at('tool_c'),
      at('tool_d', { retry_count: 1, duration_ms: 7_000 }),
      makeFailureRecord({ tool_name: 'tool_e', failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error', retry_count: 3, breaker_state: 'open' }),
      at('tool_a', { duration_ms: 30 }),
      makeFailureRecord({ tool_name: 'tool_d', failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error' }),
      at('tool_f', { status: 'timeout', duration_ms: 2_000 }),
      at('tool_c', { retry_count: 1 }),
    ];
    const metrics = createMetrics({ maxTools: 3 });
    for (const r of records) metrics.observe(r);
    const samples = parseExposition(await metrics.registry.metrics());
    const named = new Set(['tool_a', 'tool_b', 'tool_c']);
    expect(toolLabels(samples)).toStrictEqual([OTHER_TOOLS_LABEL, ...named].sort());
    const labelOf: LabelOf = (r) => (named.has(r.tool_name) ? r.tool_name : OTHER_TOOLS_LABEL);
    checkCounters(samples, records, labelOf);
    expect(value(samples, METRIC_NAMES.calls, { tool: OTHER_TOOLS_LABEL, status: 'success' })).toBe(2);
    expect(value(samples, METRIC_NAMES.calls, { tool: OTHER_TOOLS_LABEL, status: 'failure' })).toBe(2);
    expect(value(samples, METRIC_NAMES.retries, { tool: OTHER_TOOLS_LABEL })).toBe(4);
    expect(value(samples, METRIC_NAMES.breakerTrips, { tool: OTHER_TOOLS_LABEL })).toBe(1);
    expect(value(samples, `${METRIC_NAMES.duration}_count`, { tool: OTHER_TOOLS_LABEL })).toBe(5);
    // Real buckets merge: tool_d's 7 s call is the one over 5 s.
    expect(value(samples, `${METRIC_NAMES.duration}_bucket`, { tool: OTHER_TOOLS_LABEL, le: '5' })).toBe(4);
    // As of the latest call under the label, tool_f's, whose breaker was closed.
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: OTHER_TOOLS_LABEL })).toBe(0);
  });

  it('labels up to 1000 tools by default', async () => {
    expect(DEFAULT_MAX_TOOLS).toBe(1000);
    const metrics = createMetrics();
    for (let i = 0; i <= DEFAULT_MAX_TOOLS; i++) metrics.observe(makeRecord({ tool_name: `tool_${String(i).padStart(4, '0')}` }));
    const labels = toolLabels(parseExposition(await metrics.registry.metrics()));
    expect(labels).toHaveLength(DEFAULT_MAX_TOOLS + 1);
    expect(labels).toContain(OTHER_TOOLS_LABEL);
    expect(labels).not.toContain(`tool_${DEFAULT_MAX_TOOLS}`);
  });

  it('refuses a maxTools that is not a positive integer with a ConfigError', () => {
    for (const maxTools of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createMetrics({ maxTools }), String(maxTools)).toThrow(ConfigError);
      try {
        createMetrics({ maxTools });
      } catch (error) {
        expect(ConfigError.isInstance(error) && error.field).toBe('maxTools');
        expect((error as Error).message).toBe(`metrics option maxTools must be a positive integer, got ${String(maxTools)}`);
      }
    }
    expect(() => createMetrics({ maxTools: 1 })).not.toThrow();
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

  it('folds made-up names into (unknown) and the tools past maxTools, by call count, into (other)', async () => {
    const times = (n: number, make: (i: number) => ToolExecutionRecord) => Array.from({ length: n }, (_, i) => make(i));
    const records = [
      ...times(6, () => makeRecord({ tool_name: 'get_weather', duration_ms: 20 })),
      ...times(5, (i) => makeRecord({ tool_name: 'search_flights', retry_count: i % 2, duration_ms: 300 })),
      // 3 calls and an unknown_tool failure: a tool with calls, so not (unknown), and 4 calls.
      ...times(3, () => makeRecord({ tool_name: 'list_files' })),
      droppedByServer('list_files'),
      // Three tools of 2 calls for the last place: book_hotel has it by name.
      makeRecord({ tool_name: 'send_email', duration_ms: 1_500 }),
      makeFailureRecord({ tool_name: 'send_email', failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error', breaker_state: 'open' }),
      ...times(2, () => makeRecord({ tool_name: 'cancel_order', retry_count: 2, duration_ms: 800 })),
      ...times(2, () => makeRecord({ tool_name: 'book_hotel' })),
      ...(await hallucinatedCalls(madeUpNames(200))),
    ];
    const store = createMemoryStore();
    await store.insert(records);
    const metrics = createStoreMetrics(store, { maxTools: 4 });
    await metrics.refresh();
    const text = await metrics.registry.metrics();
    expect(text).not.toContain('made_up_tool_');
    const samples = parseExposition(text);
    const named = new Set(['get_weather', 'search_flights', 'list_files', 'book_hotel']);
    expect(toolLabels(samples)).toStrictEqual([OTHER_TOOLS_LABEL, UNKNOWN_TOOL_LABEL, ...named].sort());
    const labelOf: LabelOf = (r) => (named.has(r.tool_name) ? r.tool_name : r.tool_name.startsWith('made_up_tool_') ? UNKNOWN_TOOL_LABEL : OTHER_TOOLS_LABEL);
    checkCounters(samples, records, labelOf);
    expect(value(samples, METRIC_NAMES.calls, { tool: UNKNOWN_TOOL_LABEL, status: 'rejected' })).toBe(200);
    expect(value(samples, METRIC_NAMES.calls, { tool: OTHER_TOOLS_LABEL, status: 'success' })).toBe(3);
    expect(value(samples, METRIC_NAMES.calls, { tool: OTHER_TOOLS_LABEL, status: 'failure' })).toBe(1);
    expect(value(samples, METRIC_NAMES.retries, { tool: OTHER_TOOLS_LABEL })).toBe(4);
    expect(value(samples, METRIC_NAMES.breakerTrips, { tool: OTHER_TOOLS_LABEL })).toBe(1);
    expect(value(samples, `${METRIC_NAMES.duration}_count`, { tool: OTHER_TOOLS_LABEL })).toBe(4);
    expect(value(samples, `${METRIC_NAMES.duration}_sum`, { tool: OTHER_TOOLS_LABEL })).toBeCloseTo((1_500 + 12 + 2 * 800) / 1000, 6);
    // send_email's latest call opened its breaker, cancel_order's is closed: the label's is open.
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: OTHER_TOOLS_LABEL })).toBe(1);
    expect(value(samples, METRIC_NAMES.breakerOpen, { tool: 'get_weather' })).toBe(0);
    // Percentiles only under a tool's own name.
    const recentTools = toolLabels(samples.filter((s) => s.name === METRIC_NAMES.recentDuration));
    expect(recentTools).toStrictEqual([...named].sort());
    expect(value(samples, METRIC_NAMES.recentDuration, { tool: 'get_weather', quantile: '0.5' })).toBeCloseTo(bucketValueMs(bucketOf(20)) / 1000, 9);
    // The labels come from the totals alone: the next scrape is the same.
    await metrics.refresh();
    expect(await metrics.registry.metrics()).toBe(text);
    await store.close();
  });

  it('refuses a maxTools that is not a positive integer with a ConfigError', async () => {
    const store = createMemoryStore();
    for (const maxTools of [0, -3, 1.5, Number.NaN]) {
      expect(() => createStoreMetrics(store, { maxTools }), String(maxTools)).toThrow(ConfigError);
    }
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
