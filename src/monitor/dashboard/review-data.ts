/**
 * The review page's data and its one write: the sample of judge labels `faultline review` would
 * put to a reviewer (the same share, seed and sampling, sampleForReview), the judges' precision
 * from the decisions so far (precisionReport, as `review --report`), and a decision saved onto
 * its label through review-store.ts, exactly as the command saves it.
 */
import { HEURISTIC_JUDGE_QUALITY, type HeuristicJudgeQuality } from '../../annotate/judge/heuristic-judge-quality.js';
import { HEURISTIC_JUDGE_SOURCE } from '../../annotate/judge/judged-annotation.js';
import { LABEL_NAMES } from '../../annotate/label.js';
import { readJudgeLabels, saveLabelReview } from '../../annotate/review-store.js';
import { DEFAULT_REVIEW_SHARE, isJudgeLabel, precisionReport, sampleForReview, type LabelRef, type PrecisionReport } from '../../annotate/review.js';
import { ConfigError } from '../../core/errors.js';
import { DEFAULT_SEED } from '../../core/seeded-random.js';
import type { TrajectoryStore } from '../../core/store-types.js';
import type { LabelReview, TrajectoryLabel, TrajectorySource, TrajectoryStep } from '../../core/trajectory-types.js';

/** The sample's settings: `faultline review`'s `--share` and `--seed`, with its defaults. */
export interface ReviewSampleOptions {
  share?: number;
  seed?: number;
}

/** The sample's seed when none is given: the default seed of every command. */
export const DEFAULT_REVIEW_SEED = DEFAULT_SEED;
/** Sampled labels shown on one page at most (the rest follow as these are decided). */
export const REVIEW_PAGE_ITEMS = 100;

export interface ReviewItem {
  ref: LabelRef;
  label: TrajectoryLabel;
  trajectory: { trajectory_id: string; source: TrajectorySource; source_id: string | null; task_description: string | null; steps: number };
  /** The step the label is about; null when the trajectory has no such step. */
  step: TrajectoryStep | null;
}

/** `/api/review`. */
export interface ReviewView {
  /** Whether this dashboard takes decisions (started with review enabled). */
  enabled: boolean;
  share: number;
  seed: number;
  judge_labels: number;
  unreviewed: number;
  /** How many labels the sample holds; `items` lists the first {@link REVIEW_PAGE_ITEMS}. */
  sampled: number;
  items: ReviewItem[];
  /** What `faultline review --json` prints: the reviewers' precision, and the judges' figures measured on the repository's labelled calls. */
  report: PrecisionReport & { measured: Record<string, HeuristicJudgeQuality['semantic_error']> };
}

export async function readReview(store: TrajectoryStore, options: ReviewSampleOptions, enabled: boolean): Promise<ReviewView> {
  const share = options.share ?? DEFAULT_REVIEW_SHARE;
  const seed = options.seed ?? DEFAULT_REVIEW_SEED;
  const all = await readJudgeLabels(store);
  const unreviewed = all.filter((a) => a.label.review === undefined).map((a) => a.ref);
  const sample = sampleForReview(unreviewed, share, seed);
  const items: ReviewItem[] = [];
  for (const ref of sample.slice(0, REVIEW_PAGE_ITEMS)) {
    const t = await store.getTrajectory(ref.trajectory_id);
    const label = t?.labels?.find((l) => l.name === ref.name && l.step_index === ref.step_index && (l.source ?? '') === ref.source);
    if (t === null || label === undefined) continue;
    items.push({
      ref,
      label,
      trajectory: { trajectory_id: t.trajectory_id, source: t.metadata.source, source_id: t.source_id, task_description: t.task_description, steps: t.steps.length },
      step: t.steps.find((s) => s.step_index === ref.step_index) ?? null,
    });
  }
  return { enabled, share, seed, judge_labels: all.length, unreviewed: unreviewed.length, sampled: sample.length, items, report: { ...precisionReport(all.map((a) => a.label)), measured: { [HEURISTIC_JUDGE_SOURCE]: HEURISTIC_JUDGE_QUALITY.semantic_error } } };
}

/** A decision as the page posts it: the label, and accept / correct to another label / not a failure. */
export interface DecisionInput {
  ref: LabelRef;
  decision: LabelReview['decision'];
  corrected_to?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** @throws ConfigError with one line naming the field that is wrong (answered with 400). */
export function parseDecision(body: unknown): DecisionInput {
  if (!isObject(body)) throw new ConfigError('expected a JSON object { trajectory_id, step_index, name, source, decision, corrected_to? }', 'body');
  const text = (field: string): string => {
    const v = body[field];
    if (typeof v !== 'string' || v === '' || v.length > 512) throw new ConfigError(`invalid ${field}: expected a non-empty string`, field);
    return v;
  };
  const step = body['step_index'];
  if (typeof step !== 'number' || !Number.isInteger(step) || step < 0) throw new ConfigError('invalid step_index: expected a non-negative integer', 'step_index');
  const ref: LabelRef = { trajectory_id: text('trajectory_id'), step_index: step, name: text('name'), source: text('source') };
  const decision = body['decision'];
  if (decision !== 'accepted' && decision !== 'corrected' && decision !== 'rejected') {
    throw new ConfigError(`invalid decision ${JSON.stringify(decision)}: expected accepted, corrected or rejected (a skip is not saved)`, 'decision');
  }
  if (decision !== 'corrected') {
    if (body['corrected_to'] !== undefined) throw new ConfigError('corrected_to goes only with the decision corrected', 'corrected_to');
    return { ref, decision };
  }
  const to = body['corrected_to'];
  if (typeof to !== 'string' || !(LABEL_NAMES as readonly string[]).includes(to) || to === ref.name) {
    throw new ConfigError(`invalid corrected_to ${JSON.stringify(to)}: expected a label other than ${ref.name} (${LABEL_NAMES.join(', ')}); "not a failure" is the decision rejected`, 'corrected_to');
  }
  return { ref, decision, corrected_to: to };
}

/** Why a decision was not saved: the label is gone, or someone decided it already. */
export type DecisionRefusal = { status: 404 | 409; message: string };

/**
 * Saves the decision onto its label, stamped `nowMs`, as `faultline review` does. Only judge
 * labels are reviewed, and a label already decided is left as it is (two tabs, or the terminal
 * and the page, must not overwrite each other's decision).
 */
export async function saveDecision(store: TrajectoryStore, input: DecisionInput, nowMs: number): Promise<LabelReview | DecisionRefusal> {
  const t = await store.getTrajectory(input.ref.trajectory_id);
  const label = t?.labels?.find((l) => l.name === input.ref.name && l.step_index === input.ref.step_index && (l.source ?? '') === input.ref.source);
  if (label === undefined || !isJudgeLabel(label)) return { status: 404, message: `no judge label ${input.ref.name} on step ${input.ref.step_index} of ${input.ref.trajectory_id}` };
  if (label.review !== undefined) return { status: 409, message: `already reviewed: ${label.review.decision} at ${label.review.reviewed_at}` };
  const review: LabelReview = { decision: input.decision, ...(input.corrected_to === undefined ? {} : { corrected_to: input.corrected_to }), reviewed_at: new Date(nowMs).toISOString() };
  if (!(await saveLabelReview(store, input.ref, review))) return { status: 404, message: `the trajectory ${input.ref.trajectory_id} changed while saving; reload the page` };
  return review;
}
