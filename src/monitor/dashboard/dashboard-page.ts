/**
 * The frame every dashboard page shares: the stylesheet, the refresh script, and the
 * Content-Security-Policy that allows exactly those two and nothing else (no other script, no
 * inline event handler, no external source of any kind; fetches only back to this server).
 *
 * The script and the stylesheet are constants, so the policy names them by hash rather than by
 * a per-response nonce: nothing in a response can carry a value that would unlock a script.
 */
import { createHash } from 'node:crypto';
import { html, trustedHtml, type SafeHtml } from './safe-html.js';

const CSS = `
:root{color-scheme:light;--line:#e5e7eb;--muted:#6b7280;--bad:#b91c1c;--warn:#b45309;--ok:#047857}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2937;background:#f9fafb}
header{position:sticky;top:0;z-index:1;display:flex;flex-wrap:wrap;gap:.4rem 1.2rem;align-items:center;padding:.55rem 1.2rem;background:#111827;color:#f9fafb}
header a{color:#f9fafb}
.brand{font-weight:700;text-decoration:none;margin-right:.4rem}
.windows a{display:inline-block;padding:.1rem .55rem;border:1px solid #4b5563;border-radius:4px;text-decoration:none;margin-right:.25rem}
.windows a[aria-current]{background:#f9fafb;color:#111827;font-weight:600}
#updated{color:#d1d5db;font-size:12px}#updated.stale{color:#fca5a5}
header button{font:inherit;font-size:12px;padding:.1rem .6rem;border-radius:4px;border:1px solid #4b5563;background:#1f2937;color:#f9fafb;cursor:pointer}
main{max-width:1280px;margin:0 auto;padding:.5rem 1.2rem 3rem}
h1{font-size:1.35rem;margin:1rem 0 .2rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:1.8rem 0 .4rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
.sub{color:var(--muted);margin:.1rem 0 .6rem;overflow-wrap:anywhere}
.sections a{display:inline-block;padding:.1rem .45rem;text-decoration:none;margin-right:.1rem;border-radius:4px}
.sections a[aria-current]{background:#374151;font-weight:600}
.table-box{max-width:100%;overflow-x:auto;margin:.3rem 0 .8rem}
table{border-collapse:collapse;background:#fff;width:100%}
th,td{border:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f3f4f6;font-weight:600}
td>span{display:block;max-width:16rem}
td.msg>span,td.id>span{max-width:none}td.msg,td.id{overflow-wrap:anywhere}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num,td.time{white-space:nowrap}
td.msg{min-width:12rem}td.head,tr.total td{font-weight:600}td.head{background:#f3f4f6}
td.id,td.code,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
.empty{color:var(--muted);font-style:italic}
.critical{color:var(--bad);font-weight:700}.warning{color:var(--warn);font-weight:600}
.bad{color:var(--bad)}.ok{color:var(--ok)}
.badge{display:inline-block;font-size:11px;padding:0 .35rem;border-radius:3px;background:#fee2e2;color:var(--bad);font-weight:600}
.heat1{background:#fef3c7}.heat2{background:#fde68a}.heat3{background:#fca5a5}.heat4{background:#f87171;color:#111827}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(420px,100%),1fr));gap:.8rem}
figure{margin:0;background:#fff;border:1px solid var(--line);border-radius:6px;padding:.4rem .6rem;min-width:0}
figcaption{font-size:12px;color:var(--muted);overflow-wrap:anywhere}figcaption b{color:#1f2937}
svg.chart{width:100%;height:auto;display:block}
.chart .calls{fill:#93c5fd}.chart .failures{fill:#ef4444}.chart .axis{stroke:#9ca3af;stroke-width:1}.chart text{font-size:10px;fill:#6b7280}
.legend i{display:inline-block;width:.7rem;height:.7rem;margin:0 .25rem 0 .6rem;vertical-align:middle}.legend .calls{background:#93c5fd}.legend .failures{background:#ef4444}
pre.json{background:#fff;border:1px solid var(--line);padding:.7rem;overflow:auto;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-width:100%}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem 1rem;background:#fff;border:1px solid var(--line);padding:.6rem .8rem}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere;min-width:0}
form{display:flex;flex-wrap:wrap;gap:.4rem .8rem;align-items:end;margin:.4rem 0}
form label{display:flex;flex-direction:column;font-size:12px;color:var(--muted);max-width:100%;min-width:0}
input,select,button{font:inherit;font-size:13px;padding:.15rem .35rem;max-width:100%}
.filters{margin:.2rem 0 .6rem}
details summary{cursor:pointer;color:var(--muted)}
.review-item{background:#fff;border:1px solid var(--line);border-radius:6px;padding:.2rem .8rem .6rem;margin:.6rem 0;min-width:0}
.review-item h3{font-size:1rem;margin:.5rem 0;overflow-wrap:anywhere}.review-item.done{opacity:.6}
.choices{display:flex;flex-wrap:wrap;gap:.4rem .6rem;align-items:center;margin-top:.5rem}.choices label{font-size:12px;color:var(--muted)}
.token{margin:.4rem 0}.token label{font-size:12px;color:var(--muted)}.review-status{font-size:12px}
.score{font-weight:600}
@media (max-width:760px){
header{padding:.5rem .6rem}main{padding:.4rem .6rem 2rem}
table.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
table.cards,table.cards tbody,table.cards tr{display:block;width:100%}
table.cards tr{border:1px solid var(--line);margin:0 0 .5rem;background:#fff}
table.cards td{display:grid;grid-template-columns:minmax(5.5rem,36%) minmax(0,1fr);gap:.6rem;border:0;border-top:1px solid var(--line);text-align:left;min-width:0;white-space:normal}
table.cards td:first-child{border-top:0}
table.cards td::before{content:attr(data-label);color:var(--muted);font:600 13px system-ui,sans-serif;overflow-wrap:anywhere}
table.cards td>span{max-width:none;min-width:0;overflow-wrap:anywhere}
dl.facts{grid-template-columns:minmax(0,1fr)}dl.facts dd{margin-bottom:.3rem}
}
`;

