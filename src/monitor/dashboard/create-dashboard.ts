/**
 * The dashboard: a read-only web view of a Store (the one `stats`, `alerts` and `tail` read),
 * served by a request handler that mounts on any node:http server (`faultline dashboard` runs
 * one on 127.0.0.1).
 *
 * Pages: `/` (the overview, `?since=1h|24h|7d|<ISO date>&tool=<name>`), `/records/<id>`,
 * `/traces/<id>`. JSON with the same data: `/api/dashboard` (everything `/` shows), `/api/stats`,
 * `/api/alerts`, `/api/failures` (`&limit=`), `/api/hourly`, `/api/signatures`,
 * `/api/records/<id>`, `/api/traces/<id>`.
 *
 * Read-only by construction: GET and HEAD only (anything else is 405), and no page offers an
 * action, so there is nothing to protect with a token. Every recorded value is escaped
 * (`safe-html.ts`), the pages carry a Content-Security-Policy that admits only their own script
 * and stylesheet, and requests naming another host are refused, so a web page cannot read the
 * dashboard through DNS rebinding.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError } from '../../errors.js';
import { hostAllowed, LOOPBACK_HOST_NAMES, namedHosts } from '../../host-allowlist.js';
import type { Store, TimeWindow } from '../../store/types.js';
import { defaultAlertWindow, resolveAlertConfig, type AlertConfig, type ResolvedAlertConfig } from '../alert-rules.js';
import { parseSince } from '../time-window.js';
import {
  readAlerts,
  readFailures,
  readHourly,
  readSignatures,
  readSnapshot,
  readStats,
  readTrace,
  type DashboardView,
} from './dashboard-data.js';
import { windowNav } from './dashboard-links.js';
import { DATA_CSP, PAGE_CSP, renderPage } from './dashboard-page.js';
import { parseView } from './dashboard-view.js';
import { renderOverview } from './overview-html.js';
import { renderRecord } from './record-html.js';
import { html, type SafeHtml } from './safe-html.js';
import { renderTrace } from './trace-html.js';

/** Host names a loopback-bound dashboard answers to. */
export const LOOPBACK_HOSTS: readonly string[] = LOOPBACK_HOST_NAMES;

export interface DashboardOptions {
  store: Store;
  /** Alert settings (as `faultline alerts --config`); defaults apply to whatever is missing. */
  alerts?: AlertConfig | ResolvedAlertConfig;
  /** The window when a request names none: `24h` (the default), `7d`, an ISO date. */
  since?: string;
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
  /** Told about store errors (answered with 503); default: ignored. */
  onError?: (error: unknown, path: string) => void;
}

export interface Dashboard {
  handler(req: IncomingMessage, res: ServerResponse): void;
}

class HttpError extends Error {
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
    throw new HttpError(400, `invalid id in ${path}: bad percent-encoding`);
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
  const defaultSince = options.since ?? '24h';
  const refreshSeconds = options.refreshSeconds ?? 5;
  const allowed = namedHosts(options.allowedHosts ?? LOOPBACK_HOST_NAMES);
  const now = options.now ?? Date.now;
  // A bad default window is the caller's mistake, reported now rather than on every request.
  parseSince(defaultSince, now(), 'since');

  const page = (res: ServerResponse, status: number, title: string, body: SafeHtml, view: DashboardView | null, generatedAt: string, refresh: number) =>
    send(
      res,
      status,
      'text/html; charset=utf-8',
      renderPage({ title, nav: windowNav(view?.since ?? null, defaultSince, view?.tool ?? null), body, generatedAt, refreshSeconds: refresh }),
      PAGE_CSP,
    );

  /** `/api/alerts` takes `since` like `faultline alerts --since`; without it, the command's default window. */
  const alertWindow = (params: URLSearchParams, nowMs: number): TimeWindow =>
    params.has('since') ? { since: parseSince(params.get('since')!, nowMs, 'since'), until: nowMs } : defaultAlertWindow(nowMs);

