/**
 * The failure predictor's model file: the encoding, one weight per feature, the bias, the
 * threshold and the card of how it did on rows it never saw. Read by the runtime to score a call
 * before it runs (`loadPredictorModel`), written by `faultline predictor train`.
 */
import { ConfigError } from '../core/errors.js';
import type { PredictedFailure } from '../core/record-types.js';
import type { CallFeatures } from './call-features.js';
import { featureName, RowEncoder, type EncodedFeature, type FeatureRow } from './feature-encoding.js';
import { sigmoid } from './logistic-regression.js';
import type { ModelCard } from './model-card.js';

export const PREDICTOR_MODEL_KIND = 'faultline.failure-predictor';

export type WeightedFeature = EncodedFeature & { weight: number };

export interface PredictorModel {
  kind: typeof PREDICTOR_MODEL_KIND;
  version: 1;
  bias: number;
  /** Calls scoring at or above it are predicted to fail (best F1 on the training rows). */
  threshold: number;
  features: WeightedFeature[];
  card: ModelCard;
}

/** A feature's share of one call's score, in log-odds. */
export type FeatureContribution = PredictedFailure['top_features'][number];

/** `top_features`: the features that pushed the call's score up most, largest first (at most 3). */
export type FailurePrediction = PredictedFailure;

const invalid = (message: string): ConfigError => new ConfigError(message, 'predictor.model');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Checks a parsed model file; throws a ConfigError saying what is wrong. */
export function parsePredictorModel(value: unknown): PredictorModel {
  if (!isObject(value) || value['kind'] !== PREDICTOR_MODEL_KIND) throw invalid(`not a failure predictor model (kind must be "${PREDICTOR_MODEL_KIND}")`);
  if (value['version'] !== 1) throw invalid(`unsupported predictor model version ${JSON.stringify(value['version'])} (this faultline reads version 1)`);
  if (!finite(value['bias']) || !finite(value['threshold'])) throw invalid('the model needs a finite bias and threshold');
  const features = value['features'];
  if (!Array.isArray(features)) throw invalid('the model has no features list');
  features.forEach((f: unknown, i) => {
    const ok =
      isObject(f) && typeof f['column'] === 'string' && finite(f['weight']) &&
      ((f['kind'] === 'numeric' && finite(f['mean']) && finite(f['std']) && f['std'] > 0) || (f['kind'] === 'category' && typeof f['value'] === 'string'));
    if (!ok) throw invalid(`feature ${i} of the model is malformed`);
  });
  return value as unknown as PredictorModel;
}

const round = (x: number): number => Math.round(x * 1e4) / 1e4;

/** A model ready to score calls: the encoder is built once. */
export class FailurePredictor {
  private readonly encoder: RowEncoder;
  private readonly weights: Float64Array;

  constructor(readonly model: PredictorModel) {
    this.encoder = new RowEncoder(model.features);
    this.weights = Float64Array.from(model.features, (f) => f.weight);
  }

  /** The probability that a call with these features fails, and why. */
  predict(features: CallFeatures | FeatureRow): FailurePrediction {
    const row = this.encoder.encode(features as FeatureRow);
    let z = this.model.bias;
    const parts: FeatureContribution[] = [];
    for (let k = 0; k < row.indexes.length; k++) {
      const index = row.indexes[k]!;
      const c = this.weights[index]! * row.values[k]!;
      z += c;
      if (c > 0) parts.push({ feature: featureName(this.model.features[index]!), contribution: c });
    }
    parts.sort((a, b) => b.contribution - a.contribution);
    return { probability: round(sigmoid(z)), top_features: parts.slice(0, 3).map((p) => ({ feature: p.feature, contribution: round(p.contribution) })) };
  }
}
