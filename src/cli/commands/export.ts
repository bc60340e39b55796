/**
 * `faultline export`: streams the stored trajectories, page by page, through one dataset
 * exporter (trajectories, sft, dpo-openai, dpo-trl, kto, few-shot, predictor, grpo) into JSONL
 * files with a dataset card. `grpo` writes one row per FISSION group (src/dataset/grpo-exporter.ts).
 *
 * Files: `<out>` holds the training split, `<out>.val.jsonl` the validation split (always
 * written, empty when nothing fell there), and `<out>.card.json` / `<out>.card.md` the card.
 * `--format predictor --out x.csv` writes CSV (`x.csv.val.csv`), `--format few-shot --out x.md`
 * Markdown (`x.md.val.md`); see src/dataset/output-files.ts.
 * The split is by trajectory (see src/dataset/split.ts). Everything is written to temporary
 * files renamed into place at the end, all or nothing (see replaceFiles), so a failed export
 * leaves nothing partial behind: a write that fails (a full disk, an I/O error) is one line and
 * exit 2, its temporary files are removed, and the previous files stay as they were.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { DEFAULT_SEED } from '../../core/seeded-random.js';
import { renderDatasetCard, type DatasetCard } from '../../dataset/dataset-card.js';
import { emptyExportAdvice, EMPTY_EXPORT_EXIT_CODE } from '../../dataset/empty-export.js';
import { exportDataset } from '../../dataset/export-dataset.js';
import { outputEncodingFor, PredictorColumns, transcodeJsonl } from '../../dataset/output-files.js';
import { EXPORT_FORMATS, type ExportFormat } from '../../dataset/exporter.js';
import type { Split } from '../../dataset/split.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import { TRAJECTORY_SOURCES, type Trajectory, type TrajectorySource } from '../../core/trajectory-types.js';
import type { TrajectoryStore } from '../../core/store-types.js';
import { CliError } from '../cli-error.js';
import { fileErrorReason, replaceFiles } from '../../io/replace-files.js';
import { writeLine, type CliContext } from '../io.js';
import { assertWritableFile, openOutputStream, type OutputStream } from '../output-paths.js';
import { openReportStore } from '../report-options.js';
import { optionDefaultShown } from '../help-format.js';
import { storeOption } from '../store-option.js';

interface ExportCommandOptions {
  format: ExportFormat;
  out: string;
  db?: string;
  source?: TrajectorySource;
  valFraction: string;
  seed: string;
  top?: string;
  json?: boolean;
  excludeInferredOutcomes?: boolean;
}

const PAGE = 500;

function parseValFraction(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value >= 1) throw new CliError(`--val-fraction must be a number in [0, 1), got ${JSON.stringify(text)}`);
  return value;
}

function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new CliError(`--seed must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

function parseTop(text: string | undefined, format: ExportFormat): number | undefined {
  if (text === undefined) return undefined;
  if (format !== 'few-shot') throw new CliError('--top only applies to --format few-shot');
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) throw new CliError(`--top must be a positive integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

async function* storedTrajectories(store: TrajectoryStore, source: TrajectorySource | undefined): AsyncGenerator<Trajectory> {
  for (let afterId: string | undefined; ; ) {
    const page = await store.queryTrajectories({ limit: PAGE, ...(source === undefined ? {} : { source }), ...(afterId === undefined ? {} : { afterId }) });
    yield* page;
    if (page.length < PAGE) return;
    afterId = page[page.length - 1]!.trajectory_id;
  }
}

/**
 * Removes a temporary file if it is there. Quietly: it runs while a failure is being reported,
 * which a second one must not replace; and what is not a file there (a directory) is not ours.
 */
function removeTemporary(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // Left as it is.
  }
}

/**
 * Runs one step of writing an output file, a failure of which (the disk filled, the directory
 * went away) is one line naming the file as the user gave it, not an errno's message and exit 1.
 */
async function writing<T>(shown: string, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (CliError.isInstance(error)) throw error;
    throw new CliError(`cannot write ${shown}: ${fileErrorReason(error)}`, 2, { cause: error });
  }
}

