/**
 * `faultline predictor train`: fits the pre-flight failure predictor (an L2-regularised logistic
 * regression over the features a call has before it runs; src/predict/) on predictor rows, from
 * `faultline export --format predictor` JSONL files or straight from a store (its trajectories,
 * or, when it holds none, the traces of its records), and writes the model with its card. The
 * runtime loads the model with `createRuntime({ predictor: { model: 'model.json' } })`.
 *
 * The card's figures come from trajectories held back from the fit (seeded, split by trajectory).
 * Input that cannot give a model (a missing file, a FIFO, a malformed line, too few rows, one
 * class) is one line and exit 2, and nothing is written; the model and card are written to
 * temporary files renamed into place together, so a failure leaves the previous ones as they were.
 */
import { writeFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { isAbsolute, resolve } from 'node:path';
import { Command } from 'commander';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { Store } from '../../core/store-types.js';
import { DEFAULT_SEED } from '../../core/seeded-random.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { exportPredictor } from '../../dataset/predictor-exporter.js';
import { readInputText } from '../../io/read-input-file.js';
import { fileErrorReason, replaceFiles } from '../../io/replace-files.js';
import type { FeatureRow } from '../../predict/feature-encoding.js';
import { modelCardMarkdown } from '../../predict/model-card.js';
import { trainPredictor, TrainingDataError } from '../../predict/train-predictor.js';
import type { PredictorModel } from '../../predict/predictor-model.js';
import { hasTrajectoryStore } from '../../store/trajectory-row.js';
import { trajectoryFromRecords } from '../../trajectory/from-records.js';
import { CliError } from '../cli-error.js';
import { writeLine, type CliContext } from '../io.js';
import { assertWritableFile } from '../output-paths.js';
import { openReportStore } from '../report-options.js';
import { optionDefaultShown } from '../help-format.js';
import { DEFAULT_SQLITE_PATH } from '../../store/open-store.js';

interface TrainOptions {
  input?: string[];
  db?: string;
  out: string;
  seed: string;
  testFraction: string;
  l2: string;
  json?: boolean;
}

const PAGE = 1000;

function parseNumber(text: string, flag: string, valid: (x: number) => boolean, range: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || !valid(value)) throw new CliError(`${flag} must be ${range}, got ${JSON.stringify(text)}`);
  return value;
}

