/** A failure trajectory with every part augmentation rewrites: dates, ids, entities, decisions, labels. */
import { trajectory } from '../../annotate/trajectory.test-helpers.js';
import type { Trajectory } from '../../core/trajectory-types.js';

export function weatherTrajectory(id = 'traj_aug_1'): Trajectory {
  const t = trajectory(
    [
      { tool: 'get_weather', params: { city: 'Paris', date: '2026-13-45', days: 3, unit: 'celsius' }, fail: { category: 'parameter', kind: 'invalid_date', status: 'rejected' }, at: '2026-03-29T14:00:00.000Z' },
      { tool: 'get_weather', params: { city: 'Paris', date: '2026-03-30', days: 3, unit: 'celsius' }, fail: { category: 'network', kind: 'timeout', status: 'timeout' }, at: '2026-03-29T14:00:01.000Z' },
      { tool: 'get_weather', params: { city: 'Paris', date: '2026-03-30', days: 3, unit: 'celsius' }, body: { city: 'Paris', temp_c: 12.5, observed_at: '2026-03-29T14:00:03.000Z' }, at: '2026-03-29T14:00:03.000Z' },
      { tool: 'send_message', params: { channel: 'general', text: 'Paris: 12.5C on 2026-03-30', ref: 'ORD-1001', limit: 140 }, at: '2026-03-29T14:00:04.000Z' },
    ],
    { outcome: 'success', task: 'Tell the general channel the weather in Paris for 2026-03-30 (3 days) with get_weather and send_message' },
  );
  const [s1, s2] = t.steps;
  s1!.response = { status_code: 400, error_code: 'invalid_date', message: 'get_weather: date 2026-13-45 is not a date' };
  s1!.failure_type = 'parameter';
  s1!.failure_subtype = 'syntactic';
  s1!.agent_decision = { action: 'retry_with_params', params_delta: { date: '2026-03-30' }, reasoning: 'get_weather wants a real date' };
  s1!.decision_correctness = 'correct';
  s1!.correctness_reason = 'get_weather failed (invalid_date); recovered';
  s2!.response = { status_code: 504, error_code: 'timeout', message: 'upstream timed out after 30000 ms' };
  s2!.failure_type = 'infrastructure';
  s2!.failure_subtype = 'timeout';
  s2!.agent_decision = { action: 'wait_and_retry', wait_seconds: 2 };
  s2!.decision_correctness = 'incorrect';
  s2!.correct_action = { action: 'wait_and_retry', wait_seconds: 5, params_delta: { days: 3 }, reasoning: 'back off before calling get_weather again' };
  s1!.source_ref = 'exec-get_weather-1';
  t.labels = [{ name: 'backoff_violation', step_index: 3, confidence: 0.8, reason: 'get_weather retried after 2s, backoff asked 5s' }];
  t.metadata.annotator = 'faultline-backtrace';
  t.metadata.human_verified = true;
  return { ...t, trajectory_id: id, source_id: `${id}:src`, metadata: { ...t.metadata, source: 'faultline' } };
}
