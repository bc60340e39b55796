import { describe, expect, it } from 'vitest';
import { annotateTrajectory } from './annotate-trajectory.js';
import { backtrace } from './backtrace.js';
import { trajectory } from './trajectory.test-helpers.js';

const down = { category: 'system', kind: 'server_error' } as const;
const badParam = { category: 'parameter', kind: 'missing_required' } as const;

describe('backtrace', () => {
  it('marks failure-then-recovery decisions correct on a successful task', () => {
    const t = trajectory(
      [{ tool: 'query_sales', params: { m: '2026-03' }, fail: down, decision: { action: 'wait_and_retry', wait_seconds: 5 } }, { tool: 'query_sales', params: { m: '2026-03' } }, { tool: 'make_report' }],
      { outcome: 'success' },
    );
    const { trajectory: out, marks } = backtrace(t, []);
    expect(marks.map((m) => [m.step_index, m.decision_correctness])).toEqual([[1, 'correct']]);
    expect(out.steps[0]).toMatchObject({ decision_correctness: 'correct', correct_action: null });
    expect(out.steps[0]!.correctness_reason).toContain('recovered at step 2');
    expect(out.steps[1]!.decision_correctness).toBeNull();
    expect(out.metadata.annotator).toBe('faultline-backtrace');
    expect(t.steps[0]!.decision_correctness).toBeNull();
  });

  it('does not praise a recovery a label faults', () => {
    const t = trajectory([{ tool: 'create_user', params: { a: 1 }, fail: badParam }, { tool: 'create_user', params: { a: 1 } }], { outcome: 'success' });
    const result = annotateTrajectory(t);
    expect(result.labels.map((l) => l.name)).toEqual(['blind_retry']);
    expect(result.marks).toEqual([]);
  });

  it('marks the last wrong decision of a failed task incorrect, with the correct action', () => {
    const loop = Array.from({ length: 5 }, () => ({ tool: 'fetch', params: { id: 7 }, fail: down }));
    const t = trajectory([{ tool: 'create_user', params: { a: 1 }, fail: badParam }, { tool: 'create_user', params: { a: 1 } }, ...loop], { outcome: 'failure' });
    const result = annotateTrajectory(t);
    expect(result.labels.map((l) => [l.name, l.step_index])).toEqual([['blind_retry', 2], ['loop_failure', 6], ['loop_failure', 7]]);
    expect(result.marks).toHaveLength(1);
    expect(result.marks[0]).toMatchObject({ step_index: 6, decision_correctness: 'incorrect', correct_action: { action: 'escalate_to_user' } });
    expect(result.trajectory.steps[5]!.correctness_reason).toMatch(/^last wrong decision before the task failed: loop_failure/);
  });

  it('falls back to the last unrecovered failure as uncertain, leaves judged decisions alone, and skips unknown outcomes', () => {
    const t = trajectory([{ tool: 'get_user', fail: down }, { tool: 'get_user' }, { tool: 'book', fail: { category: 'business', kind: 'conflict' } }], { outcome: 'failure' });
    expect(backtrace(t, []).marks).toMatchObject([{ step_index: 3, decision_correctness: 'uncertain' }]);
    t.steps[2]!.decision_correctness = 'correct';
    expect(backtrace(t, []).marks).toEqual([]);
    expect(backtrace({ ...t, final_outcome: 'unknown' }, []).marks).toEqual([]);
  });
});
