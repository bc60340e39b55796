/** Runs every annotator over a trajectory: the rules, the semantic judge, then the outcome backtrace. */
import { backtrace, type DecisionMark } from './backtrace.js';
import { heuristicJudge, type HeuristicJudgeOptions } from './judge/heuristic.js';
import type { Annotator, Label } from './label.js';
import { ruleAnnotators, type RuleOptions } from './rules/index.js';
import type { Trajectory } from '../trajectory/types.js';

export interface AnnotateOptions extends RuleOptions, HeuristicJudgeOptions {
  /** Replaces the default semantic judge (the offline heuristic one). */
  judge?: Annotator;
}

export interface AnnotatedTrajectory {
  /** The trajectory with the backtrace's decision labels filled in. */
  trajectory: Trajectory;
  /** Rule and judge labels, ordered by step then name. */
  labels: Label[];
  marks: DecisionMark[];
}

export function annotateTrajectory(trajectory: Trajectory, options: AnnotateOptions = {}): AnnotatedTrajectory {
  const judge: Annotator = options.judge ?? ((t) => heuristicJudge(t, options));
  const labels = [...ruleAnnotators(options), judge]
    .flatMap((annotate) => annotate(trajectory))
    .sort((a, b) => a.step_index - b.step_index || a.name.localeCompare(b.name));
  const { trajectory: annotated, marks } = backtrace(trajectory, labels);
  return { trajectory: annotated, labels, marks };
}
