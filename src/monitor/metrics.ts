/**
 * Prometheus metrics for tool calls, in a Registry of their own (never prom-client's global one,
 * so embedding faultline cannot collide with an application's metrics).
 *
 * Two feeds, one set of names:
 * - {@link createMetrics}: live, fed record by record from the runtime's `onRecord`;
 * - {@link createStoreMetrics}: read from a Store's hourly rollups on every scrape, for
 *   `faultline metrics` next to processes that only write to the store.
 *
 * Tool names are not a closed set: the runtime records calls of names a model made up
 * (`unknown_tool` rejections), the HTTP fault proxy names tools after URLs, imports bring whatever
 * the logs held. Every distinct `tool` label value is a time series per metric, kept in this
 * process's memory and in Prometheus, so both feeds bound them: calls of names that are not tools
 * share {@link UNKNOWN_TOOL_LABEL}, and past `maxTools` names the rest share {@link OTHER_TOOLS_LABEL}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { ConfigError } from '../core/errors.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { uuidv7UpperBound } from '../record/uuid-v7.js';
import { failureCell, HOUR_MS, hourStartMs, parseIsoMs } from '../store/rollup.js';
import type { FailureBreakdownRow, RecordReader, StatsReader, TimeWindow, ToolStats } from '../core/store-types.js';
import { OTHER_TOOLS_LABEL, UNKNOWN_TOOL_LABEL, UNKNOWN_TOOL_TYPE } from './tool-labels.js';

export const METRIC_NAMES = {
  calls: 'faultline_tool_calls_total',
  failures: 'faultline_tool_failures_total',
  retries: 'faultline_tool_retries_total',
  breakerTrips: 'faultline_breaker_trips_total',
  duration: 'faultline_tool_duration_seconds',
  breakerOpen: 'faultline_breaker_open',
  recentDuration: 'faultline_tool_duration_recent_seconds',
} as const;

/** Histogram buckets in seconds: from a fast local call to the runtime's longest sensible timeout. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export { OTHER_TOOLS_LABEL, UNKNOWN_TOOL_LABEL } from './tool-labels.js';
/** Distinct tool labels kept by default, {@link UNKNOWN_TOOL_LABEL} and {@link OTHER_TOOLS_LABEL} aside. */
export const DEFAULT_MAX_TOOLS = 1000;

/**
 * A recorded name that spells one of the fold labels (a proxy route `/tools/(unknown)`, an import)
 * gets no label of its own: its series would merge with the folded ones under a name that no
 * longer says which they are. It goes to {@link OTHER_TOOLS_LABEL}, outside the `maxTools` count.
 */
function isFoldLabel(name: string): boolean {
  return name === UNKNOWN_TOOL_LABEL || name === OTHER_TOOLS_LABEL;
}

function maxToolsOption(value: number | undefined): number {
  const maxTools = value ?? DEFAULT_MAX_TOOLS;
  if (!Number.isInteger(maxTools) || maxTools < 1) throw new ConfigError(`metrics option maxTools must be a positive integer, got ${String(maxTools)}`, 'maxTools');
  return maxTools;
}

/** Serves a registry's text exposition; mount it at any path of any node:http server. */
export type MetricsHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface FaultlineMetrics {
  readonly registry: Registry;
  /** Counts one record. Cheap and synchronous, for the runtime's `onRecord`. */
  observe(record: ToolExecutionRecord): void;
  handler: MetricsHandler;
}

export interface MetricsOptions {
  /** Histogram buckets in seconds. Default {@link DURATION_BUCKETS_SECONDS}. */
  buckets?: readonly number[];
  /**
   * At most this many distinct `tool` label values, given out first come, first served; later
   * names are counted under {@link OTHER_TOOLS_LABEL}. A name keeps the label it got for the
   * life of the instance. Default {@link DEFAULT_MAX_TOOLS}; a positive integer, else ConfigError.
   */
  maxTools?: number;
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n', 1)[0] ?? '';
}

/**
 * A handler answering GET and HEAD with the registry's metrics. `beforeScrape` runs first (the
 * store feed refreshes there); if it fails, the scrape gets a 500 with one line of text, so
 * Prometheus marks the target down instead of recording stale numbers.
 */
function metricsHandler(registry: Registry, beforeScrape?: () => Promise<void>): MetricsHandler {
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('method not allowed\n');
      return;
    }
    void (async () => {
      try {
        await beforeScrape?.();
        const body = await registry.metrics();
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : body);
      } catch (error) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`faultline metrics unavailable: ${firstLine(error)}\n`);
      }
    })();
  };
}

