import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { tauBenchAirlineFile } from '../../trajectory/importers/tau-bench-data.test-helpers.js';
import { reply, startFakeModelServer } from '../../llm/fake-model-server.test-helpers.js';
import { runCli } from '../run-cli.js';
import { captureIo, runCapture } from '../run-cli.test-helpers.js';
import type { AnnotateJsonLine } from './annotate.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-annotate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (trace: string, i: number, tool: string, params: unknown, response: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ trace_id: trace, step_index: i, timestamp: `2026-03-29T14:23:${String(10 + i).padStart(2, '0')}Z`, tool_name: tool, input_params: params, raw_response: response, ...extra });
const failed = { status_code: 500, body: { error: 'db timeout' } };
const log = [
  ...[1, 2, 3, 4, 5].map((i) => line('loop', i, 'query_sales', { month: '2026-03' }, failed, i === 1 ? { intent: '查询本月销售数据', final_outcome: 'failure' } : {})),
  line('weather', 1, 'get_weather', { city: 'Shanghai', date: '2026-03-29' }, { status_code: 200, body: { temp: 18 } }, { intent: '上海明天的天气', final_outcome: 'success' }),
  '',
].join('\n');
writeFileSync(join(dir, 'steps.jsonl'), log);

async function run(args: readonly string[]) {
  const r = await runCapture(args, dir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}
const parse = (stdout: string): AnnotateJsonLine[] => stdout.trim().split('\n').map((l) => JSON.parse(l) as AnnotateJsonLine);

describe('faultline annotate', () => {
  it('labels imported step logs: --json lines, text counts, --source and --out', async () => {
    const db = join(dir, 'steps.db');
    await run(['import', '--format', 'step-log', 'steps.jsonl', '--db', db]);
    const lines = parse((await run(['annotate', '--db', db, '--json'])).stdout);
    const bySource = Object.fromEntries(lines.map((l) => [l.source_id, l.labels]));
    expect(bySource['loop']).toEqual([
      // The store had never seen query_sales fail with a db timeout.
      { name: 'rare_failure', step_index: 1, confidence: 1 },
      { name: 'loop_failure', step_index: 4, confidence: 0.9 },
      { name: 'loop_failure', step_index: 5, confidence: 0.9 },
    ]);
    expect(bySource['weather']).toEqual([{ name: 'semantic_error', step_index: 1, confidence: 0.75 }]);
    // The labels and the backtrace's decisions are stored with the trajectories.
    const store = createSqliteStore({ path: db, readonly: true });
    const stored = (await store.queryTrajectories({})).find((t) => t.source_id === 'loop')!;
    await store.close();
    expect(stored.labels?.map((l) => `${l.name}@${l.step_index}`)).toEqual(['rare_failure@1', 'loop_failure@4', 'loop_failure@5']);
    expect(stored.labels?.[0]?.reason).toMatch(/\w/);
    expect(stored.steps.map((step) => step.decision_correctness)).toEqual([null, null, null, 'incorrect', null]);
    const text = (await run(['annotate', '--db', db, '--out', 'out.jsonl'])).stdout;
    expect(text).toContain('faultline annotate: 2 trajectories, 2 with labels, 4 labels');
    expect(text).toMatch(/rare_failure\s+1\n/);
    expect(text).toMatch(/loop_failure\s+2\n/);
    expect(text).toMatch(/semantic_error\s+1\n/);
    const written = readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { source_id: string; steps: { decision_correctness: string | null }[] });
    const loop = written.find((t) => t.source_id === 'loop')!;
    expect(loop.steps.map((s) => s.decision_correctness)).toEqual([null, null, null, 'incorrect', null]);
    expect((await run(['annotate', '--db', db, '--json', '--source', 'tau-bench'])).stdout).toBe('');
    const bad = await runCapture(['annotate', '--db', db, '--source', 'nope'], dir);
    expect(bad.code).toBe(2);
  });

  it('--judge llm:<model> asks a chat.completions endpoint, caches verdicts in --judge-cache, and rejects bad judges', async () => {
    const db = join(dir, 'llm.db');
    await run(['import', '--format', 'step-log', 'steps.jsonl', '--db', db]);
    const server = await startFakeModelServer();
    server.respondWith(() => reply.text(JSON.stringify({ satisfies: false, reason: 'tomorrow is 2026-03-30, the call asked for 2026-03-29', mismatch_kind: 'date', confidence: 0.85 })));
    const runWithEnv = async (args: string[], env: Record<string, string>) => {
      const captured = captureIo(dir);
      captured.io.env = env;
      const code = await runCli(args, captured.io);
      return { code, stdout: captured.stdout(), stderr: captured.stderr() };
    };
    const env = { OPENAI_BASE_URL: server.openaiBaseUrl, JUDGE_KEY: 'sk-judge-0123456789' };
    try {
      const first = await runWithEnv(['annotate', '--db', db, '--judge', 'llm:judge-model', '--api-key-env', 'JUDGE_KEY', '--judge-cache', 'cache/verdicts.jsonl'], env);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      // One successful step with an intent: the weather call (the loop's calls all failed).
      expect(server.requests).toHaveLength(1);
      expect(server.requests[0]!.headers['authorization']).toBe('Bearer sk-judge-0123456789');
      expect(first.stdout).toContain('judge judge:llm:judge-model: 1 requests, 0 verdicts from the cache (cache/verdicts.jsonl), 0 steps without a verdict');
      const store = createSqliteStore({ path: db, readonly: true });
      const weather = (await store.queryTrajectories({})).find((t) => t.source_id === 'weather')!;
      await store.close();
      expect(weather.labels).toEqual([
        { name: 'semantic_error', step_index: 1, confidence: 0.85, reason: 'tomorrow is 2026-03-30, the call asked for 2026-03-29', source: 'judge:llm:judge-model', mismatch_kind: 'date' },
      ]);
      const second = await runWithEnv(['annotate', '--db', db, '--judge', 'llm:judge-model', '--api-key-env', 'JUDGE_KEY', '--judge-cache', 'cache/verdicts.jsonl'], env);
      expect(second.stdout).toContain('0 requests, 1 verdicts from the cache');
      expect(server.requests).toHaveLength(1);
      expect(readFileSync(join(dir, 'cache/verdicts.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);

      for (const [args, message] of [
        [['--judge', 'gpt-4o'], /--judge must be 'heuristic', 'llm:<model>'/],
        [['--judge', 'llm:'], /--judge must be/],
        [['--judge', 'llm:m', '--api-key-env', 'NO_SUCH_KEY'], /NO_SUCH_KEY/],
        [['--judge', 'llm:m', '--api-key-env', 'JUDGE_KEY', '--base-url', 'not a url'], /base URL/],
      ] as const) {
        const bad = await runWithEnv(['annotate', '--db', db, ...args], env);
        expect(bad.code, args.join(' ')).toBe(2);
        expect(bad.stderr).toMatch(message);
        expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      }
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('--out or --judge-cache that cannot be written: one line, exit 2, and nothing stored', async () => {
    const db = join(dir, 'unwritable.db');
    await run(['import', '--format', 'step-log', 'steps.jsonl', '--db', db]);
    mkdirSync(join(dir, 'a-dir'));
    writeFileSync(join(dir, 'a-file'), 'kept\n');
    const env = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', JUDGE_KEY: 'sk-judge-0123456789' };
    for (const [args, message] of [
      [['--out', 'a-dir'], 'cannot write a-dir: is a directory'],
      [['--out', 'missing/out.jsonl'], 'cannot write missing/out.jsonl: its directory does not exist'],
      [['--judge', 'llm:m', '--api-key-env', 'JUDGE_KEY', '--judge-cache', 'a-dir'], 'cannot write a-dir: is a directory'],
      [['--judge', 'llm:m', '--api-key-env', 'JUDGE_KEY', '--judge-cache', 'a-file/cache.jsonl'], 'cannot write a-file/cache.jsonl: a-file is not a directory'],
    ] as const) {
      const captured = captureIo(dir);
      captured.io.env = env;
      const code = await runCli(['annotate', '--db', db, ...args], captured.io);
      expect(code, args.join(' ')).toBe(2);
      expect(captured.stdout(), args.join(' ')).toBe('');
      expect(captured.stderr(), args.join(' ')).toBe(`faultline: ${message}\n`);
    }
    const store = createSqliteStore({ path: db, readonly: true });
    const stored = await store.queryTrajectories({});
    await store.close();
    expect(stored.flatMap((t) => t.labels ?? [])).toEqual([]);
    expect(readFileSync(join(dir, 'a-file'), 'utf8')).toBe('kept\n');
  });

  const tau = tauBenchAirlineFile();
  it('labels the real tau-bench airline file', async () => {
    const db = join(dir, 'tau.db');
    await run(['import', '--format', 'tau-bench', tau, '--db', db]);
    const lines = parse((await run(['annotate', '--db', db, '--json'])).stdout);
    expect(lines).toHaveLength(200);
    const labelsOf = (sourceId: string) => lines.find((l) => l.source_id === sourceId)!.labels.map((l) => `${l.name}@${l.step_index}`);
    // Task 9, trial 2: book_reservation fails with the same arguments again and again.
    expect(labelsOf('9:2')).toContain('loop_failure@23');
    // Task 15: update_reservation_flights fails on GV1N64, then the agent cancels GV1N64.
    expect(labelsOf('15:0')).toContain('cascade_failure@3');
    // Task 32: book_reservation fails (conflict) and is called again right away.
    expect(labelsOf('32:0')).toContain('idempotency_risk@7');
    // Task 13, trial 2: graded a success although update_reservation_flights failed and never succeeded.
    expect(labelsOf('13:2')).toContain('ignored_error@7');
  }, 60_000);

  it('a store of records only (a demo, a plain bench run) says where trajectories come from', async () => {
    const db = join(dir, 'records-only.db');
    await run(['demo', '--db', db]);
    const text = await run(['annotate', '--db', db]);
    expect(text.stdout).toMatch(/^faultline annotate: 0 trajectories, /);
    expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('no trajectories in the store: `npx faultline import` a log or run `npx faultline bench --fission K` to store some');
    // --json stays JSON lines: none.
    expect((await run(['annotate', '--db', db, '--json'])).stdout).toBe('');
  });
});
