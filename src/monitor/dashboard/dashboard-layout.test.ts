/**
 * The dashboard's layout in headless Chromium: at phone widths (380, 390 px) and two desktop
 * widths (1280, 1920), no table is wider than its box and the page never scrolls sideways, on
 * every page (overview, record, trace, trajectories, trajectory, review, runs, run, comparison),
 * over records and trajectories with long names, long ids, long messages and hostile text, and
 * none of that text ever runs. Screenshots of each page and width are kept under
 * test-artifacts/dashboard/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFailureRecord, makeRecord } from '../../record/fixture.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { openStore } from '../../store/open-store.js';
import { writeStoreFile } from '../../cli/run-cli.test-helpers.js';
import { saveRun } from '../../failbench/stored-runs.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { MONITOR_ALERT_CONFIG, MONITOR_NOW, monitorDataset } from '../monitor-dataset.test-helpers.js';
import { keepScreenshot, launchChromium, overflows, SCREENSHOT_DIR, skipBrowser, tableBoxes, watchPage, type Browser } from './browser.test-helpers.js';
import { dashboardTrajectories, hostileRecord, startDashboard, XSS_TRACE } from './dashboard.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-dashboard-layout-'));
const runsDir = join(dir, 'runs');
const MINUTE = 60_000;
const at = (msAgo: number) => new Date(MONITOR_NOW - msAgo).toISOString();
const LONG_TOOL = 'crm_customer_lookup_by_email_address_including_archived_accounts_v2';
const LONG_TRACE = 'failbench:run-2026-03-29T14-02-11-417Z:openai:gpt-4.1-mini-2025-04-14:booking-timeout-before-commit-zh:0';
const jump = { failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', status: 'timeout', error_code: 'TIMEOUT' } as const;

/** Records whose every column is as wide as recorded text gets. */
function wideRecords(): ToolExecutionRecord[] {
  return [
    makeFailureRecord({
      tool_name: LONG_TOOL,
      trace_id: LONG_TRACE,
      failure_stage: 'result_parse',
      failure_category: 'system',
      failure_type: 'output_schema_mismatch',
      error_code: 'OUTPUT_SCHEMA_MISMATCH_IN_NESTED_ARRAY_ITEM',
      error_message: `GET https://api.example.com/v2/customers/search?email=ann%40example.com&include_archived=true&page_size=100 returned ${'x'.repeat(180)} which does not match the schema`,
      feedback: { action: 'retry_with_fixed_params', hint: 'fix the arguments', retryable: false, retry_after_ms: null },
      context_snapshot: { agent: 'openai:gpt-4.1-mini-2025-04-14', failbench_run_id: 'run-2026-03-29T14-02-11-417Z' },
      created_at: at(12 * MINUTE),
    }),
    // Five failures of one tool in the hour, one of them a type seen nowhere before: a share of
    // exactly 20%, which the failure-type jump fires on (>=).
    ...[1, 2, 3, 4].map((i) => makeFailureRecord({ tool_name: 'jump_tool', ...jump, created_at: at((20 + i) * MINUTE) })),
    makeFailureRecord({ tool_name: 'jump_tool', failure_stage: 'execution', failure_category: 'business', failure_type: 'not_found', error_code: 'HTTP_404', created_at: at(15 * MINUTE) }),
    makeRecord({ tool_name: LONG_TOOL, trace_id: LONG_TRACE, created_at: at(11 * MINUTE) }),
  ];
}

let browser: Browser;
let dashboard: Awaited<ReturnType<typeof startDashboard>>;
const hostile = hostileRecord(MONITOR_NOW - 10 * MINUTE);
const wide = wideRecords();

beforeAll(async () => {
  if (skipBrowser) return;
  const db = await writeStoreFile(join(dir, 'agents.db'), [...monitorDataset(), ...wide, hostile].sort((a, b) => a.execution_id.localeCompare(b.execution_id)));
  const writer = createSqliteStore({ path: db });
  const [first, ...rest] = dashboardTrajectories();
  // A trajectory whose every field is as long as recorded text gets.
  const long = { ...rest[0]!, trajectory_id: `traj_${'7f3a'.repeat(12)}`, source_id: LONG_TRACE, task_description: `${'Rebook the cancelled connection and confirm the seat '.repeat(6)}` };
  long.steps = long.steps.map((s) => ({ ...s, tool_name: LONG_TOOL, input_params: { query: 'x'.repeat(400), nested: { deep: [LONG_TRACE, LONG_TRACE] } } }));
  await writer.insertTrajectories([first!, long, ...rest.slice(1)]);
  await writer.close();
  await saveRun(runsDir, { runId: 'run-2026-03-29T14-02-11-417Z-a' });
  await saveRun(runsDir, { runId: 'run-2026-03-29T14-02-11-417Z-b', feedback: 'assisted' });
  // Review on, so the review page shows its buttons (the layout at their widest).
  dashboard = await startDashboard({
    store: await openStore(db),
    alerts: MONITOR_ALERT_CONFIG,
    now: () => MONITOR_NOW,
    refreshSeconds: 0,
    runsDir,
    reviewToken: 'layout-token',
    reviewSample: { share: 0.2 },
  });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  rmSync(dir, { recursive: true, force: true });
  if (!skipBrowser) console.info(`dashboard screenshots: ${SCREENSHOT_DIR}`);
});

