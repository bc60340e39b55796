import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-demo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('faultline demo', () => {
  it('runs the session, prints each classification, and stores the records in the default SQLite file', async () => {
    const run = await runCapture(['demo'], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/13 tool calls, 16 records/);
    expect(run.stdout).toMatch(/create_order\s+timeout\s+execution\/network\/timeout\s+TIMEOUT\s+1\s+needs_decision\s+verify_state/);
    expect(run.stdout).toMatch(/crm_lookup\s+failure\s+execution\/auth\/unauthorized\s+HTTP_401/);
    expect(run.stdout).toMatch(/query_sales_data\s+success\s+3\s+auto_recovered/);
    expect(run.stdout).toContain('Did you mean "get_weather"?');
    expect(run.stdout).toContain('Orders actually created by create_order: 1');

    const store = createSqliteStore({ path: join(dir, '.faultline', 'faultline.db'), readonly: true });
    expect(await store.count()).toBe(16);
    const crm = (await store.query({ toolName: 'crm_lookup' }))[0]!;
    // The demo sends an API key in the arguments; it must not be stored.
    expect(JSON.stringify(crm.input_params)).not.toContain('sk-demo-1234567890');
    const rejected = await store.count({ statuses: ['rejected'] });
    expect(rejected).toBe(4);
    await store.close();
  });

  it('dates the session so that it ends when the command runs, never after', async () => {
    const db = join(dir, 'dated.db');
    const before = Date.now();
    const run = await runCapture(['demo', '--db', db], dir);
    const after = Date.now();
    expect(run.code).toBe(0);
    const store = createSqliteStore({ path: db, readonly: true });
    const records = await store.query({ limit: 100 });
    await store.close();
    const ends = records.flatMap((r) => [Date.parse(r.created_at) + r.duration_ms, ...r.attempts.map((a) => Date.parse(a.started_at) + a.duration_ms)]);
    const last = Math.max(...ends);
    // The last call ends at the moment the recorded pass started: within the command's run.
    expect(last).toBeGreaterThanOrEqual(before);
    expect(last).toBeLessThanOrEqual(after);
    // So `alerts` sees the whole session at once, and the same a minute later.
    const now = await runCapture(['alerts', '--db', db, '--json', '--until', new Date(after).toISOString()], dir);
    const later = await runCapture(['alerts', '--db', db, '--json', '--since', new Date(after - 3_600_000).toISOString(), '--until', new Date(after + 60_000).toISOString()], dir);
    const early = await runCapture(['alerts', '--db', db, '--json', '--since', new Date(after - 3_600_000).toISOString(), '--until', new Date(after).toISOString()], dir);
    const firing = (r: { stdout: string }) => (JSON.parse(r.stdout) as { firing: number }).firing;
    expect(firing(now)).toBeGreaterThan(4);
    expect(firing(early)).toBe(firing(later));
  });

  it('--json prints one record per line', async () => {
    const run = await runCapture(['demo', '--json', '--db', join(dir, 'json.db')], dir);
    expect(run.code).toBe(0);
    const records = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as ToolExecutionRecord);
    expect(records).toHaveLength(16);
    expect(records.map((r) => r.status).filter((s) => s === 'success')).toHaveLength(6);
  });

  it('a store that cannot be opened is one line and exit 2', async () => {
    const bad = await runCapture(['demo', '--db', 'postgres://postgres@127.0.0.1:1/x'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toEqual(['faultline: could not connect to PostgreSQL at 127.0.0.1:1: ECONNREFUSED']);
    const wrong = await runCapture(['demo', '--db', 'notes.txt'], dir);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^faultline: unknown store "notes.txt"/);
    const flag = await runCapture(['demo', '--bogus'], dir);
    expect(flag).toMatchObject({ code: 2, stderr: "faultline: unknown option '--bogus' (see 'faultline demo --help')\n" });
  });
});
