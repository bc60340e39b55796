import { describe, expect, it } from 'vitest';
import { annotateTrajectory } from './annotate-trajectory.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { failureSignature } from '../core/failure-signature.js';
import { trajectoryFromRecords } from '../trajectory/from-records.js';
import { createVirtualClock } from '../core/clock.js';
import { correctionsFromTrajectory } from './corrections-from-trajectory.js';
import { defineTool } from '../runtime/define-tool.js';
import { createRuntime } from '../runtime/runtime.js';
import { HttpError } from '../runtime/tool-errors.js';

describe('corrections from trajectories', () => {
  it("learn from runtime records what the runtime learns live, under the same signature", async () => {
    const records: ToolExecutionRecord[] = [];
    const clock = createVirtualClock();
    const rt = createRuntime({
      clock,
      onRecord: (r) => records.push(r),
      tools: [
        defineTool({
          name: 'search_orders',
          description: 'orders by status',
          input: { type: 'object', properties: { status: { type: 'string' } } },
          idempotent: true,
          retry: { maxRetries: 0 },
          execute: (args: { status: string }) => {
            if (args.status !== 'open') throw new HttpError(400, `status ${JSON.stringify(args.status)} is not one of open, closed`);
            return [{ id: 1 }];
          },
        }),
      ],
    });
    const s = rt.session({ traceId: 'trace-1', intent: 'open orders' });
    await s.execute('search_orders', { status: 'pending' });
    await clock.advance(500);
    await s.execute('search_orders', { status: 'open' });
    const live = rt.corrections!.list();
    expect(live).toHaveLength(1);

    // Stored records -> trajectory -> annotate (the task succeeded, so the recovery is marked correct).
    const { trajectory } = annotateTrajectory(trajectoryFromRecords(records));
    expect(trajectory.steps[0]!.decision_correctness).toBe('correct');
    const learned = correctionsFromTrajectory(trajectory);
    expect(learned).toEqual([
      {
        signature: failureSignature(records[0]!)!.signature,
        tool_name: 'search_orders',
        failure_category: records[0]!.failure_category,
        failure_type: records[0]!.failure_type,
        error_code: 'HTTP_400',
        recovery: { action: 'retry_with_fixed_params', params_delta: { status: 'open' } },
        trace_id: 'trace-1',
        recovered_at: '2026-01-01T00:00:00.500Z',
      },
    ]);
    expect(learned[0]!.signature).toBe(live[0]!.signature);
    expect(learned[0]!.recovery).toEqual(live[0]!.recovery);
    await rt.close();
  });

  it('skips decisions not marked correct and decisions that name no recovery', () => {
    const step = (i: number, status: 'success' | 'failure', extra: object = {}) => ({
      step_index: i,
      tool_name: 'get_weather',
      input_params: { city: 'Paris' },
      response: status === 'success' ? {} : { error_code: 'HTTP_503', message: 'down' },
      status,
      failure_type: null,
      failure_subtype: null,
      failure_category: status === 'success' ? null : ('system' as const),
      failure_stage: status === 'success' ? null : ('execution' as const),
      failure_kind: status === 'success' ? null : 'server_error',
      agent_decision: { action: 'proceed' as const },
      decision_correctness: null,
      correctness_reason: null,
      correct_action: null,
      ...extra,
    });
    const base = {
      trajectory_id: 'traj_1',
      source_id: null,
      task_description: null,
      final_outcome: 'success' as const,
      created_at: '2026-01-01T00:00:00.000Z',
      failure_summary: { total_failures: 1, failure_types: [], failure_categories: {}, recovery_pattern: null, recovery_success: null },
      metadata: { source: 'step-log' as const, annotator: null, human_verified: false, domain: null, difficulty: null, schema_version: 1 },
    };
    const unmarked = { ...base, steps: [step(1, 'failure', { agent_decision: { action: 'wait_and_retry', wait_seconds: 2 } }), step(2, 'success')] };
    expect(correctionsFromTrajectory(unmarked)).toEqual([]);
    const aborted = { ...base, steps: [step(1, 'failure', { decision_correctness: 'correct', agent_decision: { action: 'abort' } })] };
    expect(correctionsFromTrajectory(aborted)).toEqual([]);
    const waited = { ...base, steps: [step(1, 'failure', { decision_correctness: 'correct', agent_decision: { action: 'wait_and_retry', wait_seconds: 2 } }), step(2, 'success')] };
    expect(correctionsFromTrajectory(waited)).toMatchObject([
      { tool_name: 'get_weather', failure_type: 'server_error', recovery: { action: 'wait_and_retry', wait_ms: 2000 }, trace_id: 'traj_1', recovered_at: '2026-01-01T00:00:00.000Z' },
    ]);
  });

  it('never learns repeating a write that failed in a way that may have acted, even when graded correct', () => {
    const step = (i: number, tool: string, response: object, failureKind: string | null, extra: object = {}) => ({
      step_index: i,
      tool_name: tool,
      input_params: { units: i },
      response,
      status: failureKind === null ? ('success' as const) : failureKind === 'timeout' ? ('timeout' as const) : ('failure' as const),
      failure_type: null,
      failure_subtype: null,
      failure_category: failureKind === null ? null : failureKind === 'server_error' ? ('system' as const) : ('network' as const),
      failure_stage: failureKind === null ? null : ('execution' as const),
      failure_kind: failureKind,
      agent_decision: { action: 'proceed' as const },
      decision_correctness: null,
      correctness_reason: null,
      correct_action: null,
      ...extra,
    });
    const trajectory = (steps: ReturnType<typeof step>[]) => ({
      trajectory_id: 'traj_w',
      source_id: null,
      task_description: null,
      final_outcome: 'success' as const,
      created_at: '2026-01-01T00:00:00.000Z',
      failure_summary: { total_failures: 1, failure_types: [], failure_categories: {}, recovery_pattern: null, recovery_success: null },
      metadata: { source: 'step-log' as const, annotator: null, human_verified: false, domain: null, difficulty: null, schema_version: 1 },
      steps,
    });
    const correct = (action: object) => ({ decision_correctness: 'correct', agent_decision: action });
    const failures: Array<[object, string]> = [
      [{ error_code: 'TIMEOUT', message: 'timed out' }, 'timeout'],
      [{ error_code: 'ECONNRESET', message: 'reset' }, 'connection_reset'],
      [{ error_code: 'HTTP_500', message: 'internal' }, 'server_error'],
      [{ error_code: 'HTTP_502', message: 'bad gateway' }, 'server_error'],
      [{ error_code: 'HTTP_504', message: 'gateway timeout' }, 'server_error'],
    ];
    for (const [response, kind] of failures) {
      for (const decision of [{ action: 'retry_with_params' }, { action: 'retry' }, { action: 'wait_and_retry', wait_seconds: 2 }]) {
        const write = trajectory([step(1, 'create_order', response, kind, correct(decision)), step(2, 'create_order', {}, null)]);
        expect(correctionsFromTrajectory(write)).toEqual([]);
        // A read may be repeated: that is still learned.
        const read = trajectory([step(1, 'get_order', response, kind, correct(decision)), step(2, 'get_order', {}, null)]);
        expect(correctionsFromTrajectory(read)).toHaveLength(1);
      }
      // Reading the state after the failed write is learned.
      const verified = trajectory([step(1, 'create_order', response, kind, correct({ action: 'switch_tool', next_tool: 'get_order' })), step(2, 'get_order', {}, null)]);
      expect(correctionsFromTrajectory(verified)).toMatchObject([{ tool_name: 'create_order', recovery: { action: 'switch_tool', tool: 'get_order' } }]);
    }
    // A 503 did not act: repeating the write is a fix there.
    const refused = trajectory([step(1, 'create_order', { error_code: 'HTTP_503', message: 'down' }, 'dependency_down', correct({ action: 'retry' })), step(2, 'create_order', {}, null)]);
    expect(correctionsFromTrajectory(refused)).toMatchObject([{ recovery: { action: 'retry' } }]);
  });
});
