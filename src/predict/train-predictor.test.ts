import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PredictorRow } from '../dataset/predictor-exporter.js';
import { atThreshold, bestF1Threshold, brierScore, rocAuc } from './classifier-metrics.js';
import type { FeatureRow } from './feature-encoding.js';
import { FailurePredictor } from './predictor-model.js';
import { predictorDataset } from './predictor.test-helpers.js';
import { splitByTrajectory, trainPredictor, TrainingDataError } from './train-predictor.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-predictor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let rows: PredictorRow[] = [];
beforeAll(async () => {
  ({ rows } = await predictorDataset(dir));
}, 60_000);

describe('classifier metrics', () => {
  it('computes AUC with ties, F1 at a threshold and the best-F1 threshold', () => {
    expect(rocAuc([0.9, 0.8, 0.4, 0.3], [1, 0, 1, 0])).toBe(0.75);
    expect(rocAuc([0.5, 0.5], [1, 0])).toBe(0.5);
    expect(atThreshold([0.9, 0.8, 0.4, 0.3], [1, 0, 1, 0], 0.5)).toMatchObject({ true_positives: 1, false_positives: 1, false_negatives: 1, precision: 0.5, recall: 0.5, f1: 0.5 });
    expect(bestF1Threshold([0.9, 0.8, 0.4, 0.3], [1, 1, 0, 0])).toBe(0.8);
    expect(brierScore([0.5, 0.5], [1, 0])).toBe(0.25);
  });
});

describe('trainPredictor on rows exported from a fault-injected runtime', () => {
  it('beats the base rate on the held-back trajectories', () => {
    const failed = rows.filter((r) => r.failed).length;
    expect(rows.length).toBeGreaterThan(500);
    expect(failed / rows.length).toBeGreaterThan(0.1);
    const { card } = trainPredictor(rows as unknown as FeatureRow[], { seed: 1 });
    expect(card.rows.train + card.rows.test).toBe(rows.length);
    expect(card.test.auc).toBeGreaterThan(0.8);
    expect(card.test.brier).toBeLessThan(card.baseline.brier);
    expect(card.test.log_loss).toBeLessThan(card.baseline.log_loss);
    expect(card.test.f1).toBeGreaterThan(card.baseline.f1_flag_every_call);
    expect(card.test.precision).toBeGreaterThan(card.base_rate.test);
    // The causes the fault plan and tools planted are what it learnt.
    const top = card.top_features.map((f) => f.feature);
    expect(top).toEqual(expect.arrayContaining(['p.cabin.enum=first']));
    expect(top.some((f) => f.startsWith('p.date.date_invalid=true') || f === 'invalid_date_count')).toBe(true);
  });

  it('computes the card from the held-back rows (not constants), the same for the same seed', () => {
    const a = trainPredictor(rows as unknown as FeatureRow[], { seed: 3 });
    const b = trainPredictor(rows as unknown as FeatureRow[], { seed: 3 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    const c = trainPredictor(rows as unknown as FeatureRow[], { seed: 4 });
    expect(c.card.rows.test).not.toBe(a.card.rows.test);

    const { test } = splitByTrajectory(rows as unknown as FeatureRow[], 3, 0.2);
    expect(test).toHaveLength(a.card.rows.test);
    const predictor = new FailurePredictor(a);
    const labels = test.map((r) => (r['failed'] === true ? 1 : 0));
    const scores = test.map((r) => predictor.predict(r).probability);
    const at = atThreshold(scores, labels, a.threshold);
    expect(a.card.test.true_positives).toBe(at.true_positives);
    expect(a.card.test.false_positives).toBe(at.false_positives);
    expect(a.card.test.precision).toBeCloseTo(at.precision, 3);
    expect(a.card.test.recall).toBeCloseTo(at.recall, 3);
    expect(a.card.test.auc).toBeCloseTo(rocAuc(scores, labels), 2);
    expect(a.card.base_rate.test).toBeCloseTo(labels.filter((y) => y === 1).length / labels.length, 5);
  });

  it('refuses too few rows, one class, one trajectory', () => {
    const some = rows.slice(0, 10) as unknown as FeatureRow[];
    expect(() => trainPredictor(some, { seed: 1 })).toThrow(TrainingDataError);
    const successes = rows.filter((r) => !r.failed) as unknown as FeatureRow[];
    expect(() => trainPredictor(successes, { seed: 1 })).toThrow(/all successes/);
    const one = rows.map((r) => ({ ...r, trajectory_id: 'same' })) as unknown as FeatureRow[];
    expect(() => trainPredictor(one, { seed: 1 })).toThrow(/one trajectory/);
  });
});
