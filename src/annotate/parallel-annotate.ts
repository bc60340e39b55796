/**
 * `annotate --input` on several cores, for the formats with one independent trajectory per line
 * (OpenAI and Anthropic JSONL). The main thread reads the file and cuts it into blocks of whole
 * lines; worker threads parse, import and annotate the blocks (parallel-annotate-worker.ts); the
 * main thread takes their results back in file order and applies what depends on that order: the
 * rare-failure index ("first occurrence in the file"), and the line numbers of skipped lines.
 *
 * Memory stays flat: at most `maxInFlight` blocks are read ahead of the consumer, and the file is
 * read no faster than results are consumed. The output equals `annotateFile`'s for the same
 * import times: each block's trajectories are stamped with the time the main thread read the
 * block (non-decreasing in file order, as the single-threaded path's per-line clock is).
 *
 * Hand-written: no library in package.json pools worker threads, and the reorder window and
 * line-aligned blocks are specific to this job.
 */
import { open } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ImportInputError, type SkippedLine } from '../trajectory/import-file.js';
import type { ImportFormat } from '../trajectory/importers/import-types.js';
import type { Trajectory, TrajectoryLabel } from '../trajectory/types.js';
import { addRareLabels } from './judge/judged-annotation.js';
import type { BlockItem, BlockReply, ParallelWorkerInit } from './parallel-annotate-protocol.js';
import { RareFailureIndex } from './rare-failure.js';

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
  /** Bytes read per block (a block is extended to the end of its last line). Default 1 MiB. */
  blockBytes?: number;
  /** Blocks read ahead of the consumer at most; default 2 per thread. */
  maxInFlight?: number;
  /** Also return each annotated trajectory as JSON (without labels). */
  trajectoryJson?: boolean;
  strict?: boolean;
  onSkip?: (skipped: SkippedLine) => void;
  domain?: string;
  /** The clock stamped on the trajectories (`created_at`), read once per block. */
  now?: () => number;
  /** The worker entry; default parallel-annotate-worker.js beside this module. */
  workerUrl?: URL;
}

/** One annotated trajectory, as `annotate --input` writes it. */
export interface ParallelAnnotation {
  trajectory_id: string;
  source_id: string | null;
  /** Every label to store, rare failures included, in `annotateJudged`'s order. */
  stored: TrajectoryLabel[];
  marks: number;
  /** The annotated trajectory without labels, as JSON, when `trajectoryJson` was asked for. */
  json?: string;
}

/**
 * The file in blocks of whole lines (the last one may lack its line end). Each block is read into
 * a buffer of its own (not Node's shared pool), so it can be moved to a worker without a copy;
 * only the partial line after a block's last line end is copied, to the start of the next one.
 */
async function* lineBlocks(path: string, blockBytes: number): AsyncGenerator<Uint8Array> {
  const file = await open(path, 'r');
  try {
    let carry: Uint8Array = new Uint8Array(0);
    for (;;) {
      const buffer = new Uint8Array(new ArrayBuffer(Math.max(blockBytes, carry.length * 2)));
      buffer.set(carry);
      const { bytesRead } = await file.read(buffer, carry.length, buffer.length - carry.length, null);
      const filled = carry.length + bytesRead;
      if (bytesRead === 0) {
        if (filled > 0) yield buffer.subarray(0, filled);
        return;
      }
      const end = buffer.lastIndexOf(0x0a, filled - 1);
      if (end === -1) {
        carry = buffer.subarray(0, filled); // one line longer than the buffer: read on into a larger one
        continue;
      }
      carry = buffer.slice(end + 1, filled);
      yield buffer.subarray(0, end + 1);
    }
  } finally {
    await file.close();
  }
}

interface Pending {
  resolve: (reply: { lines: number; items: BlockItem[] }) => void;
  reject: (error: Error) => void;
}

/** A worker thread and the blocks it owes. */
class AnnotatorThread {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending>();
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

  annotate(seq: number, bytes: Uint8Array, nowMs: number): Promise<{ lines: number; items: BlockItem[] }> {
    return new Promise((resolve, reject) => {
      if (this.failed !== undefined) return reject(this.failed);
      this.pending.set(seq, { resolve, reject });
      this.worker.postMessage({ seq, bytes, firstOfFile: seq === 0, nowMs }, [bytes.buffer as ArrayBuffer]);
    });
  }
}

/** What `RareFailureIndex` reads of a trajectory: its id, time and failed steps. */
function rareView(item: Extract<BlockItem, { kind: 'trajectory' }>): Trajectory {
  // The index looks only at failed steps (stepSignature is null for the rest) and these fields.
  return { trajectory_id: item.trajectory_id, created_at: item.created_at, steps: item.failed } as unknown as Trajectory;
}

/**
 * Each trajectory of `path` annotated (rules, judge, backtrace, rare failures), in file order.
 * @throws ImportInputError for a malformed line under `strict`.
 */
export async function* annotateFileParallel(path: string, options: ParallelAnnotateOptions): AsyncGenerator<ParallelAnnotation> {
  const threadCount = Math.max(2, options.threads ?? availableParallelism());
  const maxInFlight = Math.max(1, options.maxInFlight ?? threadCount * 2);
  const now = options.now ?? Date.now;
  const url = options.workerUrl ?? new URL('./parallel-annotate-worker.js', import.meta.url);
  const init: ParallelWorkerInit = {
    format: options.format,
    judge: options.judge,
    trajectoryJson: options.trajectoryJson === true,
    ...(options.domain === undefined ? {} : { domain: options.domain }),
  };
  const threads = Array.from({ length: threadCount }, () => new AnnotatorThread(url, init));
  const blocks = lineBlocks(path, options.blockBytes ?? DEFAULT_BLOCK_BYTES);
  const inFlight: Promise<{ lines: number; items: BlockItem[] }>[] = [];
  const rare = new RareFailureIndex();
  let seq = 0;
  let eof = false;
  let lineBase = 0;
  const readAhead = async () => {
    while (!eof && inFlight.length < maxInFlight) {
      const next = await blocks.next();
      if (next.done === true) {
        eof = true;
        break;
      }
      // The thread owing the fewest blocks: blocks differ in cost.
      const thread = threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const reply = thread.annotate(seq++, next.value, now());
      reply.catch(() => undefined); // awaited in order below; this only keeps an early failure from going unhandled
      inFlight.push(reply);
    }
  };
  try {
    await readAhead();
    while (inFlight.length > 0) {
      const block = await inFlight.shift()!;
      await readAhead();
      for (const item of block.items) {
        if (item.kind === 'skipped') {
          const line = lineBase + item.line;
          if (options.strict === true) throw new ImportInputError(path, line, item.reason);
          options.onSkip?.({ line, reason: item.reason });
          continue;
        }
        const stored = addRareLabels(item.stored, rare.labelsFor(rareView(item)));
        yield {
          trajectory_id: item.trajectory_id,
          source_id: item.source_id,
          stored,
          marks: item.marks,
          ...(item.json === undefined ? {} : { json: item.json }),
        };
      }
      lineBase += block.lines;
    }
  } finally {
    await blocks.return(undefined);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }
}