/** A call whose failure opened the breaker (DESIGN.md "The record"): calls it rejected do not count. */
function isBreakerTrip(record: Pick<ToolExecutionRecord, 'breaker_state' | 'status'>): boolean {
  return record.breaker_state === 'open' && record.status !== 'rejected';
}

/** The counters both metric sources expose, under the same names and help texts. */
function callCounters(registers: Registry[]) {
  return {
    calls: new Counter({ name: METRIC_NAMES.calls, help: 'Tool calls by final status.', labelNames: ['tool', 'status'] as const, registers }),
    failures: new Counter({
      name: METRIC_NAMES.failures,
      help: 'Failed tool calls (any status but success) by stage, category and type.',
      labelNames: ['tool', 'stage', 'category', 'type'] as const,
      registers,
    }),
    retries: new Counter({ name: METRIC_NAMES.retries, help: 'Retry attempts made by the runtime.', labelNames: ['tool'] as const, registers }),
    trips: new Counter({ name: METRIC_NAMES.breakerTrips, help: 'Calls whose failure opened the circuit breaker.', labelNames: ['tool'] as const, registers }),
  };
}

/**
 * Live metrics, fed by the runtime.
 *
 * Labels follow the rules of the module comment, decided per record as it arrives: an
 * `unknown_tool` record counts under {@link UNKNOWN_TOOL_LABEL} unless its name already has a label
 * (an MCP server that dropped a tool it used to list: the tool's series go on), and the first
 * `maxTools` other names get labels of their own. On a folded label, `faultline_breaker_open` is
 * the state as of the latest call of any of its tools.
 * @example
 * const metrics = createMetrics();
 * const rt = createRuntime({ tools, onRecord: metrics.observe });
 * http.createServer((req, res) => (req.url === '/metrics' ? metrics.handler(req, res) : res.writeHead(404).end())).listen(9464);
 */
export function createMetrics(options: MetricsOptions = {}): FaultlineMetrics {
  const maxTools = maxToolsOption(options.maxTools);
  const registry = new Registry();
  const registers = [registry];
  const { calls, failures, retries, trips } = callCounters(registers);
  const duration = new Histogram({
    name: METRIC_NAMES.duration,
    help: 'Tool call duration in seconds, retries and backoff included.',
    labelNames: ['tool'] as const,
    buckets: [...(options.buckets ?? DURATION_BUCKETS_SECONDS)],
    registers,
  });
  const breakerOpen = new Gauge({
    name: METRIC_NAMES.breakerOpen,
    help: '1 while the tool circuit breaker is open or half-open, as of its latest call.',
    labelNames: ['tool'] as const,
    registers,
  });

  /**
   * The names that have a label of their own. Only names given a label are kept, so its size is
   * bounded by `maxTools` however many names are recorded; a known name costs one lookup.
   */
  const labelled = new Set<string>();
  const toolLabel = (record: ToolExecutionRecord): string => {
    const name = record.tool_name;
    if (labelled.has(name)) return name;
    if (record.failure_type === UNKNOWN_TOOL_TYPE) return UNKNOWN_TOOL_LABEL;
    if (labelled.size >= maxTools || isFoldLabel(name)) return OTHER_TOOLS_LABEL;
    labelled.add(name);
    return name;
  };

  const observe = (record: ToolExecutionRecord): void => {
    const tool = toolLabel(record);
    calls.inc({ tool, status: record.status });
    if (record.status !== 'success') {
      const cell = failureCell(record);
      failures.inc({ tool, stage: cell.failure_stage, category: cell.failure_category, type: cell.failure_type });
    }
    // Adding 0 creates the series, so that rate() over it works before the first retry or trip.
    retries.inc({ tool }, record.retry_count);
    trips.inc({ tool }, isBreakerTrip(record) ? 1 : 0);
    breakerOpen.set({ tool }, record.breaker_state === 'closed' ? 0 : 1);
    duration.observe({ tool }, Math.max(0, record.duration_ms) / 1000);
  };
  return { registry, observe, handler: metricsHandler(registry) };
}

// ---------------------------------------------------------------------------------------------
// The store feed
// ---------------------------------------------------------------------------------------------

export interface StoreMetricsOptions {
  /** The clock; default `Date.now`. */
  now?: () => number;
  /**
   * How far back a tool's latest record is looked for to read its breaker state. Default 5 min:
   * a breaker with no calls for longer rejects nobody.
   */
  breakerWindowMs?: number;
  /** How often the cached older hours are read again, to pick up records stored late (imports, spool replays). Default 10 min. */
  rereadMs?: number;
  /**
   * At most this many distinct `tool` label values, for the tools with the most calls (ties by
   * name); the others are summed under {@link OTHER_TOOLS_LABEL}. Default {@link DEFAULT_MAX_TOOLS};
   * a positive integer, else ConfigError.
   */
  maxTools?: number;
}

