/**
 * The dashboard: a web view of a Store (the one `stats`, `alerts` and `tail` read), served by a
 * request handler that mounts on any node:http server (`faultline dashboard` runs one on 127.0.0.1).
 *
 * Pages: `/` (the overview, `?since=1h|24h|7d|<ISO date>&until=<ISO date>&tool=<name>&agent=<name>&run=<id>`),
 * `/records/<id>`, `/traces/<id>`, `/trajectories` (`?source=&outcome=&label=&failed=1&after=`),
 * `/trajectories/<id>`, `/review`, `/runs`, `/runs/<id>`, `/runs/compare?a=<id>&b=<id>`. JSON with
 * the same data: `/api/dashboard` (everything `/` shows), `/api/stats`, `/api/alerts`,
 * `/api/failures` (`&limit=`), `/api/hourly`, `/api/signatures`, `/api/records/<id>`,
 * `/api/traces/<id>`, `/api/trajectories`, `/api/trajectories/<id>`, `/api/review`, `/api/runs`,
 * `/api/runs/<id>`, `/api/runs/compare`.
 *
 * Read-only unless given a review token: then, and only then, `POST /api/review/decisions` saves
 * a reviewer's decision on a judge label, for a request that bears the token
 * (`Authorization: Bearer`, checked as the proxies' admin APIs check theirs) and comes from this
 * dashboard's own pages (an `Origin`, when sent, naming the host the request was sent to).
 * Everything else is GET and HEAD (anything else is 405). Every recorded value is escaped
 * (`safe-html.ts`), the pages carry a Content-Security-Policy that admits only their own scripts
 * and stylesheet, and requests naming another host are refused, so a web page cannot read the
 * dashboard through DNS rebinding.
 */
import { reportSafely } from '../../core/notify.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../../core/errors.js';
import { adminTokenDigest, bearerTokenMatches, readAdminBody } from '../../faults/admin-http.js';
import { BENCH_RUNS_DIR } from '../../failbench/stored-runs.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import type { TrajectoryStore } from '../../core/store-types.js';
import { hostAllowed, LOOPBACK_HOST_NAMES, namedHosts } from '../../net/host-allowlist.js';
import type { Store, TimeWindow } from '../../core/store-types.js';
import { defaultAlertWindow, resolveAlertConfig, type AlertConfig, type ResolvedAlertConfig } from '../alert-rules.js';
import {
  alertReach,
  readAlerts,
  readFailures,
  readHourly,
  readSignatures,
  readSnapshot,
  readStats,
  readTrace,
  type DashboardView,
} from './dashboard-data.js';
import { sectionNav, windowNav, type Section } from './dashboard-links.js';
import { DATA_CSP, PAGE_CSP, renderPage, REVIEW_PAGE_CSP } from './dashboard-page.js';
import { parseView, type ViewDefaults } from './dashboard-view.js';
import { renderOverview } from './overview-html.js';
import { renderRecord } from './record-html.js';
import { html, type SafeHtml } from './safe-html.js';
import { isScoped, scopedStore } from './scoped-store.js';
import { renderTrace } from './trace-html.js';
import { parseDecision, readReview, saveDecision, type ReviewSampleOptions } from './review-data.js';
import { renderReview } from './review-html.js';
import { createRunsReader } from './runs-data.js';
import { renderComparison, renderRun, renderRunsList } from './runs-html.js';
import { parseTrajectoryFilter, readTrajectoryList } from './trajectory-data.js';
import { renderTrajectory, renderTrajectoryList } from './trajectory-html.js';

/** Host names a loopback-bound dashboard answers to. */
export const LOOPBACK_HOSTS: readonly string[] = LOOPBACK_HOST_NAMES;

