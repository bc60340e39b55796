/**
 * Reviews as they live in a store: the judge labels of every stored trajectory, and one
 * reviewer's decision written onto its label. `faultline review` and the dashboard's review page
 * both read and save through here, so a decision made in either is the same row.
 */
import type { TrajectoryStore } from '../core/store-types.js';
import type { LabelReview, TrajectoryLabel } from '../core/trajectory-types.js';
import { applyReview, isJudgeLabel, labelRef, type LabelRef } from './review.js';

const PAGE = 500;

/** Every judge label in the store, with where it is, in store order (trajectory id, then label order). */
export async function readJudgeLabels(store: TrajectoryStore): Promise<{ ref: LabelRef; label: TrajectoryLabel }[]> {
  const out: { ref: LabelRef; label: TrajectoryLabel }[] = [];
  for (let afterId: string | undefined; ; ) {
    const page = await store.queryTrajectories({ limit: PAGE, ...(afterId === undefined ? {} : { afterId }) });
    for (const t of page) for (const label of t.labels ?? []) if (isJudgeLabel(label)) out.push({ ref: labelRef(t.trajectory_id, label), label });
    if (page.length < PAGE) break;
    afterId = page[page.length - 1]!.trajectory_id;
  }
  return out;
}

/**
 * Writes `review` onto the label `ref` names, replacing its trajectory in the store. False when
 * the trajectory or the label is no longer there (re-imported, re-annotated without it).
 */
export async function saveLabelReview(store: TrajectoryStore, ref: LabelRef, review: LabelReview): Promise<boolean> {
  const trajectory = await store.getTrajectory(ref.trajectory_id);
  if (trajectory === null) return false;
  const { labels, applied } = applyReview(trajectory.labels ?? [], ref, review);
  if (applied) await store.updateTrajectories([{ ...trajectory, labels }]);
  return applied;
}