export interface StoreMetrics {
  readonly registry: Registry;
  /** Re-reads the store. The handler calls it on every scrape; concurrent calls share one read. */
  refresh(): Promise<void>;
  handler: MetricsHandler;
}

interface DurationTotals {
  tool: string;
  count: number;
  sumSeconds: number;
}

/** One sample of a metric the store feed computes itself. */
interface PrecomputedSample {
  metricName?: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * A metric whose samples the store feed computes per scrape, for the two types prom-client can
 * only fill from observations: the registry calls `get` and `reset`, nothing else.
 */
class PrecomputedMetric<Row> {
  readonly aggregator = 'sum';
  #rows: Row[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'histogram' | 'summary',
    private readonly samplesOf: (row: Row) => PrecomputedSample[],
  ) {}

  set(rows: Row[]): void {
    this.#rows = rows;
  }

  reset(): void {
    this.#rows = [];
  }

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.#rows.flatMap(this.samplesOf) };
  }
}

/**
 * The duration histogram as the store can give it: exact `_sum` and `_count` per tool, and only
 * the `+Inf` bucket, because the Store interface exposes percentiles of its rollup sketch, not
 * its bucket counts. The recent-duration summary carries p50 and p95 instead.
 */
function rollupDurationHistogram(): PrecomputedMetric<DurationTotals> {
  const name = METRIC_NAMES.duration;
  return new PrecomputedMetric(name, 'Tool call duration in seconds, retries and backoff included (from the store: sum and count only).', 'histogram', (r) => [
    { metricName: `${name}_bucket`, labels: { le: '+Inf', tool: r.tool }, value: r.count },
    { metricName: `${name}_sum`, labels: { tool: r.tool }, value: r.sumSeconds },
    { metricName: `${name}_count`, labels: { tool: r.tool }, value: r.count },
  ]);
}

interface Percentile {
  tool: string;
  quantile: string;
  seconds: number;
}

/**
 * Recent duration percentiles per tool, as a Prometheus summary: the exposition format reserves
 * the `quantile` label for summaries. It has quantiles only, no `_sum` or `_count`: those are
 * cumulative counters in a summary, and the store's cumulative sum and count are already
 * {@link METRIC_NAMES.duration}'s; a count over a moving window would read as counter resets.
 */
function recentDurationSummary(): PrecomputedMetric<Percentile> {
  return new PrecomputedMetric(
    METRIC_NAMES.recentDuration,
    `Tool call duration percentiles over the last complete hour and the current one, in seconds; none for ${UNKNOWN_TOOL_LABEL} and ${OTHER_TOOLS_LABEL}, whose tools' percentiles cannot be merged. The cumulative sum and count are ${METRIC_NAMES.duration}'s.`,
    'summary',
    (r) => [{ labels: { tool: r.tool, quantile: r.quantile }, value: r.seconds }],
  );
}

/** Counters as the rollups hold them, summable across windows. */
interface Totals {
  calls: Map<string, Record<'success' | 'failure' | 'timeout' | 'rejected', number>>;
  retries: Map<string, number>;
  trips: Map<string, number>;
  durations: Map<string, { count: number; sumMs: number }>;
  failures: Map<string, FailureBreakdownRow>;
}

function emptyTotals(): Totals {
  return { calls: new Map(), retries: new Map(), trips: new Map(), durations: new Map(), failures: new Map() };
}

function addTotals(into: Totals, stats: readonly ToolStats[], breakdown: readonly FailureBreakdownRow[]): Totals {
  for (const s of stats) {
    const c = into.calls.get(s.tool_name) ?? { success: 0, failure: 0, timeout: 0, rejected: 0 };
    c.success += s.success;
    c.failure += s.failure;
    c.timeout += s.timeout;
    c.rejected += s.rejected;
    into.calls.set(s.tool_name, c);
    into.retries.set(s.tool_name, (into.retries.get(s.tool_name) ?? 0) + s.retries);
    into.trips.set(s.tool_name, (into.trips.get(s.tool_name) ?? 0) + s.breaker_trips);
    const d = into.durations.get(s.tool_name) ?? { count: 0, sumMs: 0 };
    d.count += s.total;
    d.sumMs += (s.avg_ms ?? 0) * s.total;
    into.durations.set(s.tool_name, d);
  }
  for (const row of breakdown) {
    const key = `${row.tool_name}\u001f${row.failure_stage}\u001f${row.failure_category}\u001f${row.failure_type}`;
    const f = into.failures.get(key);
    if (f === undefined) into.failures.set(key, { ...row });
    else f.count += row.count;
  }
  return into;
}

