/**
 * The human spot-check of the judges (seed 000 2.2, "人工抽检 5%"): which judge labels go to a
 * reviewer (a seeded, store-order-independent sample), what a decision does to a label, how
 * decisions survive re-annotation, and the judge's precision computed from them.
 */
import { createHash } from 'node:crypto';
import { wilson } from '../stats/wilson.js';
import { JUDGE_ERROR } from './label.js';
import type { LabelReview, Trajectory, TrajectoryLabel } from '../core/trajectory-types.js';

export const DEFAULT_REVIEW_SHARE = 0.05;

/** A label a judge (not a rule) gave, with a verdict a person can check. */
export function isJudgeLabel(label: TrajectoryLabel): boolean {
  return label.source !== undefined && label.source.startsWith('judge:') && label.name !== JUDGE_ERROR;
}

/** Where a label sits: enough to find it again after the trajectory was re-read. */
export interface LabelRef {
  trajectory_id: string;
  name: string;
  step_index: number;
  source: string;
}

export const labelRef = (trajectoryId: string, label: TrajectoryLabel): LabelRef => ({
  trajectory_id: trajectoryId,
  name: label.name,
  step_index: label.step_index,
  source: label.source ?? '',
});

const sameLabel = (a: TrajectoryLabel, b: Pick<LabelRef, 'name' | 'step_index' | 'source'>): boolean =>
  a.name === b.name && a.step_index === b.step_index && (a.source ?? '') === b.source;

/** The rank of a label in the sample for `seed`: a hash, so the order ignores the store's order. */
function rank(ref: LabelRef, seed: number): string {
  return createHash('sha256').update(`${seed}\u001f${ref.trajectory_id}\u001f${ref.step_index}\u001f${ref.name}\u001f${ref.source}`).digest('hex');
}

/**
 * The labels to review: `share` of the unreviewed judge labels (rounded, at least one when any
 * exist), chosen by a seeded hash so the same seed picks the same labels whatever order they
 * were read in. Returned in store order (trajectory, then step) for a reviewer's convenience.
 */
export function sampleForReview(unreviewed: readonly LabelRef[], share: number, seed: number): LabelRef[] {
  if (!(share > 0 && share <= 1)) throw new RangeError(`share must be in (0, 1], got ${share}`);
  if (unreviewed.length === 0) return [];
  const count = Math.max(1, Math.round(share * unreviewed.length));
  const ranked = unreviewed.map((ref, i) => ({ ref, i, rank: rank(ref, seed) })).sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
  return ranked
    .slice(0, count)
    .sort((a, b) => a.i - b.i)
    .map((r) => r.ref);
}

/** Sets the review on the matching label; returns the labels (a copy) and whether it matched. */
export function applyReview(labels: readonly TrajectoryLabel[], ref: LabelRef, review: LabelReview): { labels: TrajectoryLabel[]; applied: boolean } {
  let applied = false;
  const next = labels.map((label) => {
    if (applied || !sameLabel(label, ref)) return label;
    applied = true;
    return { ...label, review };
  });
  return { labels: next, applied };
}

/**
 * Carries reviews from a trajectory's previous labels onto a fresh annotation's labels (same
 * name, step and source), so re-annotating never discards a person's decisions. A reviewed label
 * the new run no longer produces is kept as it was: the decision still counts for precision.
 */
export function carryOverReviews(previous: readonly TrajectoryLabel[] | undefined, next: readonly TrajectoryLabel[]): TrajectoryLabel[] {
  const reviewed = (previous ?? []).filter((l) => l.review !== undefined);
  if (reviewed.length === 0) return [...next];
  const used = new Set<TrajectoryLabel>();
  const out = next.map((label) => {
    const match = reviewed.find((r) => !used.has(r) && sameLabel(label, { name: r.name, step_index: r.step_index, source: r.source ?? '' }));
    if (match === undefined) return label;
    used.add(match);
    return { ...label, review: match.review! };
  });
  for (const r of reviewed) if (!used.has(r)) out.push(r);
  return out.sort((a, b) => a.step_index - b.step_index || a.name.localeCompare(b.name));
}

/**
 * The labels as reviewed: a label a reviewer rejected ("not a failure") is dropped, a corrected
 * one takes the reviewer's name; everything else is as the annotators gave it. What exports use.
 */
export function reviewedLabels(labels: readonly TrajectoryLabel[]): TrajectoryLabel[] {
  const out: TrajectoryLabel[] = [];
  for (const label of labels) {
    if (label.review?.decision === 'rejected') continue;
    if (label.review?.decision === 'corrected' && label.review.corrected_to !== undefined) out.push({ ...label, name: label.review.corrected_to });
    else out.push(label);
  }
  return out;
}

/** Precision of one group of reviewed labels: accepted / reviewed, with a 95 % Wilson interval. */
export interface PrecisionRow {
  /** The judge (`judge:llm:<model>`), the label name, or `all`. */
  key: string;
  reviewed: number;
  accepted: number;
  corrected: number;
  rejected: number;
  precision: number | null;
  ci95: [number, number];
}

export interface PrecisionReport {
  /** Judge labels in the store, reviewed or not. */
  judge_labels: number;
  reviewed: number;
  overall: PrecisionRow;
  by_judge: PrecisionRow[];
  by_label: PrecisionRow[];
}

function row(key: string, reviews: readonly LabelReview[]): PrecisionRow {
  const count = (d: LabelReview['decision']) => reviews.filter((r) => r.decision === d).length;
  const accepted = count('accepted');
  return {
    key,
    reviewed: reviews.length,
    accepted,
    corrected: count('corrected'),
    rejected: count('rejected'),
    precision: reviews.length === 0 ? null : accepted / reviews.length,
    ci95: wilson(accepted, reviews.length),
  };
}

function grouped(labels: readonly TrajectoryLabel[], keyOf: (l: TrajectoryLabel) => string): PrecisionRow[] {
  const groups = new Map<string, LabelReview[]>();
  for (const label of labels) groups.set(keyOf(label), [...(groups.get(keyOf(label)) ?? []), label.review!]);
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, reviews]) => row(key, reviews));
}

/**
 * The judges' precision from the reviewers' decisions: a label is a true positive when accepted;
 * corrected (right step, wrong label) and rejected (no failure) both count against it. Skipped
 * labels are not decisions and are not counted.
 */
export function precisionReport(judgeLabels: readonly TrajectoryLabel[]): PrecisionReport {
  const reviewed = judgeLabels.filter((l) => l.review !== undefined);
  return {
    judge_labels: judgeLabels.length,
    reviewed: reviewed.length,
    overall: row('all', reviewed.map((l) => l.review!)),
    by_judge: grouped(reviewed, (l) => l.source ?? ''),
    by_label: grouped(reviewed, (l) => l.name),
  };
}

/** The trajectory with {@link reviewedLabels}; the same object when no label was reviewed. */
export function withReviewedLabels(trajectory: Trajectory): Trajectory {
  if (trajectory.labels === undefined || !trajectory.labels.some((l) => l.review !== undefined)) return trajectory;
  return { ...trajectory, labels: reviewedLabels(trajectory.labels) };
}

/** {@link withReviewedLabels} over a stream of trajectories, for exporters. */
export async function* reviewedTrajectories(trajectories: AsyncIterable<Trajectory> | Iterable<Trajectory>): AsyncGenerator<Trajectory> {
  for await (const trajectory of trajectories) yield withReviewedLabels(trajectory);
}
