import { describe, expect, it } from 'vitest';
import { trajectory } from '../annotate/trajectory.test-helpers.js';
import { blindRetry } from './dataset.test-helpers.js';
import { csvField, PredictorColumns } from './output-files.js';
import { exportPredictor, magnitudeBucket, parseDateValue, PREDICTOR_FIXED_COLUMNS, PREDICTOR_PARAM_FEATURES } from './predictor-exporter.js';

function weather() {
  const t = trajectory(
    [
      { tool: 'get_weather', params: { city: 'Paris', date: '2026-13-45', unit: 'celsius', days: 1500, note: '', extra: null }, fail: { category: 'parameter', kind: 'invalid_date', status: 'rejected' }, at: '2026-03-29T14:00:00.000Z' },
      { tool: 'get_weather', params: { city: 'Paris', date: '2026-03-30', unit: 'celsius', days: -0.5 }, at: '2026-03-29T14:00:01.000Z' },
      { tool: 'get_weather', params: 'not json {' },
    ],
    { outcome: 'success', task: 'Weather' },
  );
  t.steps[0]!.failure_type = 'parameter';
  t.steps[0]!.failure_subtype = 'syntactic';
  t.steps[2]!.status = null;
  return t;
}

describe('predictor exporter', () => {
  it('writes the documented fixed columns, in order, and the label', () => {
    const { examples } = exportPredictor(weather());
    expect(examples).toHaveLength(2);
    const [bad, good] = examples;
    expect(Object.keys(bad!).slice(0, PREDICTOR_FIXED_COLUMNS.length)).toEqual([...PREDICTOR_FIXED_COLUMNS]);
    expect(bad).toMatchObject({
      trajectory_id: 'traj_test', step_index: 1, source: 'step-log', tool: 'get_weather', params_kind: 'object',
      param_count: 6, param_names: 'city,date,days,extra,note,unit', null_count: 1, empty_string_count: 1,
      string_count: 4, number_count: 1, boolean_count: 0, array_count: 0, object_count: 0, date_count: 1, invalid_date_count: 1,
      max_string_length: 10, nesting_depth: 1, prior_calls_same_tool: 0, prior_failures_same_tool: 0, repeats_previous_call: false, hour_utc: 14, last_failure_category: null,
      failed: true, status: 'rejected', failure_category: 'parameter', failure_stage: 'execution', failure_kind: 'invalid_date', failure_type: 'parameter/syntactic',
    });
    expect(bad!.params_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(bad!.params_hash).not.toBe(good!.params_hash);
    expect(good).toMatchObject({ failed: false, status: 'success', failure_category: null, failure_type: null, prior_calls_same_tool: 1, prior_failures_same_tool: 1, last_failure_category: 'parameter', date_count: 1, invalid_date_count: 0 });
  });

  it('writes per-argument columns: type, length, buckets, enums and dates relative to the step', () => {
    const [bad, good] = exportPredictor(weather()).examples;
    const cols = (row: object, name: string) => Object.fromEntries(Object.entries(row).filter(([k]) => k.startsWith(`p.${name}.`)).map(([k, v]) => [k.slice(`p.${name}.`.length), v]));
    expect(Object.keys(cols(bad!, 'city'))).toEqual([...PREDICTOR_PARAM_FEATURES]);
    expect(cols(bad!, 'city')).toEqual({ present: true, type: 'string', length: 5, empty: false, number: null, magnitude: null, enum: 'Paris', date_days: null, date_invalid: false });
    expect(cols(bad!, 'date')).toMatchObject({ type: 'string', enum: null, date_days: null, date_invalid: true });
    expect(cols(bad!, 'days')).toMatchObject({ type: 'integer', number: 1500, magnitude: '1e3', length: null });
    expect(cols(bad!, 'note')).toMatchObject({ empty: true, length: 0 });
    expect(cols(bad!, 'extra')).toMatchObject({ type: 'null', present: true });
    // 2026-03-30 midnight UTC, from 14:00:01 the day before.
    expect(cols(good!, 'date')).toMatchObject({ date_days: 0.42, date_invalid: false });
    expect(cols(good!, 'days')).toMatchObject({ type: 'number', magnitude: '-1e-1' });
    expect('p.note.present' in good!).toBe(false);
  });

  it('notes a repeated call and skips steps without an outcome', () => {
    const rows = exportPredictor(blindRetry()).examples;
    expect(rows.map((r) => [r.failed, r.repeats_previous_call, r.failure_type])).toEqual([[true, false, 'infrastructure/timeout'], [false, true, null]]);
    const unknown = trajectory([{ tool: 'x' }]);
    unknown.steps[0]!.status = null;
    expect(exportPredictor(unknown)).toEqual({ examples: [], skipped: 'no call with a known outcome' });
  });

  it('parses dates and buckets numbers', () => {
    expect(parseDateValue('2026-02-29')).toBe('invalid');
    expect(parseDateValue('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(parseDateValue('2026-03')).toBe(Date.UTC(2026, 2, 1));
    expect(parseDateValue('2026-03-29T10:00:00+08:00')).toBe(Date.UTC(2026, 2, 29, 2));
    expect(parseDateValue('2026-03-29T25:00')).toBe('invalid');
    expect(parseDateValue('Paris')).toBeUndefined();
    expect([0, 5, 10, 999, -20, 0.05, 1e20].map(magnitudeBucket)).toEqual(['0', '1e0', '1e1', '1e2', '-1e1', '1e-2', '1e12']);
  });

  it('gives CSV the union of argument columns and quotes fields', () => {
    const columns = new PredictorColumns();
    for (const row of exportPredictor(weather()).examples) columns.add(JSON.stringify(row));
    const header = columns.header();
    expect(header.slice(PREDICTOR_FIXED_COLUMNS.length).filter((c) => c.endsWith('.present'))).toEqual(
      ['city', 'date', 'days', 'extra', 'note', 'unit'].map((n) => `p.${n}.present`),
    );
    expect([null, true, 3, 'a,b', 'say "hi"', ' x', 'plain'].map(csvField)).toEqual(['', 'true', '3', '"a,b"', '"say ""hi"""', '" x"', 'plain']);
  });
});
