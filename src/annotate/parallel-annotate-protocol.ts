/**
 * The messages between the parallel annotator (parallel-annotate.ts) and its worker threads
 * (parallel-annotate-worker.ts).
 */
import type { FailureSignatureKey } from '../core/failure-signature.js';
import type { OutcomeSource } from '../core/trajectory-types.js';

/** Given to each worker when it starts. */
export interface ParallelWorkerInit {
  /** The file; each worker reads the byte ranges it is given itself. */
  path: string;
  format: 'openai' | 'anthropic';
  judge: 'none' | 'heuristic';
  domain?: string;
  /** Render `--json` lines. */
  json: boolean;
  /** Render `--out` lines (each annotated trajectory as JSON, labels last). */
  out: boolean;
}

/**
 * A byte range of the file. The block is the lines that start in [start, end): the worker skips
 * the end of a line begun before `start`, and reads on past `end` to finish its last line.
 */
export interface BlockRequest {
  seq: number;
  start: number;
  end: number;
  /** The import time stamped on the block's trajectories (`created_at`). */
  nowMs: number;
}

/**
 * The failed steps of a run of trajectories, for the main thread's rare-failure index, by column:
 * structured clone writes each object's keys out, and a block has thousands of failed steps.
 */
export interface FailureColumns {
  /** Per trajectory with failed steps: its position in the run (0-based), id, failed-step count. */
  at: Int32Array;
  ids: string[];
  counts: Int32Array;
  /** Whether it has labels without rare failures (the summary counts labelled trajectories). */
  labelled: Uint8Array;
  /** Per failed step, in order: step index, time (see `FailureOccurrence`), signature (into `signatures`). */
  steps: Int32Array;
  times: Float64Array;
  signatureAt: Int32Array;
  /** The distinct signatures of the run. */
  signatures: FailureSignatureKey[];
}

/** Consecutive trajectories of a block: their `--json` and `--out` lines, where each one's line ends, and their tally. */
export interface LinesPart {
  kind: 'lines';
  json: string;
  jsonEnds: number[];
  out: string;
  outEnds: number[];
  trajectories: number;
  labelled: number;
  marks: number;
  /** Labels per name, without rare failures, in order of first appearance. */
  counts: [string, number][];
  outcomes: Record<OutcomeSource, number>;
  failed: FailureColumns;
}

/** A skipped line; `line` counts from 1 at the block's first line. */
export interface SkippedPart {
  kind: 'skipped';
  line: number;
  reason: string;
}

export interface BlockResult {
  seq: number;
  /** Lines of the block, blank and skipped ones included (line numbers continue across blocks). */
  lines: number;
  /** The block in order: runs of trajectories, cut by the lines skipped between them. */
  parts: (LinesPart | SkippedPart)[];
}

export type BlockReply = BlockResult | { seq: number; error: string };
