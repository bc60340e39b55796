/**
 * `--format predictor`: rows for a failure predictor (the monitoring design's pre-flight predictor: pair each call's
 * `input_params` with whether it failed, and train a small tabular model to predict a failure
 * before the call is made). One row per step whose outcome is known (`status` not null); flat,
 * typed columns; JSONL, or CSV when `--out` ends in `.csv` (see src/dataset/output-files.ts).
 *
 * Fixed columns, in this order (every row has every one):
 *
 * | column | type | meaning |
 * |---|---|---|
 * | `trajectory_id` | string | group key (the split is by trajectory; not a feature) |
 * | `step_index` | integer | 1-based position of the call in its trajectory |
 * | `source` | string | the trajectory's source (`faultline`, `tau-bench`, `augmented`, …) |
 * | `tool` | string | the tool called (categorical) |
 * | `params_hash` | string | 16 hex digits of the arguments, key order ignored |
 * | `params_kind` | string | `object`, `array`, `string` (arguments that were not JSON), `null`, `number`, `boolean` |
 * | `param_count` | integer | top-level arguments sent |
 * | `param_names` | string | the top-level names, sorted, joined by `,` (which fields were sent) |
 * | `null_count` / `empty_string_count` | integer | top-level arguments that are null / `""` |
 * | `string_count` / `number_count` / `boolean_count` / `array_count` / `object_count` | integer | top-level arguments by JSON type |
 * | `date_count` / `invalid_date_count` | integer | top-level strings shaped like a date, and those that are no real date (`2024-13-45`) |
 * | `max_string_length` | integer | longest string anywhere in the arguments |
 * | `params_json_length` | integer | length of the arguments as canonical JSON |
 * | `nesting_depth` | integer | 0 for a scalar, 1 for a flat object, … |
 * | `prior_calls_same_tool` / `prior_failures_same_tool` | integer | earlier calls of this tool in the trajectory, and how many failed |
 * | `repeats_previous_call` | boolean | same tool and same arguments as the step before |
 * | `hour_utc` | integer or null | the UTC hour (0-23) the call started, null when unknown |
 * | `last_failure_category` | string or null | the runtime category of this tool's most recent earlier failure in the trajectory |
 * | `failed` | boolean | **the label**: the call did not succeed (`status` is not `success`) |
 * | `status` | string | `success`, `failure`, `timeout`, `rejected` |
 * | `failure_category` / `failure_stage` / `failure_kind` | string or null | the runtime taxonomy's classification (null for successes) |
 * | `failure_type` | string or null | the training taxonomy's label as `type/subtype`, null when unlabelled |
 *
 * Then, for each top-level argument `<name>` the call sent, these columns (in this order):
 *
 * | column | type | meaning |
 * |---|---|---|
 * | `p.<name>.present` | boolean | always true in JSONL; in CSV, `false` for rows whose call did not send it |
 * | `p.<name>.type` | string | `string`, `integer`, `number`, `boolean`, `null`, `array`, `object` |
 * | `p.<name>.length` | integer or null | characters of a string, items of an array, keys of an object |
 * | `p.<name>.empty` | boolean | `""`, `[]` or `{}` |
 * | `p.<name>.number` | number or null | the value, for numbers |
 * | `p.<name>.magnitude` | string or null | numbers by order of magnitude: `0`, `1e0` ([1, 10)), `1e1`, …, `1e-1` ([0.1, 1)), …, with `-` in front for negatives; clipped to `1e-3`..`1e12` |
 * | `p.<name>.enum` | string or null | the value when it looks like a category: a string of up to 32 letters, spaces, `_` or `-` (no digits: ids are not categories), or `true`/`false` |
 * | `p.<name>.date_days` | number or null | for a date-shaped string that is a real date: days from the trajectory's now (the step's `started_at`, else the trajectory's `created_at`), to 2 decimals; a bare date counts from its UTC midnight |
 * | `p.<name>.date_invalid` | boolean | a date-shaped string that is no real date |
 *
 * Every column before `failed` is known before the call runs: they come from `callFeatures`
 * (src/predict/call-features.ts), which the runtime's pre-flight predictor calls too.
 *
 * In JSONL a call that did not send `<name>` has none of its columns (read missing as absent);
 * CSV has the union of every column in the export, `false` for a missing `present` and empty
 * cells for the other missing ones. Steps whose outcome is unknown give no row (no label).
 */
