/**
 * L2-regularised logistic regression by accelerated gradient descent over sparse rows.
 *
 * Written here rather than taken from npm: the maintained pure-JS packages found
 * (ml-logistic-regression) fit dense matrices with a fixed learning rate and no L2 term, and
 * one-hot rows of a few dozen non-zeros among hundreds of columns want neither. The objective is
 * strictly convex, so the fit has one answer whatever the start: the same rows give the same
 * weights, with no seed involved.
 */
import type { EncodedRow } from './feature-encoding.js';

export interface LogisticFit {
  weights: number[];
  bias: number;
  iterations: number;
  converged: boolean;
}

export interface LogisticOptions {
  /** The L2 penalty λ in mean log-loss + λ/2 ‖w‖² (the bias is not penalised). */
  l2: number;
  maxIterations?: number;
  /** Stop when no gradient component exceeds this. */
  tolerance?: number;
}

export const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

function margin(row: EncodedRow, w: Float64Array, bias: number): number {
  let z = bias;
  for (let k = 0; k < row.indexes.length; k++) z += w[row.indexes[k]!]! * row.values[k]!;
  return z;
}

/**
 * The largest eigenvalue of XᵀX / n (with the bias column), by power iteration from a fixed
 * start: it bounds the loss's curvature, so 1 / (λmax / 4 + l2) is a step that cannot overshoot.
 */
function curvatureBound(rows: readonly EncodedRow[], d: number): number {
  let v = new Float64Array(d + 1).fill(1 / Math.sqrt(d + 1));
  let lambda = 1;
  for (let it = 0; it < 50; it++) {
    const next = new Float64Array(d + 1);
    for (const row of rows) {
      let xv = v[d]!;
      for (let k = 0; k < row.indexes.length; k++) xv += v[row.indexes[k]!]! * row.values[k]!;
      for (let k = 0; k < row.indexes.length; k++) next[row.indexes[k]!]! += row.values[k]! * xv;
      next[d]! += xv;
    }
    let norm = 0;
    for (let j = 0; j <= d; j++) norm += next[j]! * next[j]!;
    norm = Math.sqrt(norm) / rows.length;
    if (norm === 0) break;
    for (let j = 0; j <= d; j++) next[j]! /= norm * rows.length;
    const settled = Math.abs(norm - lambda) < 1e-6 * lambda;
    lambda = norm;
    v = next;
    if (settled) break;
  }
  return lambda;
}

/** Fits weights for `d` features to rows labelled `labels` (1: failed). */
export function fitLogistic(rows: readonly EncodedRow[], labels: readonly number[], d: number, options: LogisticOptions): LogisticFit {
  const n = rows.length;
  const { l2 } = options;
  const maxIterations = options.maxIterations ?? 3000;
  const tolerance = options.tolerance ?? 1e-6;
  const step = 1 / (curvatureBound(rows, d) / 4 + l2);
  // Nesterov's momentum for a strongly convex loss: the l2 term makes the loss at least l2-convex.
  const kappa = (1 / step) / Math.max(l2, 1e-12);
  const momentum = (Math.sqrt(kappa) - 1) / (Math.sqrt(kappa) + 1);
  let w = new Float64Array(d);
  let b = 0;
  let yw = new Float64Array(d);
  let yb = 0;
  const grad = new Float64Array(d);
  for (let it = 1; it <= maxIterations; it++) {
    grad.fill(0);
    let gb = 0;
    for (let i = 0; i < n; i++) {
      const row = rows[i]!;
      const r = (sigmoid(margin(row, yw, yb)) - labels[i]!) / n;
      for (let k = 0; k < row.indexes.length; k++) grad[row.indexes[k]!]! += r * row.values[k]!;
      gb += r;
    }
    let largest = Math.abs(gb);
    const nextW = new Float64Array(d);
    for (let j = 0; j < d; j++) {
      const g = grad[j]! + l2 * yw[j]!;
      largest = Math.max(largest, Math.abs(g));
      nextW[j] = yw[j]! - step * g;
    }
    const nextB = yb - step * gb;
    if (largest < tolerance) return { weights: [...yw], bias: yb, iterations: it, converged: true };
    const nextYw = new Float64Array(d);
    for (let j = 0; j < d; j++) nextYw[j] = nextW[j]! + momentum * (nextW[j]! - w[j]!);
    yb = nextB + momentum * (nextB - b);
    w = nextW;
    b = nextB;
    yw = nextYw;
  }
  return { weights: [...w], bias: b, iterations: maxIterations, converged: false };
}

/** The probability of failure for one encoded row. */
export function predictProbability(row: EncodedRow, weights: ArrayLike<number>, bias: number): number {
  let z = bias;
  for (let k = 0; k < row.indexes.length; k++) z += weights[row.indexes[k]!]! * row.values[k]!;
  return sigmoid(z);
}
