/**
 * The dataset card written beside every export (`<out>.card.json`, `<out>.card.md`): what went
 * in, what was left out and why, and how the split fell.
 */
import type { Trajectory } from '../core/trajectory-types.js';
import type { ExportFormat } from './exporter.js';
import type { Split } from './split.js';

export interface SplitCounts {
  trajectories: number;
  examples: number;
}

export interface DatasetCard {
  format: ExportFormat;
  seed: number;
  val_fraction: number;
  /** How trajectories were assigned to a side. */
  split_rule: string;
  files: { train: string; validation: string };
  /** Trajectories read from the store. */
  trajectories_read: number;
  /** Trajectories that gave at least one example. */
  trajectories_exported: number;
  /** Trajectories that gave none, by reason. */
  skipped: Record<string, number>;
  splits: Record<Split, SplitCounts>;
  /** Exported trajectories per source. */
  by_source: Record<string, number>;
  /** Failed steps of exported trajectories by seed 000 label (`type/subtype`; `unlabelled` when none). */
  by_failure_type: Record<string, number>;
  /** Failed steps of exported trajectories by seed 001 category. */
  by_failure_category: Record<string, number>;
  /** Annotation labels (`faultline annotate`) on exported trajectories, by name. */
  by_label: Record<string, number>;
  /** For formats whose examples carry a label (`predictor`: `failed` / `succeeded`): examples per class and split. */
  examples_by_class?: Record<Split, Record<string, number>>;
  /** `grpo`: exported groups by the scenario's dimension. */
  by_dimension?: Record<string, number>;
  /** `grpo`: exported groups by the fault injected at the branch point. */
  by_fault_type?: Record<string, number>;
}

const bump = (counts: Record<string, number>, key: string, by = 1): void => {
  counts[key] = (counts[key] ?? 0) + by;
};

/** Keys in a stable order: count descending, then name. */
function sorted(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/** Counts an export as it streams. */
export class DatasetCardBuilder {
  private read = 0;
  private exported = 0;
  private readonly skipped: Record<string, number> = {};
  private readonly splits: Record<Split, SplitCounts> = { train: { trajectories: 0, examples: 0 }, validation: { trajectories: 0, examples: 0 } };
  private readonly bySource: Record<string, number> = {};
  private readonly byFailureType: Record<string, number> = {};
  private readonly byFailureCategory: Record<string, number> = {};
  private readonly byLabel: Record<string, number> = {};
  private byClass: Record<Split, Record<string, number>> | undefined;

  constructor(private readonly settings: Pick<DatasetCard, 'format' | 'seed' | 'val_fraction' | 'files'>) {}

  skip(reason: string): void {
    this.read++;
    bump(this.skipped, reason);
  }

  add(trajectory: Trajectory, split: Split, examples: number): void {
    this.read++;
    this.exported++;
    this.splits[split].trajectories++;
    this.splits[split].examples += examples;
    bump(this.bySource, trajectory.metadata.source);
    for (const s of trajectory.steps) {
      if (s.status === null || s.status === 'success') continue;
      bump(this.byFailureType, s.failure_type === null ? 'unlabelled' : `${s.failure_type}/${s.failure_subtype ?? 'unknown'}`);
      if (s.failure_category !== null) bump(this.byFailureCategory, s.failure_category);
    }
    for (const label of trajectory.labels ?? []) bump(this.byLabel, label.name);
  }

  /** Examples written for a split apart from any one trajectory (few-shot writes its rows at the end). */
  addExamples(split: Split, examples: number): void {
    this.splits[split].examples += examples;
  }

  countClass(split: Split, cls: string): void {
    this.byClass ??= { train: {}, validation: {} };
    bump(this.byClass[split], cls);
  }

  card(): DatasetCard {
    return {
      ...this.settings,
      split_rule: 'validation when the first 48 bits of sha256("<seed>:<trajectory_id>") / 2^48 < val_fraction; a trajectory is never split, and an augmented one goes by its source trajectory_id',
      trajectories_read: this.read,
      trajectories_exported: this.exported,
      skipped: sorted(this.skipped),
      splits: { train: { ...this.splits.train }, validation: { ...this.splits.validation } },
      by_source: sorted(this.bySource),
      by_failure_type: sorted(this.byFailureType),
      by_failure_category: sorted(this.byFailureCategory),
      by_label: sorted(this.byLabel),
      ...(this.byClass === undefined ? {} : { examples_by_class: { train: sorted(this.byClass.train), validation: sorted(this.byClass.validation) } }),
    };
  }
}

function table(title: string, head: string, counts: Record<string, number>): string[] {
  const rows = Object.entries(counts);
  return [`## ${title}`, '', ...(rows.length === 0 ? ['(none)'] : [`| ${head} | count |`, '|---|---:|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)]), ''];
}

/** The card as Markdown, for people. */
export function renderDatasetCard(card: DatasetCard): string {
  return [
    `# Dataset card: ${card.format}`,
    '',
    `- train: \`${card.files.train}\` (${card.splits.train.examples} examples from ${card.splits.train.trajectories} trajectories)`,
    `- validation: \`${card.files.validation}\` (${card.splits.validation.examples} examples from ${card.splits.validation.trajectories} trajectories)`,
    `- trajectories read: ${card.trajectories_read}, exported: ${card.trajectories_exported}`,
    `- split: seed ${card.seed}, validation fraction ${card.val_fraction}; ${card.split_rule}`,
    '',
    ...table('Skipped trajectories', 'reason', card.skipped),
    ...table('By source', 'source', card.by_source),
    ...table('Failed steps by failure type (seed 000)', 'type/subtype', card.by_failure_type),
    ...table('Failed steps by category (seed 001)', 'category', card.by_failure_category),
    ...table('Annotation labels', 'label', card.by_label),
    ...(card.examples_by_class === undefined
      ? []
      : [...table('Train examples by class', 'class', card.examples_by_class.train), ...table('Validation examples by class', 'class', card.examples_by_class.validation)]),
    ...(card.by_dimension === undefined ? [] : table('Groups by dimension', 'dimension', card.by_dimension)),
    ...(card.by_fault_type === undefined ? [] : table('Groups by injected fault', 'fault', card.by_fault_type)),
  ].join('\n');
}
