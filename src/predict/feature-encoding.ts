/**
 * How a call's features become the numbers a linear model weighs: categorical cells one-hot
 * (`tool=get_weather`, `p.date.date_invalid=true`), counts and sizes as signed log1p, then
 * standardised with the training rows' mean and deviation. Training and scoring both go through
 * `encodeRow`, with the encoding the model file carries.
 */
import type { Cell } from './call-features.js';

/** The row columns read as categories (each value its own 0/1 feature). */
const CATEGORICAL_COLUMNS = ['tool', 'params_kind', 'param_names', 'hour_utc', 'last_failure_category', 'repeats_previous_call'] as const;
/** The row columns read as numbers. */
const NUMERIC_COLUMNS = [
  'step_index', 'param_count', 'null_count', 'empty_string_count', 'string_count', 'number_count', 'boolean_count',
  'array_count', 'object_count', 'date_count', 'invalid_date_count', 'max_string_length', 'params_json_length',
  'nesting_depth', 'prior_calls_same_tool', 'prior_failures_same_tool',
] as const;
/** Per-argument suffixes (`p.<name>.<suffix>`) read as categories and as numbers. */
const PARAM_CATEGORICAL = new Set(['present', 'type', 'empty', 'magnitude', 'enum', 'date_invalid']);
const PARAM_NUMERIC = new Set(['length', 'number', 'date_days']);

/** A row as read back from JSONL or built for a call: column name to cell. */
export type FeatureRow = Readonly<Record<string, Cell | undefined>>;

export interface NumericFeature {
  kind: 'numeric';
  column: string;
  mean: number;
  std: number;
}

export interface CategoryFeature {
  kind: 'category';
  column: string;
  value: string;
}

export type EncodedFeature = NumericFeature | CategoryFeature;

/** The name a feature goes by in model cards and `top_features`. */
export const featureName = (f: EncodedFeature): string => (f.kind === 'numeric' ? f.column : `${f.column}=${f.value}`);

const categoryKey = (column: string, value: string): string => `${column}\u0000${value}`;

function paramSuffix(column: string): string | undefined {
  if (!column.startsWith('p.')) return undefined;
  return column.slice(column.lastIndexOf('.') + 1);
}

// Counts and lengths are heavy-tailed (one 40 kB argument among 20-character ones): the log keeps
// one outlier from setting the scale; the sign keeps negative numbers and past dates apart.
const signedLog = (x: number): number => Math.sign(x) * Math.log1p(Math.abs(x));

/** The category value of a cell, undefined when the column is not categorical or the cell says nothing. */
function categoryOf(column: string, cell: Cell | undefined): string | undefined {
  if (cell === undefined) return undefined;
  const suffix = paramSuffix(column);
  if (suffix !== undefined) {
    if (!PARAM_CATEGORICAL.has(suffix) || cell === null) return undefined;
    // CSV rows carry `present: false` for an argument the call did not send: absent, not a category.
    if (suffix === 'present' && cell !== true) return undefined;
    // Every argument that is no date is `date_invalid: false` too: only `true` says something.
    if (suffix === 'date_invalid' && cell !== true) return undefined;
    return String(cell);
  }
  if (!(CATEGORICAL_COLUMNS as readonly string[]).includes(column)) return undefined;
  if (cell === null) return column === 'last_failure_category' ? 'none' : undefined;
  return String(cell);
}

function isNumericColumn(column: string): boolean {
  const suffix = paramSuffix(column);
  return suffix !== undefined ? PARAM_NUMERIC.has(suffix) : (NUMERIC_COLUMNS as readonly string[]).includes(column);
}

/**
 * The features seen in training: categories met at least `minCount` times (rarer ones would only
 * let the model memorise single trajectories), numeric columns with some spread. Sorted, so the
 * encoding does not depend on row order.
 */
export function fitEncoding(rows: readonly FeatureRow[], minCount: number): EncodedFeature[] {
  const categories = new Map<string, { column: string; value: string; n: number }>();
  const numbers = new Map<string, { n: number; sum: number; sumSq: number }>();
  for (const row of rows) {
    for (const [column, cell] of Object.entries(row)) {
      const value = categoryOf(column, cell);
      if (value !== undefined) {
        const key = categoryKey(column, value);
        const seen = categories.get(key);
        if (seen === undefined) categories.set(key, { column, value, n: 1 });
        else seen.n++;
      } else if (typeof cell === 'number' && Number.isFinite(cell) && isNumericColumn(column)) {
        const x = signedLog(cell);
        const acc = numbers.get(column) ?? { n: 0, sum: 0, sumSq: 0 };
        acc.n++;
        acc.sum += x;
        acc.sumSq += x * x;
        numbers.set(column, acc);
      }
    }
  }
  const numeric: NumericFeature[] = [];
  for (const [column, { n, sum, sumSq }] of numbers) {
    if (n < minCount) continue;
    const mean = sum / n;
    const std = Math.sqrt(Math.max(0, sumSq / n - mean * mean));
    if (std > 1e-9) numeric.push({ kind: 'numeric', column, mean, std });
  }
  numeric.sort((a, b) => (a.column < b.column ? -1 : a.column > b.column ? 1 : 0));
  const category: CategoryFeature[] = [...categories.values()]
    .filter((c) => c.n >= minCount)
    .map((c) => ({ kind: 'category' as const, column: c.column, value: c.value }))
    .sort((a, b) => featureName(a).localeCompare(featureName(b), 'en'));
  return [...numeric, ...category];
}

/** A row as the model sees it: the indexes of its non-zero features and their values. */
export interface EncodedRow {
  indexes: number[];
  values: number[];
}

/** Turns rows into the indexes of an encoding; built once per model. */
export class RowEncoder {
  private readonly numeric = new Map<string, { index: number; feature: NumericFeature }>();
  /** Column, then value, to the feature's index: no key string is built per cell. */
  private readonly categories = new Map<string, Map<string, number>>();

  constructor(readonly features: readonly EncodedFeature[]) {
    features.forEach((feature, index) => {
      if (feature.kind === 'numeric') this.numeric.set(feature.column, { index, feature });
      else {
        let values = this.categories.get(feature.column);
        if (values === undefined) this.categories.set(feature.column, (values = new Map()));
        values.set(feature.value, index);
      }
    });
  }

  /**
   * Unseen categories and missing numbers contribute nothing (a standardised 0 is the training
   * mean). One pass over the row's own cells: a model knows hundreds of argument columns, a call
   * has a few dozen.
   */
  encode(row: FeatureRow): EncodedRow {
    const indexes: number[] = [];
    const values: number[] = [];
    for (const column in row) {
      const cell = row[column];
      if (typeof cell === 'number') {
        const numeric = this.numeric.get(column);
        if (numeric !== undefined && Number.isFinite(cell)) {
          indexes.push(numeric.index);
          values.push((signedLog(cell) - numeric.feature.mean) / numeric.feature.std);
          continue;
        }
      }
      const known = this.categories.get(column);
      if (known === undefined) continue;
      const value = categoryOf(column, cell);
      if (value === undefined) continue;
      const index = known.get(value);
      if (index === undefined) continue;
      indexes.push(index);
      values.push(1);
    }
    return { indexes, values };
  }
}
