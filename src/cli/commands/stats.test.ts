import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { monitorDataset, recordsIn } from '../../monitor/monitor-dataset.test-helpers.js';
import { bucketOf, bucketValueMs, exactPercentile } from '../../store/duration-sketch.js';
import { runCapture, writeStoreFile } from '../run-cli.test-helpers.js';
import type { StatsReport } from './stats.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-stats-'));
const records = monitorDataset();
let db: string;
beforeAll(async () => {
  db = await writeStoreFile(join(dir, 'agents.db'), records);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOUR_13 = ['--since', '2026-03-29T13:00Z', '--until', '2026-03-29T14:00Z'];
const sketched = (ms: number | null) => (ms === null ? null : bucketValueMs(bucketOf(ms)));

async function statsJson(args: readonly string[]): Promise<StatsReport> {
  const run = await runCapture(['stats', '--db', db, '--json', ...args], dir);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as StatsReport;
}

describe('faultline stats', () => {
  it('reports per-tool rates, percentiles, trips and validation failures for a window', async () => {
    const report = await statsJson(HOUR_13);
    expect(report.window).toStrictEqual({ since: '2026-03-29T13:00:00.000Z', until: '2026-03-29T14:00:00.000Z' });
    expect(report.tools.map((t) => t.tool_name)).toStrictEqual(['create_order', 'get_weather', 'search_flights']);
    const flights = report.tools.find((t) => t.tool_name === 'search_flights')!;
    const durations = recordsIn(records, Date.UTC(2026, 2, 29, 13), Date.UTC(2026, 2, 29, 14), 'search_flights').map((r) => r.duration_ms);
    expect(flights).toStrictEqual({
      tool_name: 'search_flights',
      total: 40,
      success: 35,
      failure: 1,
      timeout: 3,
      rejected: 1,
      failure_rate: 0.125,
      retried_calls: 10,
      retry_rate: 0.25,
      retries: 13,
      breaker_trips: 1,
      param_validation_failures: 1,
      param_validation_failure_rate: 0.025,
      p50_ms: sketched(exactPercentile(durations, 0.5)),
      p95_ms: sketched(7900),
      avg_ms: durations.reduce((a, b) => a + b, 0) / 40,
    });
    expect(report.tools.find((t) => t.tool_name === 'create_order')).toMatchObject({ total: 25, failure_rate: 0.2, param_validation_failure_rate: 0.2, retry_rate: 0 });
    expect(report.tools.find((t) => t.tool_name === 'get_weather')).toMatchObject({ total: 30, failure_rate: 0, breaker_trips: 0 });
  });

  it('lists the top failure types per tool and the stage x category distribution', async () => {
    const report = await statsJson(HOUR_13);
    expect(report.top_failure_types).toStrictEqual([
      { tool_name: 'create_order', failure_type: 'missing_required', failure_category: 'parameter', count: 5, share: 1 },
      { tool_name: 'search_flights', failure_type: 'timeout', failure_category: 'network', count: 3, share: 0.6 },
      { tool_name: 'search_flights', failure_type: 'rate_limited', failure_category: 'rate_limit', count: 1, share: 0.2 },
      { tool_name: 'search_flights', failure_type: 'schema_mismatch', failure_category: 'parameter', count: 1, share: 0.2 },
    ]);
    expect(report.stage_category).toStrictEqual([
      { failure_stage: 'param_validation', failure_category: 'parameter', count: 6 },
      { failure_stage: 'execution', failure_category: 'network', count: 3 },
      { failure_stage: 'execution', failure_category: 'rate_limit', count: 1 },
    ]);
    const one = await statsJson([...HOUR_13, '--top', '1', '--tool', 'search_flights']);
    expect(one.tools.map((t) => t.tool_name)).toStrictEqual(['search_flights']);
    expect(one.top_failure_types.map((t) => t.failure_type)).toStrictEqual(['timeout']);
  });

  it('prints readable tables', async () => {
    const run = await runCapture(['stats', '--db', db, ...HOUR_13], dir);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('faultline stats: 3 tools, 95 calls, 2026-03-29T13:00:00.000Z .. 2026-03-29T14:00:00.000Z');
    const header = lines.find((l) => l.startsWith('tool '))!;
    expect(header.split(/\s{2,}/)).toStrictEqual(['tool', 'calls', 'failed', 'retried', 'p50', 'p95', 'breaker trips', 'param invalid']);
    const row = lines.find((l) => l.startsWith('search_flights'))!.split(/\s{2,}/);
    expect([row[0], row[1], row[2], row[3], row[5], row[6], row[7]]).toStrictEqual(['search_flights', '40', '12.5%', '25.0%', '8.15s', '1', '2.5%']);
    expect(run.stdout).toContain('Top failure types');
    expect(lines.find((l) => l.startsWith('search_flights') && l.includes('timeout'))!.split(/\s{2,}/)).toStrictEqual(['search_flights', 'timeout', 'network', '3', '60.0%']);
    const matrixHeader = lines.find((l) => l.startsWith('stage \\ category'))!;
    expect(matrixHeader.split(/\s{2,}/)).toStrictEqual(['stage \\ category', 'parameter', 'network', 'rate_limit', 'total']);
    expect(lines.find((l) => l.startsWith('param_validation'))!.split(/\s{2,}/)).toStrictEqual(['param_validation', '6', '0', '0', '6']);
  });

  it('accepts 90m, 24h, 7d and ISO dates for --since', async () => {
    const until = ['--until', '2026-03-29T14:30Z'];
    const total = (r: StatsReport) => r.tools.reduce((n, t) => n + t.total, 0);
    // Rollups are hour-granular: 90 minutes back from 14:30 covers hours 13 and 14.
    expect(total(await statsJson(['--since', '90m', ...until]))).toBe(recordsIn(records, Date.UTC(2026, 2, 29, 13), Infinity).length);
    expect(total(await statsJson(['--since', '24h', ...until]))).toBe(records.length - 1);
    // 2026-03-22T09:00 is inside 8 days but not inside 7 (which starts at 14:00 that day).
    expect(total(await statsJson(['--since', '7d', ...until]))).toBe(records.length - 1);
    expect(total(await statsJson(['--since', '8d', ...until]))).toBe(records.length);
    expect(total(await statsJson(['--since', '2026-03-22', ...until]))).toBe(records.length);
  });

  it('says which whole hours it counted when the window does not fall on them', async () => {
    const report = await statsJson(['--since', '2026-03-29T13:20Z', '--until', '2026-03-29T13:50Z']);
    expect(report.window).toStrictEqual({ since: '2026-03-29T13:20:00.000Z', until: '2026-03-29T13:50:00.000Z' });
    expect(report.counted_window).toStrictEqual({ since: '2026-03-29T13:00:00.000Z', until: '2026-03-29T14:00:00.000Z' });
    // The whole of hour 13, not the 30 minutes asked for.
    expect(report.tools.find((t) => t.tool_name === 'search_flights')!.total).toBe(40);
    expect((await statsJson(HOUR_13)).counted_window).toStrictEqual({ since: '2026-03-29T13:00:00.000Z', until: '2026-03-29T14:00:00.000Z' });

    const text = await runCapture(['stats', '--db', db, '--since', '2026-03-29T13:20Z', '--until', '2026-03-29T13:50Z'], dir);
    expect(text.stdout.split('\n')[0]).toBe(
      'faultline stats: 3 tools, 95 calls, 2026-03-29T13:20:00.000Z .. 2026-03-29T13:50:00.000Z (counted in whole hours: 2026-03-29T13:00:00.000Z .. 2026-03-29T14:00:00.000Z)',
    );
    const help = await runCapture(['stats', '--help'], dir);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('a window is counted in whole UTC hours: from the start of the hour --since falls in to the end of the hour --until falls in');
    expect(help.stdout).toContain('counted_window');
  });

  it('refuses a date that is not on the calendar instead of rolling it over', async () => {
    for (const [flag, text] of [['--since', '2026-02-30'], ['--since', '2026-04-31T10:00Z'], ['--until', '2026-02-29']]) {
      const run = await runCapture(['stats', '--db', db, flag!, text!], dir);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^faultline: invalid ${flag} "${text}": .*\\n$`));
    }
    // Leap days and offsets are dates like any other.
    expect((await statsJson(['--since', '2028-02-29T23:30+02:00', '--until', '2028-03-01'])).window.since).toBe('2028-02-29T21:30:00.000Z');
  });

  it('does not pass terminal control sequences in recorded names to the terminal', async () => {
    const [first] = records;
    const hostile = { ...first!, tool_name: 'route\u001b]0;owned\u0007\u001b[2J', created_at: '2026-03-29T13:30:00.000Z' };
    const path = await writeStoreFile(join(dir, 'hostile.db'), [hostile]);
    const run = await runCapture(['stats', '--db', path, ...HOUR_13], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(run.stdout).toContain('route\\x1b]0;owned\\x07\\x1b[2J');
  });

  it('says so when the window holds no calls, with the date of the newest call stored and a --since that covers it', async () => {
    // Stored last (by execution id, the order of recording): what a bench run just stored, dated on its virtual clock.
    const newest = [...records].sort((a, b) => (a.execution_id < b.execution_id ? 1 : -1))[0]!.created_at;
    const before = await runCapture(['stats', '--db', db, '--since', '2026-03-01', '--until', '2026-03-02'], dir);
    expect(before.code).toBe(0);
    expect(before.stdout).toBe(`faultline stats: 0 tools, 0 calls, 2026-03-01T00:00:00.000Z .. 2026-03-02T00:00:00.000Z\nno calls recorded in this window; the newest call stored is dated ${newest}\n`);
    const after = await runCapture(['stats', '--db', db, '--since', '2026-04-01', '--until', '2026-04-02'], dir);
    const hint = `no calls recorded in this window; the newest call stored is dated ${newest} (try --since ${newest.slice(0, 13)}:00Z)`;
    expect(after.stdout.split('\n')[1]).toBe(hint);
    const tried = await runCapture(['stats', '--db', db, '--since', `${newest.slice(0, 13)}:00Z`], dir);
    expect(tried.stdout).not.toContain('no calls recorded');
    // An empty store, and a --tool with no calls, say only that.
    const empty = await writeStoreFile(join(dir, 'empty.db'), []);
    expect((await runCapture(['stats', '--db', empty], dir)).stdout.split('\n')[1]).toBe('no calls recorded in this window');
    expect((await runCapture(['stats', '--db', db, '--since', '2026-04-01', '--until', '2026-04-02', '--tool', 'search_flights'], dir)).stdout.split('\n')[1]).toBe('no calls recorded in this window');
  });

  it('reads the default store under cwd', async () => {
    const cwd = join(dir, 'project');
    mkdirSync(cwd);
    await writeStoreFile(join(cwd, '.faultline', 'faultline.db'), records.slice(0, 3));
    const run = await runCapture(['stats', '--since', '2026-03-22', '--until', '2026-03-30', '--json'], cwd);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as StatsReport).tools.reduce((n, t) => n + t.total, 0)).toBe(3);
  });

  it.each([
    [['--since', 'yesterday'], 'faultline: invalid --since "yesterday": expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z'],
    [['--since', '2w'], 'faultline: invalid --since "2w": expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z'],
    [['--since', '0h'], 'faultline: invalid --since "0h": the duration must be positive'],
    [['--since', '2026-13-45'], 'faultline: invalid --since "2026-13-45": expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z'],
    [['--since', '2026-03-30', '--until', '2026-03-29'], 'faultline: invalid --since "2026-03-30": it is not before the end of the window (2026-03-29T00:00:00.000Z)'],
    [['--until', 'now-ish'], 'faultline: invalid --until "now-ish": expected an ISO date like 2026-03-29T14:00Z'],
    [['--top', '0'], 'faultline: invalid --top "0": expected an integer >= 1'],
    [['--bogus'], "faultline: unknown option '--bogus' (see 'faultline stats --help')"],
  ])('refuses %j with one line and exit 2', async (args, message) => {
    const run = await runCapture(['stats', '--db', db, ...args], dir);
    expect(run).toStrictEqual({ code: 2, stdout: '', stderr: `${message}\n` });
  });

  it('does not create a store that does not exist', async () => {
    const cwd = join(dir, 'empty-project');
    mkdirSync(cwd);
    const run = await runCapture(['stats'], cwd);
    const path = join(cwd, '.faultline', 'faultline.db');
    expect(run).toStrictEqual({ code: 2, stdout: '', stderr: `faultline: no faultline store at ${path} (run \`npx faultline demo\` or point --db at one)\n` });
    expect(existsSync(join(cwd, '.faultline'))).toBe(false);
    const named = await runCapture(['stats', '--db', 'sqlite:missing/agents.db'], cwd);
    expect(named.stderr).toBe(`faultline: no faultline store at ${join(cwd, 'missing', 'agents.db')} (run \`npx faultline demo\` or point --db at one)\n`);
    expect(existsSync(join(cwd, 'missing'))).toBe(false);
  });

  it('reports a store that cannot be opened in one line', async () => {
    const garbage = join(dir, 'garbage.db');
    writeFileSync(garbage, 'this is not a database, just text that is long enough to look like a header. '.repeat(20));
    const bad = await runCapture(['stats', '--db', garbage], dir);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/^faultline: cannot open SQLite store .*garbage\.db.*\n$/);
    const unknown = await runCapture(['stats', '--db', 'mysql://u:secret@h/db'], dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).not.toContain('secret');
    expect(unknown.stderr.split('\n')).toHaveLength(2);
  });

  it('says a directory given as --db is one, for every reporting command', async () => {
    const folder = join(dir, 'folder.db');
    mkdirSync(folder);
    for (const argv of [['stats'], ['alerts'], ['tail', '--once'], ['metrics', '--port', '0']]) {
      const run = await runCapture([...argv, '--db', folder], dir);
      expect(run).toStrictEqual({ code: 2, stdout: '', stderr: `faultline: ${folder} is a directory, not a faultline store (point --db at the .db file)\n` });
    }
    expect(readdirSync(folder)).toStrictEqual([]);
  });

  it('keeps stderr to one line for a PostgreSQL URL with sslmode=require (no pg deprecation warning)', async () => {
    const warnings: string[] = [];
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => {
      warnings.push(String(warning));
    });
    try {
      const run = await runCapture(['stats', '--db', 'postgres://postgres@127.0.0.1:1/x?sslmode=require'], dir);
      expect(run).toStrictEqual({ code: 2, stdout: '', stderr: 'faultline: could not connect to PostgreSQL at 127.0.0.1:1: ECONNREFUSED\n' });
    } finally {
      spy.mockRestore();
    }
    expect(warnings).toStrictEqual([]);
  });

  it('reports an unreachable PostgreSQL in one line, without a stack trace', async () => {
    const run = await runCapture(['stats', '--db', 'postgres://postgres@127.0.0.1:1/x'], dir);
    expect(run).toStrictEqual({ code: 2, stdout: '', stderr: 'faultline: could not connect to PostgreSQL at 127.0.0.1:1: ECONNREFUSED\n' });
  });
});