export interface DashboardOptions {
  store: Store;
  /** Alert settings (as `faultline alerts --config`); defaults apply to whatever is missing. */
  alerts?: AlertConfig | ResolvedAlertConfig;
  /** The window when a request names none: `24h` (the default), `7d`, an ISO date. */
  since?: string;
  /** The window's end when a request names none, an ISO date (as `stats --until`); default: now. */
  until?: string;
  /** Seconds between a page's refreshes; 0 turns auto-refresh off. Default 5. */
  refreshSeconds?: number;
  /**
   * The `Host` names requests may carry (compared without the port), or `'any'`. Default
   * {@link LOOPBACK_HOSTS}: right for a server on 127.0.0.1, and what keeps a web page that
   * rebinds its own name to 127.0.0.1 from reading the dashboard.
   */
  allowedHosts?: readonly string[] | 'any';
  /** The clock. Default `Date.now`. */
  now?: () => number;
  /** Where saved FailBench runs are (`bench --out`'s parent). Default `.faultline/bench` of the working directory. */
  runsDir?: string;
  /** The review sample's share and seed (`faultline review --share`, `--seed`); defaults as there. */
  reviewSample?: ReviewSampleOptions;
  /**
   * Turns review on: `POST /api/review/decisions` saves decisions for requests bearing this token
   * (the store must then be writable). Absent: the dashboard writes nothing.
   */
  reviewToken?: string;
  /** Told about store errors (answered with 503); default: ignored. */
  onError?: (error: unknown, path: string) => void;
}

export interface Dashboard {
  handler(req: IncomingMessage, res: ServerResponse): void;
}

/** A page the dashboard answers with a status other than 200: a bad link, a missing record, a refused request. */
class PageError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
} as const;

/** Review decisions are a few hundred bytes; anything much larger is not one. */
const MAX_DECISION_BYTES = 16 * 1024;

/**
 * Whether a request comes from this dashboard's own pages: browsers send `Origin` with every
 * POST, and it must name the host the request was sent to; a request without one (curl, a
 * script) is not a browser's, and the token alone decides.
 */
function sameOrigin(req: IncomingMessage): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host.toLowerCase() === (req.headers.host ?? '').toLowerCase();
  } catch {
    return false;
  }
}

function send(res: ServerResponse, status: number, type: string, body: string, csp: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': type, 'content-security-policy': csp, 'content-length': Buffer.byteLength(body), ...extra });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown, extra: Record<string, string> = {}): void {
  send(res, status, 'application/json; charset=utf-8', `${JSON.stringify(value, null, 2)}\n`, DATA_CSP, extra);
}

/** `/records/<id>` and the like: the decoded id, or undefined when the path is not of that shape. */
function idAfter(path: string, prefix: string): string | undefined {
  if (!path.startsWith(prefix) || path.length === prefix.length) return undefined;
  const raw = path.slice(prefix.length);
  if (raw.includes('/')) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new PageError(400, `invalid id in ${path}: bad percent-encoding`);
  }
}


/**
 * Creates the dashboard over `store`. It reads on every request, so it shows what other processes
 * write while it runs; it never writes and never closes the store.
 * @example
 * const dashboard = createDashboard({ store: openStore('sqlite:.faultline/faultline.db', { readonly: true }) });
 * http.createServer(dashboard.handler).listen(4319, '127.0.0.1');
 */
