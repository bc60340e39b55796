import { describe, expect, it } from 'vitest';
import { collect, jsonl } from './collect.test-helpers.js';
import { redactTrajectory } from '../redact-trajectory.js';
import { importStepLog } from './step-log.js';

const base = (step: number, second: number) => ({ trace_id: 'sess_a3f9c2', step_index: step, timestamp: `2026-03-29T14:23:${String(second).padStart(2, '0')}Z` });

describe('step-log importer (seed 000 section 2.1)', () => {
  it('groups interleaved traces, keeps logged decisions and annotations, and derives the missing ones', async () => {
    const text = jsonl(
      {
        ...base(2, 20),
        tool_name: 'search_documents',
        intent: '查找过去一周关于项目X的会议记录',
        input_params: { query: '项目X会议记录', date_from: '2026-03-01' },
        raw_response: { status_code: 429, headers: { 'retry-after': '5' }, body: { error: 'slow down' } },
        agent_observation: 'rate limited',
      },
      { trace_id: 'other', step_index: 1, tool_name: 'get_weather', input_params: { city: 'Paris' }, raw_response: { status_code: 200, body: { temp: 18 } } },
      {
        ...base(1, 11),
        tool_name: 'search_documents',
        intent: '查找过去一周关于项目X的会议记录',
        input_params: { query: '项目X会议记录', date_from: '2026-03-22', date_to: '2026-03-29', sort_by: 'relevance' },
        raw_response: { status_code: 200, body: { results: [], total: 0 } },
        agent_observation: '搜索返回空结果',
        next_action: { type: 'retry', params_delta: { date_from: '2026-03-01' }, reasoning: '尝试扩大日期范围' },
        failure_annotation: { failure_subtype: 'semantic_error', decision_correctness: 'correct', correctness_reason: 'widening the range is right', annotator: 'human_1' },
      },
      { ...base(3, 26), tool_name: 'search_documents', input_params: { query: '项目X会议记录', date_from: '2026-03-01' }, raw_response: { status_code: 200, body: { results: [1], total: 1 } }, final_outcome: 'success' },
    );
    const { trajectories, skipped } = await collect(importStepLog, text);
    expect(skipped).toEqual([]);
    expect(trajectories.map((t) => t.source_id)).toEqual(['sess_a3f9c2', 'other']);
    const [t] = trajectories;
    expect(t).toMatchObject({
      task_description: '查找过去一周关于项目X的会议记录',
      final_outcome: 'success',
      created_at: '2026-03-29T14:23:11.000Z',
      metadata: { source: 'step-log', annotator: 'human_1' },
    });
    expect(t!.steps.map((s) => [s.step_index, s.status, s.failure_type, s.failure_subtype, s.agent_decision.action])).toEqual([
      [1, 'success', 'parameter', 'semantic', 'retry_with_params'],
      [2, 'failure', 'infrastructure', 'rate_limit', 'wait_and_retry'],
      [3, 'success', null, null, 'proceed'],
    ]);
    expect(t!.steps[0]).toMatchObject({
      agent_decision: { source_action: 'retry', params_delta: { date_from: '2026-03-01' }, reasoning: '尝试扩大日期范围' },
      decision_correctness: 'correct',
      correctness_reason: 'widening the range is right',
      response: { status_code: 200, body: { results: [], total: 0 } },
    });
    // No next_action logged: derived from the 6 s gap against the 5 s Retry-After.
    expect(t!.steps[1]).toMatchObject({ failure_kind: 'rate_limited', response: { error_code: 'HTTP_429' }, agent_decision: { wait_seconds: 6 } });
    // The logged status is the evidence; the body's words are not read once it tells the cause.
    expect(t!.steps[1]!.failure_evidence).toEqual({ confidence: 0.95, evidence: ['field:status_code=429', 'field:error'] });
    expect(trajectories[1]!.final_outcome).toBe('unknown');
    expect(t!.outcome_basis).toEqual({ source: 'stated', confidence: 1, evidence: 'final_outcome=success' });
    expect(trajectories[1]!.outcome_basis).toMatchObject({ source: 'unstated' });
  });

  it("keeps each step's intent and the agent's observation (seed 000 section 2.1), and redaction covers them", async () => {
    const text = jsonl(
      { ...base(1, 0), tool_name: 'search_documents', intent: '查找过去一周关于项目X的会议记录', input_params: { q: 'x' }, raw_response: { status_code: 200, body: { results: [] } }, agent_observation: '搜索返回空结果' },
      { ...base(2, 5), tool_name: 'notify', intent: 'tell ops at ops@example.com', input_params: {}, raw_response: { status_code: 200 }, agent_observation: '' },
      { ...base(3, 9), tool_name: 'notify', input_params: {}, raw_response: { status_code: 200 } },
    );
    const { trajectories } = await collect(importStepLog, text);
    const steps = trajectories[0]!.steps;
    expect(steps[0]).toMatchObject({ intent: '查找过去一周关于项目X的会议记录', agent_observation: '搜索返回空结果' });
    // An empty observation says nothing; a step without either has neither key.
    expect(steps[1]!.intent).toBe('tell ops at ops@example.com');
    expect('agent_observation' in steps[1]!).toBe(false);
    expect('intent' in steps[2]! || 'agent_observation' in steps[2]!).toBe(false);
    expect(redactTrajectory(trajectories[0]!).steps[1]!.intent).not.toContain('ops@example.com');
  });

  it('calls a repeat within the Retry-After a plain retry', async () => {
    const text = jsonl(
      { ...base(1, 0), tool_name: 'q', input_params: { a: 1 }, raw_response: { status_code: 429, headers: { 'Retry-After': '30' } } },
      { ...base(2, 2), tool_name: 'q', input_params: { a: 1 }, raw_response: { status_code: 200 } },
    );
    const { trajectories } = await collect(importStepLog, text);
    expect(trajectories[0]!.steps[0]!.agent_decision.action).toBe('retry');
  });

  it('skips malformed lines by number', async () => {
    const text = jsonl({ ...base(1, 0), tool_name: 'q' }, { step_index: 1, tool_name: 'q' }, { trace_id: 't', step_index: 1.5, tool_name: 'q' }, { trace_id: 't', step_index: 2 }, '{oops', { ...base(2, 1), tool_name: 'q', raw_response: 'x' });
    const { trajectories, skipped } = await collect(importStepLog, text);
    expect(trajectories).toHaveLength(1);
    expect(skipped.map((s) => [s.line, s.reason.slice(0, 20)])).toEqual([
      [2, 'missing trace_id'],
      [3, 'missing or non-integ'],
      [4, 'missing tool_name'],
      [5, 'not JSON: Expected p'],
      [6, 'raw_response is not '],
    ]);
  });
});
