/**
 * Streams trajectories through one exporter into train and validation lines, counting the
 * dataset card as it goes. Writing is the caller's (the CLI writes files); this stays pure.
 */
import type { Trajectory } from '../trajectory/types.js';
import { DatasetCardBuilder, type DatasetCard } from './dataset-card.js';
import { exportDpoOpenAi } from './dpo-openai-exporter.js';
import { exportDpoTrl } from './dpo-trl-exporter.js';
import type { ExportFormat, TrajectoryExamples } from './exporter.js';
import { exportKto } from './kto-exporter.js';
import { exportSft } from './sft-exporter.js';
import { splitOf, type Split } from './split.js';
import { exportTrajectory } from './trajectories-exporter.js';

const EXPORTERS: Record<ExportFormat, (t: Trajectory) => TrajectoryExamples<unknown>> = {
  trajectories: exportTrajectory,
  sft: (t) => exportSft(t),
  'dpo-openai': exportDpoOpenAi,
  'dpo-trl': exportDpoTrl,
  kto: exportKto,
};

/** One trajectory's examples under `format`. */
export function exportExamples(format: ExportFormat, trajectory: Trajectory): TrajectoryExamples<unknown> {
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
}

export async function exportDataset(options: ExportDatasetOptions): Promise<DatasetCard> {
  const seed = options.seed ?? 0;
  const valFraction = options.valFraction ?? 0.1;
  const card = new DatasetCardBuilder({ format: options.format, seed, val_fraction: valFraction, files: options.files });
  for await (const trajectory of options.trajectories) {
    const { examples, skipped } = exportExamples(options.format, trajectory);
    if (examples.length === 0) {
      card.skip(skipped ?? 'no examples');
      continue;
    }
    const split = splitOf(trajectory.trajectory_id, seed, valFraction);
    for (const example of examples) await options.write(split, JSON.stringify(example));
    card.add(trajectory, split, examples.length);
  }
  return card.card();
}
