import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { tauBenchAirlineFile } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';
import type { ImportReport } from './import.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-import-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshDb = () => join(dir, `db-${++n}.db`);
const readable = (path: string) => {
  try {
    closeSync(openSync(path, 'r'));
    return true;
  } catch {
    return false;
  }
};

const toolCall = (id: string, name: string, args: unknown) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
const conversation = (id: string) => ({
  id,
  messages: [
    { role: 'user', content: 'weather?' },
    toolCall('a', 'get_weather', { city: 'Paris' }),
    { role: 'tool', tool_call_id: 'a', content: '{"error":"busy","status":503}' },
    toolCall('b', 'get_weather', { city: 'Paris' }),
    { role: 'tool', tool_call_id: 'b', content: '{"temp":18}' },
  ],
});
const openAiFile = join(dir, 'chats.jsonl');
writeFileSync(openAiFile, [JSON.stringify(conversation('c1')), 'not json', JSON.stringify(conversation('c2')), '{"messages": 3}', ''].join('\n'));

async function importJson(args: readonly string[]): Promise<{ report: ImportReport; stderr: string }> {
  const run = await runCapture(['import', '--json', ...args], dir);
  expect(run.code).toBe(0);
  return { report: JSON.parse(run.stdout) as ImportReport, stderr: run.stderr };
}

