/**
 * The features of one tool call as a failure predictor sees it before the call runs: its tool,
 * the shape of its arguments, and what happened earlier in its trace. The dataset exporter
 * computes them for every stored step and the runtime for a call about to run, both through
 * `callFeatures`, so the rows a model is trained on and the rows it scores cannot drift apart.
 * The columns are documented with the export (src/dataset/predictor-exporter.ts).
 */
import { canonicalJson, paramsHash } from '../core/params-hash.js';

export type Cell = string | number | boolean | null;

/** What came before the call in its trace (or trajectory). */
export interface CallHistory {
  /** 1-based position of the call in its trace. */
  stepIndex: number;
  priorCallsSameTool: number;
  priorFailuresSameTool: number;
  /** The category of this tool's most recent earlier failure in the trace, null when none. */
  lastFailureCategory: string | null;
  /** The call just before, as tool and canonical JSON of its arguments. */
  previous: { toolName: string; paramsJson: string } | undefined;
}

export interface CallFeatureInput {
  toolName: string;
  params: unknown;
  /** When the call starts (epoch ms); NaN when unknown. */
  nowMs: number;
  history: CallHistory;
}

/** The features of a call: the predictor row's columns that are known before it runs. */
export interface CallFeatures {
  step_index: number;
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
  hour_utc: number | null;
  last_failure_category: string | null;
  [paramColumn: `p.${string}`]: Cell;
}

/** The per-argument column suffixes, in order: `p.<name>.<suffix>`. */
export const PREDICTOR_PARAM_FEATURES = ['present', 'type', 'length', 'empty', 'number', 'magnitude', 'enum', 'date_days', 'date_invalid'] as const;

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
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

/** Adds the `p.<name>.*` columns of one argument to `into`, in PREDICTOR_PARAM_FEATURES order. */
function addParamColumns(into: CallFeatures, name: string, value: unknown, nowMs: number): void {
  const type = jsonType(value);
  const date = typeof value === 'string' ? parseDateValue(value) : undefined;
  const length = typeof value === 'string' || Array.isArray(value) ? value.length : isRecord(value) ? Object.keys(value).length : null;
  const enumValue = typeof value === 'boolean' ? String(value) : typeof value === 'string' && ENUM_LIKE.test(value) ? value : null;
  // Assigned one by one, in the documented order: building a record per argument and merging it
  // cost more than the rest of the features together.
  const p: `p.${string}.` = `p.${name}.`;
  into[`${p}present`] = true;
  into[`${p}type`] = type;
  into[`${p}length`] = length;
  into[`${p}empty`] = length === 0;
  into[`${p}number`] = typeof value === 'number' && Number.isFinite(value) ? value : null;
  into[`${p}magnitude`] = typeof value === 'number' ? magnitudeBucket(value) : null;
  into[`${p}enum`] = enumValue;
  into[`${p}date_days`] = typeof date === 'number' && !Number.isNaN(nowMs) ? Math.round(((date - nowMs) / DAY_MS) * 100) / 100 : null;
  into[`${p}date_invalid`] = date === 'invalid';
}

/** The features of a call, in the export's column order. */
export function callFeatures(input: CallFeatureInput): CallFeatures {
  const { params, history } = input;
  const top = isRecord(params) ? params : {};
  const values = Object.values(top);
  const count = (test: (v: unknown) => boolean): number => values.filter(test).length;
  const dates = values.map((v) => (typeof v === 'string' ? parseDateValue(v) : undefined));
  const json = canonicalJson(params ?? null);
  const previous = history.previous;
  const features: CallFeatures = {
    step_index: history.stepIndex,
    tool: input.toolName,
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
    prior_calls_same_tool: history.priorCallsSameTool,
    prior_failures_same_tool: history.priorFailuresSameTool,
    repeats_previous_call: previous !== undefined && previous.toolName === input.toolName && previous.paramsJson === json,
    hour_utc: Number.isNaN(input.nowMs) ? null : Math.floor(input.nowMs / HOUR_MS) % 24,
    last_failure_category: history.lastFailureCategory,
  };
  for (const name of Object.keys(top).sort()) addParamColumns(features, name, top[name], input.nowMs);
  return features;
}
