import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVirtualClock } from '../core/clock.js';
import { ConfigError } from '../core/errors.js';
import type { PredictedFailure } from '../core/record-types.js';
import { predictorRow } from '../dataset/predictor-exporter.js';
import { FailurePredictor, type PredictorModel } from '../predict/predictor-model.js';
import { predictorDataset, predictorTools, recordPredictorRuns, storeTrajectories, T0 } from '../predict/predictor.test-helpers.js';
import { trainPredictor } from '../predict/train-predictor.js';
import type { FeatureRow } from '../predict/feature-encoding.js';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-preflight-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let model: PredictorModel;
const modelPath = join(dir, 'model.json');

beforeAll(async () => {
  const { rows } = await predictorDataset(dir);
  model = trainPredictor(rows as unknown as FeatureRow[], { seed: 1 });
  writeFileSync(modelPath, JSON.stringify(model));
}, 60_000);

const badDate = { city: 'Paris', date: '2026-02-30', unit: 'celsius' };
const goodDate = { city: 'Paris', date: '2026-04-02', unit: 'celsius' };

function runtime(predictor?: { model: PredictorModel | string; refuseAbove?: number }, store?: string) {
  let ran = 0;
  const tools = predictorTools().map((t) =>
    t.name !== 'get_weather'
      ? t
      : defineTool({ name: 'get_weather', description: 'weather', input: { type: 'object', required: ['city'] }, idempotent: true, retry: { maxRetries: 0 }, execute: async (a: Record<string, unknown>) => {
          ran++;
          if (a['date'] === '2026-02-30') throw Object.assign(new Error('invalid date'), { status: 400 });
          return { city: a['city'] };
        } }),
  );
  const rt = createRuntime({ tools, clock: createVirtualClock({ startMs: T0 }), ...(predictor === undefined ? {} : { predictor }), ...(store === undefined ? {} : { store }) });
  return { rt, ran: () => ran };
}

describe('the pre-flight failure predictor in the runtime', () => {
  it('adds predicted_failure to the result, its feedback and the record', async () => {
    const { rt } = runtime({ model: modelPath });
    const s = rt.session({ agent: 'a' });
    const bad = await s.execute('get_weather', badDate);
    const good = await s.execute('get_weather', goodDate);
    await rt.close();
    if (bad.ok || !good.ok) throw new Error('the bad date fails, the good one does not');
    const high = bad.feedback.predictedFailure!;
    const low = good.predictedFailure!;
    expect(high.probability).toBeGreaterThan(model.threshold);
    expect(low.probability).toBeLessThan(model.threshold);
    expect(high.top_features.length).toBeGreaterThan(0);
    expect(high.top_features.map((f) => f.feature).join(' ')).toMatch(/date_invalid=true|invalid_date_count/);
    expect(bad.record.feedback!.predicted_failure).toEqual(high);
    expect(bad.record.context_snapshot['predicted_failure']).toEqual(high);
    expect(good.record.context_snapshot['predicted_failure']).toEqual(low);
    expect(good.record.feedback).toBeNull();
  });

  it('is off by default: nothing added', async () => {
    const { rt } = runtime();
    const r = await rt.execute('get_weather', badDate);
    await rt.close();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.feedback.predictedFailure).toBeUndefined();
    expect(r.record.context_snapshot).toEqual({});
  });

  it('refuses a call at or above refuseAbove before it runs, and records the refusal', async () => {
    const db = join(dir, 'refusals.db');
    const { rt, ran } = runtime({ model, refuseAbove: 0.5 }, `sqlite:${db}`);
    const s = rt.session({ traceId: 'refused-trace' });
    const refused = await s.execute('get_weather', badDate);
    const passed = await s.execute('get_weather', goodDate);
    // Arguments that cannot be valid are told what to fix, not that the call would fail.
    const invalid = await s.execute('get_weather', { date: '2026-02-30', unit: 'celsius' });
    await rt.close();
    expect(invalid.record).toMatchObject({ failure_stage: 'param_validation', failure_type: 'missing_required' });
    expect(ran()).toBe(1);
    expect(passed.ok).toBe(true);
    if (refused.ok) throw new Error('should be refused');
    expect(refused.record).toMatchObject({ status: 'rejected', failure_stage: 'request_build', failure_category: 'system', failure_type: 'predicted_failure', error_code: 'PREDICTED_FAILURE', attempts: [] });
    expect(refused.error.message).toMatch(/^get_weather was not run: the failure predictor gives this call a \d+% chance of failing \(refusing at 50%\), mostly for /);
    expect(refused.feedback).toMatchObject({ action: 'try_alternative', retryable: true });
    const store = createSqliteStore({ path: db });
    const stored = await store.query({ traceId: 'refused-trace', limit: 10 });
    await store.close();
    const refusal = stored.find((r) => r.status === 'rejected')!;
    expect(refusal.feedback!.predicted_failure!.probability).toBe(refused.feedback.predictedFailure!.probability);
    expect((refusal.context_snapshot['predicted_failure'] as PredictedFailure).probability).toBeGreaterThanOrEqual(0.5);
  });

  it('scores a call as the model scores its exported row: one feature code for training and serving', async () => {
    const db = join(dir, 'served.db');
    const ids = await recordPredictorRuns(db, 30, { predictor: { model } });
    const trajectories = await storeTrajectories(db, ids);
    const store = createSqliteStore({ path: db });
    const records = new Map((await store.query({ limit: 10_000 })).map((r) => [r.execution_id, r]));
    await store.close();
    const offline = new FailurePredictor(model);
    let compared = 0;
    for (const t of trajectories) {
      t.steps.forEach((step, i) => {
        const served = records.get(step.source_ref!)!.context_snapshot['predicted_failure'] as PredictedFailure;
        expect(offline.predict(predictorRow(t, i) as unknown as FeatureRow)).toEqual(served);
        compared++;
      });
    }
    expect(compared).toBeGreaterThan(100);
  }, 60_000);

  it('refuses bad options with a ConfigError', () => {
    expect(() => runtime({ model, refuseAbove: 1.5 })).toThrow(/refuseAbove must be a number in \(0, 1\]/);
    expect(() => runtime({ model: join(dir, 'missing.json') })).toThrow(ConfigError);
    writeFileSync(join(dir, 'not-a-model.json'), '{"kind":"something else"}');
    expect(() => runtime({ model: join(dir, 'not-a-model.json') })).toThrow(/not a failure predictor model/);
  });
});
