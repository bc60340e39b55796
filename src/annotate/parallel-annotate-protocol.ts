/**
 * The messages between the parallel annotator (parallel-annotate.ts) and its worker threads
 * (parallel-annotate-worker.ts).
 */
import type { StepResponse, TrajectoryLabel, TrajectoryStep } from '../trajectory/types.js';

/** Given to each worker when it starts. */
export interface ParallelWorkerInit {
  format: 'openai' | 'anthropic';
  judge: 'none' | 'heuristic';
  domain?: string;
  /** Send each annotated trajectory as JSON too (for `--out`). */
  trajectoryJson: boolean;
}

/** A block of whole lines of the file. */
export interface BlockRequest {
  seq: number;
  bytes: Uint8Array;
  /** The block starts the file (its first line may start with a BOM). */
  firstOfFile: boolean;
  /** The import time stamped on the block's trajectories (`created_at`). */
  nowMs: number;
}

/** What the rare-failure index reads of a failed step. */
export type RareStep = Pick<TrajectoryStep, 'step_index' | 'status' | 'tool_name' | 'failure_stage' | 'failure_kind' | 'started_at'> & {
  response: Pick<StepResponse, 'error_code' | 'message'>;
};

/** One line's result; `line` counts from 1 at the block's first line. */
export type BlockItem =
  | { kind: 'skipped'; line: number; reason: string }
  | {
      kind: 'trajectory';
      trajectory_id: string;
      source_id: string | null;
      created_at: string;
      /** The labels as `annotateJudged` stores them, without rare failures. */
      stored: TrajectoryLabel[];
      /** How many decisions the backtrace marked. */
      marks: number;
      failed: RareStep[];
      /** The annotated trajectory (no `labels` key), when asked for. */
      json?: string;
    };

export type BlockReply = { seq: number; lines: number; items: BlockItem[] } | { seq: number; error: string };