export function exportCommand(ctx: CliContext): Command {
  return new Command('export')
    .description('Export stored trajectories as training data: trajectories, sft, dpo-openai, dpo-trl, kto, few-shot, predictor or grpo (FISSION groups from bench --fission), with a dataset card')
    .addOption(new Option('--format <format>', 'dataset format').choices(EXPORT_FORMATS).makeOptionMandatory())
    .requiredOption('--out <file>', 'training split file (JSONL; .csv for predictor, .md for few-shot); also writes <file>.val.<ext>, <file>.card.json and <file>.card.md')
    .addOption(storeOption('store to read'))
    .addOption(new Option('--source <source>', 'only trajectories from this source').choices(TRAJECTORY_SOURCES))
    .option('--val-fraction <fraction>', 'share of trajectories for the validation split, in [0, 1)', '0.1')
    .option('--seed <n>', 'seed of the split (a non-negative integer)', String(DEFAULT_SEED))
    .addOption(optionDefaultShown('--top <n>', 'few-shot: failures per tool', '3'))
    .option('--exclude-inferred-outcomes', "leave out trajectories whose outcome a judge inferred from the conversation (the log stated none); the card counts them")
    .option('--json', 'print the dataset card as JSON')
    .addHelpText(
      'after',
      `\nExit codes: 0 examples written; ${EMPTY_EXPORT_EXIT_CODE} no example written (the files and the card are still written; stderr says why and what to do); 2 bad usage, input or store.`,
    )
    .action(async (opts: ExportCommandOptions) => {
      const { io } = ctx;
      const valFraction = parseValFraction(opts.valFraction);
      const seed = parseSeed(opts.seed);
      const fewShotTop = parseTop(opts.top, opts.format);
      const chosen = outputEncodingFor(opts.format, opts.out);
      if ('error' in chosen) throw new CliError(chosen.error);
      const { encoding } = chosen;
      const out = isAbsolute(opts.out) ? opts.out : resolve(io.cwd, opts.out);
      const files = { train: opts.out, validation: `${opts.out}.val.${encoding}` };
      const targets = { train: out, validation: `${out}.val.${encoding}`, cardJson: `${out}.card.json`, cardMd: `${out}.card.md` };
      // All four are checked before the store is read: a directory at the card's path would fail only at its rename, after the other files had been replaced.
      const shown = { ...files, cardJson: `${opts.out}.card.json`, cardMd: `${opts.out}.card.md` };
      for (const key of Object.keys(targets) as (keyof typeof targets)[]) assertWritableFile(targets[key], shown[key]);
      const suffix = `.partial-${randomUUID()}`;
      const temp = (path: string): string => path + suffix;
      // CSV and Markdown are transcoded from JSON lines written beside them first.
      const rowsFile = (split: Split): string => (encoding === 'jsonl' ? temp(targets[split]) : `${temp(targets[split])}.jsonl`);
      const columns = encoding === 'csv' ? new PredictorColumns() : undefined;

      const store = await openReportStore(opts.db, io);
      let card: DatasetCard;
      // openOutputStream hears the streams' errors: unheard, a write that fails (ENOSPC, EIO)
      // would crash the process with an 'error' event instead of failing the export.
      const streams: Record<Split, OutputStream> | undefined = hasTrajectoryStore(store)
        ? { train: openOutputStream(rowsFile('train'), files.train), validation: openOutputStream(rowsFile('validation'), files.validation) }
        : undefined;
      try {
        if (!hasTrajectoryStore(store) || streams === undefined) throw new CliError(`the ${store.kind} store cannot hold trajectories`);
        card = await exportDataset({
          format: opts.format,
          trajectories: storedTrajectories(store, opts.source),
          write: (split, line) => {
            columns?.add(line);
            return streams[split].write(`${line}\n`);
          },
          seed,
          valFraction,
          files,
          ...(fewShotTop === undefined ? {} : { fewShotTop }),
          ...(opts.excludeInferredOutcomes === true ? { inferredOutcomes: 'exclude' as const } : {}),
        });
        await Promise.all([streams.train.close(), streams.validation.close()]);
        if (encoding !== 'jsonl') {
          for (const split of ['train', 'validation'] as const) await writing(files[split], () => transcodeJsonl(encoding, rowsFile(split), temp(targets[split]), columns?.header()));
        }
        const json = `${JSON.stringify(card, null, 2)}\n`;
        await writing(shown.cardJson, () => writeFileSync(temp(targets.cardJson), json));
        await writing(shown.cardMd, () => writeFileSync(temp(targets.cardMd), renderDatasetCard(card)));
        replaceFiles(Object.values(targets).map((target) => [temp(target), target] as const));
      } catch (error) {
        // Closed before they are removed; the error that stopped the export is the one reported.
        if (streams !== undefined) await Promise.all([streams.train.close().catch(() => undefined), streams.validation.close().catch(() => undefined)]);
        for (const target of Object.values(targets)) removeTemporary(temp(target));
        throw error;
      } finally {
        if (encoding !== 'jsonl') for (const split of ['train', 'validation'] as const) removeTemporary(rowsFile(split));
        await store.close();
      }

      const empty = card.splits.train.examples + card.splits.validation.examples === 0;
      if (empty) {
        // Nothing to train on is not success: stderr says why, and the exit code lets a pipeline stop.
        ctx.exitCode = EMPTY_EXPORT_EXIT_CODE;
        writeLine(io.stderr, `faultline export: no ${card.format} examples written:`);
        for (const line of emptyExportAdvice(card, opts.source)) writeLine(io.stderr, `  ${line}`);
      }
      if (opts.json === true) {
        writeLine(io.stdout, JSON.stringify(card, null, 2));
        return;
      }
      writeLine(
        io.stdout,
        `faultline export: ${card.format}, ${card.trajectories_exported} of ${card.trajectories_read} trajectories: ${card.splits.train.examples} train examples in ${files.train}, ${card.splits.validation.examples} validation examples in ${files.validation}`,
      );
      const skipped = Object.entries(card.skipped);
      if (skipped.length > 0) writeLine(io.stdout, `skipped: ${skipped.map(([k, v]) => `${k} ${v}`).join(', ')}`);
      writeLine(io.stdout, `card: ${opts.out}.card.json, ${opts.out}.card.md`);
    });
}
