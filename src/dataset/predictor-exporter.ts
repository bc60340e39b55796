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
 * In JSONL a call that did not send `<name>` has none of its columns (read missing as absent);
 * CSV has the union of every column in the export, `false` for a missing `present` and empty
 * cells for the other missing ones. Steps whose outcome is unknown give no row (no label).
 */
import { canonicalJson, paramsHash } from '../core/params-hash.js';
import type { CallStatus } from '../core/taxonomy.js';
import type { Trajectory, TrajectoryStep } from '../core/trajectory-types.js';
import type { TrajectoryExamples } from './exporter.js';

type Cell = string | number | boolean | null;

/** One predictor row: the fixed columns above, then `p.<name>.*` per argument sent. */
export interface PredictorRow {
  trajectory_id: string;
  step_index: number;
  source: string;
  tool: string;
  params_hash: string;
  params_kind: string;
  param_count: number;
  param_names: string;
  null_count: number;
  empty_string_count: number;
  string_count: number;
  number_count: number;
  boolean_count: number;
  array_count: number;
  object_count: number;
  date_count: number;
  invalid_date_count: number;
  max_string_length: number;
  params_json_length: number;
  nesting_depth: number;
  prior_calls_same_tool: number;
  prior_failures_same_tool: number;
  repeats_previous_call: boolean;
  failed: boolean;
  status: CallStatus;
  failure_category: string | null;
  failure_stage: string | null;
  failure_kind: string | null;
  failure_type: string | null;
  [paramColumn: `p.${string}`]: Cell;
}

/** The fixed columns, in the order every row (and the CSV header) has them. */
export const PREDICTOR_FIXED_COLUMNS = [
  'trajectory_id', 'step_index', 'source', 'tool', 'params_hash', 'params_kind', 'param_count', 'param_names',
  'null_count', 'empty_string_count', 'string_count', 'number_count', 'boolean_count', 'array_count', 'object_count',
  'date_count', 'invalid_date_count', 'max_string_length', 'params_json_length', 'nesting_depth',
  'prior_calls_same_tool', 'prior_failures_same_tool', 'repeats_previous_call',
  'failed', 'status', 'failure_category', 'failure_stage', 'failure_kind', 'failure_type',
] as const satisfies readonly (keyof PredictorRow)[];

/** The per-argument column suffixes, in order: `p.<name>.<suffix>`. */
export const PREDICTOR_PARAM_FEATURES = ['present', 'type', 'length', 'empty', 'number', 'magnitude', 'enum', 'date_days', 'date_invalid'] as const;

