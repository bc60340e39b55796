/**
 * `faultline annotate --input <file> --format <format>`: labels the trajectories of a log file
 * without a store, streaming (see `annotateFile`): one `--json` line per trajectory as it is
 * annotated, or a count per label at the end. Nothing is written but stdout, stderr (one
 * `file:LINE: reason` warning per skipped line) and `--out`.
 */
import { createWriteStream, statSync } from 'node:fs';
import { once } from 'node:events';
import { isAbsolute, resolve } from 'node:path';
import { annotateFile, NO_SEMANTIC_JUDGE } from '../../annotate/annotate-file.js';
import { HEURISTIC_JUDGE_SOURCE, type SemanticJudge } from '../../annotate/judge/judged-annotation.js';
import { annotateFileParallel, isParallelFormat, PARALLEL_MIN_BYTES, type ParallelAnnotation } from '../../annotate/parallel-annotate.js';
import { LABEL_NAMES } from '../../annotate/label.js';
import { ImportInputError, type SkippedLine } from '../../trajectory/import-file.js';
import type { ImportFormat } from '../../trajectory/importers/import-types.js';
import type { TrajectoryLabel } from '../../trajectory/types.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliIo } from '../io.js';
import { assertReadableFile } from './import.js';

export interface AnnotateInputOptions {
  input: string;
  format: ImportFormat;
  json?: boolean;
  out?: string;
  /** Worker threads for a large OpenAI or Anthropic file (see parallel-annotate.ts); 1 keeps one thread. Default: the cores. */
  threads?: number;
  /** Files at least this large go to the worker threads. Default {@link PARALLEL_MIN_BYTES}. */
  parallelMinBytes?: number;
}

/** One `--json` line: the same shape as `annotate --db --json`. */
interface JsonLine {
  trajectory_id: string;
  source_id: string | null;
  labels: { name: string; step_index: number; confidence: number }[];
}

async function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  // Honour backpressure so a slow reader of stdout cannot make memory grow.
  if (!stream.write(text)) await once(stream, 'drain');
}

/**
 * The annotated trajectories, on worker threads when the format allows it, the file is large and
 * the judge can run there (not the LLM judge: its cache and connection live here).
 */
function annotations(opts: AnnotateInputOptions, path: string, judge: SemanticJudge, onSkip: (s: SkippedLine) => void): AsyncIterable<ParallelAnnotation> {
  const judgeKind = judge === NO_SEMANTIC_JUDGE ? 'none' : judge.source === HEURISTIC_JUDGE_SOURCE ? 'heuristic' : undefined;
  const format = opts.format;
  const parallel =
    isParallelFormat(format) &&
    judgeKind !== undefined &&
    opts.threads !== 1 &&
    statSync(path).size >= (opts.parallelMinBytes ?? PARALLEL_MIN_BYTES);
  if (parallel && isParallelFormat(format)) {
    return annotateFileParallel(path, {
      format,
      judge: judgeKind,
      trajectoryJson: opts.out !== undefined,
      onSkip,
      ...(opts.threads === undefined ? {} : { threads: opts.threads }),
    });
  }
  return (async function* () {
    for await (const result of annotateFile(format, path, { judge, onSkip })) {
      const t = result.trajectory;
      yield {
        trajectory_id: t.trajectory_id,
        source_id: t.source_id,
        stored: result.stored,
        marks: result.marks.length,
        ...(opts.out === undefined ? {} : { json: JSON.stringify(t) }),
      };
    }
  })();
}

/** An annotated trajectory's `--out` line: its JSON with the labels added last, as `{ ...trajectory, labels }` would give. */
function outLine(trajectoryJson: string, labels: readonly TrajectoryLabel[]): string {
  return `${trajectoryJson.slice(0, -1)},"labels":${JSON.stringify(labels)}}\n`;
}

export async function annotateInput(io: CliIo, opts: AnnotateInputOptions, judge: SemanticJudge): Promise<void> {
  const path = isAbsolute(opts.input) ? opts.input : resolve(io.cwd, opts.input);
  assertReadableFile(path, opts.input);
  const counts = new Map<string, number>(LABEL_NAMES.map((n) => [n, 0]));
  let trajectories = 0;
  let labelled = 0;
  let marks = 0;
  let skipped = 0;
  const out = opts.out === undefined ? undefined : createWriteStream(isAbsolute(opts.out) ? opts.out : resolve(io.cwd, opts.out));
  try {
    const annotated = annotations(opts, path, judge, (s) => {
      skipped += 1;
      writeLine(io.stderr, `${opts.input}:${s.line}: ${s.reason}`);
    });
    for await (const result of annotated) {
      const labels = result.stored;
      trajectories += 1;
      marks += result.marks;
      if (labels.length > 0) labelled += 1;
      for (const label of labels) counts.set(label.name, (counts.get(label.name) ?? 0) + 1);
      if (opts.json === true) {
        const line: JsonLine = {
          trajectory_id: result.trajectory_id,
          source_id: result.source_id,
          labels: labels.map((l) => ({ name: l.name, step_index: l.step_index, confidence: l.confidence })),
        };
        await write(io.stdout, `${JSON.stringify(line)}\n`);
      }
      if (out !== undefined && result.json !== undefined) await write(out, outLine(result.json, labels));
    }
  } catch (error) {
    if (ImportInputError.isInstance(error)) throw new CliError(`${opts.input}:${error.line}: ${error.reason}`);
    throw error;
  } finally {
    if (out !== undefined) {
      out.end();
      await once(out, 'close');
    }
  }
  if (trajectories === 0 && skipped > 0) {
    throw new CliError(`no trajectories in ${opts.input}: all ${skipped} non-blank lines were skipped (is it in the ${opts.format} format?)`);
  }
  if (opts.json === true) return;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  writeLine(io.stdout, `faultline annotate: ${trajectories} trajectories from ${opts.input} (${opts.format}), ${labelled} with labels, ${total} labels, ${marks} decisions marked by the backtrace, ${skipped} lines skipped`);
  for (const [name, count] of counts) writeLine(io.stdout, `  ${name.padEnd(18)} ${count}`);
  if (opts.out !== undefined) writeLine(io.stdout, `annotated trajectories written to ${opts.out}`);
}