export function createDashboard(options: DashboardOptions): Dashboard {
  const { store } = options;
  const config = resolveAlertConfig(options.alerts ?? {});
  const defaults: ViewDefaults = { since: options.since ?? '24h', until: options.until ?? null };
  const refreshSeconds = options.refreshSeconds ?? 5;
  const allowed = namedHosts(options.allowedHosts ?? LOOPBACK_HOST_NAMES);
  const now = options.now ?? Date.now;
  const runs = createRunsReader(options.runsDir ?? BENCH_RUNS_DIR);
  if (options.reviewToken !== undefined && options.reviewToken.trim() === '') throw new ConfigError('the review token must not be empty', 'reviewToken');
  const reviewDigest = options.reviewToken === undefined ? null : adminTokenDigest(options.reviewToken);
  const reviewSample = options.reviewSample ?? {};
  const trajectories = (): Store & TrajectoryStore => {
    if (!hasTrajectoryStore(store)) throw new PageError(404, `the ${store.kind} store holds no trajectories`);
    return store;
  };
  // A bad default window is the caller's mistake, reported now rather than on every request.
  parseView(new URLSearchParams(), defaults, now());
  const defaultView = (nowMs: number) => parseView(new URLSearchParams(), defaults, nowMs);

  const page = (res: ServerResponse, status: number, title: string, body: SafeHtml, section: Section | null, view: DashboardView | null, generatedAt: string, refresh: number, reviewScript = false) =>
    send(
      res,
      status,
      'text/html; charset=utf-8',
      renderPage({ title, nav: html`${sectionNav(section)}${view === null ? html`` : windowNav(view, defaults.since)}`, body, generatedAt, refreshSeconds: refresh, reviewScript }),
      reviewScript ? REVIEW_PAGE_CSP : PAGE_CSP,
    );

  const runOrThrow = async (id: string) => {
    const run = await runs.get(id);
    if (run === null) throw new PageError(404, `no saved FailBench run ${id}`);
    return run;
  };
  const comparison = async (params: URLSearchParams) => {
    const [a, b] = [params.get('a'), params.get('b')];
    if (a === null || a === '' || b === null || b === '') throw new PageError(400, 'compare needs two runs: /runs/compare?a=<run id>&b=<run id>');
    await runOrThrow(a);
    await runOrThrow(b);
    return runs.compare(a, b);
  };

  /** `POST /api/review/decisions`: see the module comment for who may. */
  async function decide(req: IncomingMessage, res: ServerResponse, nowMs: number): Promise<void> {
    if (!sameOrigin(req)) throw new PageError(403, "refused: a review decision must come from the dashboard's own pages (Origin)");
    if (!bearerTokenMatches(req.headers.authorization, reviewDigest!)) {
      req.resume();
      throw new PageError(401, 'review decisions need "Authorization: Bearer <admin token>" (the token the dashboard was started with)');
    }
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new PageError(415, 'a review decision is JSON (Content-Type: application/json)');
    const text = await readAdminBody(req, MAX_DECISION_BYTES);
    if (text === undefined) throw new PageError(413, `a review decision is at most ${MAX_DECISION_BYTES} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new PageError(400, 'the body is not JSON');
    }
    const saved = await saveDecision(trajectories(), parseDecision(body), nowMs);
    if ('status' in saved) throw new PageError(saved.status, saved.message);
    return sendJson(res, 200, { saved: true, review: saved });
  }

  /**
   * The store a view reads: the whole store, or, for an agent or a run, a memory store of the
   * matching records from `fromMs` to the window's end (see scoped-store.ts).
   */
  const storeFor = (view: DashboardView, fromMs: number): Promise<Store> =>
    isScoped(view) ? scopedStore(store, { since: Math.min(fromMs, view.window.since), until: view.window.until }, view) : Promise.resolve(store);

  /**
   * `/api/alerts` takes `since` like `faultline alerts --since`; without it, the command's default
   * window: the last complete hour and the current one, before the view's end.
   */
  const alertWindow = (params: URLSearchParams, view: DashboardView): TimeWindow =>
    params.get('since') ? view.window : defaultAlertWindow(view.window.until);

  async function api(path: string, params: URLSearchParams, res: ServerResponse, nowMs: number): Promise<void> {
    const view = () => parseView(params, defaults, nowMs);
    const recordId = idAfter(path, '/api/records/');
    const traceId = idAfter(path, '/api/traces/');
    if (path === '/api/dashboard') {
      const v = view();
      const window = defaultAlertWindow(v.window.until);
      return sendJson(res, 200, await readSnapshot(await storeFor(v, alertReach(window, config)), v, { window, config }, nowMs));
    }
    if (path === '/api/alerts') {
      const v = view();
      const window = alertWindow(params, v);
      return sendJson(res, 200, await readAlerts(await storeFor(v, alertReach(window, config)), window, config, v.tool));
    }
    const reads = { '/api/stats': readStats, '/api/failures': readFailures, '/api/hourly': readHourly, '/api/signatures': readSignatures } as const;
    if (Object.hasOwn(reads, path)) {
      const v = view();
      return sendJson(res, 200, await reads[path as keyof typeof reads](await storeFor(v, v.window.since), v));
    }
    if (recordId !== undefined) {
      const record = await store.get(recordId);
      if (record === null) throw new PageError(404, `no record ${recordId}`);
      return sendJson(res, 200, record);
    }
    if (traceId !== undefined) {
      const trace = await readTrace(store, traceId);
      if (trace === null) throw new PageError(404, `no trace ${traceId}`);
      return sendJson(res, 200, trace);
    }
    if (path === '/api/trajectories') return sendJson(res, 200, await readTrajectoryList(trajectories(), parseTrajectoryFilter(params)));
    const trajectoryId = idAfter(path, '/api/trajectories/');
    if (trajectoryId !== undefined) {
      const t = await trajectories().getTrajectory(trajectoryId);
      if (t === null) throw new PageError(404, `no trajectory ${trajectoryId}`);
      return sendJson(res, 200, t);
    }
    if (path === '/api/review') return sendJson(res, 200, await readReview(trajectories(), reviewSample, reviewDigest !== null));
    if (path === '/api/runs') return sendJson(res, 200, await runs.list());
    if (path === '/api/runs/compare') return sendJson(res, 200, await comparison(params));
    const runId = idAfter(path, '/api/runs/');
    if (runId !== undefined) return sendJson(res, 200, await runOrThrow(runId));
    throw new PageError(
      404,
      `not found: ${path} (try /api/dashboard, /api/stats, /api/alerts, /api/failures, /api/hourly, /api/signatures, /api/records/<id>, /api/traces/<id>, /api/trajectories, /api/review, /api/runs)`,
    );
  }

  async function pages(path: string, params: URLSearchParams, res: ServerResponse, nowMs: number): Promise<void> {
    const generatedAt = new Date(nowMs).toISOString();
    if (path === '/') {
      const view = parseView(params, defaults, nowMs);
      const window = defaultAlertWindow(view.window.until);
      const snapshot = await readSnapshot(await storeFor(view, alertReach(window, config)), view, { window, config }, nowMs);
      const scope = [view.tool, view.agent, view.run].filter((x) => x !== null).join(', ');
      const title = `faultline dashboard${scope === '' ? '' : `: ${scope}`} (${view.since}${view.until === null ? '' : ` .. ${view.until}`})`;
      return page(res, 200, title, renderOverview(snapshot), 'overview', view, generatedAt, refreshSeconds);
    }
    const recordId = idAfter(path, '/records/');
    if (recordId !== undefined) {
      const record = await store.get(recordId);
      if (record === null) throw new PageError(404, `no record ${recordId}`);
      // A stored record does not change: nothing to refresh.
      return page(res, 200, `faultline record ${recordId}`, renderRecord(record, defaultView(nowMs)), null, null, generatedAt, 0);
    }
    const traceId = idAfter(path, '/traces/');
    if (traceId !== undefined) {
      const trace = await readTrace(store, traceId);
      if (trace === null) throw new PageError(404, `no trace ${traceId}`);
      // A trace can still be running: its page follows it.
      return page(res, 200, `faultline trace ${traceId}`, renderTrace(trace), null, null, generatedAt, refreshSeconds);
    }
    if (path === '/trajectories') {
      const store = trajectories();
      const list = await readTrajectoryList(store, parseTrajectoryFilter(params));
      return page(res, 200, 'faultline trajectories', renderTrajectoryList(list, await store.countTrajectories()), 'trajectories', null, generatedAt, 0);
    }
    const trajectoryId = idAfter(path, '/trajectories/');
    if (trajectoryId !== undefined) {
      const t = await trajectories().getTrajectory(trajectoryId);
      if (t === null) throw new PageError(404, `no trajectory ${trajectoryId}`);
      return page(res, 200, `faultline trajectory ${trajectoryId}`, renderTrajectory(t), 'trajectories', null, generatedAt, 0);
    }
    if (path === '/review') {
      // No auto-refresh: a refresh would redraw the labels being decided.
      const view = await readReview(trajectories(), reviewSample, reviewDigest !== null);
      return page(res, 200, 'faultline review', renderReview(view), 'review', null, generatedAt, 0, view.enabled);
    }
    if (path === '/runs') return page(res, 200, 'faultline FailBench runs', renderRunsList(await runs.list()), 'runs', null, generatedAt, 0);
    if (path === '/runs/compare') {
      const view = await comparison(params);
      return page(res, 200, `faultline runs ${view.a} vs ${view.b}`, renderComparison(view), 'runs', null, generatedAt, 0);
    }
    const runId = idAfter(path, '/runs/');
    if (runId !== undefined) return page(res, 200, `faultline FailBench run ${runId}`, renderRun(runId, await runOrThrow(runId)), 'runs', null, generatedAt, 0);
    throw new PageError(404, `not found: ${path}`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    const path = url.pathname;
    const isApi = path === '/api' || path.startsWith('/api/');
    const nowMs = now();
    try {
      if (!hostAllowed(req.headers.host, allowed)) throw new PageError(403, `refused: Host ${JSON.stringify(req.headers.host)} is not this dashboard's; open it by 127.0.0.1 or localhost`);
      if (path === '/api/review/decisions') {
        if (reviewDigest === null) throw new PageError(405, 'the dashboard is read-only: start it with --review to save review decisions');
        if (req.method !== 'POST') throw new PageError(405, `method ${req.method ?? '?'} not allowed on ${path} (POST)`);
        return await decide(req, res, nowMs);
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new PageError(405, `method ${req.method ?? '?'} not allowed: the dashboard is read-only (GET, HEAD)`);
      if (path === '/favicon.ico') return void res.writeHead(204, COMMON_HEADERS).end();
      await (isApi ? api(path, url.searchParams, res, nowMs) : pages(path, url.searchParams, res, nowMs));
    } catch (error) {
      let status: number;
      let message: string;
      if (error instanceof PageError) [status, message] = [error.status, error.message];
      else if (ConfigError.isInstance(error)) [status, message] = [400, error.message];
      else {
        if (options.onError !== undefined) reportSafely((e) => options.onError?.(e, path), error);
        [status, message] = [503, `the store could not be read: ${error instanceof Error ? error.message : String(error)}`];
      }
      const extra: Record<string, string> = status === 405 ? { allow: path === '/api/review/decisions' && reviewDigest !== null ? 'POST' : 'GET, HEAD' } : status === 401 ? { 'www-authenticate': 'Bearer realm="faultline"' } : {};
      if (res.headersSent) return void res.destroy();
      if (isApi) return sendJson(res, status, { error: message }, extra);
      const body = html`<h1>${status === 404 ? 'Not found' : status === 503 ? 'Store unavailable' : 'Cannot show this'}</h1><p class="bad">${message}</p><p><a href="/">back to the overview</a></p>`;
      return send(
        res,
        status,
        'text/html; charset=utf-8',
        renderPage({ title: `faultline dashboard: ${status}`, nav: sectionNav(null), body, generatedAt: new Date(nowMs).toISOString(), refreshSeconds: 0 }),
        PAGE_CSP,
        extra,
      );
    }
  }

  return {
    handler(req, res) {
      void handle(req, res);
    },
  };
}