import { canonicalJson } from '../core/params-hash.js';
import type { CallStatus } from '../core/taxonomy.js';
import type { Trajectory, TrajectoryStep } from '../core/trajectory-types.js';
import { callFeatures, type CallFeatures } from '../predict/call-features.js';
import type { TrajectoryExamples } from './exporter.js';

export { magnitudeBucket, parseDateValue, PREDICTOR_PARAM_FEATURES } from '../predict/call-features.js';

/** One predictor row: the fixed columns above, then `p.<name>.*` per argument sent. */
export interface PredictorRow extends CallFeatures {
  trajectory_id: string;
  source: string;
  failed: boolean;
  status: CallStatus;
  failure_category: string | null;
  failure_stage: string | null;
  failure_kind: string | null;
  failure_type: string | null;
}

/** The fixed columns, in the order every row (and the CSV header) has them. */
export const PREDICTOR_FIXED_COLUMNS = [
  'trajectory_id', 'step_index', 'source', 'tool', 'params_hash', 'params_kind', 'param_count', 'param_names',
  'null_count', 'empty_string_count', 'string_count', 'number_count', 'boolean_count', 'array_count', 'object_count',
  'date_count', 'invalid_date_count', 'max_string_length', 'params_json_length', 'nesting_depth',
  'prior_calls_same_tool', 'prior_failures_same_tool', 'repeats_previous_call', 'hour_utc', 'last_failure_category',
  'failed', 'status', 'failure_category', 'failure_stage', 'failure_kind', 'failure_type',
] as const satisfies readonly (keyof PredictorRow)[];

function nowOf(trajectory: Trajectory, step: TrajectoryStep): number {
  const started = step.started_at === undefined ? Number.NaN : Date.parse(step.started_at);
  return Number.isNaN(started) ? Date.parse(trajectory.created_at) : started;
}

const failedStep = (s: TrajectoryStep): boolean => s.status !== null && s.status !== 'success';

/** The row for the step at position `at` (0-based) of `trajectory`. */
export function predictorRow(trajectory: Trajectory, at: number): PredictorRow {
  const step = trajectory.steps[at]!;
  const earlier = trajectory.steps.slice(0, at).filter((s) => s.tool_name === step.tool_name);
  const lastFailure = earlier.findLast(failedStep);
  const previous = trajectory.steps[at - 1];
  const features = callFeatures({
    toolName: step.tool_name,
    params: step.input_params,
    nowMs: nowOf(trajectory, step),
    history: {
      stepIndex: step.step_index,
      priorCallsSameTool: earlier.length,
      priorFailuresSameTool: earlier.filter(failedStep).length,
      lastFailureCategory: lastFailure?.failure_category ?? null,
      previous: previous === undefined ? undefined : { toolName: previous.tool_name, paramsJson: canonicalJson(previous.input_params ?? null) },
    },
  });
  // The fixed columns first, in their documented order, then the arguments' columns.
  const fixed: Record<string, unknown> = { trajectory_id: trajectory.trajectory_id, step_index: features.step_index, source: trajectory.metadata.source };
  for (const column of PREDICTOR_FIXED_COLUMNS) if (column in features) fixed[column] = features[column as keyof CallFeatures];
  Object.assign(fixed, {
    failed: step.status !== 'success',
    status: step.status!,
    failure_category: step.failure_category,
    failure_stage: step.failure_stage,
    failure_kind: step.failure_kind,
    failure_type: step.failure_type === null ? null : `${step.failure_type}/${step.failure_subtype ?? 'unknown'}`,
  });
  for (const key of Object.keys(features)) if (key.startsWith('p.')) fixed[key] = features[key as `p.${string}`];
  return fixed as unknown as PredictorRow;
}

export function exportPredictor(trajectory: Trajectory): TrajectoryExamples<PredictorRow> {
  const rows: PredictorRow[] = [];
  trajectory.steps.forEach((s, i) => {
    if (s.status !== null) rows.push(predictorRow(trajectory, i));
  });
  return rows.length === 0 ? { examples: [], skipped: 'no call with a known outcome' } : { examples: rows };
}
