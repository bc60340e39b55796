import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSamplingAgent } from '../failbench/agents/sampler.js';
import { runFission, type FissionResult } from '../failbench/fission.js';
import { loadScenarios } from '../failbench/scenario-loader.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Trajectory } from '../core/trajectory-types.js';
import type { DatasetCard } from './dataset-card.js';
import { blindRetry } from './dataset.test-helpers.js';
import { exportDataset } from './export-dataset.js';
import { GRPO_ROW_SCHEMA, GRPO_SPLIT_RULE, grpoRow, type GrpoRow } from './grpo-exporter.js';
import { splitOf, type Split } from './split.js';

const SUITE_DIR = new URL('../failbench/scenarios/default/', import.meta.url).pathname;
const IDS = ['messaging/commit-then-drop-engineering-en', 'weather/semantic-city-beijing-en', 'orders/500-after-commit-cus-012-en', 'sales/outage-timeout-north-dec-en'];
const K = 3;

const dir = mkdtempSync(join(tmpdir(), 'faultline-grpo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fission: FissionResult;
let members: Trajectory[];

beforeAll(async () => {
  const all = await loadScenarios(SUITE_DIR);
  const scenarios = all.filter((s) => IDS.includes(s.id));
  expect(scenarios).toHaveLength(IDS.length);
  const store = createSqliteStore({ path: join(dir, 'grpo.db') });
  try {
    fission = await runFission({ scenarios, agents: [createSamplingAgent()], k: K, feedback: 'raw', seed: 2, store });
    // Read back from the SQLite file, not from memory.
    members = await store.queryTrajectories({ limit: 10_000 });
  } finally {
    await store.close();
  }
}, 60_000);

async function exportAll(trajectories: Trajectory[], valFraction: number, seed = 0): Promise<{ lines: Record<Split, GrpoRow[]>; card: DatasetCard }> {
  const lines: Record<Split, GrpoRow[]> = { train: [], validation: [] };
  const card = await exportDataset({
    format: 'grpo',
    trajectories,
    write: (split, line) => {
      lines[split].push(JSON.parse(line) as GrpoRow);
    },
    seed,
    valFraction,
    files: { train: 'g.jsonl', validation: 'g.jsonl.val.jsonl' },
  });
  return { lines, card };
}

describe('--format grpo', () => {
  it('writes one row per group that validates against the documented schema', async () => {
    const { lines } = await exportAll(members, 0);
    const rows = lines.train;
    expect(rows).toHaveLength(fission.groups.length);
    const validate = new Ajv({ allErrors: true, strict: true }).compile(GRPO_ROW_SCHEMA);
    for (const row of rows) {
      expect(validate(row), JSON.stringify(validate.errors)).toBe(true);
    }
    // A broken row does not validate: the schema is not vacuous.
    const broken = { ...rows[0]!, rewards: ['1'] };
    expect(validate(broken)).toBe(false);
    expect(validate({ ...rows[0]!, extra: 1 })).toBe(false);
  });

  it('puts the conversation up to the fault in the prompt and K continuations with their oracle rewards', async () => {
    const { lines } = await exportAll(members, 0);
    for (const row of lines.train) {
      const group = fission.groups.find((g) => g.groupId === row.group_id)!;
      expect(row).toMatchObject({ scenario_id: group.scenarioId, fault_type: group.faultType, tool_idempotent: group.toolIdempotent, dimension: group.dimension, dimensions: group.dimensions, source: 'faultline', agent: 'sampler', seed: 2 });
      expect(row.rewards).toEqual(group.continuations.map((c) => c.reward));
      expect(row.completions).toHaveLength(K);
      // user + (call, answer) for each prefix call; the last is the fault's tool result.
      expect(row.prompt).toHaveLength(1 + 2 * (group.faultCall + 1));
      expect(row.prompt[0]).toEqual({ role: 'user', content: members.find((m) => m.metadata.fission?.group_id === row.group_id)!.task_description });
      const last = row.prompt[row.prompt.length - 1]!;
      expect(last.role).toBe('tool');
      const faultCall = group.continuations[0]!.result.calls[group.faultCall]!;
      const lastCall = row.prompt[row.prompt.length - 2]!;
      expect(lastCall.role === 'assistant' && lastCall.tool_calls?.[0]?.function.name).toBe(faultCall.tool);
      row.completions.forEach((messages, i) => {
        const c = group.continuations[i]!;
        const after = c.result.calls.length - (group.faultCall + 1);
        expect(messages).toHaveLength(2 * after + 1);
        expect(messages[messages.length - 1]).toEqual({ role: 'assistant', content: c.result.outcome.answer });
      });
    }
    expect(lines.train.some((r) => new Set(r.rewards).size > 1)).toBe(true);
  });

  it('splits by group and counts the card in groups and continuations', async () => {
    const noise = blindRetry();
    const { lines, card } = await exportAll([...members, noise], 0.5, 11);
    const all = [...lines.train, ...lines.validation];
    expect(all).toHaveLength(fission.groups.length);
    for (const split of ['train', 'validation'] as const) {
      for (const row of lines[split]) expect(splitOf(row.group_id, 11, 0.5)).toBe(split);
    }
    expect(card.split_rule).toBe(GRPO_SPLIT_RULE);
    expect(card.splits.train.examples + card.splits.validation.examples).toBe(fission.groups.length);
    expect(card.splits.train.examples).toBe(lines.train.length);
    expect(card.splits.train.trajectories).toBe(lines.train.length * K);
    expect(card.splits.validation.trajectories).toBe(lines.validation.length * K);
    expect(card.trajectories_read).toBe(members.length + 1);
    expect(card.skipped).toEqual({ 'not a fission continuation': 1 });
    expect(card.by_source).toEqual({ faultline: members.length });
    expect(Object.values(card.by_dimension!).reduce((a, b) => a + b, 0)).toBe(fission.groups.length);
    expect(Object.keys(card.by_fault_type!).sort()).toEqual([...new Set(fission.groups.map((g) => g.faultType))].sort());
  });

  it('reads a group\'s members together from the store, so the exporter holds one group at a time', () => {
    const order = members.map((m) => m.metadata.fission!.group_id);
    const runs = order.filter((id, i) => id !== order[i - 1]);
    expect(runs).toHaveLength(fission.groups.length);
  });

  it('skips incomplete groups and groups whose prefixes differ', async () => {
    const [first, second] = fission.groups;
    const dropped = members.find((m) => m.metadata.fission?.group_id === first!.groupId && m.metadata.fission.branch === 1)!;
    const partial = members.filter((m) => m !== dropped);
    const { lines, card } = await exportAll(partial, 0);
    expect(lines.train.map((r) => r.group_id)).not.toContain(first!.groupId);
    expect(card.skipped['incomplete fission group']).toBe(K - 1);

    const ofSecond = members.filter((m) => m.metadata.fission?.group_id === second!.groupId);
    const tampered = structuredClone(ofSecond);
    tampered[1]!.steps[0]!.input_params = { tampered: true };
    expect(grpoRow(tampered)).toEqual({ skipped: 'prefix differs within its fission group' });
    expect('row' in grpoRow(ofSecond)).toBe(true);
  });
});
