/**
 * `annotate --input` on several cores, for the formats with one independent trajectory per line
 * (OpenAI and Anthropic JSONL). The main thread cuts the file into byte ranges; worker threads
 * read their ranges themselves (whole lines: see read-line-range.ts), parse, import and annotate
 * them and render the `--json` / `--out` lines (parallel-annotate-worker.ts); the main thread takes
 * the blocks back in file order and applies what depends on that order: the rare-failure index
 * ("first occurrence in the file", from the signatures the workers computed), and the line
 * numbers of skipped lines. The main thread neither reads nor copies the file, and does a map
 * lookup per failed step: it stays out of the workers' way.
 *
 * Memory stays flat: at most `maxInFlight` blocks are out ahead of the consumer, and the file is
 * read no faster than results are consumed. The output equals the one-thread path's: as there,
 * the trajectories of the file are all stamped with one import time (read once, at the start).
 *
 * Hand-written: no library in package.json pools worker threads, and the reorder window and
 * line-aligned ranges are specific to this job.
 */
import { notify, warnListenerError } from '../core/notify.js';
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ImportInputError, type SkippedLine } from '../trajectory/import-file.js';
import type { ImportFormat } from '../trajectory/importers/import-types.js';
import type { TrajectoryLabel } from '../core/trajectory-types.js';
import { addLabelCounts, withRareLabels, type AnnotationTally } from './annotated-lines.js';
import type { BlockReply, BlockResult, LinesPart, ParallelWorkerInit } from './parallel-annotate-protocol.js';
import { RareFailureIndex, type FailureOccurrence } from './rare-failure.js';

const onSkipFailed = warnListenerError('onSkip');

/** The formats whose lines can be annotated independently. */
export const isParallelFormat = (format: ImportFormat): format is 'openai' | 'anthropic' => format === 'openai' || format === 'anthropic';
/** Smaller files stay on one thread: starting workers costs more than they save. */
export const PARALLEL_MIN_BYTES = 16 << 20;
const DEFAULT_BLOCK_BYTES = 1 << 20;

export interface ParallelAnnotateOptions {
  format: 'openai' | 'anthropic';
  judge: 'none' | 'heuristic';
  /** Worker threads; default `os.availableParallelism()`, at least 2. */
  threads?: number;
  /** Bytes per block (a block is the lines that start in its range). Default 1 MiB. */
  blockBytes?: number;
  /** Blocks handed out ahead of the consumer at most; default 2 per thread. */
  maxInFlight?: number;
  /** Render the `--json` lines. */
  json?: boolean;
  /** Render the `--out` lines (each annotated trajectory as JSON, labels last). */
  out?: boolean;
  strict?: boolean;
  onSkip?: (skipped: SkippedLine) => void;
  domain?: string;
  /** The clock stamped on the trajectories (`created_at`), read once for the file. */
  now?: () => number;
  /** The worker entry; default parallel-annotate-worker.js beside this module. */
  workerUrl?: URL;
}

/** What `annotate --input` writes for a run of consecutive trajectories, and the counts of its summary. */
export interface AnnotationChunk {
  /** The `--json` lines ('' unless asked for). */
  json: string;
  /** The `--out` lines ('' unless asked for). */
  out: string;
  tally: AnnotationTally;
}

/** A worker thread and the blocks it owes. */
class AnnotatorThread {
  readonly worker: Worker;
  readonly pending = new Map<number, { resolve: (result: BlockResult) => void; reject: (error: Error) => void }>();
  /** Why the thread stopped, once it has: later blocks fail at once instead of waiting forever. */
  failed: Error | undefined;

  constructor(url: URL, init: ParallelWorkerInit) {
    this.worker = new Worker(url, { workerData: init });
    this.worker.on('message', (reply: BlockReply) => {
      const pending = this.pending.get(reply.seq);
      if (pending === undefined) return;
      this.pending.delete(reply.seq);
      if ('error' in reply) pending.reject(new Error(`annotation worker failed: ${reply.error}`));
      else pending.resolve(reply);
    });
    const fail = (error: Error) => {
      this.failed ??= error;
      for (const p of this.pending.values()) p.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`annotation worker exited with code ${code}`)));
  }

  annotate(seq: number, start: number, end: number, nowMs: number): Promise<BlockResult> {
    return new Promise((resolve, reject) => {
      if (this.failed !== undefined) return reject(this.failed);
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, start, end, nowMs });
    });
  }
}

