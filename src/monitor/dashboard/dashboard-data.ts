/**
 * What the dashboard shows, as data: each `/api/*` endpoint returns one of these objects, and
 * the HTML pages render the very same objects, so the page and a script never disagree.
 *
 * Everything is read through the Store interface (rollups for the figures, `query` / `get` for
 * records), so it works on SQLite and PostgreSQL alike and never writes.
 */
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { hourRange, hourStartMs, HOUR_MS } from '../../store/rollup.js';
import type { FailureSignature, HourlyPoint, RecordReader, StatsFilter, StatsReader, TimeWindow, TrajectoryStore } from '../../core/store-types.js';
import type { CallStatus } from '../../core/taxonomy.js';
import { trajectoryIdOf } from '../../trajectory/assemble.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { evaluateAlerts, type Alert, type ResolvedAlertConfig } from '../alert-rules.js';
import { buildStatsReport, type StatsReport } from '../stats-report.js';
import { isoWindow } from '../time-window.js';

export type IsoWindow = { since: string; until: string };

/** A view as written in its URL: what links keep when they change one part of it. */
export interface ViewParams {
  /** The window's start as written (`24h`, or an ISO date). */
  since: string;
  /** The window's end as written (an ISO date); null: now. */
  until: string | null;
  tool: string | null;
  /** Only the calls of this agent (`context_snapshot.agent`). */
  agent: string | null;
  /** Only the calls of this FailBench run. */
  run: string | null;
}

/** What one request asks for: a window, optional filters, and how many records to list. */
export interface DashboardView extends ViewParams {
  window: TimeWindow;
  limit: number;
}

/** `/api/alerts`: the rules as `faultline alerts` evaluates them, and the thresholds they use. */
export interface AlertsView {
  window: IsoWindow;
  firing: number;
  alerts: Alert[];
  config: ResolvedAlertConfig;
}

/**
 * `/api/failures`: the newest failed calls (failure, timeout, rejected) since the window's start.
 * A window that ends now has no upper bound here: a record stamped a little ahead of this clock
 * (another host's) is the newest there is. One with an `until` ends there.
 */
export interface FailuresView {
  window: IsoWindow;
  tool: string | null;
  records: ToolExecutionRecord[];
}

/** `/api/hourly`: calls and failures per tool and UTC hour; hours without calls are left out. */
export interface HourlyView {
  window: IsoWindow;
  /**
   * The hours the charts span, oldest first: every hour the window touches (the rollups are
   * hour-granular), cut to the data's own range where the window reaches more than a day beyond
   * it (a window from a FailBench run's virtual clock to now); empty without calls.
   */
  hours: string[];
  points: HourlyPoint[];
}

/** A failure signature last seen in the window; `first_seen_in_window` is what the rare-failure alert fires on. */
export interface SignatureView extends FailureSignature {
  first_seen_in_window: boolean;
}

/** `/api/signatures`: newest first-seen first. */
export interface SignaturesView {
  window: IsoWindow;
  first_seen_in_window: number;
  signatures: SignatureView[];
}

/** `/api/dashboard`: everything the overview page shows, read at `generated_at`. */
export interface DashboardSnapshot extends ViewParams {
  generated_at: string;
  window: IsoWindow;
  stats: StatsReport;
  alerts: AlertsView;
  failures: FailuresView;
  hourly: HourlyView;
  signatures: SignaturesView;
}

/** `/api/traces/:id`: a trace's calls in the order they ran, and its stored trajectory if any. */
export interface TraceView {
  trace_id: string;
  calls: ToolExecutionRecord[];
  /** True when the trace has more than {@link TRACE_CALL_LIMIT} calls and only the first are listed. */
  truncated: boolean;
  /** The trajectory `faultline` built from this trace (annotated: labels, decisions), when stored. */
  trajectory: Trajectory | null;
}

export const FAILED_STATUSES: readonly CallStatus[] = ['failure', 'timeout', 'rejected'];
export const TRACE_CALL_LIMIT = 1000;
/** Failure types listed per tool in the tools table, as `faultline stats --top`. */
export const TOP_FAILURE_TYPES = 3;

function filterOf(view: DashboardView): StatsFilter {
  return { ...view.window, ...(view.tool === null ? {} : { toolName: view.tool }) };
}

export function readStats(store: StatsReader, view: DashboardView): Promise<StatsReport> {
  return buildStatsReport(store, filterOf(view), TOP_FAILURE_TYPES);
}

/**
 * The earliest time the alert rules read over `window`: the per-day rules (breaker trips, the
 * failure-type jump) look back their `windowHours` from the hour the window ends in, and the jump
 * compares with the `baselineHours` before that (alert-rules.ts). An agent or run view loads its
 * records from here, so its alerts see what the whole store's would.
 */
