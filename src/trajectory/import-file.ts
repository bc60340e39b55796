/**
 * Imports one file in a given format: streams it through the importer and hands the trajectories
 * on in bounded batches (to a store, for the CLI's `import`), keeping only running counts, so
 * memory does not grow with the file. `annotate --input` and the perf scripts read files through
 * `readTrajectories` here too.
 *
 * Nothing partial on bad input: when the import must be all or nothing (`strict`, where a
 * malformed line anywhere fails it, and tau-bench, a single JSON document whose end can turn out
 * truncated), a first pass reads and converts the whole file writing nothing, and only a file
 * that passes is read again to be written. The store has no transaction spanning batches, so
 * reading twice is what makes the guarantee hold on every store; it doubles the read time of
 * those imports only.
 */
import { notify, warnListenerError } from '../core/notify.js';
import { createReadStream } from 'node:fs';
import { FaultlineError } from '../core/errors.js';
import { defaultRedactor, type Redactor } from '../record/redact.js';
import type { FailureCategory } from '../core/taxonomy.js';
import { isFailedStep } from './assemble.js';
import { IMPORTERS } from './importers/index.js';
import type { ImportFormat, ImportOptions } from './importers/import-types.js';
import { JsonArrayShapeError } from './importers/json-array-stream.js';
import { redactTrajectory } from './redact-trajectory.js';
import type { FinalOutcome, Trajectory } from '../core/trajectory-types.js';

const onSkipFailed = warnListenerError('onSkip');

const IMPORT_INPUT_MARKER = Symbol.for('faultline.error.ImportInputError');

/** The input cannot be imported: a malformed line under `strict`, or a file that is not in the format at all. */
export class ImportInputError extends FaultlineError {
  readonly [IMPORT_INPUT_MARKER] = true;
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
  }
  static override isInstance(value: unknown): value is ImportInputError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[IMPORT_INPUT_MARKER] === true;
  }
}

export interface SkippedLine {
  line: number;
  reason: string;
}

export interface ReadTrajectoriesOptions extends ImportOptions {
  /** Fail on the first malformed line instead of skipping it. */
  strict?: boolean;
  /** Told about each skipped line as it is found. */
  onSkip?: (skipped: SkippedLine) => void;
  /**
   * How the trajectories' arguments, results and messages are redacted before they are handed on
   * (see `redactTrajectory`): default the built-in redactor; false hands them on as read.
   */
  redactor?: Redactor | false;
}

/**
 * The trajectories of `path` in `format`, one at a time as the importer yields them (the file is
 * read only as fast as they are consumed), redacted (`options.redactor`). Malformed lines go to `onSkip`, or throw under `strict`.
 * @throws ImportInputError for a malformed line under `strict`, or an input not in the format.
 */
export async function* readTrajectories(format: ImportFormat, path: string, options: ReadTrajectoriesOptions = {}): AsyncGenerator<Trajectory> {
  const input = createReadStream(path);
  // Sources without times get one import time for the whole file, so that what orders
  // trajectories by created_at (e.g. rare-failure first occurrences) does not depend on how fast
  // the batches happened to be written.
  const importedAt = Date.now();
  const importerOptions = options.now === undefined ? { ...options, now: () => importedAt } : options;
  const redactor = options.redactor ?? defaultRedactor;
  try {
    for await (const item of IMPORTERS[format](input, importerOptions)) {
      if (item.kind === 'trajectory') {
        yield redactor === false ? item.trajectory : redactTrajectory(item.trajectory, redactor);
        continue;
      }
      if (options.strict === true) throw new ImportInputError(path, item.line, item.reason);
      notify(options.onSkip, { line: item.line, reason: item.reason }, onSkipFailed);
    }
  } catch (error) {
    if (error instanceof JsonArrayShapeError) throw new ImportInputError(path, error.line, error.message);
    throw error;
  } finally {
    input.destroy();
  }
}

export const DEFAULT_IMPORT_BATCH = 1000;
/** How many skipped lines the result lists; `summary.skipped_lines` counts them all. */
export const MAX_SKIPPED_LISTED = 1000;

/** Formats whose file is one JSON document: a truncated end can only be found by reading it all. */
const WHOLE_DOCUMENT_FORMATS: ReadonlySet<ImportFormat> = new Set(['tau-bench']);

