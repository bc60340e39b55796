/**
 * The dashboard's URLs, built in one place so pages link to what the server routes, and the
 * header's window selector (1h / 24h / 7d, plus the command's own `--since` when it is another).
 */
import { html, type SafeHtml } from './safe-html.js';

export const WINDOW_CHOICES: readonly string[] = ['1h', '24h', '7d'];

export function overviewHref(since: string, tool: string | null): string {
  const params = new URLSearchParams({ since });
  if (tool !== null) params.set('tool', tool);
  return `/?${params.toString()}`;
}

export function recordHref(executionId: string): string {
  return `/records/${encodeURIComponent(executionId)}`;
}

export function traceHref(traceId: string): string {
  return `/traces/${encodeURIComponent(traceId)}`;
}

/** The window links; the one shown is marked current (`aria-current`). */
export function windowNav(current: string | null, defaultSince: string, tool: string | null): SafeHtml {
  const choices = WINDOW_CHOICES.includes(defaultSince) ? WINDOW_CHOICES : [...WINDOW_CHOICES, defaultSince];
  const links = choices.map((since) =>
    since === current
      ? html`<a href="${overviewHref(since, tool)}" aria-current="page">${since}</a>`
      : html`<a href="${overviewHref(since, tool)}">${since}</a>`,
  );
  return html`<nav class="windows" aria-label="time window">${links}</nav>`;
}