describe('faultline import', () => {
  it('imports OpenAI JSONL, warning about each malformed line as file:LINE: reason', async () => {
    const db = freshDb();
    const { report, stderr } = await importJson(['--format', 'openai', 'chats.jsonl', '--db', db]);
    const warnings = stderr.split('\n').filter(Boolean);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^chats\.jsonl:2: not JSON: /);
    expect(warnings[1]).toBe('chats.jsonl:4: expected "messages" to be an array');
    expect(report).toMatchObject({
      format: 'openai',
      trajectories: 2,
      inserted: 2,
      already_stored: 0,
      steps: 4,
      failures: 2,
      failures_by_category: { system: 2 },
      failures_by_type: { 'system/dependency_down': 2 },
      outcomes: { unknown: 2 },
      skipped_lines: 2,
    });
    expect(report.skipped.map((s) => s.line)).toEqual([2, 4]);
  });

  it('redacts the secrets in imported logs before they reach the store or an export', async () => {
    const secrets = {
      password: 'HunterPw9876',
      apiKey: 'sk-proj-Zq9xR2mT8vL4kP7nW3bY6cF1',
      card: '4111111111111111',
      jwt: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      awsKey: 'AKIA4HQ7KZ3MVXNPL2RT',
    };
    const line = JSON.stringify({
      id: 'leaky',
      messages: [
        { role: 'user', content: `Pay with card ${secrets.card}, my password=${secrets.password}` },
        toolCall('a', 'pay', { card: secrets.card, password: secrets.password, headers: { Authorization: `Bearer ${secrets.apiKey}` } }),
        { role: 'tool', tool_call_id: 'a', content: JSON.stringify({ error: `token ${secrets.jwt} rejected for ${secrets.awsKey}`, status: 401 }) },
      ],
    });
    const work = mkdtempSync(join(dir, 'leak-'));
    writeFileSync(join(work, 'log.jsonl'), line + '\n');
    const db = join(work, 'x.db');
    const imported = await runCapture(['import', '--format', 'openai', 'log.jsonl', '--db', db], work);
    expect(imported.code).toBe(0);
    const exported = await runCapture(['export', '--format', 'trajectories', '--out', 'out.jsonl', '--db', db, '--val-fraction', '0'], work);
    expect(exported.code).toBe(0);
    const store = createSqliteStore({ path: db });
    await store.close();
    // Every byte the import and the export left on disk: the database (and its WAL, if any) and the export files.
    const written = readdirSync(work)
      .filter((name) => name !== 'log.jsonl')
      .map((name) => readFileSync(join(work, name)).toString('latin1'))
      .join('\n');
    expect(written).toContain('"tool_name":"pay"');
    for (const secret of Object.values(secrets)) expect(written).not.toContain(secret);
    expect(written).toContain('[REDACTED]');
  });

  it('prints counts as text by default', async () => {
    const run = await runCapture(['import', '--format', 'openai', openAiFile, '--db', freshDb()], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('faultline import: 2 trajectories from');
    expect(run.stdout).toContain('steps: 4, failures: 2, skipped lines: 2');
    expect(run.stdout).toContain('failures by category: system 2');
  });

  it('fails the whole import under --strict at the first malformed line: exit 2, one line, nothing written', async () => {
    const db = freshDb();
    const run = await runCapture(['import', '--format', 'openai', 'chats.jsonl', '--db', db, '--strict'], dir);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^faultline: chats\.jsonl:2: not JSON: .*\(--strict: nothing imported\)\n$/);
    expect(existsSync(db)).toBe(false);
  });

  it('writes a large file in several batches; --strict with a malformed line past the first batches still writes nothing', async () => {
    const lines = Array.from({ length: 2600 }, (_, i) => JSON.stringify(conversation(`big-${i}`)));
    writeFileSync(join(dir, 'big.jsonl'), lines.join('\n') + '\n');
    const db = freshDb();
    const { report } = await importJson(['--format', 'openai', 'big.jsonl', '--db', db]);
    expect(report).toMatchObject({ trajectories: 2600, inserted: 2600, steps: 5200 });
    const again = await importJson(['--format', 'openai', 'big.jsonl', '--db', db]);
    expect(again.report).toMatchObject({ inserted: 0, already_stored: 2600 });
    lines[2499] = '{"messages": 3}';
    writeFileSync(join(dir, 'big-bad.jsonl'), lines.join('\n') + '\n');
    const strictDb = freshDb();
    const strict = await runCapture(['import', '--format', 'openai', 'big-bad.jsonl', '--db', strictDb, '--strict'], dir);
    expect(strict).toMatchObject({ code: 2, stdout: '', stderr: 'faultline: big-bad.jsonl:2500: expected "messages" to be an array (--strict: nothing imported)\n' });
    expect(existsSync(strictDb)).toBe(false);
  }, 60_000);

  it('refuses an unknown format, a missing file and a file not in the format with one line and exit 2', async () => {
    const db = freshDb();
    const badFormat = await runCapture(['import', '--format', 'csv', openAiFile, '--db', db], dir);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(badFormat.stderr).toMatch(/argument 'csv' is invalid/);
    const missing = await runCapture(['import', '--format', 'openai', 'nope.jsonl', '--db', db], dir);
    expect(missing).toMatchObject({ code: 2, stderr: 'faultline: cannot read nope.jsonl: no such file or directory\n' });
    const noFormat = await runCapture(['import', openAiFile, '--db', db], dir);
    expect(noFormat.code).toBe(2);
    const truncated = join(dir, 'truncated.json');
    writeFileSync(truncated, '[\n{"task_id": 1, "traj": []},\n{"task_id": 2,');
    const run = await runCapture(['import', '--format', 'tau-bench', truncated, '--db', db], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^faultline: .*truncated\.json:3: the input ends inside the array \(truncated file\?\) \(nothing imported\)\n$/);
    // An OpenAI file read as step logs: every line is skipped, so one line instead of a warning per line.
    const wrongFormat = await runCapture(['import', '--format', 'step-log', openAiFile, '--db', db], dir);
    expect(wrongFormat.code).toBe(2);
    expect(wrongFormat.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(wrongFormat.stderr).toMatch(/^faultline: no trajectories in .*chats\.jsonl: all 4 non-blank lines were skipped \(line 1: .+\); is it in the step-log format\? Nothing imported\n$/);
    expect(existsSync(db)).toBe(false);
  });

  it('a file it cannot read (a directory, a path under a file, no read permission) is one line saying why, exit 2, and no store', async (ctx) => {
    mkdirSync(join(dir, 'a-dir'), { recursive: true });
    const cases: [string, string][] = [
      ['a-dir', 'is a directory'],
      ['chats.jsonl/x.jsonl', 'a parent is not a directory'],
    ];
    const db = freshDb();
    for (const [file, reason] of cases) {
      const run = await runCapture(['import', '--format', 'openai', file, '--db', db], dir);
      expect(run).toEqual({ code: 2, stdout: '', stderr: `faultline: cannot read ${file}: ${reason}\n` });
    }
    const locked = join(dir, 'locked.jsonl');
    writeFileSync(locked, `${JSON.stringify(conversation('c9'))}\n`, { mode: 0o000 });
    // Root (with CAP_DAC_OVERRIDE) reads it all the same.
    if (readable(locked)) ctx.skip();
    const run = await runCapture(['import', '--format', 'openai', 'locked.jsonl', '--db', db], dir);
    expect(run).toEqual({ code: 2, stdout: '', stderr: 'faultline: cannot read locked.jsonl: permission denied\n' });
    expect(existsSync(db)).toBe(false);
  });

  it('a long file in another format is one line too, and warnings past the first 1000 before a trajectory are counted in one line', async () => {
    const db = freshDb();
    // 1500 lines of a step log read as OpenAI chats: more skipped lines than the warnings held back.
    const stepLines = join(dir, 'long-steps.jsonl');
    writeFileSync(stepLines, Array.from({ length: 1500 }, (_, i) => JSON.stringify({ step: i, tool: 'get_weather' })).join('\n') + '\n');
    const wrong = await runCapture(['import', '--format', 'openai', 'long-steps.jsonl', '--db', db], dir);
    expect(wrong.code).toBe(2);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toMatch(/^faultline: no trajectories in long-steps\.jsonl: all 1500 non-blank lines were skipped \(line 1: .+\); is it in the openai format\? Nothing imported\n$/);
    expect(existsSync(db)).toBe(false);
    // The same lines followed by a conversation: the first 1000 warnings, one line for the rest, then the import.
    const mixed = join(dir, 'long-mixed.jsonl');
    writeFileSync(mixed, readFileSync(stepLines, 'utf8') + JSON.stringify(conversation('c9')) + '\n');
    const run = await runCapture(['import', '--format', 'openai', 'long-mixed.jsonl', '--db', db], dir);
    expect(run.code).toBe(0);
    const warnings = run.stderr.trimEnd().split('\n');
    expect(warnings).toHaveLength(1001);
    expect(warnings[999]).toMatch(/^long-mixed\.jsonl:1000: /);
    expect(warnings[1000]).toBe('long-mixed.jsonl: 500 more lines skipped before the first trajectory (not shown)');
    expect(run.stdout).toMatch(/^faultline import: 1 trajectories from long-mixed\.jsonl \(openai\): 1 new, 0 already stored\nsteps: 2, failures: 1, skipped lines: 1500\n/);
  });

  const tau = tauBenchAirlineFile();
  it('imports the real tau-bench file once: a second run stores nothing new', async () => {
    const db = freshDb();
    const first = await importJson(['--format', 'tau-bench', tau, '--db', db]);
    expect(first.report).toMatchObject({ trajectories: 200, inserted: 200, skipped_lines: 0, outcomes: { success: 84, failure: 116 } });
    expect(first.report.failures_by_category.business).toBe(first.report.failures);
    expect(first.report.failures).toBeGreaterThan(0);
    const again = await importJson(['--format', 'tau-bench', tau, '--db', db]);
    expect(again.report).toMatchObject({ trajectories: 200, inserted: 0, already_stored: 200 });
    const store = createSqliteStore({ path: db, readonly: true });
    expect(await store.countTrajectories({ source: 'tau-bench' })).toBe(200);
    const [stored] = await store.queryTrajectories({ limit: 1 });
    expect(stored!.metadata).toMatchObject({ source: 'tau-bench', domain: 'airline' });
    await store.close();
  });
});
