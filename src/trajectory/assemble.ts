/**
 * Turns the parts every source yields (steps, outcome, ids) into a finished trajectory: the
 * deterministic id, the failure summary and the metadata defaults.
 */
import { hash } from 'node:crypto';
import { canonicalJson } from '../core/params-hash.js';
import { toTrainingLabel, type FailureCategory, type FailureStage } from '../core/taxonomy.js';
import {
  TRAJECTORY_SCHEMA_VERSION,
  type FailureSummary,
  type FinalOutcome,
  type OutcomeBasis,
  type Trajectory,
  type TrajectoryMetadata,
  type TrajectorySource,
  type TrajectoryStep,
  type ConversationTurn,
  type ToolDefinition,
} from '../core/trajectory-types.js';

/** The failure fields of a step, from seed 001's classification. */
export interface StepFailure {
  failure_type: TrajectoryStep['failure_type'];
  failure_subtype: TrajectoryStep['failure_subtype'];
  failure_category: FailureCategory | null;
  failure_stage: FailureStage | null;
  failure_kind: string | null;
}

export const NO_FAILURE: StepFailure = {
  failure_type: null,
  failure_subtype: null,
  failure_category: null,
  failure_stage: null,
  failure_kind: null,
};

/** Both taxonomies for one failed call (seed 000's via `toTrainingLabel`). */
export function stepFailure(category: FailureCategory, type: string, stage: FailureStage): StepFailure {
  const label = toTrainingLabel(category, type);
  return {
    failure_type: label?.failure_type ?? null,
    failure_subtype: label?.failure_subtype ?? null,
    failure_category: category,
    failure_stage: stage,
    failure_kind: type,
  };
}

export const isFailedStep = (step: TrajectoryStep): boolean => step.status !== null && step.status !== 'success';

export function summarizeFailures(steps: readonly TrajectoryStep[], outcome: FinalOutcome): FailureSummary {
  const failed = steps.filter(isFailedStep);
  const types: string[] = [];
  const categories: Partial<Record<FailureCategory, number>> = {};
  for (const step of failed) {
    if (step.failure_type !== null && step.failure_subtype !== null) {
      const label = `${step.failure_type}/${step.failure_subtype}`;
      if (!types.includes(label)) types.push(label);
    }
    if (step.failure_category !== null) categories[step.failure_category] = (categories[step.failure_category] ?? 0) + 1;
  }
  const last = steps[steps.length - 1];
  return {
    total_failures: failed.length,
    failure_types: types,
    failure_categories: categories,
    recovery_pattern: failed[0]?.agent_decision.action ?? null,
    recovery_success: failed.length === 0 ? null : last !== undefined && !isFailedStep(last) && outcome !== 'failure',
  };
}

const defaultBasis = (outcome: FinalOutcome): OutcomeBasis =>
  outcome === 'unknown' ? { source: 'unstated', confidence: 0, evidence: null } : { source: 'stated', confidence: 1, evidence: null };

export interface TrajectoryParts {
  source: TrajectorySource;
  source_id: string | null;
  task_description: string | null;
  final_outcome: FinalOutcome;
  /** How the outcome is known; default: stated when it is not `unknown`, else unstated. */
  outcome_basis?: OutcomeBasis;
  created_at: string;
  /** Steps with 1-based `step_index` already set. */
  steps: TrajectoryStep[];
  metadata?: Partial<Omit<TrajectoryMetadata, 'source' | 'schema_version'>>;
  system_prompt?: string;
  tools?: ToolDefinition[];
  closing_turns?: ConversationTurn[];
}

/**
 * The id is a hash of the source and its own id, so re-importing a file yields the same ids; a
 * source without ids is hashed by content, which is equally stable.
 */
export function trajectoryIdOf(source: TrajectorySource, sourceId: string | null, contentKey: () => string): string {
  // One-shot hash of the joined text (the digest of the parts fed in turn): no Hash object per trajectory.
  const key = `${source}\u0000${sourceId === null ? `content:${contentKey()}` : `id:${sourceId}`}`;
  return `traj_${hash('sha256', key, 'hex').slice(0, 24)}`;
}

export function assembleTrajectory(parts: TrajectoryParts): Trajectory {
  const { source, source_id, steps } = parts;
  const trajectory: Trajectory = {
    trajectory_id: trajectoryIdOf(source, source_id, () => canonicalJson([parts.task_description, steps.map((s) => [s.tool_name, s.input_params, s.response])])),
    source_id,
    task_description: parts.task_description,
    final_outcome: parts.final_outcome,
    outcome_basis: parts.outcome_basis ?? defaultBasis(parts.final_outcome),
    created_at: parts.created_at,
    steps,
    failure_summary: summarizeFailures(steps, parts.final_outcome),
    metadata: {
      source,
      annotator: parts.metadata?.annotator ?? null,
      human_verified: parts.metadata?.human_verified ?? false,
      domain: parts.metadata?.domain ?? null,
      difficulty: parts.metadata?.difficulty ?? null,
      schema_version: TRAJECTORY_SCHEMA_VERSION,
    },
  };
  if (parts.system_prompt !== undefined) trajectory.system_prompt = parts.system_prompt;
  if (parts.tools !== undefined) trajectory.tools = parts.tools;
  if (parts.closing_turns !== undefined) trajectory.closing_turns = parts.closing_turns;
  return trajectory;
}
