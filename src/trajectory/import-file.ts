/**
 * Imports one file in a given format: streams it through the importer, collects the
 * trajectories and the skipped lines, and summarizes them. The CLI's `import` and the perf
 * script share it.
 */
import { createReadStream } from 'node:fs';
import { FaultlineError } from '../errors.js';
import type { FailureCategory } from '../taxonomy.js';
import { isFailedStep } from './assemble.js';
import { IMPORTERS } from './importers/index.js';
import type { ImportFormat, ImportOptions } from './importers/import-types.js';
import { JsonArrayShapeError } from './importers/json-array-stream.js';
import type { FinalOutcome, Trajectory } from './types.js';

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

export interface ImportFileOptions extends ImportOptions {
  /** Fail on the first malformed line instead of skipping it. */
  strict?: boolean;
  /** Told about each skipped line as it is found. */
  onSkip?: (skipped: SkippedLine) => void;
}

export interface ImportFileResult {
  trajectories: Trajectory[];
  skipped: SkippedLine[];
}

/**
 * Reads `path` in `format`. Trajectories are collected rather than written as they come so that
 * a file that turns out to be unusable (or a malformed line under `strict`) leaves the store
 * untouched; memory is therefore one file's trajectories, never its raw text.
 * @throws ImportInputError for a malformed line under `strict`, or an input not in the format.
 */
export async function importFile(format: ImportFormat, path: string, options: ImportFileOptions = {}): Promise<ImportFileResult> {
  const trajectories: Trajectory[] = [];
  const skipped: SkippedLine[] = [];
  const input = createReadStream(path);
  try {
    for await (const item of IMPORTERS[format](input, options)) {
      if (item.kind === 'trajectory') {
        trajectories.push(item.trajectory);
        continue;
      }
      if (options.strict === true) throw new ImportInputError(path, item.line, item.reason);
      const entry = { line: item.line, reason: item.reason };
      skipped.push(entry);
      options.onSkip?.(entry);
    }
  } catch (error) {
    if (error instanceof JsonArrayShapeError) throw new ImportInputError(path, error.line, error.message);
    throw error;
  } finally {
    input.destroy();
  }
  return { trajectories, skipped };
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

export function summarizeImport(result: ImportFileResult): ImportSummary {
  const summary: ImportSummary = {
    trajectories: result.trajectories.length,
    steps: 0,
    failures: 0,
    failures_by_category: {},
    failures_by_type: {},
    outcomes: {},
    skipped_lines: result.skipped.length,
  };
  for (const t of result.trajectories) {
    summary.steps += t.steps.length;
    summary.outcomes[t.final_outcome] = (summary.outcomes[t.final_outcome] ?? 0) + 1;
    for (const step of t.steps) {
      if (!isFailedStep(step)) continue;
      summary.failures += 1;
      const category = step.failure_category;
      if (category !== null) summary.failures_by_category[category] = (summary.failures_by_category[category] ?? 0) + 1;
      const key = `${category ?? 'unknown'}/${step.failure_kind ?? 'unknown'}`;
      summary.failures_by_type[key] = (summary.failures_by_type[key] ?? 0) + 1;
    }
  }
  return summary;
}
