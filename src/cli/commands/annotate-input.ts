/**
 * `faultline annotate --input <file> --format <format>`: labels the trajectories of a log file
 * without a store, streaming (see `annotateFile`): one `--json` line per trajectory as it is
 * annotated, or a count per label at the end. Nothing is written but stdout, stderr (one
 * `file:LINE: reason` warning per skipped line, held back until the first trajectory: see
 * HeldWarnings; and at the end how many outcomes were inferred, stated or unknown) and `--out`.
 */
import { statSync } from 'node:fs';
import { once } from 'node:events';
import { isAbsolute, resolve } from 'node:path';
import { annotateFile, NO_SEMANTIC_JUDGE } from '../../annotate/annotate-file.js';
import { AnnotatedLines, addTally, emptyTally } from '../../annotate/annotated-lines.js';
import { HEURISTIC_JUDGE_SOURCE, type SemanticJudge } from '../../annotate/judge/judged-annotation.js';
import { annotateFileParallel, isParallelFormat, PARALLEL_MIN_BYTES, type AnnotationChunk } from '../../annotate/parallel-annotate.js';
import { LABEL_NAMES } from '../../annotate/label.js';
import { ImportInputError, type SkippedLine } from '../../trajectory/import-file.js';
import type { ImportFormat } from '../../trajectory/importers/import-types.js';
import { CliError } from '../cli-error.js';
import { HeldWarnings } from '../held-warnings.js';
import { printable, writeLine, type CliIo } from '../io.js';
import { assertWritableFile, openReplacingOutput, type ReplacingOutput } from '../output-paths.js';
import { assertReadableFile } from './import.js';

export interface AnnotateInputOptions {
  input: string;
  format: ImportFormat;
  json?: boolean;
  out?: string;
  /**
   * Worker threads for an OpenAI or Anthropic file (see parallel-annotate.ts); 1 keeps one thread.
   * Default: one per core for a file of `parallelMinBytes` or more, else one thread; a number of 2
   * or more given here is used whatever the file size.
   */
  threads?: number;
  /** Files at least this large go to the worker threads. Default {@link PARALLEL_MIN_BYTES}. */
  parallelMinBytes?: number;
}

async function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  // Honour backpressure so a slow reader of stdout cannot make memory grow.
  if (text !== '' && !stream.write(text)) await once(stream, 'drain');
}

/** Lines are written in runs of about this many characters: a write per trajectory costs a system call each. */
const RUN_CHARS = 1 << 16;

/**
 * What to write, in chunks of consecutive trajectories: on worker threads when the format allows
 * it, the file is large and the judge can run there (not the LLM judge: its cache and connection
 * live here). `onSkip` is told of each skipped line between the chunks it came between.
 */
function annotations(opts: AnnotateInputOptions, path: string, judge: SemanticJudge, onSkip: (s: SkippedLine) => void): AsyncIterable<AnnotationChunk> {
  const judgeKind = judge === NO_SEMANTIC_JUDGE ? 'none' : judge.source === HEURISTIC_JUDGE_SOURCE ? 'heuristic' : undefined;
  const format = opts.format;
  const lines = { json: opts.json === true, out: opts.out !== undefined };
  const parallel =
    isParallelFormat(format) &&
    judgeKind !== undefined &&
    opts.threads !== 1 &&
    (opts.threads !== undefined || statSync(path).size >= (opts.parallelMinBytes ?? PARALLEL_MIN_BYTES));
  if (parallel && isParallelFormat(format)) {
    return annotateFileParallel(path, { format, judge: judgeKind, ...lines, onSkip, ...(opts.threads === undefined ? {} : { threads: opts.threads }) });
  }
  return (async function* () {
    let run = new AnnotatedLines(lines);
    const skips: SkippedLine[] = [];
    let first = true;
    try {
      for await (const result of annotateFile(format, path, { judge, onSkip: (s) => skips.push(s) })) {
        // A skipped line is told after the trajectories before it (the importer reports it before yielding the next one).
        if (skips.length > 0) {
          if (run.length > 0) yield run;
          run = new AnnotatedLines(lines);
          for (const s of skips.splice(0)) onSkip(s);
        }
        const t = result.trajectory;
        run.add(t, result.stored, result.marks.length, lines.out ? JSON.stringify(t) : undefined);
        // The first trajectory goes out at once: the skipped lines held back until it are then
        // written before the ones after it (as the worker threads' chunks do).
        if (first || run.json.length + run.out.length >= RUN_CHARS) {
          first = false;
          yield run;
          run = new AnnotatedLines(lines);
        }
      }
    } catch (error) {
      // The input turned out malformed: what was annotated before the error is written first.
      if (run.length > 0) yield run;
      for (const s of skips.splice(0)) onSkip(s);
      throw error;
    }
    if (run.length > 0) yield run;
    for (const s of skips.splice(0)) onSkip(s);
  })();
}