function cloneTotals(t: Totals): Totals {
  return {
    calls: new Map([...t.calls].map(([k, v]) => [k, { ...v }])),
    retries: new Map(t.retries),
    trips: new Map(t.trips),
    durations: new Map([...t.durations].map(([k, v]) => [k, { ...v }])),
    failures: new Map([...t.failures].map(([k, v]) => [k, { ...v }])),
  };
}

const STATUSES = ['success', 'failure', 'timeout', 'rejected'] as const;
const BREAKER_PAGE = 500;

/**
 * The label each tool of the totals is exposed under, decided afresh from the totals alone, so
 * every scrape of the same store gives the same series. A tool whose every call failed as
 * `unknown_tool` is a name that is not a tool: {@link UNKNOWN_TOOL_LABEL}. Of the rest, the
 * `maxTools` with the most calls (ties by name) keep their names and the others share
 * {@link OTHER_TOOLS_LABEL}. A tool can change label as the counts change (it drops out of the
 * top `maxTools`, or a name first seen as `unknown_tool` gets real calls), which Prometheus reads
 * as a counter reset on the series it left; with fewer tools than the cap, only the latter happens.
 */
function storeToolLabels(totals: Totals, maxTools: number): Map<string, string> {
  const unknownCalls = new Map<string, number>();
  for (const f of totals.failures.values()) {
    if (f.failure_type === UNKNOWN_TOOL_TYPE) unknownCalls.set(f.tool_name, (unknownCalls.get(f.tool_name) ?? 0) + f.count);
  }
  const labels = new Map<string, string>();
  const ranked: { tool: string; calls: number }[] = [];
  for (const [tool, byStatus] of totals.calls) {
    const calls = byStatus.success + byStatus.failure + byStatus.timeout + byStatus.rejected;
    const unknown = unknownCalls.get(tool) ?? 0;
    if (unknown > 0 && unknown >= calls) labels.set(tool, UNKNOWN_TOOL_LABEL);
    else if (isFoldLabel(tool)) labels.set(tool, OTHER_TOOLS_LABEL);
    else ranked.push({ tool, calls });
  }
  ranked.sort((a, b) => b.calls - a.calls || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  ranked.forEach(({ tool }, i) => labels.set(tool, i < maxTools ? tool : OTHER_TOOLS_LABEL));
  return labels;
}

/**
 * Metrics computed from a store's rollups, refreshed per scrape.
 *
 * Counters are totals over the store's whole history, so they only grow while records are only
 * added. Reading all of it per scrape would cost one rollup row per tool and hour of history, so
 * hours that ended more than an hour ago are cached: each scrape re-reads the last complete hour
 * and the current one (room for batching recorders to land records late), and the cached hours
 * are read again every `rereadMs` to pick up records stored into the past.
 *
 * `faultline_breaker_open` comes from each tool's latest record within `breakerWindowMs`;
 * `faultline_tool_duration_recent_seconds{quantile}`, a summary, is p50/p95 over the last
 * complete hour and the current one.
 *
 * Tool labels are bounded as {@link storeToolLabels} decides. A folded label sums its tools'
 * counters and duration sum and count, and its breaker is open if any of theirs is; it has no
 * recent percentiles, since percentiles of several tools cannot be made from each one's.
 */
export function createStoreMetrics(store: RecordReader & StatsReader, options: StoreMetricsOptions = {}): StoreMetrics {
  const now = options.now ?? Date.now;
  const breakerWindowMs = options.breakerWindowMs ?? 5 * 60_000;
  const rereadMs = options.rereadMs ?? 10 * 60_000;
  const maxTools = maxToolsOption(options.maxTools);
  const registry = new Registry();
  const registers = [registry];
  const { calls, failures, retries, trips } = callCounters(registers);
  const duration = rollupDurationHistogram();
  // prom-client types a metric as one of its own classes; the registry only calls get/reset.
  registry.registerMetric(duration as unknown as Metric);
  const breakerOpen = new Gauge({
    name: METRIC_NAMES.breakerOpen,
    help: '1 while the tool circuit breaker is open or half-open, as of its latest call in the last few minutes.',
    labelNames: ['tool'] as const,
    registers,
  });
  const recent = recentDurationSummary();
  registry.registerMetric(recent as unknown as Metric);

  let settled = emptyTotals();
  /** Rollup hours before this are in `settled`. */
  let settledUntil = 0;
  let settledReadAt = -Infinity;
  let inflight: Promise<void> | undefined;

  /** The latest breaker state of each tool seen in the recent window, newest records first. */
  async function breakerStates(nowMs: number, tools: ReadonlySet<string>): Promise<Map<string, boolean>> {
    const states = new Map<string, boolean>();
    const oldest = nowMs - breakerWindowMs;
    let unseen = tools.size;
    // Paging back along the time-ordered primary key reads only recent records, whatever the
    // store's size; it stops once every recently active tool has been seen.
    let cursor = uuidv7UpperBound(nowMs + 60_000);
    for (;;) {
      const page = await store.query({ afterId: cursor, order: 'desc', limit: BREAKER_PAGE });
      for (const record of page) {
        if (parseIsoMs(record.created_at) < oldest) return states;
        if (states.has(record.tool_name)) continue;
        states.set(record.tool_name, record.breaker_state !== 'closed');
        if (tools.has(record.tool_name) && --unseen === 0) return states;
      }
      const last = page.at(-1);
      if (page.length < BREAKER_PAGE || last === undefined) return states;
      cursor = last.execution_id;
    }
  }

  async function read(): Promise<void> {
    const nowMs = now();
    const freshFrom = hourStartMs(nowMs) - HOUR_MS;
    if (nowMs - settledReadAt >= rereadMs) {
      settled = emptyTotals();
      settledUntil = 0;
      settledReadAt = nowMs;
    }
    if (settledUntil < freshFrom) {
      const window: TimeWindow = { since: settledUntil, until: freshFrom };
      const [stats, breakdown] = await Promise.all([store.toolStats(window), store.failureBreakdown(window)]);
      addTotals(settled, stats, breakdown);
      settledUntil = freshFrom;
    }
    // Records stamped a little in the future (clock skew between hosts) still count.
    const fresh: TimeWindow = { since: freshFrom, until: nowMs + HOUR_MS };
    const [stats, breakdown] = await Promise.all([store.toolStats(fresh), store.failureBreakdown(fresh)]);
    const totals = addTotals(cloneTotals(settled), stats, breakdown);
    const breakers = await breakerStates(nowMs, new Set(stats.map((s) => s.tool_name)));
    const labels = storeToolLabels(totals, maxTools);
    // Every tool of the totals is in `labels`; the fallback only keeps a stray name from a series of its own.
    const labelOf = (tool: string): string => labels.get(tool) ?? OTHER_TOOLS_LABEL;

    // Every await is above: the values change in one synchronous step, so a scrape running
    // concurrently never sees half-updated metrics.
    calls.reset();
    failures.reset();
    retries.reset();
    trips.reset();
    breakerOpen.reset();
    recent.reset();
    // Counters sum what is added under the same labels, which is the folding; the breaker and
    // the duration totals are gathered per label first.
    const byLabel = new Map<string, { open: boolean; count: number; sumMs: number }>();
    for (const [name, byStatus] of totals.calls) {
      const tool = labelOf(name);
      for (const status of STATUSES) calls.inc({ tool, status }, byStatus[status]);
      retries.inc({ tool }, totals.retries.get(name) ?? 0);
      trips.inc({ tool }, totals.trips.get(name) ?? 0);
      const into = byLabel.get(tool) ?? { open: false, count: 0, sumMs: 0 };
      into.open ||= breakers.get(name) === true;
      const d = totals.durations.get(name);
      into.count += d?.count ?? 0;
      into.sumMs += d?.sumMs ?? 0;
      byLabel.set(tool, into);
    }
    for (const [tool, t] of byLabel) breakerOpen.set({ tool }, t.open ? 1 : 0);
    for (const f of totals.failures.values()) {
      failures.inc({ tool: labelOf(f.tool_name), stage: f.failure_stage, category: f.failure_category, type: f.failure_type }, f.count);
    }
    duration.set([...byLabel].map(([tool, t]) => ({ tool, count: t.count, sumSeconds: t.sumMs / 1000 })));
    const percentiles: Percentile[] = [];
    for (const s of stats) {
      // A tool keeps its percentiles only under its own name; fold labels are never tool names here.
      if (labelOf(s.tool_name) !== s.tool_name) continue;
      if (s.p50_ms !== null) percentiles.push({ tool: s.tool_name, quantile: '0.5', seconds: s.p50_ms / 1000 });
      if (s.p95_ms !== null) percentiles.push({ tool: s.tool_name, quantile: '0.95', seconds: s.p95_ms / 1000 });
    }
    recent.set(percentiles);
  }

  const refresh = (): Promise<void> => {
    inflight ??= read().finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
  return { registry, refresh, handler: metricsHandler(registry, refresh) };
}
