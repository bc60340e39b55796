import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import type { DatasetCard } from '../../dataset/dataset-card.js';
import { GRPO_ROW_SCHEMA, type GrpoRow } from '../../dataset/grpo-exporter.js';
import { describePostgres, useTestSchema } from '../../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { runCapture } from '../run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-fission-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FILTER = 'orders/500-after-commit-cus-012-en,weather/outage-timeout-shanghai-en';

const RATE_LIMIT = `
title: Weather rate limited once
language: en
kind: single_step
taxonomy: { category: rate_limit, subtype: rate_limit }
dimensions: [recovery, loop_avoidance]
recoverable: true
instruction: What will the weather be in Paris on 2026-03-30?
tools: [get_weather]
faults:
  - { id: limited, tool: get_weather, trigger: { nth: [1] }, fault: http_status, params: { status: 429, retry_after: 30 } }
oracle:
  status: [completed]
  answer_contains: [paris]
`;

/**
 * A nameless module agent that declares it can sample: after the fault, a branch with an odd
 * seed gives up, one with an even seed waits and asks again.
 */
const SAMPLING_MODULE = `
export default {
  canSample: true,
  async run(task) {
    for (let i = 0; i < 3; i++) {
      const r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
      if (r.ok) return { status: 'completed', answer: 'Paris: ' + JSON.stringify(r.output), diagnoses: [] };
      if (task.sampling !== undefined && task.sampling.seed % 2 === 1) return { status: 'gave_up', answer: 'no', diagnoses: [] };
      await task.sleep(30000);
    }
    return { status: 'gave_up', answer: 'no', diagnoses: [] };
  },
};
`;

describe('faultline bench --fission', () => {
  it('stores K-continuation groups that export --format grpo writes as rows', async () => {
    const db = join(dir, 'fission.db');
    const bench = await runCapture(['bench', '--fission', '3', '--filter', FILTER, '--seed', '4', '--concurrency', '2', '--db', db], dir);
    expect(bench.stderr).toBe('');
    expect(bench.code).toBe(0);
    const stored = /Stored (\d+) groups \((\d+) continuations as trajectories, (\d+) new\); (\d+) groups have reward variance\./.exec(bench.stdout);
    expect(stored, bench.stdout).not.toBeNull();
    const groups = Number(stored![1]);
    expect(groups).toBeGreaterThanOrEqual(2);
    expect(Number(stored![2])).toBe(groups * 3);
    expect(Number(stored![3])).toBe(groups * 3);

    const store = createSqliteStore({ path: db });
    expect(await store.countTrajectories()).toBe(groups * 3);
    await store.close();

    const exported = await runCapture(['export', '--format', 'grpo', '--db', db, '--out', 'grpo.jsonl', '--val-fraction', '0'], dir);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const rows = readFileSync(join(dir, 'grpo.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as GrpoRow);
    expect(rows).toHaveLength(groups);
    const validate = new Ajv({ strict: true }).compile(GRPO_ROW_SCHEMA);
    for (const row of rows) expect(validate(row), JSON.stringify(validate.errors)).toBe(true);
    const card = JSON.parse(readFileSync(join(dir, 'grpo.jsonl.card.json'), 'utf8')) as DatasetCard;
    expect(card).toMatchObject({ format: 'grpo', trajectories_read: groups * 3, splits: { train: { examples: groups, trajectories: groups * 3 } } });
    expect(readFileSync(join(dir, 'grpo.jsonl.card.md'), 'utf8')).toContain('## Groups by dimension');
  }, 60_000);

  it('prints a JSON summary with --json', async () => {
    const r = await runCapture(['bench', '--fission', '2', '--filter', 'weather/outage-timeout-shanghai-en', '--db', join(dir, 'json.db'), '--json'], dir);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ k: 2, agents: ['sampler'], scenarios: 1, diverged: 0 });
    expect(summary['continuations']).toBe((summary['groups'] as number) * 2);
  }, 60_000);

  it('branches a module agent that declares canSample, with its own seeded choices', async () => {
    const suite = join(dir, 'suite');
    mkdirSync(suite, { recursive: true });
    writeFileSync(join(suite, 'rate-limit.yaml'), RATE_LIMIT);
    writeFileSync(join(dir, 'sampling-agent.mjs'), SAMPLING_MODULE);
    const db = join(dir, 'module.db');
    const r = await runCapture(['bench', '--fission', '6', '--suite', suite, '--agent', 'module:./sampling-agent.mjs', '--db', db, '--json'], dir);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ agents: ['module:sampling-agent.mjs'], groups: 1, continuations: 6, stored: 6, diverged: 0 });
    const store = createSqliteStore({ path: db });
    const members = await store.queryTrajectories();
    await store.close();
    for (const m of members) {
      const f = m.metadata.fission!;
      expect(f.reward).toBe(f.sample_seed % 2 === 1 ? 0.25 : 1);
    }
    expect(new Set(members.map((m) => m.metadata.fission!.reward))).toEqual(new Set([0.25, 1]));
  }, 60_000);

  it.each([
    [['--fission', '1'], 'invalid --fission "1": expected an integer from 2 to 64'],
    [['--fission', 'x'], 'invalid --fission "x": expected an integer from 2 to 64'],
    [['--fission', '2.5'], 'invalid --fission "2.5": expected an integer from 2 to 64'],
    [['--fission', '65'], 'invalid --fission "65": expected an integer from 2 to 64'],
    [['--fission', '2', '--agent', 'robust'], '--fission needs agents that can sample; robust cannot (use sampler, openai:<model>, anthropic:<model>, or a module agent with canSample: true)'],
    [['--fission', '2', '--repeat', '2'], '--fission cannot be combined with --repeat: each fault already gets K continuations'],
    [['--fission', '2', '--transport', 'http'], '--fission runs its scenarios in process; drop --transport http'],
    [['--fission', '2', '--out', 'report'], '--fission writes no report, so --out does not apply: the groups go to the store (--db)'],
  ])('exits 2 with one line and writes nothing for %j', async (flags, message) => {
    const db = join(dir, `bad-${flags.join('_')}.db`);
    const r = await runCapture(['bench', ...flags, '--filter', 'weather/outage-timeout-shanghai-en', '--db', db], dir);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`faultline: ${message}\n`);
    expect(existsSync(db)).toBe(false);
  });
});

