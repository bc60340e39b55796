/** Annotation (seed 000 section 2.2): rule annotators, the semantic judge and the outcome backtrace. */
export * from './label.js';
export * from './rules/index.js';
export { backtrace, decisionStepOf, BACKTRACE_ANNOTATOR } from './backtrace.js';
export type { BacktraceResult, DecisionMark } from './backtrace.js';
export { heuristicJudge, judgeStep, JUDGE_CONFIDENCE } from './judge/heuristic.js';
export type { HeuristicJudgeOptions, JudgeCheck, JudgeFinding } from './judge/heuristic.js';
export { annotateTrajectory } from './annotate-trajectory.js';
export type { AnnotateOptions, AnnotatedTrajectory } from './annotate-trajectory.js';
