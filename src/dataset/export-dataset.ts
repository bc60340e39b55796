/**
 * Streams trajectories through one exporter into train and validation lines, counting the
 * dataset card as it goes. Writing is the caller's (the CLI writes files); this stays pure.
 */
import { reviewedTrajectories } from '../annotate/review.js';
import type { Trajectory } from '../core/trajectory-types.js';
import { DatasetCardBuilder, type DatasetCard } from './dataset-card.js';
import { exportDpoOpenAi } from './dpo-openai-exporter.js';
import { exportDpoTrl } from './dpo-trl-exporter.js';
import type { ExportFormat, TrajectoryExamples } from './exporter.js';
import { FewShotCollector } from './few-shot-exporter.js';
import { exportGrpo } from './grpo-exporter.js';
import { exportKto } from './kto-exporter.js';
import { exportPredictor, type PredictorRow } from './predictor-exporter.js';
import { exportSft } from './sft-exporter.js';
import { splitKeyOf, splitOf, type Split } from './split.js';
import { exportTrajectory } from './trajectories-exporter.js';

/** Formats ranked across trajectories: collected per split and written when the input ends. */
export type CollectedFormat = 'few-shot' | 'grpo';
export type PerTrajectoryFormat = Exclude<ExportFormat, CollectedFormat>;

const EXPORTERS: Record<PerTrajectoryFormat, (t: Trajectory) => TrajectoryExamples<unknown>> = {
  trajectories: exportTrajectory,
  sft: (t) => exportSft(t),
  'dpo-openai': exportDpoOpenAi,
  'dpo-trl': exportDpoTrl,
  kto: exportKto,
  predictor: exportPredictor,
};

/** The class each example counts under on the card (`examples_by_class`), for formats with a label. */
const EXAMPLE_CLASS: Partial<Record<ExportFormat, (example: unknown) => string>> = {
  predictor: (row) => ((row as PredictorRow).failed ? 'failed' : 'succeeded'),
};

/** One trajectory's examples under `format`. */
export function exportExamples(format: PerTrajectoryFormat, trajectory: Trajectory): TrajectoryExamples<unknown> {
  return EXPORTERS[format](trajectory);
}

export interface ExportDatasetOptions {
  format: ExportFormat;
  /** Trajectories in any order; read once. */
  trajectories: AsyncIterable<Trajectory> | Iterable<Trajectory>;
  /** Receives each example's JSON line (no newline); awaited, so a slow writer holds the stream back. */
  write: (split: Split, line: string) => void | Promise<void>;
  seed?: number;
  /** The share of trajectories for validation, in [0, 1). Default 0.1. */
  valFraction?: number;
  /** File names for the card. */
  files: { train: string; validation: string };
  /** `few-shot`: failures written per tool. Default 3. */
  fewShotTop?: number;
  /**
   * `exclude`: trajectories whose outcome a judge inferred (the log stated none) are left out,
   * counted on the card under {@link INFERRED_EXCLUDED}. Default `include`.
   */
  inferredOutcomes?: 'include' | 'exclude';
}

/** The card's skip reason for a trajectory left out because its outcome was inferred. */
export const INFERRED_EXCLUDED = 'outcome inferred (excluded)';

/** Leaves out trajectories with an inferred outcome, counting them on the card as skipped. */
async function* withoutInferred(trajectories: AsyncIterable<Trajectory> | Iterable<Trajectory>, card: DatasetCardBuilder): AsyncGenerator<Trajectory> {
  for await (const trajectory of trajectories) {
    if (trajectory.outcome_basis?.source === 'inferred') card.skip(INFERRED_EXCLUDED, trajectory);
    else yield trajectory;
  }
}

export async function exportDataset(input: ExportDatasetOptions): Promise<DatasetCard> {
  // Labels a reviewer rejected (`faultline review`) never reach a dataset; corrected ones carry the reviewer's label.
  const options: ExportDatasetOptions = { ...input, trajectories: reviewedTrajectories(input.trajectories) };
  const seed = options.seed ?? 0;
  const valFraction = options.valFraction ?? 0.1;
  const card = new DatasetCardBuilder({ format: options.format, seed, val_fraction: valFraction, files: options.files });
  if (options.inferredOutcomes === 'exclude') options.trajectories = withoutInferred(options.trajectories, card);
  if (options.format === 'few-shot') return exportFewShot(options, card, seed, valFraction);
  if (options.format === 'grpo') return exportGrpo(options, card, seed, valFraction);
  const format = options.format;
  const classOf = EXAMPLE_CLASS[format];
  for await (const trajectory of options.trajectories) {
    const { examples, skipped } = exportExamples(format, trajectory);
    if (examples.length === 0) {
      card.skip(skipped ?? 'no examples', trajectory);
      continue;
    }
    const split = splitOf(splitKeyOf(trajectory), seed, valFraction);
    for (const example of examples) {
      await options.write(split, JSON.stringify(example));
      if (classOf !== undefined) card.countClass(split, classOf(example));
    }
    card.add(trajectory, split, examples.length);
  }
  return card.card();
}

/** `few-shot`: each split's trajectories ranked on their own, so none leaks across the split. */
async function exportFewShot(options: ExportDatasetOptions, card: DatasetCardBuilder, seed: number, valFraction: number): Promise<DatasetCard> {
  const collectors: Record<Split, FewShotCollector> = { train: new FewShotCollector(), validation: new FewShotCollector() };
  for await (const trajectory of options.trajectories) {
    const split = splitOf(splitKeyOf(trajectory), seed, valFraction);
    const skipped = collectors[split].add(trajectory);
    if (skipped === undefined) card.add(trajectory, split, 0);
    else card.skip(skipped, trajectory);
  }
  for (const split of ['train', 'validation'] as const) {
    const rows = collectors[split].rows(options.fewShotTop);
    for (const row of rows) await options.write(split, JSON.stringify(row));
    card.addExamples(split, rows.length);
  }
  return card.card();
}
