/** How well probabilities separate failed calls (label 1) from the rest. */

export interface ThresholdMetrics {
  threshold: number;
  true_positives: number;
  false_positives: number;
  false_negatives: number;
  true_negatives: number;
  /** Of the calls flagged, the share that failed; 0 when none was flagged. */
  precision: number;
  /** Of the calls that failed, the share flagged. */
  recall: number;
  f1: number;
  accuracy: number;
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Flagged means probability >= threshold. */
export function atThreshold(probabilities: readonly number[], labels: readonly number[], threshold: number): ThresholdMetrics {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  probabilities.forEach((p, i) => {
    const flagged = p >= threshold;
    if (labels[i] === 1) flagged ? tp++ : fn++;
    else flagged ? fp++ : tn++;
  });
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  return {
    threshold: round(threshold),
    true_positives: tp,
    false_positives: fp,
    false_negatives: fn,
    true_negatives: tn,
    precision: round(precision),
    recall: round(recall),
    f1: round(precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall)),
    accuracy: round(probabilities.length === 0 ? 0 : (tp + tn) / probabilities.length),
  };
}

/** The area under the ROC curve: the chance a failed call scores above a successful one (ties count half). */
export function rocAuc(probabilities: readonly number[], labels: readonly number[]): number {
  const order = probabilities.map((p, i) => [p, labels[i]!] as const).sort((a, b) => a[0] - b[0]);
  let positives = 0;
  let rankSum = 0;
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j < order.length && order[j]![0] === order[i]![0]) j++;
    const rank = (i + 1 + j) / 2; // mean 1-based rank of the tied run
    for (let k = i; k < j; k++) if (order[k]![1] === 1) {
      positives++;
      rankSum += rank;
    }
    i = j;
  }
  const negatives = order.length - positives;
  if (positives === 0 || negatives === 0) return Number.NaN;
  return round((rankSum - (positives * (positives + 1)) / 2) / (positives * negatives));
}

/** Mean squared error of the probabilities (lower is better; a constant p scores p(1-p) at base rate p). */
export function brierScore(probabilities: readonly number[], labels: readonly number[]): number {
  let sum = 0;
  probabilities.forEach((p, i) => (sum += (p - labels[i]!) ** 2));
  return round(probabilities.length === 0 ? 0 : sum / probabilities.length);
}

export function logLoss(probabilities: readonly number[], labels: readonly number[]): number {
  let sum = 0;
  probabilities.forEach((p, i) => {
    const q = Math.min(1 - 1e-12, Math.max(1e-12, p));
    sum -= labels[i] === 1 ? Math.log(q) : Math.log(1 - q);
  });
  return round(probabilities.length === 0 ? 0 : sum / probabilities.length);
}

/** The threshold with the best F1 (the higher one on a tie, so fewer calls are flagged). */
export function bestF1Threshold(probabilities: readonly number[], labels: readonly number[]): number {
  const order = probabilities.map((p, i) => [p, labels[i]!] as const).sort((a, b) => b[0] - a[0]);
  const positives = order.filter(([, y]) => y === 1).length;
  let best = { f1: -1, threshold: 0.5 };
  let tp = 0;
  let flagged = 0;
  for (let i = 0; i < order.length; ) {
    const p = order[i]![0];
    while (i < order.length && order[i]![0] === p) {
      if (order[i]![1] === 1) tp++;
      flagged++;
      i++;
    }
    const f1 = positives === 0 ? 0 : (2 * tp) / (flagged + positives);
    if (f1 > best.f1) best = { f1, threshold: p };
  }
  return best.threshold;
}
