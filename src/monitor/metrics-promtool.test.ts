/**
 * Both metric feeds' expositions, checked by Prometheus's own linter (`promtool check metrics`,
 * Debian's `prometheus` package; `.ci/run` installs it): the text format parses, counters end in
 * `_total`, units are base units, and only histograms and summaries carry `le` / `quantile`.
 * The data is real: a runtime's records with retries, timeouts, rejections and made-up names,
 * and a SQLite store that also holds records whose names came from URLs and imports.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFaultPlan } from '../faults/plan.js';
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import { createVirtualClock } from '../core/clock.js';
import { defineTool } from '../runtime/define-tool.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createMetrics, createStoreMetrics } from './metrics.js';

/** `promtool check metrics` on a text; its findings (empty when clean) and exit status. */
function promtoolCheck(exposition: string): { status: number | null; findings: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8', timeout: 60_000 });
  if (run.error !== undefined) throw run.error;
  return { status: run.status, findings: `${run.stdout}${run.stderr}`.trim() };
}

function promtoolInstalled(): boolean {
  const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
}

const installed = promtoolInstalled();
const MISSING = 'promtool is not installed (apt-get install prometheus)';

it('promtool is installed under CI, where the exposition checks must run', () => {
  // Off CI a missing promtool skips the checks below (their title says why); under CI it fails.
  if (process.env['CI'] === 'true') expect(installed, MISSING).toBe(true);
});

it('promtool itself reports a badly named metric (the checks below can fail)', { skip: !installed }, () => {
  const bad = '# HELP calls_seconds_total Calls.\n# TYPE calls_seconds_total gauge\ncalls_seconds_total{quantile="0.5"} 1\n';
  const { status, findings } = promtoolCheck(bad);
  expect(status).not.toBe(0);
  expect(findings).toMatch(/quantile|_total/);
});

const dir = mkdtempSync(join(tmpdir(), 'faultline-promtool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A runtime whose calls succeed, retry, time out, get rejected and call names that do not exist. */
async function recordedCalls(onRecord: Parameters<typeof createRuntime>[0]['onRecord'], store?: string): Promise<Runtime> {
  const clock = createVirtualClock({ startMs: Date.UTC(2026, 2, 29, 14, 0, 0), autoAdvance: true });
  const lookup = defineTool({
    name: 'get-weather.v2',
    description: 'Weather; a 503 first.',
    input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    idempotent: true,
    execute: async ({ city }: { city: string }) => ({ city, sky: 'clear' }),
  });
  const slow = defineTool({
    name: 'send_payment',
    description: 'Never answers in time.',
    input: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
    timeoutMs: 1000,
    execute: (_args, { signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
  });
  const faults = createFaultPlan({ version: 1, seed: 1, rules: [{ tool: 'get-weather.v2', trigger: 'first_call_only', fault: 'http_status', params: { status: 503 } }] }, { clock });
  const rt = createRuntime({ tools: [lookup, slow], clock, seed: 1, faults, ...(onRecord !== undefined ? { onRecord } : {}), ...(store !== undefined ? { store } : {}) });
  const s = rt.session({ agent: 'promtool-check' });
  await s.execute('get-weather.v2', { city: 'Paris' });
  await s.execute('get-weather.v2', { city: 7 });
  await s.execute('send_payment', { amount: 10 });
  await s.executeJson('get-weather.v2', '{"city": "Par');
  for (const made_up of ['get_wether', 'we"ird\\name\nwith a newline', 'ünïcödé tool']) await s.execute(made_up, {});
  return rt;
}

describe.skipIf(!installed)(`promtool check metrics${installed ? '' : ` (skipped: ${MISSING})`}`, () => {
  it('passes on the live feed (createMetrics), folds included', async () => {
    const metrics = createMetrics({ maxTools: 1 });
    const rt = await recordedCalls(metrics.observe);
    await rt.close();
    const exposition = await metrics.registry.metrics();
    // The data did reach every kind of series.
    expect(exposition).toContain('tool="(unknown)"');
    expect(exposition).toContain('tool="(other)"');
    expect(exposition).toContain('status="timeout"');
    expect(promtoolCheck(exposition)).toEqual({ status: 0, findings: '' });
  });

  it('passes on the store feed (what `faultline metrics` serves), with names from URLs and imports', async () => {
    const path = join(dir, 'store.db');
    const rt = await recordedCalls(undefined, `sqlite:${path}`);
    await rt.close();
    const store = createSqliteStore({ path });
    const at = new Date(Date.UTC(2026, 2, 29, 14, 10, 0)).toISOString();
    await store.insert([
      makeRecord({ tool_name: 'GET /v1/items/{id}?q="x"', created_at: at, duration_ms: 40 }),
      makeFailureRecord({ tool_name: 'back\\slash', created_at: at, failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error' }),
      makeRecord({ tool_name: 'line\nbreak', created_at: at, breaker_state: 'open' }),
      makeRecord({ tool_name: '(unknown)', created_at: at }),
    ]);
    const metrics = createStoreMetrics(store, { now: () => Date.UTC(2026, 2, 29, 14, 30, 0), maxTools: 5 });
    await metrics.refresh();
    const exposition = await metrics.registry.metrics();
    expect(exposition).toContain('quantile="0.95"');
    expect(exposition).toContain('tool="GET /v1/items/{id}?q=\\"x\\""');
    expect(promtoolCheck(exposition)).toEqual({ status: 0, findings: '' });
    await store.close();
  });
});