/** Each page, whether it shows a table (a layout test over no table would prove nothing), and what it must show. */
const PAGES: readonly [name: string, path: () => string, tables: boolean, content: string][] = [
  ['overview', () => '/?since=7d', true, '#tools tbody tr'],
  ['record', () => `/records/${encodeURIComponent(wide[0]!.execution_id)}`, false, '#facts dt'],
  ['trace', () => `/traces/${encodeURIComponent(LONG_TRACE)}`, true, '#calls tbody tr'],
  ['hostile-trace', () => `/traces/${encodeURIComponent(XSS_TRACE)}`, true, '#calls tbody tr'],
  ['trajectories', () => '/trajectories', true, '#trajectories tbody tr'],
  ['trajectory', () => `/trajectories/traj_${'7f3a'.repeat(12)}`, true, '#steps tbody tr'],
  ['hostile-trajectory', () => '/trajectories/traj-00', true, '#verdicts tbody tr'],
  ['review', () => '/review', false, '.review-item button[data-decision="accepted"]'],
  ['runs', () => '/runs', true, '#runs tbody tr'],
  ['run', () => '/runs/run-2026-03-29T14-02-11-417Z-a', true, '#scores tbody tr'],
  ['compare', () => '/runs/compare?a=run-2026-03-29T14-02-11-417Z-a&b=run-2026-03-29T14-02-11-417Z-b', true, '#compare-0 tbody tr'],
];
const WIDTHS = [380, 390, 1280, 1920] as const;

describe('the dashboard layout in headless Chromium', () => {
  it.skipIf(skipBrowser)('no table is wider than its box, at 380, 390, 1280 and 1920 px, on any page', { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    const watch = await watchPage(page);
    const found: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const [name, path, tables, content] of PAGES) {
        const response = await page.goto(`${dashboard.url}${path()}`, { waitUntil: 'load' });
        expect(response?.status(), `${name}: ${path()}`).toBe(200);
        if (tables) expect(await tableBoxes(page), name).toBeGreaterThan(0);
        // Each page shows what it is for, not an empty shell, and no recorded text ran as script.
        expect(await page.locator(content).count(), `${name}: ${content}`).toBeGreaterThan(0);
        expect(await page.evaluate('window.__pwned'), name).toBeUndefined();
        for (const o of await overflows(page)) found.push(`${name} at ${width} px: ${o.what} is ${o.scrollWidth} px wide in ${o.clientWidth} px`);
        await keepScreenshot(page, `${name}-${width}`);
      }
    }
    expect(found).toStrictEqual([]);
    expect(await watch.violations()).toStrictEqual([]);
    expect(watch.consoleErrors).toStrictEqual([]);
    await page.close();
  });

  it.skipIf(skipBrowser)('prints each alert with the comparator its rule fires on', { timeout: 60_000 }, async () => {
    const page = await browser.context.newPage();
    await page.goto(`${dashboard.url}/?since=24h`, { waitUntil: 'load' });
    const rows = (await page.evaluate(
      `[...document.querySelectorAll('#alerts tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent.trim()))`,
    )) as string[][];
    const byRule = (rule: string) => rows.filter((r) => r[1] === rule);
    // The jump at exactly its threshold: "20.0% >= 20.0%", never "20.0% > 20.0%".
    expect(byRule('failure_type_jump').filter((r) => r[2] === 'jump_tool').map((r) => [r[3], r[4]])).toContainEqual(['20.0%', '>= 20.0%']);
    for (const r of byRule('failure_type_jump')) expect(r[4]).toMatch(/^>= /);
    for (const r of byRule('success_rate')) expect(r[4]).toMatch(/^< /);
    for (const r of [...byRule('p95_latency'), ...byRule('retry_rate'), ...byRule('breaker_trip')]) expect(r[4]).toMatch(/^> /);
    expect(rows.length).toBeGreaterThan(5);
    await page.close();
  });
});