/** `text` (lines ending at `ends`) with the lines of `patched` replaced by `patch(line, labels)`. */
function patchLines(text: string, ends: readonly number[], patched: ReadonlyMap<number, TrajectoryLabel[]>, kind: 'json' | 'out'): string {
  if (ends.length === 0) return text;
  const parts: string[] = [];
  let from = 0;
  for (const [at, labels] of patched) {
    const start = at === 0 ? 0 : ends[at - 1]!;
    parts.push(text.slice(from, start), withRareLabels(text.slice(start, ends[at]!), labels, kind));
    from = ends[at]!;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

/** A run of a block's lines with the rare-failure labels (in file order) added. */
function chunkOf(part: LinesPart, rare: RareFailureIndex): AnnotationChunk {
  const tally: AnnotationTally = { trajectories: part.trajectories, labelled: part.labelled, marks: part.marks, counts: new Map(part.counts), outcomes: part.outcomes };
  // Ascending positions: `failed` is in file order.
  const patched = new Map<number, TrajectoryLabel[]>();
  const f = part.failed;
  for (let t = 0, step = 0; t < f.ids.length; t++) {
    const failures: FailureOccurrence[] = [];
    for (const end = step + f.counts[t]!; step < end; step++) failures.push({ step_index: f.steps[step]!, timeMs: f.times[step]!, signature: f.signatures[f.signatureAt[step]!]! });
    const labels = rare.labelsForOccurrences(f.ids[t]!, failures);
    if (labels.length === 0) continue;
    patched.set(f.at[t]!, labels);
    if (f.labelled[t] === 0) tally.labelled += 1;
    addLabelCounts(tally, labels);
  }
  // First occurrences are few: rebuilding the text around them is cheap.
  if (patched.size === 0) return { json: part.json, out: part.out, tally };
  return { json: patchLines(part.json, part.jsonEnds, patched, 'json'), out: patchLines(part.out, part.outEnds, patched, 'out'), tally };
}

/**
 * What `annotate --input` writes for `path`, in file order, in chunks (about one per block;
 * skipped lines go to `onSkip` between the chunks they came between).
 * @throws ImportInputError for a malformed line under `strict`.
 */
export async function* annotateFileParallel(path: string, options: ParallelAnnotateOptions): AsyncGenerator<AnnotationChunk> {
  const threadCount = Math.max(2, options.threads ?? availableParallelism());
  const maxInFlight = Math.max(1, options.maxInFlight ?? threadCount * 2);
  const blockBytes = Math.max(1, options.blockBytes ?? DEFAULT_BLOCK_BYTES);
  const importedAt = (options.now ?? Date.now)();
  const url = options.workerUrl ?? new URL('./parallel-annotate-worker.js', import.meta.url);
  const size = statSync(path).size;
  const init: ParallelWorkerInit = {
    path,
    format: options.format,
    judge: options.judge,
    json: options.json === true,
    out: options.out === true,
    ...(options.domain === undefined ? {} : { domain: options.domain }),
  };
  const threads = Array.from({ length: threadCount }, () => new AnnotatorThread(url, init));
  const inFlight: Promise<BlockResult>[] = [];
  const rare = new RareFailureIndex();
  let seq = 0;
  let next = 0;
  let lineBase = 0;
  const handOut = () => {
    while (next < size && inFlight.length < maxInFlight) {
      // The thread owing the fewest blocks: blocks differ in cost.
      const thread = threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const end = Math.min(size, next + blockBytes);
      const reply = thread.annotate(seq++, next, end, importedAt);
      reply.catch(() => undefined); // awaited in order below; this only keeps an early failure from going unhandled
      inFlight.push(reply);
      next = end;
    }
  };
  try {
    handOut();
    while (inFlight.length > 0) {
      const block = await inFlight.shift()!;
      handOut();
      for (const part of block.parts) {
        if (part.kind === 'lines') {
          yield chunkOf(part, rare);
          continue;
        }
        const line = lineBase + part.line;
        if (options.strict === true) throw new ImportInputError(path, line, part.reason);
        notify(options.onSkip, { line, reason: part.reason }, onSkipFailed);
      }
      lineBase += block.lines;
    }
  } finally {
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }
}
