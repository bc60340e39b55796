/**
 * Headless Chromium for the dashboard's page tests: Debian's `chromium` driven by playwright-core
 * (no browser download), a page that records console errors, dialogs, requests and CSP
 * violations, screenshots kept under `test-artifacts/dashboard/`, and the overflow measure the
 * layout tests assert on.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** Without Chromium the browser tests skip, except in CI, where a missing browser must fail. */
export const skipBrowser = !existsSync(CHROMIUM) && process.env['CI'] !== 'true';

/** Where screenshots are kept (gitignored); CI keeps the folder as the run's artifacts. */
export const SCREENSHOT_DIR = resolve('test-artifacts', 'dashboard');

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(viewport = { width: 1300, height: 900 }): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'faultline-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What a page did that a test wants to see nothing of. */
export interface PageWatch {
  consoleErrors: string[];
  dialogs: string[];
  requests: string[];
  /** CSP violations, read from the page. */
  violations(): Promise<string[]>;
}

export async function watchPage(page: Page): Promise<PageWatch> {
  const watch = { consoleErrors: [] as string[], dialogs: [] as string[], requests: [] as string[] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') watch.consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => watch.consoleErrors.push(e.message));
  page.on('dialog', (d) => {
    watch.dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => watch.requests.push(r.url()));
  // Injected by the browser, not the page, so the page's policy does not apply to it.
  await page.addInitScript(`window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`);
  return { ...watch, violations: async () => (await page.evaluate('window.__violations')) as string[] };
}

/** A screenshot of the whole page under {@link SCREENSHOT_DIR}; returns its path. */
export async function keepScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A box wider inside than it shows: what was cut off or needs a scroll bar. */
export interface Overflow {
  what: string;
  scrollWidth: number;
  clientWidth: number;
}

// A string, evaluated in the page: the project compiles without the DOM library.
const MEASURE = `(() => {
  const out = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) out.push({ what: 'the page', scrollWidth: root.scrollWidth, clientWidth: root.clientWidth });
  for (const box of document.querySelectorAll('.table-box, pre, dl, figure')) {
    const table = box.querySelector('table');
    const what = box.classList.contains('table-box') ? 'table #' + (table === null ? '?' : table.id) : box.tagName.toLowerCase() + (box.id === '' ? '' : ' #' + box.id);
    if (box.scrollWidth > box.clientWidth) out.push({ what, scrollWidth: box.scrollWidth, clientWidth: box.clientWidth });
    // A box that is itself wider than main would hide the overflow from the measure above.
    const main = document.querySelector('main');
    if (main !== null && box.getBoundingClientRect().right > main.getBoundingClientRect().right + 0.5) out.push({ what: what + ' (box)', scrollWidth: Math.round(box.getBoundingClientRect().right), clientWidth: Math.round(main.getBoundingClientRect().right) });
  }
  return out;
})()`;

/** Every table box, preformatted block, fact list and chart (and the page itself) whose content is wider than it is. */
export async function overflows(page: Page): Promise<Overflow[]> {
  return (await page.evaluate(MEASURE)) as Overflow[];
}

/** How many table boxes the page has (an overflow test over no table would prove nothing). */
export async function tableBoxes(page: Page): Promise<number> {
  return page.locator('.table-box').count();
}
