/**
 * Annotation (seed 000 section 2.2): rule annotators, the semantic judges (heuristic and LLM), the
 * outcome backtrace, rare-failure flags and the human review of the judges.
 */
export { JUDGE_ERROR, LABEL_NAMES } from './label.js';
export type { Annotator, Label, LabelName } from './label.js';
export { backoffViolation, blindRetry, cascadeFailure, idempotencyRisk, ignoredError, loopFailure, ruleAnnotators } from './rules/index.js';
export type { IdempotencyRiskOptions, RuleOptions } from './rules/index.js';
export { backtrace, decisionStepOf, BACKTRACE_ANNOTATOR } from './backtrace.js';
export type { BacktraceResult, DecisionMark } from './backtrace.js';
export { heuristicJudge, judgeStep, JUDGE_CONFIDENCE } from './judge/heuristic.js';
export type { HeuristicJudgeOptions, JudgeCheck, JudgeFinding } from './judge/heuristic.js';
export { annotateTrajectory } from './annotate-trajectory.js';
export type { AnnotateOptions, AnnotatedTrajectory } from './annotate-trajectory.js';
export { createLlmJudge } from './judge/llm.js';
export type { LlmJudge, LlmJudgeOptions, LlmJudgement, LlmJudgeStats } from './judge/llm.js';
export { JUDGE_PROMPT_VERSION, MISMATCH_KINDS, VERDICT_SCHEMA, parseVerdict, questionFor } from './judge/llm-verdict.js';
export type { JudgeQuestion, MismatchKind, Verdict } from './judge/llm-verdict.js';
export { fileJudgeCache, memoryJudgeCache, judgeCacheKey } from './judge/judge-cache.js';
export type { JudgeCache } from './judge/judge-cache.js';
export { annotateJudged, heuristicSemanticJudge, parseJudgeSpec, DEFAULT_JUDGE_CACHE_PATH, HEURISTIC_JUDGE_SOURCE } from './judge/judged-annotation.js';
export type { JudgedAnnotation, JudgeSpec, SemanticJudge } from './judge/judged-annotation.js';
export { RareFailureIndex, stepSignature, RARE_FAILURE, RARE_FAILURE_SOURCE } from './rare-failure.js';
export {
  applyReview,
  carryOverReviews,
  DEFAULT_REVIEW_SHARE,
  isJudgeLabel,
  labelRef,
  precisionReport,
  reviewedLabels,
  reviewedTrajectories,
  sampleForReview,
  withReviewedLabels,
} from './review.js';
export type { LabelRef, PrecisionReport, PrecisionRow } from './review.js';