const describePg = await describePostgres('the PostgreSQL fission test');

describePg('faultline bench --fission on PostgreSQL', () => {
  const { url } = useTestSchema('faultline_fission_test');

  it('stores the groups in PostgreSQL and exports rows of the same shape and rewards as from SQLite', async () => {
    const args = ['bench', '--fission', '3', '--filter', 'orders/500-after-commit-cus-012-en', '--seed', '9', '--json'];
    const onPg = await runCapture([...args, '--db', url], dir);
    expect(onPg.stderr).toBe('');
    expect(onPg.code).toBe(0);
    const onSqlite = await runCapture([...args, '--db', join(dir, 'compare.db')], dir);
    const summary = JSON.parse(onPg.stdout) as { groups: number; stored: number };
    expect(summary.groups).toBeGreaterThan(0);
    expect(summary.stored).toBe(summary.groups * 3);

    const rowsOf = async (db: string, out: string) => {
      const r = await runCapture(['export', '--format', 'grpo', '--db', db, '--out', out, '--val-fraction', '0'], dir);
      expect(r.code).toBe(0);
      const validate = new Ajv({ strict: true }).compile(GRPO_ROW_SCHEMA);
      // Ids (run ids, idempotency keys) differ between the two runs, and JSONB orders object keys its
      // own way, so what is compared is the group's shape and its rewards, not the message text.
      return readFileSync(join(dir, out), 'utf8').split('\n').filter((l) => l !== '').map((l) => {
        const row = JSON.parse(l) as GrpoRow;
        expect(validate(row), JSON.stringify(validate.errors)).toBe(true);
        const shape = (messages: GrpoRow['prompt']) => messages.map((m) => (m.role === 'assistant' ? `call ${m.tool_calls?.[0]?.function.name ?? 'answer'}` : m.role));
        return { prompt: shape(row.prompt), completions: row.completions.map(shape), rewards: row.rewards, fault_type: row.fault_type, tool_idempotent: row.tool_idempotent, dimension: row.dimension };
      });
    };
    const fromPg = await rowsOf(url, 'pg.jsonl');
    expect(fromPg).toHaveLength(summary.groups);
    expect(new Set(fromPg.map((r) => JSON.stringify(r)))).toEqual(new Set((await rowsOf(join(dir, 'compare.db'), 'sqlite.jsonl')).map((r) => JSON.stringify(r))));
    expect(JSON.parse(onSqlite.stdout)).toMatchObject({ groups: summary.groups });
  }, 60_000);
});
