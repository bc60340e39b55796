/**
 * What an annotator says about one step of a trajectory. Labels are data: rules, the outcome
 * backtrace and the judges all return them, and nothing here mutates the trajectory.
 */
import type { Trajectory } from '../core/trajectory-types.js';

/** The rule labels (seed 000 section 2.2 and DESIGN.md's anti-patterns) and the judge's. */
export type LabelName =
  | 'loop_failure'
  | 'idempotency_risk'
  | 'cascade_failure'
  | 'ignored_error'
  | 'blind_retry'
  | 'backoff_violation'
  | 'semantic_error';

export const LABEL_NAMES: readonly LabelName[] = [
  'loop_failure',
  'idempotency_risk',
  'cascade_failure',
  'ignored_error',
  'blind_retry',
  'backoff_violation',
  'semantic_error',
];

export interface Label {
  name: LabelName;
  /** The 1-based step the label is about (the offending call). */
  step_index: number;
  /** The rule's fixed precision estimate, 0..1; rules are high-coverage, low-precision (seed 000 2.2). */
  confidence: number;
  /** Why, in terms of the steps involved, so a reviewer can check it. */
  reason: string;
  /**
   * The step whose `agent_decision` the label faults, when it is not `step_index`: a retry at
   * step 5 of the call made at step 4 is the decision taken after step 4.
   */
  decision_step?: number;
  /** Who said so, for the judges: `judge:heuristic`, `judge:llm:<model>`. Rules leave it out. */
  source?: string;
  /** The LLM judge's kind of mismatch (date, timezone, entity, empty_under_narrow_filter, other). */
  mismatch_kind?: string;
}

/** The label a step gets when a semantic judge could not give a verdict on it (stored beside the others, faults no decision). */
export const JUDGE_ERROR = 'judge_error';

/** A rule annotator: a pure function of the trajectory. */
export type Annotator = (trajectory: Trajectory) => Label[];