const DAY_MS = 86_400_000;
// Date-shaped strings: 2026-03-29, 2026-03, 2026/03/29, 2026-03-29T14:00(:00(.000))(Z|+08:00).
const DATE_SHAPE = /^(\d{4})[-/](\d{1,2})(?:[-/](\d{1,2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?$/;
const ENUM_LIKE = /^[A-Za-z][A-Za-z _-]{0,31}$/;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function jsonType(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Epoch ms of a date-shaped string, `invalid` when it is shaped like a date but is none, undefined when not date-shaped. */
export function parseDateValue(text: string): number | 'invalid' | undefined {
  const m = DATE_SHAPE.exec(text.trim());
  if (m === null) return undefined;
  const [, y, mo, d, hh, mm, ss, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = d === undefined ? 1 : Number(d);
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return 'invalid';
  if (hh === undefined) return Date.UTC(year, month - 1, day);
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss ?? 0) > 59) return 'invalid';
  // Without a zone the time is taken as UTC, so the feature does not depend on where it is computed.
  const iso = `${y}-${mo!.padStart(2, '0')}-${d!.padStart(2, '0')}T${hh}:${mm}:${ss ?? '00'}${zone === undefined ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone}`;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 'invalid' : ms;
}

/** `0`, `1e2`, `-1e0`, `1e-1`…: the order of magnitude, clipped to 1e-3..1e12. */
export function magnitudeBucket(value: number): string {
  if (value === 0 || !Number.isFinite(value)) return value === 0 ? '0' : String(value);
  const exponent = Math.min(12, Math.max(-3, Math.floor(Math.log10(Math.abs(value)))));
  return `${value < 0 ? '-' : ''}1e${exponent}`;
}

// Reduced rather than spread into Math.max: an argument may be an array too long to spread.
const maxOf = (values: readonly unknown[], of: (v: unknown) => number): number => values.reduce<number>((m, v) => Math.max(m, of(v)), 0);

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + maxOf(value, depthOf);
  if (isRecord(value)) return 1 + maxOf(Object.values(value), depthOf);
  return 0;
}

function longestString(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return maxOf(value, longestString);
  if (isRecord(value)) return maxOf(Object.values(value), longestString);
  return 0;
}

function paramColumns(name: string, value: unknown, nowMs: number): Record<`p.${string}`, Cell> {
  const type = jsonType(value);
  const date = typeof value === 'string' ? parseDateValue(value) : undefined;
  const length = typeof value === 'string' || Array.isArray(value) ? value.length : isRecord(value) ? Object.keys(value).length : null;
  const enumValue = typeof value === 'boolean' ? String(value) : typeof value === 'string' && ENUM_LIKE.test(value) ? value : null;
  const cells: Record<(typeof PREDICTOR_PARAM_FEATURES)[number], Cell> = {
    present: true,
    type,
    length,
    empty: length === 0,
    number: typeof value === 'number' && Number.isFinite(value) ? value : null,
    magnitude: typeof value === 'number' ? magnitudeBucket(value) : null,
    enum: enumValue,
    date_days: typeof date === 'number' ? Math.round(((date - nowMs) / DAY_MS) * 100) / 100 : null,
    date_invalid: date === 'invalid',
  };
  return Object.fromEntries(PREDICTOR_PARAM_FEATURES.map((f) => [`p.${name}.${f}`, cells[f]])) as Record<`p.${string}`, Cell>;
}

function nowOf(trajectory: Trajectory, step: TrajectoryStep): number {
  const started = step.started_at === undefined ? Number.NaN : Date.parse(step.started_at);
  return Number.isNaN(started) ? Date.parse(trajectory.created_at) : started;
}

/** The row for the step at position `at` (0-based) of `trajectory`. */
export function predictorRow(trajectory: Trajectory, at: number): PredictorRow {
  const step = trajectory.steps[at]!;
  const params = step.input_params;
  const top = isRecord(params) ? params : {};
  const values = Object.values(top);
  const count = (test: (v: unknown) => boolean): number => values.filter(test).length;
  const dates = values.map((v) => (typeof v === 'string' ? parseDateValue(v) : undefined));
  const earlier = trajectory.steps.slice(0, at).filter((s) => s.tool_name === step.tool_name);
  const previous = trajectory.steps[at - 1];
  const json = canonicalJson(params ?? null);
  const row: PredictorRow = {
    trajectory_id: trajectory.trajectory_id,
    step_index: step.step_index,
    source: trajectory.metadata.source,
    tool: step.tool_name,
    params_hash: paramsHash(params ?? null),
    params_kind: params === undefined || params === null ? 'null' : Array.isArray(params) ? 'array' : typeof params,
    param_count: values.length,
    param_names: Object.keys(top).sort().join(','),
    null_count: count((v) => v === null),
    empty_string_count: count((v) => v === ''),
    string_count: count((v) => typeof v === 'string'),
    number_count: count((v) => typeof v === 'number'),
    boolean_count: count((v) => typeof v === 'boolean'),
    array_count: count(Array.isArray),
    object_count: count(isRecord),
    date_count: dates.filter((d) => d !== undefined).length,
    invalid_date_count: dates.filter((d) => d === 'invalid').length,
    max_string_length: longestString(params),
    params_json_length: json.length,
    nesting_depth: depthOf(params),
    prior_calls_same_tool: earlier.length,
    prior_failures_same_tool: earlier.filter((s) => s.status !== null && s.status !== 'success').length,
    repeats_previous_call: previous !== undefined && previous.tool_name === step.tool_name && canonicalJson(previous.input_params ?? null) === json,
    failed: step.status !== 'success',
    status: step.status!,
    failure_category: step.failure_category,
    failure_stage: step.failure_stage,
    failure_kind: step.failure_kind,
    failure_type: step.failure_type === null ? null : `${step.failure_type}/${step.failure_subtype ?? 'unknown'}`,
  };
  const nowMs = nowOf(trajectory, step);
  for (const name of Object.keys(top).sort()) Object.assign(row, paramColumns(name, top[name], nowMs));
  return row;
}

export function exportPredictor(trajectory: Trajectory): TrajectoryExamples<PredictorRow> {
  const rows: PredictorRow[] = [];
  trajectory.steps.forEach((s, i) => {
    if (s.status !== null) rows.push(predictorRow(trajectory, i));
  });
  return rows.length === 0 ? { examples: [], skipped: 'no call with a known outcome' } : { examples: rows };
}
