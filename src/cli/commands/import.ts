/**
 * `faultline import`: reads trajectories from a file (OpenAI or Anthropic chat logs, tau-bench
 * results, faultline's step logs, OTLP GenAI spans) into the store, streaming: they are written in
 * batches of 1000 as the file is read, so memory does not grow with the file. Re-importing a file
 * stores nothing new: trajectories are keyed by source and source id. `--strict` (and a tau-bench
 * file, which is one JSON document) is validated in full before the first write, so a bad file
 * writes nothing (see `importFile`).
 */
import { isAbsolute, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { openStore } from '../../store/open-store.js';
import { IMPORT_FORMATS, type ImportFormat } from '../../trajectory/importers/import-types.js';
import { importFile, ImportInputError, type ImportSummary } from '../../trajectory/import-file.js';
import { checkInputFile } from '../../io/read-input-file.js';
import { fileErrorReason } from '../../io/replace-files.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import type { Store, TrajectoryStore } from '../../core/store-types.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import { CliError } from '../cli-error.js';
import { HeldWarnings } from '../held-warnings.js';
import { printable, writeLine, type CliContext } from '../io.js';
import { assertSqliteStoreCreatable } from '../report-options.js';
import { storeOption } from '../store-option.js';

interface ImportCommandOptions {
  format: ImportFormat;
  db?: string;
  strict?: boolean;
  json?: boolean;
}

/** The `--json` output. */
export interface ImportReport extends ImportSummary {
  format: ImportFormat;
  file: string;
  /** Trajectories stored by this run. */
  inserted: number;
  /** Trajectories that were already in the store (a re-import). */
  already_stored: number;
  /** The first 1000 skipped lines (`skipped_lines` counts them all). */
  skipped: { line: number; reason: string }[];
}

/** Exit 2 with one line unless `path` is a readable regular file (`shown` is how the user wrote it). */
export function assertReadableFile(path: string, shown: string): void {
  const checked = checkInputFile(path);
  if (!checked.ok) throw new CliError(`cannot read ${shown}: ${checked.reason}`, 2, { cause: checked.cause });
}

export function importCommand(ctx: CliContext): Command {
  return new Command('import')
    .description('Import agent trajectories from a file into the store (openai, anthropic, tau-bench, step-log, otel)')
    .argument('<file>', 'the file to import (JSONL; tau-bench: its JSON array of results)')
    .addOption(new Option('--format <format>', 'input format').choices(IMPORT_FORMATS).makeOptionMandatory())
    .addOption(storeOption('store to write'))
    .option('--strict', 'fail on the first malformed line (exit 2, nothing written) instead of skipping it')
    .option('--json', 'print the summary as JSON')
    .action(async (file: string, opts: ImportCommandOptions) => {
      const { io } = ctx;
      const path = isAbsolute(file) ? file : resolve(io.cwd, file);
      assertReadableFile(path, file);
      // Opened at the first batch: a file that fails validation never creates or touches the store.
      let store: (Store & TrajectoryStore) | undefined;
      // Errors of the store (not of the file) pass through unchanged.
      let storeError: unknown;
      const onStore = async <T>(work: (store: Store & TrajectoryStore) => Promise<T>): Promise<T> => {
        try {
          if (store === undefined) {
            assertSqliteStoreCreatable(opts.db, io.cwd);
            const opened = await openStore(opts.db, { cwd: io.cwd });
            if (!hasTrajectoryStore(opened)) {
              await opened.close();
              throw new CliError(`the ${opened.kind} store cannot hold trajectories`);
            }
            store = opened;
          }
          return await work(store);
        } catch (error) {
          storeError = error;
          throw error;
        }
      };
      let inserted = 0;
      let result;
      // Skipped lines are held back until the first trajectory: a file in another format (every
      // line skipped) then gets one error line instead of a warning per line.
      const warnings = new HeldWarnings(io.stderr, file);
      try {
        result = await importFile(opts.format, path, {
          ...(opts.strict === true ? { strict: true } : {}),
          onSkip: (s) => warnings.add(`${file}:${s.line}: ${printable(s.reason)}`),
          write: async (batch: readonly Trajectory[]) => {
            warnings.release();
            inserted += await onStore((s) => s.insertTrajectories(batch));
          },
        });
        if (result.summary.trajectories === 0 && result.summary.skipped_lines > 0) {
          const first = result.skipped[0];
          throw new CliError(
            `no trajectories in ${file}: all ${result.summary.skipped_lines} non-blank lines were skipped${first === undefined ? '' : ` (line ${first.line}: ${printable(first.reason)})`}; is it in the ${opts.format} format? Nothing imported`,
          );
        }
        warnings.release();
        // An import of nothing still creates the store, as any write would.
        await onStore(async () => undefined);
      } catch (error) {
        if (error === storeError || CliError.isInstance(error)) throw error;
        if (ImportInputError.isInstance(error)) {
          throw new CliError(`${file}:${error.line}: ${error.reason}${opts.strict === true ? ' (--strict: nothing imported)' : ' (nothing imported)'}`);
        }
        throw new CliError(`cannot read ${file}: ${fileErrorReason(error)}`, 2, { cause: error });
      } finally {
        await store?.close();
      }

      const summary = result.summary;
      const report: ImportReport = {
        format: opts.format,
        file,
        ...summary,
        inserted,
        already_stored: summary.trajectories - inserted,
        skipped: result.skipped,
      };
      if (opts.json === true) {
        writeLine(io.stdout, JSON.stringify(report, null, 2));
        return;
      }
      writeLine(
        io.stdout,
        `faultline import: ${report.trajectories} trajectories from ${file} (${report.format}): ${inserted} new, ${report.already_stored} already stored`,
      );
      writeLine(io.stdout, `steps: ${report.steps}, failures: ${report.failures}, skipped lines: ${report.skipped_lines}`);
      const outcomes = Object.entries(report.outcomes).map(([k, v]) => `${k} ${v}`);
      if (outcomes.length > 0) writeLine(io.stdout, `outcomes: ${outcomes.join(', ')}`);
      const categories = Object.entries(report.failures_by_category).sort((a, b) => b[1] - a[1]);
      if (categories.length > 0) writeLine(io.stdout, `failures by category: ${categories.map(([k, v]) => `${k} ${v}`).join(', ')}`);
      const types = Object.entries(report.failures_by_type).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
      if (types.length > 0) writeLine(io.stdout, `failures by type: ${types.map(([k, v]) => `${k} ${v}`).join(', ')}`);
    });
}