function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new CliError(`--seed must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** Rows from export JSONL files: one object per line with the columns the trainer needs. */
async function rowsFromFiles(files: readonly string[], cwd: string): Promise<FeatureRow[]> {
  const rows: FeatureRow[] = [];
  for (const file of files) {
    const read = await readInputText(isAbsolute(file) ? file : resolve(cwd, file));
    if (!read.ok) throw new CliError(`cannot read predictor rows ${file}: ${read.reason}`, 2, { cause: read.cause });
    const lines = read.value.split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch {
        throw new CliError(`${file} line ${i + 1}: not JSON (predictor rows are JSONL, as export --format predictor writes them)`);
      }
      const r = row as Record<string, unknown>;
      if (typeof row !== 'object' || row === null || Array.isArray(row) || typeof r['trajectory_id'] !== 'string' || typeof r['tool'] !== 'string' || typeof r['failed'] !== 'boolean') {
        throw new CliError(`${file} line ${i + 1}: not a predictor row (needs string trajectory_id and tool, boolean failed)`);
      }
      rows.push(row as FeatureRow);
    });
  }
  return rows;
}

/** The store's trajectories, or, when it holds none, its records grouped by trace. */
async function trajectoriesOf(store: Store): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  if (hasTrajectoryStore(store)) {
    for (let afterId: string | undefined; ; ) {
      const page = await store.queryTrajectories({ limit: PAGE, ...(afterId === undefined ? {} : { afterId }) });
      out.push(...page);
      if (page.length < PAGE) break;
      afterId = page[page.length - 1]!.trajectory_id;
    }
    if (out.length > 0) return out;
  }
  const traces = new Map<string, ToolExecutionRecord[]>();
  for (let afterId: string | undefined; ; ) {
    const page = await store.query({ limit: PAGE, order: 'asc', ...(afterId === undefined ? {} : { afterId }) });
    for (const record of page) {
      const trace = traces.get(record.trace_id);
      if (trace === undefined) traces.set(record.trace_id, [record]);
      else trace.push(record);
    }
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.execution_id;
  }
  return [...traces.values()].map((records) => trajectoryFromRecords(records));
}

function summary(model: PredictorModel, out: string, cardFile: string): string {
  const { card } = model;
  const t = card.test;
  return (
    `faultline predictor train: ${card.rows.used} calls (${card.rows.test} from ${card.trajectories.test} held-back trajectories): ` +
    `precision ${t.precision.toFixed(2)}, recall ${t.recall.toFixed(2)}, F1 ${t.f1.toFixed(2)}, AUC ${t.auc.toFixed(2)} ` +
    `(base rate ${card.base_rate.test.toFixed(2)}) at threshold ${card.threshold.toFixed(2)}; model in ${out}, card in ${cardFile}`
  );
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // Left as it is: the failure being reported is the one that matters.
  }
}

function trainCommand(ctx: CliContext): Command {
  const { io } = ctx;
  return new Command('train')
    .description('Fit the pre-flight failure predictor on predictor rows and write the model and its card')
    .option('--input <files...>', 'predictor rows as JSONL (faultline export --format predictor); without it, --db is read')
    .addOption(optionDefaultShown('--db <store>', 'store to read when no --input: a SQLite path or a postgres:// URL; its trajectories, else its records by trace', DEFAULT_SQLITE_PATH))
    .requiredOption('--out <file>', 'model file (JSON); the card goes to <file>.card.md')
    .option('--seed <n>', 'seed of the held-back split', String(DEFAULT_SEED))
    .option('--test-fraction <fraction>', 'share of trajectories held back to score the model, in (0, 1)', '0.2')
    .option('--l2 <lambda>', 'L2 penalty on the weights (> 0)', '0.01')
    .option('--json', 'print the model card as JSON')
    .action(async (opts: TrainOptions) => {
      if (opts.input !== undefined && opts.db !== undefined) throw new CliError('give --input or --db, not both');
      const seed = parseSeed(opts.seed);
      const testFraction = parseNumber(opts.testFraction, '--test-fraction', (x) => x > 0 && x < 1, 'a number in (0, 1)');
      const l2 = parseNumber(opts.l2, '--l2', (x) => x > 0, 'a positive number');
      const out = isAbsolute(opts.out) ? opts.out : resolve(io.cwd, opts.out);
      const cardShown = `${opts.out}.card.md`;
      assertWritableFile(out, opts.out);
      assertWritableFile(`${out}.card.md`, cardShown);

      let rows: FeatureRow[];
      if (opts.input !== undefined) rows = await rowsFromFiles(opts.input, io.cwd);
      else {
        const store = await openReportStore(opts.db, io);
        try {
          rows = (await trajectoriesOf(store)).flatMap((t) => exportPredictor(t).examples) as unknown as FeatureRow[];
        } finally {
          await store.close();
        }
      }
      let model: PredictorModel;
      try {
        model = trainPredictor(rows, { seed, testFraction, l2 });
      } catch (error) {
        if (error instanceof TrainingDataError) throw new CliError(`cannot train a predictor: ${error.message}`, 2, { cause: error });
        throw error;
      }

      const suffix = `.partial-${randomUUID()}`;
      const targets = [out, `${out}.card.md`];
      try {
        writeFileSync(out + suffix, `${JSON.stringify(model, null, 2)}\n`);
        writeFileSync(`${out}.card.md${suffix}`, modelCardMarkdown(model.card, opts.out));
        replaceFiles(targets.map((t) => [t + suffix, t] as const));
      } catch (error) {
        for (const t of targets) removeQuietly(t + suffix);
        if (CliError.isInstance(error)) throw error;
        throw new CliError(`cannot write ${opts.out}: ${fileErrorReason(error)}`, 2, { cause: error });
      }
      writeLine(io.stdout, opts.json === true ? JSON.stringify(model.card, null, 2) : summary(model, opts.out, cardShown));
    });
}

export function predictorCommand(ctx: CliContext): Command {
  const predictor = new Command('predictor').description('Pre-flight failure prediction: train a model the runtime can score calls with before they run');
  const train = trainCommand(ctx);
  // run-cli configures the commands it adds; a subcommand has to be told the same itself.
  train.exitOverride();
  train.configureOutput({ writeOut: (s) => ctx.io.stdout.write(s), writeErr: (s) => ctx.io.stderr.write(s), outputError: () => undefined });
  predictor.addCommand(train);
  return predictor;
}
