/** What every dataset exporter is: a pure function from one trajectory to its examples. */
import type { Trajectory } from '../core/trajectory-types.js';

/** The `--format` values of `faultline export`. */
export type ExportFormat = 'trajectories' | 'sft' | 'dpo-openai' | 'dpo-trl' | 'kto' | 'few-shot' | 'predictor' | 'grpo';

export const EXPORT_FORMATS: readonly ExportFormat[] = ['trajectories', 'sft', 'dpo-openai', 'dpo-trl', 'kto', 'few-shot', 'predictor', 'grpo'];

/** One trajectory's examples; `skipped` says why there are none when a rule left it out. */
export interface TrajectoryExamples<E> {
  examples: E[];
  skipped?: string;
}

export type Exporter<E> = (trajectory: Trajectory) => TrajectoryExamples<E>;
