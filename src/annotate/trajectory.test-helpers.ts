/** Hand-built trajectories for annotator tests: steps are numbered from 1 in the order given. */
import type { FailureCategory } from '../core/taxonomy.js';
import type { FinalOutcome, Trajectory, TrajectoryStep } from '../core/trajectory-types.js';

export interface StepSpec {
  tool: string;
  params?: unknown;
  /** Omitted: success. */
  fail?: { category: FailureCategory; kind: string; status?: 'failure' | 'timeout' | 'rejected'; body?: unknown };
  body?: unknown;
  decision?: TrajectoryStep['agent_decision'];
  at?: string;
}

export function step(spec: StepSpec, index: number): TrajectoryStep {
  const s: TrajectoryStep = {
    step_index: index,
    tool_name: spec.tool,
    input_params: spec.params ?? {},
    response: spec.fail === undefined ? { status_code: 200, ...(spec.body === undefined ? {} : { body: spec.body }) } : { error_code: spec.fail.kind, ...(spec.fail.body === undefined ? {} : { body: spec.fail.body }) },
    status: spec.fail === undefined ? 'success' : (spec.fail.status ?? 'failure'),
    failure_type: null,
    failure_subtype: null,
    failure_category: spec.fail?.category ?? null,
    failure_stage: spec.fail === undefined ? null : 'execution',
    failure_kind: spec.fail?.kind ?? null,
    agent_decision: spec.decision ?? { action: 'proceed' },
    decision_correctness: null,
    correctness_reason: null,
    correct_action: null,
  };
  if (spec.at !== undefined) s.started_at = spec.at;
  return s;
}

export function trajectory(specs: readonly StepSpec[], options: { outcome?: FinalOutcome; task?: string } = {}): Trajectory {
  const steps = specs.map((spec, i) => step(spec, i + 1));
  // Decisions the builder would derive when a spec does not give one.
  steps.forEach((s, i) => {
    if (specs[i]!.decision !== undefined) return;
    const next = steps[i + 1];
    if (s.status === 'success') s.agent_decision = { action: 'proceed' };
    else if (next === undefined) s.agent_decision = { action: 'abort' };
    else if (next.tool_name !== s.tool_name) s.agent_decision = { action: 'switch_tool', next_tool: next.tool_name };
    else s.agent_decision = { action: JSON.stringify(next.input_params) === JSON.stringify(s.input_params) ? 'retry' : 'retry_with_params' };
  });
  return {
    trajectory_id: 'traj_test',
    source_id: 'test:1',
    task_description: options.task ?? null,
    final_outcome: options.outcome ?? 'unknown',
    created_at: '2026-03-29T00:00:00.000Z',
    steps,
    failure_summary: { total_failures: 0, failure_types: [], failure_categories: {}, recovery_pattern: null, recovery_success: null },
    metadata: { source: 'step-log', annotator: null, human_verified: false, domain: null, difficulty: null, schema_version: 1 },
  };
}

export const at = (labels: readonly { step_index: number }[]): number[] => labels.map((l) => l.step_index);
