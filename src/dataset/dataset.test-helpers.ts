/** Hand-built trajectories for the exporter tests, with their decisions judged as an annotator would. */
import { trajectory } from '../annotate/trajectory.test-helpers.js';
import type { Trajectory } from '../core/trajectory-types.js';

/** A timeout retried at once (judged incorrect, should have waited 5 s), then a success. */
export function blindRetry(): Trajectory {
  const t = trajectory(
    [
      { tool: 'query_sales', params: { month: '2026-03' }, fail: { category: 'network', kind: 'timeout', status: 'timeout' } },
      { tool: 'query_sales', params: { month: '2026-03' }, body: { records: 31 } },
    ],
    { outcome: 'success', task: 'Sales for March' },
  );
  const first = t.steps[0]!;
  first.failure_type = 'infrastructure';
  first.failure_subtype = 'timeout';
  first.decision_correctness = 'incorrect';
  first.correctness_reason = 'retried a timeout without backing off';
  first.correct_action = { action: 'wait_and_retry', wait_seconds: 5 };
  t.labels = [{ name: 'backoff_violation', step_index: 2, confidence: 0.8, reason: 'no wait' }];
  return { ...t, trajectory_id: 'traj_blind_retry', source_id: 'blind:1' };
}

/** A lookup fails, is repeated (incorrect), then a search recovers (correct). */
export function recovered(): Trajectory {
  const t = trajectory(
    [
      { tool: 'get_order', params: { id: 'A1' }, fail: { category: 'business', kind: 'not_found' } },
      { tool: 'get_order', params: { id: 'A1' }, fail: { category: 'business', kind: 'not_found' } },
      { tool: 'search_orders', params: { customer: 'c1', limit: 5 }, body: [{ id: 'A10' }] },
    ],
    { outcome: 'success', task: 'Where is my order?' },
  );
  t.steps[0]!.decision_correctness = 'incorrect';
  t.steps[1]!.decision_correctness = 'correct';
  return { ...t, trajectory_id: 'traj_recovered', source_id: 'recovered:1', metadata: { ...t.metadata, source: 'openai' } };
}

/** A failed task whose only failure is unjudged. */
export function failedTask(): Trajectory {
  const t = trajectory([{ tool: 'book', params: { seat: '1A' }, fail: { category: 'business', kind: 'conflict' } }], { outcome: 'failure', task: 'Book 1A' });
  t.steps[0]!.decision_correctness = 'uncertain';
  return { ...t, trajectory_id: 'traj_failed', source_id: 'failed:1' };
}
