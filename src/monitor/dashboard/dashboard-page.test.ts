/**
 * The dashboard in headless Chromium, served by `faultline dashboard` over a SQLite file: the
 * tables show what is stored, the window selector changes what is read, hostile recorded strings
 * stay text under the Content-Security-Policy, and auto-refresh picks up a record stored after
 * the page loaded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, waitFor, writeStoreFile } from '../../cli/run-cli.test-helpers.js';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { CHROMIUM, keepScreenshot, launchChromium, skipBrowser, watchPage } from './browser.test-helpers.js';
import { hostileRecord, XSS_MESSAGE, XSS_TOOL, XSS_TRACE } from './dashboard.test-helpers.js';

if (skipBrowser) console.warn(`dashboard-page.test.ts: skipping the headless-Chromium test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

const dir = mkdtempSync(join(tmpdir(), 'faultline-dashboard-page-'));
const db = join(dir, 'agents.db');
const MINUTE = 60_000;
const now = Date.now();
const at = (msAgo: number) => new Date(now - msAgo).toISOString();

// Made oldest first: execution ids (UUIDv7) are minted in order, as a recorder mints them.
const timeout = { failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', status: 'timeout', error_code: 'TIMEOUT', error_message: 'timed out after 3000 ms' } as const;
const records = [
  makeFailureRecord({ tool_name: 'create_order', ...timeout, created_at: at(3 * 24 * 60 * MINUTE) }),
  makeRecord({ tool_name: 'search_flights', created_at: at(5 * 60 * MINUTE) }),
  makeFailureRecord({ tool_name: 'search_flights', ...timeout, created_at: at(5 * 60 * MINUTE) }),
  ...[1, 2, 3].map(() => makeRecord({ tool_name: 'get_weather', created_at: at(20 * MINUTE) })),
  makeFailureRecord({ tool_name: 'get_weather', failure_stage: 'execution', failure_category: 'rate_limit', failure_type: 'rate_limited', error_code: 'HTTP_429', error_message: '429 Too Many Requests', created_at: at(20 * MINUTE) }),
];
const hostile = hostileRecord(now - 10 * MINUTE);

beforeAll(async () => {
  await writeStoreFile(db, [...records, hostile]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Dom {
  tools: Record<string, number>;
  failures: string[];
  current: string | null;
  updated: string;
  scripts: number;
  injected: number;
  pwned: unknown;
  violations: string[];
  text: string;
}

// Strings, evaluated in the page: the project compiles without the DOM library.
const READ_DOM = `(() => ({
  tools: Object.fromEntries([...document.querySelectorAll('#tools tbody tr')].map((tr) => [tr.dataset.tool, Number(tr.children[1].textContent)])),
  failures: [...document.querySelectorAll('#failures tbody tr')].map((tr) => tr.children[1].textContent),
  current: document.querySelector('.windows a[aria-current]')?.textContent ?? null,
  updated: document.getElementById('updated').textContent,
  scripts: document.querySelectorAll('script').length,
  injected: document.querySelectorAll('img, iframe, object, embed, [onerror], [onload], main svg:not(.chart)').length
    + [...document.querySelectorAll('b')].filter((b) => b.textContent === 'not bold').length,
  pwned: window.__pwned,
  violations: window.__violations,
  text: document.body.innerText,
}))()`;

describe('the dashboard in headless Chromium', () => {
  it.skipIf(skipBrowser)('shows the store, switches windows, keeps hostile text inert and refreshes itself', { timeout: 90_000 }, async () => {
    const { captured, exit, stop } = startCli(['dashboard', '--db', db, '--port', '0', '--refresh', '1s'], dir);
    const url = await waitFor(() => /serving (http:\/\/127\.0\.0\.1:\d+\/)/.exec(captured.stdout())?.[1], 'the listening line');

    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const watch = await watchPage(page);
      const dom = async () => (await page.evaluate(READ_DOM)) as Dom;

      await page.goto(url, { waitUntil: 'load' });
      let seen = await dom();
      // The default window (24h): what the store has from the last 24 hours.
      expect(seen.current).toBe('24h');
      expect(seen.tools).toStrictEqual({ [XSS_TOOL]: 1, get_weather: 4, search_flights: 2 });
      expect(seen.failures).toStrictEqual([XSS_TOOL, 'get_weather', 'search_flights']);
      // The refresh script ran (it rewrote the stamp), under the policy.
      expect(seen.updated).toMatch(/^last updated .+ \(every 1 s\)$/);
      expect(seen.text).toContain(XSS_TOOL);
      expect(seen.text).toContain(XSS_MESSAGE);
      expect([seen.scripts, seen.injected, seen.pwned]).toStrictEqual([1, 0, undefined]);

      await page.click('.windows a:text-is("1h")');
      await page.waitForURL(/since=1h/);
      seen = await dom();
      expect(seen.current).toBe('1h');
      expect(seen.tools).toStrictEqual({ [XSS_TOOL]: 1, get_weather: 4 });
      await page.click('.windows a:text-is("7d")');
      await page.waitForURL(/since=7d/);
      seen = await dom();
      expect(seen.tools).toStrictEqual({ [XSS_TOOL]: 1, create_order: 1, get_weather: 4, search_flights: 2 });
      expect(seen.text).toContain('Calls and failures per hour');
      expect(await page.locator('#hourly figure').count()).toBe(4);
      expect(await page.locator('#stage-category').textContent()).toContain('execution');

      // Stored by another process after the page loaded: the next refresh shows it.
      const before = seen.updated;
      const writer = createSqliteStore({ path: db });
      await writer.insert([
        makeFailureRecord({ tool_name: 'late_tool', failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error', error_message: 'stored after the page loaded' }),
      ]);
      await writer.close();
      // A locator, not waitForFunction: the page's policy forbids the eval that one needs.
      await page.locator('#tools tr[data-tool="late_tool"]').waitFor({ timeout: 15_000 });
      seen = await dom();
      expect(seen.failures[0]).toBe('late_tool');
      expect(seen.tools['late_tool']).toBe(1);
      expect(seen.updated).not.toBe(before);
      expect(seen.updated).toMatch(/^last updated /);

      // Drill down: the hostile record, then its trace.
      await page.click(`#failures tr[data-id="${hostile.execution_id}"] td.time a`);
      await page.waitForURL(/\/records\//);
      const json = (await page.locator('#record-json').textContent())!;
      expect(JSON.parse(json)).toStrictEqual(JSON.parse(JSON.stringify(hostile)));
      await page.click('#facts a.id');
      await page.waitForURL(/\/traces\//);
      expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(`/traces/${XSS_TRACE}`);
      expect(await page.locator('#calls tbody tr').count()).toBe(1);
      seen = await dom();
      expect(seen.text).toContain(XSS_TRACE);
      expect([seen.scripts, seen.injected, seen.pwned]).toStrictEqual([1, 0, undefined]);

      await keepScreenshot(page, 'hostile-trace-page');
      expect(seen.violations).toStrictEqual([]);
      expect(watch.consoleErrors).toStrictEqual([]);
      expect(watch.dialogs).toStrictEqual([]);
      expect(watch.requests.filter((r) => !r.startsWith(url))).toStrictEqual([]);
    } finally {
      await browser.close();
      stop();
    }
    expect(await exit).toBe(0);
    expect(captured.stderr()).toBe('');
  });
});
