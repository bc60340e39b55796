/**
 * The dataset card written beside every export (`<out>.card.json`, `<out>.card.md`): what went
 * in, what was left out and why, and how the split fell.
 */
import { HEURISTIC_JUDGE_QUALITY, type HeuristicJudgeQuality } from '../annotate/judge/heuristic-judge-quality.js';
import { HEURISTIC_JUDGE_SOURCE } from '../annotate/judge/judged-annotation.js';
import type { OutcomeSource, Trajectory } from '../core/trajectory-types.js';
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
  /** Failed steps of exported trajectories by training-taxonomy label (`type/subtype`; `unlabelled` when none). */
  by_failure_type: Record<string, number>;
  /** Failed steps of exported trajectories by runtime-taxonomy category. */
  by_failure_category: Record<string, number>;
  /** Annotation labels (`faultline annotate`) on exported trajectories, by name. */
  by_label: Record<string, number>;
  /** For formats whose examples carry a label (`predictor`: `failed` / `succeeded`): examples per class and split. */
  examples_by_class?: Record<Split, Record<string, number>>;
  /**
   * How the outcomes were known (DESIGN.md "Importers and annotation"): per trajectory read and exported, stated
   * by the log, inferred by a judge from the conversation, or unstated; and for the exported
   * inferred ones, how sure the judges were and which judge it was.
   */
  outcomes: {
    read: Record<OutcomeSource, number>;
    exported: Record<OutcomeSource, number>;
    inferred: { count: number; mean_confidence: number | null; min_confidence: number | null; by: Record<string, number> };
  };
  /**
   * When exported trajectories carry the heuristic judge's labels or outcomes: its measured
   * precision and recall on the repository's labelled calls, and its outcome accuracy (see
   * src/annotate/judge/heuristic-judge-quality.ts), so a reader knows how far to trust them.
   */
  judge_quality?: { 'judge:heuristic': HeuristicJudgeQuality };
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

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** How a trajectory's outcome is known; one stored before that was kept reads as stated unless unknown. */
function outcomeSourceOf(trajectory: Trajectory): OutcomeSource {
  return trajectory.outcome_basis?.source ?? (trajectory.final_outcome === 'unknown' ? 'unstated' : 'stated');
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
  private readonly outcomesRead: Record<OutcomeSource, number> = { stated: 0, inferred: 0, unstated: 0 };
  private readonly outcomesExported: Record<OutcomeSource, number> = { stated: 0, inferred: 0, unstated: 0 };
  private readonly inferredBy: Record<string, number> = {};
  private inferredConfidence = { sum: 0, min: Infinity };
  private heuristicJudged = false;

  constructor(private readonly settings: Pick<DatasetCard, 'format' | 'seed' | 'val_fraction' | 'files'>) {}

  /** A trajectory that gave no example (`trajectory` absent: one the exporter could not see whole). */
  skip(reason: string, trajectory?: Trajectory): void {
    this.read++;
    bump(this.skipped, reason);
    if (trajectory !== undefined) this.outcomesRead[outcomeSourceOf(trajectory)]++;
  }

  add(trajectory: Trajectory, split: Split, examples: number): void {
    this.read++;
    const source = outcomeSourceOf(trajectory);
    this.outcomesRead[source]++;
    this.outcomesExported[source]++;
    if (source === 'inferred') {
      const confidence = trajectory.outcome_basis?.confidence ?? 0;
      this.inferredConfidence.sum += confidence;
      this.inferredConfidence.min = Math.min(this.inferredConfidence.min, confidence);
      bump(this.inferredBy, trajectory.outcome_basis?.by ?? 'unknown');
    }
    this.exported++;
    this.splits[split].trajectories++;
    this.splits[split].examples += examples;
    bump(this.bySource, trajectory.metadata.source);
    for (const s of trajectory.steps) {
      if (s.status === null || s.status === 'success') continue;
      bump(this.byFailureType, s.failure_type === null ? 'unlabelled' : `${s.failure_type}/${s.failure_subtype ?? 'unknown'}`);
      if (s.failure_category !== null) bump(this.byFailureCategory, s.failure_category);
    }
    for (const label of trajectory.labels ?? []) {
      bump(this.byLabel, label.name);
      if (label.source === HEURISTIC_JUDGE_SOURCE) this.heuristicJudged = true;
    }
    if (trajectory.outcome_basis?.by === HEURISTIC_JUDGE_SOURCE) this.heuristicJudged = true;
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
      outcomes: {
        read: { ...this.outcomesRead },
        exported: { ...this.outcomesExported },
        inferred: {
          count: this.outcomesExported.inferred,
          mean_confidence: this.outcomesExported.inferred === 0 ? null : round2(this.inferredConfidence.sum / this.outcomesExported.inferred),
          min_confidence: this.outcomesExported.inferred === 0 ? null : this.inferredConfidence.min,
          by: sorted(this.inferredBy),
        },
      },
      ...(this.heuristicJudged ? { judge_quality: { [HEURISTIC_JUDGE_SOURCE]: HEURISTIC_JUDGE_QUALITY } } : {}),
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
    ...table('Failed steps by failure type (training taxonomy)', 'type/subtype', card.by_failure_type),
    ...table('Failed steps by category (runtime taxonomy)', 'category', card.by_failure_category),
    ...table('Annotation labels', 'label', card.by_label),
    ...outcomeLines(card),
    ...judgeQualityLines(card),
    ...(card.examples_by_class === undefined
      ? []
      : [...table('Train examples by class', 'class', card.examples_by_class.train), ...table('Validation examples by class', 'class', card.examples_by_class.validation)]),
    ...(card.by_dimension === undefined ? [] : table('Groups by dimension', 'dimension', card.by_dimension)),
    ...(card.by_fault_type === undefined ? [] : table('Groups by injected fault', 'fault', card.by_fault_type)),
  ].join('\n');
}

