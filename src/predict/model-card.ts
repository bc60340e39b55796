/** The failure predictor's card: what it was trained on and how it did on rows held back from training. */
import type { ThresholdMetrics } from './classifier-metrics.js';

export interface ModelCard {
  model: 'L2-regularised logistic regression';
  seed: number;
  l2: number;
  test_fraction: number;
  /** Categories seen fewer times than this in training are no feature. */
  min_count: number;
  iterations: number;
  converged: boolean;
  rows: { read: number; used: number; train: number; test: number; skipped_refusals: number };
  trajectories: { train: number; test: number };
  failed: { train: number; test: number };
  /** Share of failed calls. */
  base_rate: { train: number; test: number };
  threshold: number;
  threshold_basis: 'best F1 on the training rows';
  /** On the held-back trajectories, at `threshold`. */
  test: ThresholdMetrics & { auc: number; brier: number; log_loss: number };
  /** What knowing only the training base rate scores on the same rows. */
  baseline: { brier: number; log_loss: number; f1_flag_every_call: number };
  feature_count: number;
  /** The largest weights by size (per standard deviation for numbers), positive raising the odds of failure. */
  top_features: { feature: string; weight: number }[];
}

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const num = (x: number): string => (Number.isNaN(x) ? 'n/a' : x.toFixed(3));

/** The card as Markdown, written beside the model. */
export function modelCardMarkdown(card: ModelCard, modelFile: string): string {
  const t = card.test;
  const lines = [
    '# Failure predictor',
    '',
    `\`${modelFile}\`: ${card.model} over ${card.feature_count} features of a call known before it runs (tool, argument shapes, earlier calls in its trace, hour).`,
    `Fitted on ${card.rows.train} calls from ${card.trajectories.train} trajectories; scored on ${card.rows.test} calls from ${card.trajectories.test} trajectories held back by trajectory (seed ${card.seed}, ${pct(card.test_fraction)}), so no trajectory is on both sides.`,
    '',
    '## Held-back split',
    '',
    '| measure | model | base rate only |',
    '|---|---|---|',
    `| precision | ${num(t.precision)} | ${num(card.base_rate.test)} |`,
    `| recall | ${num(t.recall)} | 1.000 |`,
    `| F1 | ${num(t.f1)} | ${num(card.baseline.f1_flag_every_call)} |`,
    `| AUC | ${num(t.auc)} | 0.500 |`,
    `| Brier score | ${num(t.brier)} | ${num(card.baseline.brier)} |`,
    `| log loss | ${num(t.log_loss)} | ${num(card.baseline.log_loss)} |`,
    '',
    `Threshold ${num(card.threshold)} (${card.threshold_basis}): ${t.true_positives} failed calls flagged, ${t.false_negatives} missed, ${t.false_positives} false alarms, ${t.true_negatives} successes passed.`,
    `Base rate: ${pct(card.base_rate.train)} of training calls failed, ${pct(card.base_rate.test)} of held-back ones.`,
    '',
    '## Top features',
    '',
    '| feature | weight |',
    '|---|---|',
    ...card.top_features.map((f) => `| \`${f.feature.replace(/\|/g, '\\|')}\` | ${f.weight.toFixed(3)} |`),
    '',
    '## Caveats',
    '',
    `- Rows read: ${card.rows.read}; ${card.rows.skipped_refusals} were calls the predictor itself refused, left out: their outcome is the model's, not the tool's.`,
    '- A tool whose circuit stayed open is called rarely, so its risk is learnt from few rows; keep breaker probes on to keep its data fresh.',
    `- Fitting ${card.converged ? 'converged' : 'stopped before converging'} after ${card.iterations} iterations (L2 ${card.l2}).`,
    '',
  ];
  return lines.join('\n');
}
