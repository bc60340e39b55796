import { createReadStream, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../core/trajectory-types.js';
import { collect } from './collect.test-helpers.js';
import { importTauBench, tauBenchFailure } from './tau-bench.js';
import { tauBenchAirlineFile } from './tau-bench-data.test-helpers.js';

const file = tauBenchAirlineFile();

interface RawTask {
  task_id: number;
  trial: number;
  reward: number;
  info: { task: { instruction: string } };
  traj: { role: string; content?: string | null; tool_calls?: unknown[] }[];
}

describe('tau-bench importer on the real gpt-4o airline file', () => {
  // Expected values come from a plain JSON.parse of the same file, independently of the importer.
  const raw = file === undefined ? [] : (JSON.parse(readFileSync(file, 'utf8')) as RawTask[]);
  const imported: Promise<{ trajectories: Trajectory[]; skipped: unknown[] }> = (async () => {
    const trajectories: Trajectory[] = [];
    const skipped: unknown[] = [];
    for await (const item of importTauBench(createReadStream(file, { highWaterMark: 4096 }), { now: () => 0 })) {
      if (item.kind === 'trajectory') trajectories.push(item.trajectory);
      else skipped.push(item);
    }
    return { trajectories, skipped };
  })();

  it('imports all 200 trajectories with their task ids, instructions and tool calls', async () => {
    const { trajectories, skipped } = await imported;
    expect(skipped).toEqual([]);
    expect(trajectories).toHaveLength(200);
    expect(trajectories.map((t) => t.source_id)).toEqual(raw.map((r) => `${r.task_id}:${r.trial}`));
    expect(new Set(trajectories.map((t) => t.trajectory_id)).size).toBe(200);
    expect(trajectories.map((t) => t.task_description)).toEqual(raw.map((r) => r.info.task.instruction));
    const toolCalls = raw.map((r) => r.traj.reduce((n, m) => n + (m.tool_calls?.length ?? 0), 0));
    expect(trajectories.map((t) => t.steps.length)).toEqual(toolCalls);
    expect(trajectories.every((t) => t.metadata.source === 'tau-bench' && t.metadata.domain === 'airline')).toBe(true);
  });

  it('takes final outcomes from the reward', async () => {
    const { trajectories } = await imported;
    expect(trajectories.map((t) => t.final_outcome)).toEqual(raw.map((r) => (r.reward === 1 ? 'success' : 'failure')));
    expect(trajectories.filter((t) => t.final_outcome === 'success')).toHaveLength(raw.filter((r) => r.reward === 1).length);
  });

  it('recognizes every "Error:" result of the airline environment as a typed business failure', async () => {
    const { trajectories } = await imported;
    const errorResults = raw.flatMap((r) => r.traj).filter((m) => m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith('Error:'));
    const failures = trajectories.flatMap((t) => t.steps).filter((s) => s.status === 'failure');
    expect(failures.length).toBeGreaterThan(0);
    expect(failures).toHaveLength(errorResults.length);
    expect(failures.every((s) => s.failure_category === 'business' && s.failure_stage === 'execution')).toBe(true);
    const codes = new Map<string, number>();
    for (const s of failures) codes.set(`${s.failure_kind}/${s.response.error_code}`, (codes.get(`${s.failure_kind}/${s.response.error_code}`) ?? 0) + 1);
    // Every error in this file is one of the environment's known rules: none falls through to the catch-all.
    expect([...codes.keys()].sort()).toEqual([
      'conflict/TAU_FLIGHT_UNAVAILABLE',
      'conflict/TAU_INSUFFICIENT_SEATS',
      'not_found/TAU_PAYMENT_METHOD_NOT_FOUND',
      'precondition_failed/TAU_INSUFFICIENT_BALANCE',
      'precondition_failed/TAU_PAYMENT_MISMATCH',
      'precondition_failed/TAU_PAYMENT_NOT_ALLOWED',
    ]);
    expect(codes.get('precondition_failed/TAU_PAYMENT_MISMATCH')).toBe(errorResults.filter((m) => m.content!.includes('does not add up')).length);
    // The agent's reaction is derived: after a failed booking it tried again, switched or stopped.
    const after = new Set(failures.map((s) => s.agent_decision.action));
    expect([...after].every((a) => ['retry', 'retry_with_params', 'switch_tool', 'abort'].includes(a))).toBe(true);
  });
});

describe('tau-bench importer on small inputs', () => {
  const task = (id: number, reward: number, toolContent: string) => ({
    task_id: id,
    trial: 1,
    reward,
    info: { task: { instruction: `task ${id}` } },
    traj: [
      { role: 'system', content: '# Retail agent policy\n...' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'cancel_pending_order', arguments: '{"order_id":"#W1"}' } }] },
      { role: 'tool', tool_call_id: 'c', name: 'cancel_pending_order', content: toolContent },
    ],
  });

  it('maps the environments\' rule texts to types, and unknown errors to tool_reported_error', () => {
    expect(tauBenchFailure('Error: user not found')).toMatchObject({ category: 'business', type: 'not_found', code: 'TAU_USER_NOT_FOUND' });
    expect(tauBenchFailure('Error: reservation not found')).toMatchObject({ type: 'not_found', code: 'TAU_RESERVATION_NOT_FOUND' });
    expect(tauBenchFailure('Error: not enough seats on flight HAT001')).toMatchObject({ type: 'conflict', code: 'TAU_INSUFFICIENT_SEATS' });
    expect(tauBenchFailure('Error: cannot cancel reservation')).toMatchObject({ type: 'precondition_failed', code: 'TAU_CANNOT_CANCEL' });
    expect(tauBenchFailure('Error: non-pending order cannot be cancelled')).toMatchObject({ type: 'precondition_failed' });
    expect(tauBenchFailure('Error: something new')).toMatchObject({ type: 'tool_reported_error', code: 'TAU_ERROR' });
    expect(tauBenchFailure('{"status": "cancelled"}')).toBeNull();
  });

  it('skips a malformed element with the line it starts on, reads the domain from the policy', async () => {
    const good = JSON.stringify(task(1, 0.5, 'Error: order not found'));
    const text = `[\n${good},\n{"task_id": 2, "traj": "no"},\n{"task_id": 3,, }\n]`;
    const { trajectories, skipped } = await collect(importTauBench, text);
    expect(trajectories.map((t) => [t.source_id, t.final_outcome, t.metadata.domain, t.steps[0]!.failure_kind])).toEqual([['1:1', 'partial', 'retail', 'not_found']]);
    expect(skipped).toEqual([
      { line: 3, reason: 'element 1: expected "traj" to be an array of messages' },
      { line: 4, reason: expect.stringMatching(/^element 2 is not valid JSON/) as unknown as string },
    ]);
  });
});