function outcomeLines(card: DatasetCard): string[] {
  const { read, exported, inferred } = card.outcomes;
  const lines = [
    '## Outcomes',
    '',
    '| outcome | read | exported |',
    '|---|---:|---:|',
    `| stated by the log | ${read.stated} | ${exported.stated} |`,
    `| inferred by a judge | ${read.inferred} | ${exported.inferred} |`,
    `| unstated | ${read.unstated} | ${exported.unstated} |`,
    '',
  ];
  if (inferred.count > 0) {
    const by = Object.entries(inferred.by).map(([judge, n]) => `${judge} ${n}`).join(', ');
    lines.push(`Inferred outcomes were read from the final answers (${by}); confidence mean ${inferred.mean_confidence}, lowest ${inferred.min_confidence}. \`faultline export --exclude-inferred-outcomes\` leaves them out.`, '');
  }
  return lines;
}

const shownRate = (n: number | null): string => (n === null ? 'n/a' : n.toFixed(2));

function judgeQualityLines(card: DatasetCard): string[] {
  const quality = card.judge_quality?.[HEURISTIC_JUDGE_SOURCE];
  if (quality === undefined) return [];
  const { semantic_error: s, outcome_inference: o } = quality;
  const rows = Object.entries(s.by_set).map(([set, c]) => `| ${set} | ${c.calls} | ${c.misses} | ${shownRate(c.precision)} | ${shownRate(c.recall)} |`);
  return [
    '## Heuristic judge: measured quality',
    '',
    'Labels and inferred outcomes here come from the heuristic judge. Its `semantic_error` labels, measured on labelled successful calls (a miss: the call did not serve the intent):',
    '',
    '| labelled set | calls | misses | precision | recall |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    `| all | ${s.calls} | ${s.misses} | ${shownRate(s.precision)} | ${shownRate(s.recall)} |`,
    '',
    `Outcomes inferred from final answers, right per conversation set: ${Object.entries(o).map(([set, r]) => `${set} ${r.right} of ${r.total}`).join('; ')}.`,
    '',
  ];
}