export interface ImportFileOptions extends ReadTrajectoriesOptions {
  /**
   * Where the trajectories go: called with batches of at most `batchSize`, in file order, and
   * the file is not read further until the returned promise settles. Without it the trajectories
   * are only counted.
   */
  write?: (batch: readonly Trajectory[]) => Promise<void>;
  /** Default {@link DEFAULT_IMPORT_BATCH}. */
  batchSize?: number;
}

export interface ImportFileResult {
  summary: ImportSummary;
  /** The first {@link MAX_SKIPPED_LISTED} skipped lines. */
  skipped: SkippedLine[];
  /** Whether a validating pass read the file before the writing one (see the module comment). */
  validatedFirst: boolean;
}

/**
 * Reads `path` in `format` and passes its trajectories to `options.write` in bounded batches.
 * Under `strict`, and for whole-document formats, the file is validated in full before the first
 * write, so an error means nothing was written.
 * @throws ImportInputError for a malformed line under `strict`, or an input not in the format.
 */
export async function importFile(format: ImportFormat, path: string, options: ImportFileOptions = {}): Promise<ImportFileResult> {
  const { write, batchSize = DEFAULT_IMPORT_BATCH, onSkip, ...readOptions } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const validatedFirst = write !== undefined && (options.strict === true || WHOLE_DOCUMENT_FORMATS.has(format));
  if (validatedFirst) {
    // Skipped lines are reported by the writing pass, once.
    for await (const trajectory of readTrajectories(format, path, readOptions)) void trajectory;
  }
  const tally = new ImportTally();
  const skipped: SkippedLine[] = [];
  let batch: Trajectory[] = [];
  const reading = readTrajectories(format, path, {
    ...readOptions,
    onSkip: (entry) => {
      tally.skippedLines += 1;
      if (skipped.length < MAX_SKIPPED_LISTED) skipped.push(entry);
      onSkip?.(entry);
    },
  });
  for await (const trajectory of reading) {
    tally.add(trajectory);
    if (write === undefined) continue;
    batch.push(trajectory);
    if (batch.length >= batchSize) {
      await write(batch);
      batch = [];
    }
  }
  if (write !== undefined && batch.length > 0) await write(batch);
  return { summary: tally.summary(), skipped, validatedFirst };
}

/** What an import produced, as the CLI reports it. */
export interface ImportSummary {
  trajectories: number;
  steps: number;
  failures: number;
  failures_by_category: Partial<Record<FailureCategory, number>>;
  /** `category/type`, e.g. `business/not_found`. */
  failures_by_type: Record<string, number>;
  outcomes: Partial<Record<FinalOutcome, number>>;
  skipped_lines: number;
}

/** Running counts over trajectories as they stream past (nothing of them is kept). */
export class ImportTally {
  skippedLines = 0;
  private readonly counts: Omit<ImportSummary, 'skipped_lines'> = {
    trajectories: 0,
    steps: 0,
    failures: 0,
    failures_by_category: {},
    failures_by_type: {},
    outcomes: {},
  };

  add(t: Trajectory): void {
    const c = this.counts;
    c.trajectories += 1;
    c.steps += t.steps.length;
    c.outcomes[t.final_outcome] = (c.outcomes[t.final_outcome] ?? 0) + 1;
    for (const step of t.steps) {
      if (!isFailedStep(step)) continue;
      c.failures += 1;
      const category = step.failure_category;
      if (category !== null) c.failures_by_category[category] = (c.failures_by_category[category] ?? 0) + 1;
      const key = `${category ?? 'unknown'}/${step.failure_kind ?? 'unknown'}`;
      c.failures_by_type[key] = (c.failures_by_type[key] ?? 0) + 1;
    }
  }

  summary(): ImportSummary {
    return { ...structuredClone(this.counts), skipped_lines: this.skippedLines };
  }
}

/** The summary of trajectories already in hand. */
export function summarizeImport(trajectories: Iterable<Trajectory>, skippedLines = 0): ImportSummary {
  const tally = new ImportTally();
  for (const t of trajectories) tally.add(t);
  tally.skippedLines = skippedLines;
  return tally.summary();
}