export async function annotateInput(io: CliIo, opts: AnnotateInputOptions, judge: SemanticJudge): Promise<void> {
  const path = isAbsolute(opts.input) ? opts.input : resolve(io.cwd, opts.input);
  assertReadableFile(path, opts.input);
  const total = emptyTally();
  for (const name of LABEL_NAMES) total.counts.set(name, 0);
  let skipped = 0;
  // Skipped lines are held back until the first trajectory: a file in another format (every line
  // skipped) then gets one error line instead of a warning per line.
  const warnings = new HeldWarnings(io.stderr, opts.input);
  let out: ReplacingOutput | undefined;
  if (opts.out !== undefined) {
    const outPath = isAbsolute(opts.out) ? opts.out : resolve(io.cwd, opts.out);
    // Checked before anything is annotated: a directory there, or no directory to write in, is one line.
    assertWritableFile(outPath, opts.out);
    // Replaced only when the whole input is annotated: an input that fails midway leaves the file as it was.
    out = openReplacingOutput(outPath, opts.out);
  }
  let done = false;
  try {
    const annotated = annotations(opts, path, judge, (s) => {
      skipped += 1;
      warnings.add(`${opts.input}:${s.line}: ${printable(s.reason)}`);
    });
    for await (const chunk of annotated) {
      if (chunk.tally.trajectories > 0) warnings.release();
      addTally(total, chunk.tally);
      if (opts.json === true) await write(io.stdout, chunk.json);
      if (out !== undefined) await out.write(chunk.out);
    }
    if (total.trajectories === 0 && skipped > 0) {
      throw new CliError(`no trajectories in ${opts.input}: all ${skipped} non-blank lines were skipped (is it in the ${opts.format} format?)`);
    }
    await out?.commit();
    done = true;
  } catch (error) {
    if (ImportInputError.isInstance(error)) throw new CliError(`${opts.input}:${error.line}: ${error.reason}`);
    throw error;
  } finally {
    if (!done) await out?.discard();
  }
  const { trajectories, labelled, marks, counts, outcomes } = total;
  warnings.release();
  // On stderr, so that `--json` output stays one line per trajectory (each line says its own `outcome_source`).
  writeLine(io.stderr, `faultline annotate: outcomes of ${trajectories} trajectories: ${outcomes.inferred} inferred from the final answers, ${outcomes.stated} stated by the log, ${outcomes.unstated} unknown${outcomes.inferred > 0 ? '; export --exclude-inferred-outcomes leaves the inferred ones out' : ''}`);
  if (opts.json === true) return;
  const labels = [...counts.values()].reduce((a, b) => a + b, 0);
  writeLine(io.stdout, `faultline annotate: ${trajectories} trajectories from ${opts.input} (${opts.format}), ${labelled} with labels, ${labels} labels, ${marks} decisions marked by the backtrace, ${skipped} lines skipped`);
  for (const [name, count] of counts) writeLine(io.stdout, `  ${name.padEnd(18)} ${count}`);
  if (opts.out !== undefined) writeLine(io.stdout, `annotated trajectories written to ${opts.out}`);
}
