/** Runs every annotator over a trajectory: the rules, the semantic judge, then the outcome backtrace. */
import { backtrace, type DecisionMark } from './backtrace.js';
import { withInferredOutcome, type OutcomeJudgement } from './inferred-outcome.js';
import { heuristicJudge, type HeuristicJudgeOptions } from './judge/heuristic.js';
import type { Annotator, Label } from './label.js';
import { ruleAnnotators, type RuleOptions } from './rules/index.js';
import { isFailed } from './step-facts.js';
import type { Trajectory } from '../core/trajectory-types.js';

export interface AnnotateOptions extends RuleOptions, HeuristicJudgeOptions {
  /** Replaces the default semantic judge (the offline heuristic one). */
  judge?: Annotator;
  /**
   * The judge's reading of the task's outcome, for a log that states none: put in place before
   * the backtrace, which anchors on it. Absent: the outcome stays as imported.
   */
  outcome?: OutcomeJudgement;
}

export interface AnnotatedTrajectory {
  /** The trajectory with an inferred outcome (when the log stated none) and the backtrace's decision labels filled in. */
  trajectory: Trajectory;
  /** Rule and judge labels, ordered by step then name. */
  labels: Label[];
  marks: DecisionMark[];
}

// Built once: this runs per trajectory, millions of times over a large file.
const DEFAULT_RULES = ruleAnnotators();

// Label names are ASCII identifiers: code-unit order is their alphabetical order, and cheaper than localeCompare.
const byStepThenName = (a: Label, b: Label): number => a.step_index - b.step_index || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function annotateTrajectory(imported: Trajectory, options: AnnotateOptions = {}): AnnotatedTrajectory {
  const trajectory = withInferredOutcome(imported, options.outcome);
  // The rules label how failures were handled: a trajectory without a failed step has nothing
  // for any of them (rules.test.ts holds each rule to it), and most trajectories of a log are so.
  const rules = !trajectory.steps.some(isFailed) ? [] : options.idempotent === undefined ? DEFAULT_RULES : ruleAnnotators(options);
  const labels: Label[] = [];
  for (const rule of rules) for (const label of rule(trajectory)) labels.push(label);
  for (const label of options.judge === undefined ? heuristicJudge(trajectory, options) : options.judge(trajectory)) labels.push(label);
  labels.sort(byStepThenName);
  const { trajectory: annotated, marks } = backtrace(trajectory, labels);
  return { trajectory: annotated, labels, marks };
}