  async function api(path: string, params: URLSearchParams, res: ServerResponse, nowMs: number): Promise<void> {
    const view = () => parseView(params, defaultSince, nowMs);
    const recordId = idAfter(path, '/api/records/');
    const traceId = idAfter(path, '/api/traces/');
    if (path === '/api/dashboard') return sendJson(res, 200, await readSnapshot(store, view(), { window: defaultAlertWindow(nowMs), config }, nowMs));
    if (path === '/api/stats') return sendJson(res, 200, await readStats(store, view()));
    if (path === '/api/alerts') return sendJson(res, 200, await readAlerts(store, alertWindow(params, nowMs), config, view().tool));
    if (path === '/api/failures') return sendJson(res, 200, await readFailures(store, view()));
    if (path === '/api/hourly') return sendJson(res, 200, await readHourly(store, view()));
    if (path === '/api/signatures') return sendJson(res, 200, await readSignatures(store, view()));
    if (recordId !== undefined) {
      const record = await store.get(recordId);
      if (record === null) throw new HttpError(404, `no record ${recordId}`);
      return sendJson(res, 200, record);
    }
    if (traceId !== undefined) {
      const trace = await readTrace(store, traceId);
      if (trace === null) throw new HttpError(404, `no trace ${traceId}`);
      return sendJson(res, 200, trace);
    }
    throw new HttpError(404, `not found: ${path} (try /api/dashboard, /api/stats, /api/alerts, /api/failures, /api/hourly, /api/signatures, /api/records/<id>, /api/traces/<id>)`);
  }

  async function pages(path: string, params: URLSearchParams, res: ServerResponse, nowMs: number): Promise<void> {
    const generatedAt = new Date(nowMs).toISOString();
    if (path === '/') {
      const view = parseView(params, defaultSince, nowMs);
      const snapshot = await readSnapshot(store, view, { window: defaultAlertWindow(nowMs), config }, nowMs);
      const title = `faultline dashboard${view.tool === null ? '' : `: ${view.tool}`} (${view.since})`;
      return page(res, 200, title, renderOverview(snapshot), view, generatedAt, refreshSeconds);
    }
    const recordId = idAfter(path, '/records/');
    if (recordId !== undefined) {
      const record = await store.get(recordId);
      if (record === null) throw new HttpError(404, `no record ${recordId}`);
      // A stored record does not change: nothing to refresh.
      return page(res, 200, `faultline record ${recordId}`, renderRecord(record, defaultSince), null, generatedAt, 0);
    }
    const traceId = idAfter(path, '/traces/');
    if (traceId !== undefined) {
      const trace = await readTrace(store, traceId);
      if (trace === null) throw new HttpError(404, `no trace ${traceId}`);
      // A trace can still be running: its page follows it.
      return page(res, 200, `faultline trace ${traceId}`, renderTrace(trace), null, generatedAt, refreshSeconds);
    }
    throw new HttpError(404, `not found: ${path}`);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid');
    const path = url.pathname;
    const isApi = path === '/api' || path.startsWith('/api/');
    const nowMs = now();
    try {
      if (!hostAllowed(req.headers.host, allowed)) throw new HttpError(403, `refused: Host ${JSON.stringify(req.headers.host)} is not this dashboard's; open it by 127.0.0.1 or localhost`);
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, `method ${req.method ?? '?'} not allowed: the dashboard is read-only (GET, HEAD)`);
      if (path === '/favicon.ico') return void res.writeHead(204, COMMON_HEADERS).end();
      await (isApi ? api(path, url.searchParams, res, nowMs) : pages(path, url.searchParams, res, nowMs));
    } catch (error) {
      let status: number;
      let message: string;
      if (error instanceof HttpError) [status, message] = [error.status, error.message];
      else if (ConfigError.isInstance(error)) [status, message] = [400, error.message];
      else {
        options.onError?.(error, path);
        [status, message] = [503, `the store could not be read: ${error instanceof Error ? error.message : String(error)}`];
      }
      const extra: Record<string, string> = status === 405 ? { allow: 'GET, HEAD' } : {};
      if (res.headersSent) return void res.destroy();
      if (isApi) return sendJson(res, status, { error: message }, extra);
      const body = html`<h1>${status === 404 ? 'Not found' : status === 503 ? 'Store unavailable' : 'Cannot show this'}</h1><p class="bad">${message}</p><p><a href="/">back to the overview</a></p>`;
      return send(
        res,
        status,
        'text/html; charset=utf-8',
        renderPage({ title: `faultline dashboard: ${status}`, nav: windowNav(null, defaultSince, null), body, generatedAt: new Date(nowMs).toISOString(), refreshSeconds: 0 }),
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
