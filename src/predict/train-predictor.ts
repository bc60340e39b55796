/**
 * Fits the failure predictor on exported predictor rows: a seeded split by trajectory (a
 * trajectory's calls share its arguments and history, so splitting by row would score the model
 * on near-copies of its training rows), the encoding and weights from the training side, the
 * threshold with the best training F1, and the card's measures from the held-back side.
 */
import { seededRandom } from '../core/seeded-random.js';
import { atThreshold, bestF1Threshold, brierScore, logLoss, rocAuc } from './classifier-metrics.js';
import { featureName, fitEncoding, RowEncoder, type FeatureRow } from './feature-encoding.js';
import { fitLogistic, predictProbability } from './logistic-regression.js';
import type { ModelCard } from './model-card.js';
import { PREDICTOR_MODEL_KIND, type PredictorModel } from './predictor-model.js';

export interface TrainOptions {
  seed: number;
  /** Share of trajectories held back for the card. Default 0.2. */
  testFraction?: number;
  /** Default 0.01. */
  l2?: number;
  /** Default 2. */
  minCount?: number;
}

/** Rows a model cannot be fitted or judged on (too few, one class, one trajectory). */
export class TrainingDataError extends Error {
  override readonly name = 'TrainingDataError';
}

/** Fewer rows than this give a card whose figures mean nothing. */
export const MIN_TRAINING_ROWS = 20;

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** The model's own refusals: their outcome is the model's verdict, so they would teach it itself. */
const isRefusal = (row: FeatureRow): boolean => row['failure_kind'] === 'predicted_failure';

/** The seeded split by trajectory: the first `fraction` of the shuffled trajectory ids are held back. */
export function splitByTrajectory(rows: readonly FeatureRow[], seed: number, fraction: number): { train: FeatureRow[]; test: FeatureRow[]; trainIds: number; testIds: number } {
  const ids = [...new Set(rows.map((r) => String(r['trajectory_id'])))].sort();
  if (ids.length < 2) throw new TrainingDataError(`all ${rows.length} rows come from one trajectory: a held-back split needs at least 2`);
  const random = seededRandom(seed);
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const testCount = Math.min(ids.length - 1, Math.max(1, Math.round(ids.length * fraction)));
  const testIds = new Set(ids.slice(0, testCount));
  const train: FeatureRow[] = [];
  const test: FeatureRow[] = [];
  for (const row of rows) (testIds.has(String(row['trajectory_id'])) ? test : train).push(row);
  return { train, test, trainIds: ids.length - testCount, testIds: testCount };
}

const labelOf = (row: FeatureRow): number => (row['failed'] === true ? 1 : 0);

function bothClasses(labels: readonly number[], side: string): void {
  const failed = labels.filter((y) => y === 1).length;
  if (failed === 0 || failed === labels.length) {
    throw new TrainingDataError(`the ${side} rows are all ${failed === 0 ? 'successes' : 'failures'} (${labels.length} rows): a predictor needs both classes on each side (more trajectories, or another --seed or --test-fraction)`);
  }
}

/** Fits a model on `rows` (predictor export rows: `trajectory_id`, `failed`, the feature columns). */
export function trainPredictor(rows: readonly FeatureRow[], options: TrainOptions): PredictorModel {
  const testFraction = options.testFraction ?? 0.2;
  const l2 = options.l2 ?? 0.01;
  const minCount = options.minCount ?? 2;
  const used = rows.filter((r) => !isRefusal(r));
  if (used.length < MIN_TRAINING_ROWS) throw new TrainingDataError(`${used.length} usable rows: a predictor needs at least ${MIN_TRAINING_ROWS}`);
  bothClasses(used.map(labelOf), 'input');
  const split = splitByTrajectory(used, options.seed, testFraction);
  const trainLabels = split.train.map(labelOf);
  const testLabels = split.test.map(labelOf);
  bothClasses(trainLabels, 'training');
  bothClasses(testLabels, 'held-back');

  const features = fitEncoding(split.train, minCount);
  const encoder = new RowEncoder(features);
  const fit = fitLogistic(split.train.map((r) => encoder.encode(r)), trainLabels, features.length, { l2 });
  // Scored with the weights as the file stores them, so the card describes the model that is served.
  const weighted = features.map((f, i) => ({ ...f, weight: round(fit.weights[i]!) }));
  const weights = weighted.map((f) => f.weight);
  const bias = round(fit.bias);
  const score = (side: readonly FeatureRow[]): number[] => side.map((r) => predictProbability(encoder.encode(r), weights, bias));
  const trainScores = score(split.train);
  const testScores = score(split.test);
  const threshold = bestF1Threshold(trainScores, trainLabels);

  const rate = (labels: readonly number[]): number => labels.reduce((a, b) => a + b, 0) / labels.length;
  const trainRate = rate(trainLabels);
  const testRate = rate(testLabels);
  const constant = testLabels.map(() => trainRate);
  const card: ModelCard = {
    model: 'L2-regularised logistic regression',
    seed: options.seed,
    l2,
    test_fraction: testFraction,
    min_count: minCount,
    iterations: fit.iterations,
    converged: fit.converged,
    rows: { read: rows.length, used: used.length, train: split.train.length, test: split.test.length, skipped_refusals: rows.length - used.length },
    trajectories: { train: split.trainIds, test: split.testIds },
    failed: { train: trainLabels.filter((y) => y === 1).length, test: testLabels.filter((y) => y === 1).length },
    base_rate: { train: round(trainRate), test: round(testRate) },
    threshold: round(threshold),
    threshold_basis: 'best F1 on the training rows',
    test: { ...atThreshold(testScores, testLabels, threshold), auc: rocAuc(testScores, testLabels), brier: brierScore(testScores, testLabels), log_loss: logLoss(testScores, testLabels) },
    baseline: { brier: brierScore(constant, testLabels), log_loss: logLoss(constant, testLabels), f1_flag_every_call: round((2 * testRate) / (1 + testRate)) },
    feature_count: features.length,
    top_features: [...weighted]
      .sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight) || featureName(a).localeCompare(featureName(b), 'en'))
      .slice(0, 10)
      .map((f) => ({ feature: featureName(f), weight: f.weight })),
  };
  return { kind: PREDICTOR_MODEL_KIND, version: 1, bias, threshold: round(threshold), features: weighted, card };
}