export function alertReach(window: TimeWindow, config: ResolvedAlertConfig): number {
  const { breaker_trip: breaker, failure_type_jump: jump } = config.rules;
  const hour = hourStartMs(window.until);
  return Math.min(window.since, hour - breaker.windowHours * HOUR_MS, hour - (jump.windowHours + jump.baselineHours) * HOUR_MS);
}

/** Evaluates the alert rules over `window` (the command's default: the last complete hour and the current one). */
export async function readAlerts(store: StatsReader, window: TimeWindow, config: ResolvedAlertConfig, tool: string | null): Promise<AlertsView> {
  const alerts = await evaluateAlerts(store, { window, config, ...(tool === null ? {} : { toolName: tool }) });
  return { window: isoWindow(window.since, window.until), firing: alerts.length, alerts, config };
}

export async function readFailures(store: RecordReader, view: DashboardView): Promise<FailuresView> {
  const records = await store.query({
    statuses: FAILED_STATUSES,
    since: view.window.since,
    ...(view.until === null ? {} : { until: view.window.until }),
    ...(view.tool === null ? {} : { toolName: view.tool }),
    order: 'desc',
    limit: view.limit,
  });
  return { window: isoWindow(view.window.since, view.window.until), tool: view.tool, records };
}

/** Empty hours kept on either side of the data before the charts are cut to the data's range. */
const AXIS_SLACK_MS = 24 * HOUR_MS;

/** The hours the charts span: see {@link HourlyView.hours}. */
export function chartHours(window: TimeWindow, points: readonly HourlyPoint[]): string[] {
  if (points.length === 0) return [];
  const { fromHourMs, untilHourMs } = hourRange(window);
  const times = points.map((p) => Date.parse(p.hour));
  const first = Math.min(...times);
  const afterLast = Math.max(...times) + HOUR_MS;
  const from = first - fromHourMs > AXIS_SLACK_MS ? first : fromHourMs;
  const until = untilHourMs - afterLast > AXIS_SLACK_MS ? afterLast : untilHourMs;
  const hours: string[] = [];
  for (let ms = from; ms < until; ms += HOUR_MS) hours.push(new Date(ms).toISOString());
  return hours;
}

export async function readHourly(store: StatsReader, view: DashboardView): Promise<HourlyView> {
  const points = await store.hourly(filterOf(view));
  return { window: isoWindow(view.window.since, view.window.until), hours: chartHours(view.window, points), points };
}

export async function readSignatures(store: StatsReader, view: DashboardView): Promise<SignaturesView> {
  const { since, until } = view.window;
  const signatures = (await store.signatures(filterOf(view)))
    .map((s): SignatureView => {
      const first = Date.parse(s.first_seen);
      return { ...s, first_seen_in_window: first >= since && first < until };
    })
    .sort((a, b) => b.first_seen.localeCompare(a.first_seen) || a.signature.localeCompare(b.signature));
  return { window: isoWindow(since, until), first_seen_in_window: signatures.filter((s) => s.first_seen_in_window).length, signatures };
}

/** Everything the overview shows; alerts over `alertWindow`, the rest over the view's window. */
export async function readSnapshot(
  store: RecordReader & StatsReader,
  view: DashboardView,
  alerts: { window: TimeWindow; config: ResolvedAlertConfig },
  nowMs: number,
): Promise<DashboardSnapshot> {
  const [stats, alertsView, failures, hourly, signatures] = await Promise.all([
    readStats(store, view),
    readAlerts(store, alerts.window, alerts.config, view.tool),
    readFailures(store, view),
    readHourly(store, view),
    readSignatures(store, view),
  ]);
  return {
    generated_at: new Date(nowMs).toISOString(),
    window: isoWindow(view.window.since, view.window.until),
    since: view.since,
    until: view.until,
    tool: view.tool,
    agent: view.agent,
    run: view.run,
    stats,
    alerts: alertsView,
    failures,
    hourly,
    signatures,
  };
}

/** The trace's calls, or null when the store knows nothing of it. */
export async function readTrace(store: RecordReader & Partial<Pick<TrajectoryStore, 'getTrajectory'>>, traceId: string): Promise<TraceView | null> {
  const calls = await store.query({ traceId, order: 'asc', limit: TRACE_CALL_LIMIT + 1 });
  // `faultline annotate` stores a trace's trajectory under the id its source and trace id hash to.
  const trajectory = (await store.getTrajectory?.(trajectoryIdOf('faultline', traceId, () => ''))) ?? null;
  if (calls.length === 0 && trajectory === null) return null;
  return { trace_id: traceId, calls: calls.slice(0, TRACE_CALL_LIMIT), truncated: calls.length > TRACE_CALL_LIMIT, trajectory };
}