/**
 * Auto-refresh: fetches this same page again every `data-refresh` seconds and swaps in the new
 * `<main>`, parsed by DOMParser (which runs no script), so the page is rendered, and escaped, in
 * one place: the server. It pauses while the tab is hidden or on request, and says when the data
 * it shows was read, or that a refresh failed and the data is stale.
 */
const SCRIPT = `(() => {
  'use strict';
  const main = document.getElementById('dashboard');
  const stamp = document.getElementById('updated');
  const toggle = document.getElementById('refresh-toggle');
  if (main === null || stamp === null) return;
  const seconds = Number(main.getAttribute('data-refresh'));
  const auto = seconds > 0;
  let paused = false;
  let timer;
  let busy = false;
  const readAt = () => new Date(main.getAttribute('data-generated-at')).toLocaleTimeString();
  const show = (text, stale) => {
    stamp.textContent = text;
    stamp.classList.toggle('stale', stale);
  };
  const fresh = () => show('last updated ' + readAt() + (auto ? (paused ? ' (auto-refresh paused)' : ' (every ' + seconds + ' s)') : ''), false);
  fresh();
  if (toggle !== null) toggle.hidden = !auto;
  if (!auto) return;
  const schedule = () => {
    clearTimeout(timer);
    if (!paused && !document.hidden) timer = setTimeout(refresh, seconds * 1000);
  };
  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const response = await fetch(location.href, { cache: 'no-store', headers: { accept: 'text/html' } });
      if (!response.ok) throw new Error('HTTP ' + response.status);
      const next = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('dashboard');
      if (next === null) throw new Error('unexpected response');
      main.replaceChildren(...Array.from(next.childNodes));
      main.setAttribute('data-generated-at', next.getAttribute('data-generated-at'));
      fresh();
    } catch (error) {
      show('refresh failed at ' + new Date().toLocaleTimeString() + ' (' + (error instanceof Error ? error.message : String(error)) + '); showing data read at ' + readAt(), true);
    } finally {
      busy = false;
      schedule();
    }
  }
  if (toggle !== null) {
    toggle.addEventListener('click', () => {
      paused = !paused;
      toggle.textContent = paused ? 'resume' : 'pause';
      fresh();
      if (paused) clearTimeout(timer);
      else void refresh();
    });
  }
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) clearTimeout(timer);
    else if (!paused) void refresh();
  });
  schedule();
})();`;

/**
 * The review page's buttons: each posts its decision to `/api/review/decisions` with the admin
 * token in the Authorization header (a header a cross-site form cannot send), then marks the
 * label decided and swaps in the precision section read again from the server. The token comes
 * from the page's field or from the address's `#token=` fragment (which the browser never sends
 * to the server), and is kept for the tab only (sessionStorage).
 */
