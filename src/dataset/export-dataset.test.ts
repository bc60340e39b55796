import { describe, expect, it } from 'vitest';
import { renderDatasetCard } from './dataset-card.js';
import { exportDataset, INFERRED_EXCLUDED, type ExportDatasetOptions } from './export-dataset.js';
import { splitOf, splitPoint, type Split } from './split.js';
import { blindRetry, failedTask, recovered } from './dataset.test-helpers.js';
import type { Trajectory } from '../core/trajectory-types.js';

const files = { train: 'out.jsonl', validation: 'out.jsonl.val.jsonl' };
const many = (n: number): Trajectory[] => Array.from({ length: n }, (_, i) => ({ ...recovered(), trajectory_id: `traj_${i}` }));

async function collect(format: 'trajectories' | 'kto' | 'sft', trajectories: Trajectory[], seed: number, valFraction: number, more: Partial<ExportDatasetOptions> = {}) {
  const out: Record<Split, string[]> = { train: [], validation: [] };
  const card = await exportDataset({ format, trajectories, seed, valFraction, files, write: (split, line) => void out[split].push(line), ...more });
  return { out, card };
}

describe('split', () => {
  it('is a stable point in [0, 1) that depends on the seed', () => {
    expect(splitPoint('traj_1', 7)).toBe(splitPoint('traj_1', 7));
    expect(splitPoint('traj_1', 7)).not.toBe(splitPoint('traj_1', 8));
    for (let i = 0; i < 100; i++) expect(splitPoint(`t${i}`, 0)).toBeGreaterThanOrEqual(0);
    expect(splitOf('traj_1', 7, 0)).toBe('train');
  });

  it('roughly respects the fraction on 1000 trajectories and never splits one', async () => {
    const { out, card } = await collect('trajectories', many(1000), 42, 0.1);
    const ids = (split: Split) => new Set(out[split].map((l) => (JSON.parse(l) as Trajectory).trajectory_id));
    const val = ids('validation');
    expect(val.size).toBeGreaterThan(70);
    expect(val.size).toBeLessThan(130);
    expect([...ids('train')].filter((id) => val.has(id))).toEqual([]);
    expect(card.splits.validation.trajectories + card.splits.train.trajectories).toBe(1000);
    // Several examples per trajectory (kto gives 3 here) stay on one side together.
    const kto = await collect('kto', many(1000), 42, 0.1);
    expect(kto.card.splits.validation).toEqual({ trajectories: val.size, examples: 3 * val.size });
    // Same seed, same split; another seed, another.
    expect((await collect('trajectories', many(1000), 42, 0.1)).out).toEqual(out);
    expect((await collect('trajectories', many(1000), 43, 0.1)).out.validation).not.toEqual(out.validation);
  });
});

describe('dataset card', () => {
  it('counts sources, failure types, categories, labels, skips and the split', async () => {
    const { out, card } = await collect('sft', [blindRetry(), recovered(), failedTask()], 0, 0);
    expect(out.train).toHaveLength(2);
    expect(card).toEqual({
      format: 'sft',
      seed: 0,
      val_fraction: 0,
      split_rule: expect.stringContaining('sha256') as unknown,
      files,
      trajectories_read: 3,
      trajectories_exported: 2,
      skipped: { 'outcome is failure': 1 },
      splits: { train: { trajectories: 2, examples: 2 }, validation: { trajectories: 0, examples: 0 } },
      by_source: { openai: 1, 'step-log': 1 },
      by_failure_type: { unlabelled: 2, 'infrastructure/timeout': 1 },
      by_failure_category: { business: 2, network: 1 },
      by_label: { backoff_violation: 1 },
      outcomes: {
        read: { stated: 3, inferred: 0, unstated: 0 },
        exported: { stated: 2, inferred: 0, unstated: 0 },
        inferred: { count: 0, mean_confidence: null, min_confidence: null, by: {} },
      },
    });
    const md = renderDatasetCard(card);
    expect(md).toContain('# Dataset card: sft');
    expect(md).toContain('| infrastructure/timeout | 1 |');
    expect(md).toContain('| outcome is failure | 1 |');
    expect(md).toContain('- validation: `out.jsonl.val.jsonl` (0 examples from 0 trajectories)');
  });

  it('marks inferred outcomes on the card, and leaves them out when asked', async () => {
    const inferred = { ...recovered(), outcome_basis: { source: 'inferred' as const, confidence: 0.8, evidence: 'completion:"I found"', by: 'judge:heuristic' } };
    const kept = await collect('sft', [blindRetry(), inferred], 0, 0);
    expect(kept.out.train).toHaveLength(2);
    expect(kept.card.outcomes.inferred).toEqual({ count: 1, mean_confidence: 0.8, min_confidence: 0.8, by: { 'judge:heuristic': 1 } });
    expect(renderDatasetCard(kept.card)).toContain('| inferred by a judge | 1 | 1 |');
    const { out, card } = await collect('sft', [blindRetry(), inferred], 0, 0, { inferredOutcomes: 'exclude' });
    expect(out.train).toHaveLength(1);
    expect(card.skipped).toEqual({ [INFERRED_EXCLUDED]: 1 });
    expect(card.outcomes.read).toEqual({ stated: 1, inferred: 1, unstated: 0 });
    expect(card.outcomes.exported).toEqual({ stated: 1, inferred: 0, unstated: 0 });
  });
});
