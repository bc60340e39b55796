/**
 * One trajectory's full annotation as `faultline annotate` stores it: the rules, a semantic
 * judge (the offline heuristic one or an LLM, which is asynchronous), the outcome backtrace,
 * `judge_error` and `rare_failure` labels, and the reviewers' earlier decisions carried over.
 *
 * Reviews feed back: a judge label a reviewer rejected does not fault a decision in the
 * backtrace, and a corrected one faults it under the reviewer's label.
 */
import { annotateTrajectory, type AnnotatedTrajectory } from '../annotate-trajectory.js';
import { byStepThenName } from '../annotated-lines.js';
import { LABEL_NAMES, type Label, type LabelName } from '../label.js';
import type { RareFailureIndex } from '../rare-failure.js';
import { carryOverReviews } from '../review.js';
import type { Trajectory, TrajectoryLabel } from '../../core/trajectory-types.js';
import { outcomeIsOpen } from '../inferred-outcome.js';
import { closingAnswer, inferOutcomeFromConversation } from './final-answer.js';
import { heuristicJudge, type HeuristicJudgeOptions } from './heuristic.js';
import type { LlmJudgement } from './llm.js';

/** Default LLM verdict cache file, relative to the working directory (beside the default SQLite store). */
export const DEFAULT_JUDGE_CACHE_PATH = '.faultline/judge-cache.jsonl';

/** The `source` of the heuristic judge's labels. */
export const HEURISTIC_JUDGE_SOURCE = 'judge:heuristic';

/** A semantic judge: labels for calls that missed the intent, and the steps it could not judge. */
export interface SemanticJudge {
  readonly source: string;
  judgeTrajectory(trajectory: Trajectory): LlmJudgement | Promise<LlmJudgement>;
}

/** A judge that answers at once (the heuristic one, or none). */
export interface SyncSemanticJudge extends SemanticJudge {
  judgeTrajectory(trajectory: Trajectory): LlmJudgement;
}

export function heuristicSemanticJudge(options: HeuristicJudgeOptions = {}): SyncSemanticJudge {
  return {
    source: HEURISTIC_JUDGE_SOURCE,
    judgeTrajectory: (t) => ({
      labels: heuristicJudge(t, options).map((l) => ({ ...l, source: HEURISTIC_JUDGE_SOURCE })),
      errors: [],
      ...(outcomeIsOpen(t) && closingAnswer(t) !== null ? { outcome: { inferred: inferOutcomeFromConversation(t), by: HEURISTIC_JUDGE_SOURCE } } : {}),
    }),
  };
}

/** `heuristic` or `llm:<model>`, as `--judge` takes it. */
export type JudgeSpec = { kind: 'heuristic' } | { kind: 'llm'; model: string };

/** Parses `--judge`; undefined for anything else. */
export function parseJudgeSpec(text: string): JudgeSpec | undefined {
  const trimmed = text.trim();
  if (trimmed === 'heuristic') return { kind: 'heuristic' };
  const llm = /^llm:(.+)$/.exec(trimmed);
  if (llm !== null && llm[1]!.trim() !== '') return { kind: 'llm', model: llm[1]!.trim() };
  return undefined;
}

export interface JudgedAnnotation extends AnnotatedTrajectory {
  /** Everything to store on the trajectory: rule, judge, judge_error and rare_failure labels, reviews kept. */
  stored: TrajectoryLabel[];
}

const isLabelName = (name: string | undefined): name is LabelName => LABEL_NAMES.includes(name as LabelName);

/** The judge's labels as the backtrace should see them after the reviewers' earlier decisions. */
function asReviewed(judged: readonly Label[], previous: readonly TrajectoryLabel[]): Label[] {
  const out: Label[] = [];
  for (const label of judged) {
    const review = previous.find((p) => p.review !== undefined && p.name === label.name && p.step_index === label.step_index && p.source === label.source)?.review;
    if (review?.decision === 'rejected') continue;
    out.push(review?.decision === 'corrected' && isLabelName(review.corrected_to) ? { ...label, name: review.corrected_to } : label);
  }
  return out;
}

const stored = (l: Label | TrajectoryLabel): TrajectoryLabel => ({
  name: l.name,
  step_index: l.step_index,
  confidence: l.confidence,
  reason: l.reason,
  ...(l.source === undefined ? {} : { source: l.source }),
  ...(l.mismatch_kind === undefined ? {} : { mismatch_kind: l.mismatch_kind }),
});

function withoutLabels(trajectory: Trajectory): Trajectory {
  const { labels: _labels, ...unlabelled } = trajectory;
  return unlabelled;
}

// An object rest copies every property: only a trajectory with a `labels` key needs the copy
// (imported ones have none; the annotators read the trajectory, never change it).
const unlabelledOf = (trajectory: Trajectory): Trajectory => ('labels' in trajectory ? withoutLabels(trajectory) : trajectory);

/** Annotates a stored trajectory, replacing its earlier labels but keeping their reviews. */
export async function annotateJudged(trajectory: Trajectory, judge: SemanticJudge, rare?: RareFailureIndex): Promise<JudgedAnnotation> {
  const unlabelled = unlabelledOf(trajectory);
  return withJudgement(trajectory, unlabelled, await judge.judgeTrajectory(unlabelled), rare);
}

/**
 * `annotateJudged` with a judge that answers at once (the heuristic one, or none), without a
 * promise per trajectory: the parallel annotator's workers run it millions of times.
 */
export function annotateJudgedSync(trajectory: Trajectory, judge: SyncSemanticJudge, rare?: RareFailureIndex): JudgedAnnotation {
  const unlabelled = unlabelledOf(trajectory);
  return withJudgement(trajectory, unlabelled, judge.judgeTrajectory(unlabelled), rare);
}

function withJudgement(trajectory: Trajectory, unlabelled: Trajectory, judged: LlmJudgement, rare: RareFailureIndex | undefined): JudgedAnnotation {
  const previous = trajectory.labels ?? [];
  const result = annotateTrajectory(unlabelled, { judge: () => asReviewed(judged.labels, previous), ...(judged.outcome === undefined ? {} : { outcome: judged.outcome }) });
  const rules = result.labels.filter((l) => l.source === undefined);
  const fresh = [...rules, ...judged.labels, ...judged.errors, ...(rare?.labelsFor(unlabelled) ?? [])].map(stored).sort(byStepThenName);
  return { ...result, stored: carryOverReviews(previous, fresh) };
}
