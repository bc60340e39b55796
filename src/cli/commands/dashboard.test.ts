import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardTrajectories } from '../../monitor/dashboard/dashboard.test-helpers.js';
import { monitorDataset } from '../../monitor/monitor-dataset.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCapture, startCli, waitFor, writeStoreFile } from '../run-cli.test-helpers.js';
import { compileCli } from './compiled-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-dashboard-cli-'));
let db: string;
beforeAll(async () => {
  db = await writeStoreFile(join(dir, 'agents.db'), monitorDataset());
  writeFileSync(join(dir, 'alerts.yaml'), 'timeouts: { search_flights: 2500 }\nrules:\n  retry_rate: { threshold: 0.3 }\n');
  writeFileSync(join(dir, 'junk.db'), 'not a database\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const start = (args: readonly string[]) => startCli(['dashboard', ...args], dir);

/** Whether a TCP connection to host:port is accepted (any HTTP answer) or refused. */
function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/api/stats', timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

describe('faultline dashboard', () => {
  it('serves on 127.0.0.1 only, by default, until Ctrl-C', async () => {
    const { captured, exit, stop } = start(['--db', db, '--port', '0']);
    const url = await waitFor(() => /serving (http:\/\/127\.0\.0\.1:(\d+)\/) /.exec(captured.stdout())?.[1], 'the listening line');
    expect(captured.stdout()).toBe(`faultline dashboard: serving ${url} (Ctrl-C stops)\n`);
    const port = Number(new URL(url).port);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>faultline dashboard</h1>');
    // Bound to loopback: the machine's other addresses do not answer.
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && !a.internal && a.family === 'IPv4')
      .map((a) => a!.address);
    for (const address of others) expect(await reachable(address, port), address).toBe(false);

    stop();
    expect(await exit).toBe(0);
    expect(captured.stderr()).toBe('');
    await expect(fetch(url)).rejects.toThrow();
  });

  it('prints the address as JSON, and serves the --since window and the --config thresholds', async () => {
    const { captured, exit, stop } = start(['--db', db, '--port', '0', '--json', '--since', '7d', '--config', 'alerts.yaml']);
    const line = await waitFor(() => (captured.stdout().endsWith('\n') ? captured.stdout() : undefined), 'the JSON line');
    const endpoint = JSON.parse(line) as { url: string; host: string; port: number };
    expect(endpoint).toStrictEqual({ url: `http://127.0.0.1:${endpoint.port}/`, host: '127.0.0.1', port: endpoint.port });
    const stats = (await (await fetch(`${endpoint.url}api/stats`)).json()) as { window: { since: string; until: string } };
    expect(Date.parse(stats.window.until) - Date.parse(stats.window.since)).toBe(7 * 86_400_000);
    const alerts = (await (await fetch(`${endpoint.url}api/alerts`)).json()) as { config: { timeouts: object; rules: { retry_rate: { threshold: number } } } };
    expect(alerts.config.timeouts).toStrictEqual({ search_flights: 2500 });
    expect(alerts.config.rules.retry_rate.threshold).toBe(0.3);
    const html = await (await fetch(endpoint.url)).text();
    expect(html).toContain('aria-current="page">7d</a>');
    stop();
    expect(await exit).toBe(0);
  });

  it('takes review decisions with --review, for the token it generated and printed', async () => {
    const reviewDb = join(dir, 'review.db');
    const writer = createSqliteStore({ path: reviewDb });
    await writer.insertTrajectories(dashboardTrajectories());
    await writer.close();
    const { captured, exit, stop } = start(['--db', reviewDb, '--port', '0', '--review']);
    const [link, url, token] = await waitFor(() => {
      const m = /review: (http:\/\/127\.0\.0\.1:\d+\/review#token=(\S+))   token: Bearer (\S+) \(generated\)\n/.exec(captured.stdout());
      return m === null ? undefined : [m[1]!, m[1]!.slice(0, m[1]!.indexOf('/review')), m[3]!];
    }, 'the review line');
    expect(link).toBe(`${url}/review#token=${token}`);
    const ref = { trajectory_id: 'traj-01', step_index: 2, name: 'semantic_error', source: 'judge:heuristic', decision: 'accepted' };
    const post = (bearer: string) => fetch(`${url}/api/review/decisions`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(ref) });
    expect((await post('wrong')).status).toBe(401);
    expect((await post(token)).status).toBe(200);
    stop();
    expect(await exit).toBe(0);
    const reader = createSqliteStore({ path: reviewDb, readonly: true });
    expect((await reader.getTrajectory('traj-01'))!.labels!.find((l) => l.source === 'judge:heuristic')!.review!.decision).toBe('accepted');
    await reader.close();
    // Without --review nothing is writable.
    const readOnly = start(['--db', reviewDb, '--port', '0', '--json']);
    const endpoint = JSON.parse(await waitFor(() => (readOnly.captured.stdout().endsWith('\n') ? readOnly.captured.stdout() : undefined), 'the JSON line')) as { url: string };
    expect(Object.keys(endpoint)).toStrictEqual(['url', 'host', 'port']);
    expect((await fetch(`${endpoint.url}api/review/decisions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(ref) })).status).toBe(405);
    readOnly.stop();
    expect(await readOnly.exit).toBe(0);
  });

  it('refuses bad flags, a missing or unreadable store and a taken port with one line and exit 2', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as AddressInfo).port;
    const cases: [string[], string][] = [
      [['--port', '70000'], 'invalid --port "70000": expected 0-65535 (0 picks a free port)'],
      [['--port', 'abc'], 'invalid --port "abc": expected 0-65535 (0 picks a free port)'],
      [['--since', 'yesterday'], 'invalid --since "yesterday": expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z'],
      [['--since', '0h'], 'invalid --since "0h": the duration must be positive'],
      [['--refresh', '-1'], 'invalid --refresh "-1": expected a duration from 1s to 24h, like 500ms, 30s or 5m, or 0 for never'],
      [['--refresh', '5'], 'invalid --refresh "5": expected a duration from 1s to 24h, like 500ms, 30s or 5m, or 0 for never'],
      [['--config', 'missing.yaml'], 'cannot read alerts config missing.yaml: no such file or directory'],
      [['--port', String(taken)], `cannot listen on 127.0.0.1:${taken}: EADDRINUSE`],
      [['--db', 'junk.db'], `cannot open SQLite store "${join(dir, 'junk.db')}": file is not a database`],
      [['--db', 'postgres://postgres@127.0.0.1:1/x'], 'could not connect to PostgreSQL at 127.0.0.1:1: ECONNREFUSED'],
      [['--bogus'], "unknown option '--bogus' (see 'faultline dashboard --help')"],
      // '' would listen on every interface with the loopback Host check off.
      [['--host', ''], '--host must not be empty'],
      [['--host', ' '], '--host must not be empty'],
      [['--admin-token', 'x'], '--admin-token needs --review'],
      [['--review', '--admin-token', ' '], '--admin-token must not be empty'],
      [['--share', '2'], '--share must be a number in (0, 1], got "2"'],
      [['--seed', '-1'], 'invalid --seed "-1": expected an integer >= 0'],
    ];
    try {
      for (const [args, message] of cases) {
        const defaults = [...(args.includes('--db') ? [] : ['--db', db]), ...(args.includes('--port') ? [] : ['--port', '0'])];
        expect(await runCapture(['dashboard', ...defaults, ...args], dir), args.join(' ')).toStrictEqual({ code: 2, stdout: '', stderr: `faultline: ${message}\n` });
      }
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
    expect(await runCapture(['dashboard', '--port', '0'], dir)).toStrictEqual({
      code: 2,
      stdout: '',
      stderr: `faultline: no faultline store at ${join(dir, '.faultline', 'faultline.db')} (run \`npx faultline demo\` or point --db at one)\n`,
    });
  });
});

describe('faultline dashboard as a process', () => {
  let main: string;
  beforeAll(async () => {
    main = await compileCli(join(dir, 'compiled'));
  }, 180_000);

  function run(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [main, 'dashboard', ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += String(c)));
      child.stderr.on('data', (c: Buffer) => (stderr += String(c)));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  it('exits 2 with one line for bad flags and stores that cannot be opened', async () => {
    const results = await Promise.all([
      run(['--db', 'missing.db']),
      run(['--db', 'junk.db', '--port', '0']),
      run(['--db', db, '--since', 'soon']),
      run(['--db', db, '--port', '-3']),
    ]);
    expect(results).toStrictEqual([
      { code: 2, stdout: '', stderr: `faultline: no faultline store at ${join(dir, 'missing.db')} (run \`npx faultline demo\` or point --db at one)\n` },
      { code: 2, stdout: '', stderr: `faultline: cannot open SQLite store "${join(dir, 'junk.db')}": file is not a database\n` },
      { code: 2, stdout: '', stderr: 'faultline: invalid --since "soon": expected a duration like 90m, 24h or 7d, or an ISO date like 2026-03-29T14:00Z\n' },
      { code: 2, stdout: '', stderr: 'faultline: invalid --port "-3": expected 0-65535 (0 picks a free port)\n' },
    ]);
  }, 30_000);

  it('serves until SIGINT, then exits 0', async () => {
    const child = spawn(process.execPath, [main, 'dashboard', '--db', db, '--port', '0', '--json'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += String(c)));
    child.stderr.on('data', (c: Buffer) => (stderr += String(c)));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    const { url } = JSON.parse(await waitFor(() => (stdout.endsWith('\n') ? stdout : undefined), 'the JSON line', 15_000)) as { url: string };
    expect((await fetch(`${url}api/dashboard`)).status).toBe(200);
    child.kill('SIGINT');
    expect(await closed).toBe(0);
    expect(stderr).toBe('');
  }, 30_000);
});