const REVIEW_SCRIPT = `(() => {
  'use strict';
  const root = document.getElementById('review');
  const input = document.getElementById('admin-token');
  if (root === null || input === null || root.getAttribute('data-enabled') !== 'true') return;
  const KEY = 'faultline-admin-token';
  const fragment = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (fragment !== null) {
    sessionStorage.setItem(KEY, decodeURIComponent(fragment[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  input.value = sessionStorage.getItem(KEY) || '';
  input.addEventListener('input', () => sessionStorage.setItem(KEY, input.value.trim()));
  const finish = (item, text) => {
    item.classList.add('done');
    for (const control of item.querySelectorAll('button, select')) control.disabled = true;
    item.querySelector('.review-status').textContent = text;
  };
  root.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-decision]') : null;
    if (button === null) return;
    const item = button.closest('.review-item');
    const status = item.querySelector('.review-status');
    const decision = button.getAttribute('data-decision');
    if (decision === 'skip') return finish(item, 'skipped (not saved)');
    const body = { trajectory_id: item.dataset.trajectory, step_index: Number(item.dataset.step), name: item.dataset.name, source: item.dataset.source, decision };
    if (decision === 'corrected') body.corrected_to = item.querySelector('select.correct-to').value;
    status.classList.remove('bad');
    status.textContent = 'saving...';
    try {
      const response = await fetch('/api/review/decisions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer ' + input.value.trim() },
        body: JSON.stringify(body),
      });
      const answer = await response.json();
      if (!response.ok) throw new Error(answer.error || 'HTTP ' + response.status);
      finish(item, 'saved: ' + answer.review.decision + (answer.review.corrected_to ? ' to ' + answer.review.corrected_to : ''));
      const page = await fetch(location.pathname, { cache: 'no-store', headers: { accept: 'text/html' } });
      const next = new DOMParser().parseFromString(await page.text(), 'text/html').getElementById('precision');
      const current = document.getElementById('precision');
      if (next !== null && current !== null) current.replaceWith(next);
    } catch (error) {
      status.classList.add('bad');
      status.textContent = 'not saved: ' + (error instanceof Error ? error.message : String(error));
    }
  });
})();`;

const sha256 = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

function pagePolicy(scripts: readonly string[]): string {
  return [
    "default-src 'none'",
    `script-src ${scripts.map(sha256).join(' ')}`,
    `style-src ${sha256(CSS)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    // The filter forms are GETs back to these pages; nothing posts a form (review sends its decisions by fetch, with the token in a header).
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy of every HTML page: this stylesheet, this script, fetches to this origin; nothing else. */
export const PAGE_CSP = pagePolicy([SCRIPT]);

/** The review page's, when it takes decisions: the same, plus its review script. */
export const REVIEW_PAGE_CSP = pagePolicy([SCRIPT, REVIEW_SCRIPT]);

/** The policy of JSON and plain-text responses: nothing at all, should one be opened as a page. */
export const DATA_CSP = "default-src 'none'; frame-ancestors 'none'";

export interface PageOptions {
  title: string;
  /** The header's window links (empty for pages without a window). */
  nav: SafeHtml;
  body: SafeHtml;
  /** UTC ISO-8601: when the data was read. */
  generatedAt: string;
  /** Seconds between refreshes; 0 for a page that does not change. */
  refreshSeconds: number;
  /** The review page's script, which wires its decision buttons. */
  reviewScript?: boolean;
}

export function renderPage(options: PageOptions): string {
  const { refreshSeconds } = options;
  // Without JavaScript, the page still refreshes itself (a full reload).
  const noscript = refreshSeconds > 0 ? html`<noscript><meta http-equiv="refresh" content="${refreshSeconds}"></noscript>` : html``;
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${noscript}
<title>${options.title}</title>
<style>${trustedHtml(CSS)}</style>
</head>
<body>
<header><a class="brand" href="/">faultline dashboard</a>${options.nav}<span id="updated" title="${options.generatedAt}">last updated ${options.generatedAt}</span><button id="refresh-toggle" type="button" hidden>pause</button></header>
<main id="dashboard" data-generated-at="${options.generatedAt}" data-refresh="${refreshSeconds}">
${options.body}
</main>
<script>${trustedHtml(SCRIPT)}</script>${options.reviewScript === true ? html`<script>${trustedHtml(REVIEW_SCRIPT)}</script>` : html``}
</body>
</html>
`.text;
}
