/**
 * Reviewing in headless Chromium: the review page's buttons, driven as a person would, save
 * each decision onto its label in the SQLite file (accept, correct to another label, not a
 * failure; a skip saves nothing), with the token the address carried in its fragment, and the
 * precision tables follow; a wrong token saves nothing and says why. Screenshots are kept under
 * test-artifacts/dashboard/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { LabelReview } from '../../core/trajectory-types.js';
import { keepScreenshot, launchChromium, overflows, skipBrowser, watchPage, type Browser } from './browser.test-helpers.js';
import { dashboardTrajectories, startDashboard } from './dashboard.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-review-browser-'));
const db = join(dir, 'review.db');
const TOKEN = 'browser-review-token';
const NOW = Date.UTC(2026, 2, 29, 15, 0, 0);
let browser: Browser;
let dashboard: Awaited<ReturnType<typeof startDashboard>>;

beforeAll(async () => {
  if (skipBrowser) return;
  const writer = createSqliteStore({ path: db });
  await writer.insertTrajectories(dashboardTrajectories());
  await writer.close();
  dashboard = await startDashboard({ store: createSqliteStore({ path: db }), runsDir: join(dir, 'runs'), now: () => NOW, reviewToken: TOKEN, reviewSample: { share: 0.15 } });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every review in the file, by trajectory id. */
async function reviews(): Promise<Record<string, LabelReview>> {
  const store = createSqliteStore({ path: db, readonly: true });
  try {
    const out: Record<string, LabelReview> = {};
    for (const t of await store.queryTrajectories({})) for (const l of t.labels ?? []) if (l.review !== undefined) out[t.trajectory_id] = l.review;
    return out;
  } finally {
    await store.close();
  }
}

describe('review in headless Chromium', () => {
  it.skipIf(skipBrowser)('saves accept, correct and not-a-failure decisions from the buttons; skip and a wrong token save nothing', { timeout: 90_000 }, async () => {
    const page = await browser.context.newPage();
    const watch = await watchPage(page);
    await page.setViewportSize({ width: 390, height: 900 });
    await page.goto(`${dashboard.url}/review#token=${TOKEN}`, { waitUntil: 'load' });
    // The token moved from the address into the field (and the tab's storage); the address no longer shows it.
    expect(await page.inputValue('#admin-token')).toBe(TOKEN);
    expect(new URL(page.url()).hash).toBe('');
    const items = page.locator('.review-item');
    expect(await items.count()).toBe(5);
    const ids = await items.evaluateAll((list) => list.map((el) => el.getAttribute('data-trajectory')));
    const status = (i: number) => items.nth(i).locator('.review-status');

    await items.nth(0).locator('button[data-decision="accepted"]').click();
    await expect.poll(() => status(0).textContent()).toBe('saved: accepted');
    await items.nth(1).locator('select.correct-to').selectOption('idempotency_risk');
    await items.nth(1).locator('button[data-decision="corrected"]').click();
    await expect.poll(() => status(1).textContent()).toBe('saved: corrected to idempotency_risk');
    await items.nth(2).locator('button[data-decision="rejected"]').click();
    await expect.poll(() => status(2).textContent()).toBe('saved: rejected');
    await items.nth(3).locator('button[data-decision="skip"]').click();
    expect(await status(3).textContent()).toBe('skipped (not saved)');
    // A decided label's buttons are done with.
    expect(await items.nth(0).locator('button[data-decision="accepted"]').isDisabled()).toBe(true);
    // The precision tables were read again after the last decision: 1 of 3 accepted.
    await expect.poll(() => page.locator('#precision-by-judge tr.total, #precision-by-judge tbody tr').count()).toBeGreaterThan(0);
    expect(await page.locator('#precision-summary').textContent()).toContain('3 of 36 judge labels reviewed');

    const at = new Date(NOW).toISOString();
    expect(await reviews()).toStrictEqual({
      [ids[0]!]: { decision: 'accepted', reviewed_at: at },
      [ids[1]!]: { decision: 'corrected', corrected_to: 'idempotency_risk', reviewed_at: at },
      [ids[2]!]: { decision: 'rejected', reviewed_at: at },
    });
    expect(await overflows(page)).toStrictEqual([]);
    await keepScreenshot(page, 'review-decided-390');

    await page.fill('#admin-token', 'not-the-token');
    await items.nth(4).locator('button[data-decision="accepted"]').click();
    await expect.poll(() => status(4).textContent()).toMatch(/^not saved: review decisions need "Authorization: Bearer <admin token>"/);
    expect(Object.keys(await reviews())).toHaveLength(3);
    expect(await watch.violations()).toStrictEqual([]);
    expect(watch.dialogs).toStrictEqual([]);
    // Only the page's own requests: the page, its decisions and the precision re-reads.
    expect(watch.requests.filter((u) => !u.startsWith(dashboard.url))).toStrictEqual([]);
    await page.close();
  });
});
