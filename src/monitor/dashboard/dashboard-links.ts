/**
 * The dashboard's URLs, built in one place so pages link to what the server routes, the header's
 * page links, and the window selector (1h / 24h / 7d, plus the command's own `--since` when it
 * is another), which keeps the rest of the view (until, tool, agent, run).
 */
import type { ViewParams } from './dashboard-data.js';
import { html, type SafeHtml } from './safe-html.js';

export const WINDOW_CHOICES: readonly string[] = ['1h', '24h', '7d'];

/** A path with these query parameters; null and undefined values are left out. */
export function hrefWith(path: string, params: Readonly<Record<string, string | number | null | undefined>>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined) query.set(name, String(value));
  const text = query.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** The overview for `view`, with `change` applied (null removes a filter). */
export function overviewHref(view: ViewParams, change: Partial<ViewParams> = {}): string {
  const v = { ...view, ...change };
  return hrefWith('/', { since: v.since, until: v.until, tool: v.tool, agent: v.agent, run: v.run });
}

export function recordHref(executionId: string): string {
  return `/records/${encodeURIComponent(executionId)}`;
}

export function traceHref(traceId: string): string {
  return `/traces/${encodeURIComponent(traceId)}`;
}

export function trajectoryHref(trajectoryId: string): string {
  return `/trajectories/${encodeURIComponent(trajectoryId)}`;
}

export function runHref(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}

export function compareHref(a: string, b: string): string {
  return hrefWith('/runs/compare', { a, b });
}

/** The dashboard's pages, for the header. */
export type Section = 'overview' | 'trajectories' | 'review' | 'runs';

const SECTIONS: readonly [Section, string, string][] = [
  ['overview', '/', 'overview'],
  ['trajectories', '/trajectories', 'trajectories'],
  ['review', '/review', 'review'],
  ['runs', '/runs', 'runs'],
];

/** The header's links to each page; the one shown is marked current (`aria-current`). */
export function sectionNav(current: Section | null): SafeHtml {
  const links = SECTIONS.map(([section, href, label]) =>
    section === current ? html`<a href="${href}" aria-current="page">${label}</a>` : html`<a href="${href}">${label}</a>`,
  );
  return html`<nav class="sections" aria-label="pages">${links}</nav>`;
}

/** The window links of the overview; the one shown is marked current (`aria-current`). */
export function windowNav(view: ViewParams, defaultSince: string): SafeHtml {
  const choices = WINDOW_CHOICES.includes(defaultSince) ? WINDOW_CHOICES : [...WINDOW_CHOICES, defaultSince];
  const links = choices.map((since) =>
    since === view.since
      ? html`<a href="${overviewHref(view, { since })}" aria-current="page">${since}</a>`
      : html`<a href="${overviewHref(view, { since })}">${since}</a>`,
  );
  return html`<nav class="windows" aria-label="time window">${links}</nav>`;
}
