import { describe, expect, it } from 'vitest';
import { createFaultPlan } from '../faults/plan.js';
import { makeFailureRecord, makeRecord } from '../record/fixture.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createVirtualClock } from '../core/clock.js';
import { defineTool } from '../runtime/define-tool.js';
import { createRuntime } from '../runtime/runtime.js';
import { createMemoryStore } from '../store/memory/memory-store.js';
import { paramsDelta } from '../core/params-delta.js';
import { trajectoriesFromRecords, trajectoriesFromStore, trajectoryFromRecords } from './from-records.js';

const T0 = Date.UTC(2026, 2, 29, 14, 0, 0);

/**
 * A real runtime with retries off (so every failure reaches the "agent" below) and a fault plan
 * that makes the first get_weather a 429 (Retry-After 30 s), the first search_flights a 400 for
 * a bad date, and every query_db a 503. The agent reacts like a careful one, on a virtual clock.
 */
async function agentRun(): Promise<{ records: ToolExecutionRecord[]; slept: number }> {
  const clock = createVirtualClock({ startMs: T0 });
  const records: ToolExecutionRecord[] = [];
  const faults = createFaultPlan(
    {
      version: 1,
      rules: [
        { id: 'weather-429', tool: 'get_weather', trigger: 'first_call_only', fault: 'http_status', params: { status: 429, retry_after: 30 } },
        { id: 'bad-date', tool: 'search_flights', when: { date: '2026-02-30' }, fault: 'http_status', params: { status: 400, message: 'invalid date' } },
        { id: 'db-down', tool: 'query_db', fault: 'http_status', params: { status: 503 } },
      ],
    },
    { clock },
  );
  const tool = (name: string) =>
    defineTool({
      name,
      description: name,
      input: { type: 'object' },
      idempotent: true,
      retry: { maxRetries: 0 },
      execute: async (args: unknown) => ({ tool: name, args }),
    });
  const rt = createRuntime({
    tools: ['get_weather', 'search_flights', 'query_db', 'query_cache', 'get_order'].map(tool),
    clock,
    faults,
    seed: 3,
    breaker: { failureThreshold: 100 },
    onRecord: (r) => records.push(r),
  });
  const s = rt.session({ agent: 'scripted', intent: 'plan a trip to Paris' });
  const weather = await s.execute('get_weather', { city: 'Paris' });
  if (weather.ok) throw new Error('the fault plan should have failed the first call');
  await clock.sleep(weather.error.retryAfterMs ?? 0);
  await s.execute('get_weather', { city: 'Paris' });
  await s.execute('search_flights', { from: 'CDG', date: '2026-02-30' });
  await s.execute('search_flights', { from: 'CDG', date: '2026-03-02' });
  await s.execute('query_db', { q: 'hotels' });
  await s.execute('query_db', { q: 'hotels' });
  await s.execute('query_cache', { q: 'hotels' });
  await rt.close();
  return { records, slept: clock.slept };
}

describe('trajectoryFromRecords on a real runtime run', () => {
  it('derives wait, retry with a params delta, plain retry and a tool switch from what came next', async () => {
    const { records, slept } = await agentRun();
    expect(slept).toBe(30_000);
    expect(records).toHaveLength(7);
    const t = trajectoryFromRecords([...records].reverse());
    expect(t.source_id).toBe(records[0]!.trace_id);
    expect(t.metadata.source).toBe('faultline');
    expect(t.task_description).toBe('plan a trip to Paris');
    expect(t.steps.map((s) => [s.step_index, s.tool_name, s.status, s.agent_decision.action])).toEqual([
      [1, 'get_weather', 'failure', 'wait_and_retry'],
      [2, 'get_weather', 'success', 'proceed'],
      [3, 'search_flights', 'failure', 'retry_with_params'],
      [4, 'search_flights', 'success', 'proceed'],
      [5, 'query_db', 'failure', 'retry'],
      [6, 'query_db', 'failure', 'switch_tool'],
      [7, 'query_cache', 'success', 'proceed'],
    ]);
    const [rateLimited, , badDate, , dbDown] = t.steps;
    expect(rateLimited!.agent_decision.wait_seconds).toBe(30);
    expect(rateLimited).toMatchObject({
      response: { status_code: 429, error_code: 'HTTP_429' },
      failure_type: 'infrastructure',
      failure_subtype: 'rate_limit',
      failure_category: 'rate_limit',
      failure_stage: 'execution',
      failure_kind: 'rate_limited',
    });
    expect(badDate!.agent_decision.params_delta).toEqual({ date: '2026-03-02' });
    expect(badDate).toMatchObject({ failure_type: 'parameter', failure_subtype: 'syntactic', failure_category: 'parameter' });
    expect(dbDown).toMatchObject({ failure_subtype: '5xx', failure_kind: 'dependency_down', response: { status_code: 503 } });
    expect(t.steps[5]!.agent_decision.next_tool).toBe('query_cache');
    expect(t.final_outcome).toBe('success');
    expect(t.failure_summary).toEqual({
      total_failures: 4,
      failure_types: ['infrastructure/rate_limit', 'parameter/syntactic', 'infrastructure/5xx'],
      failure_categories: { rate_limit: 1, parameter: 1, system: 2 },
      recovery_pattern: 'wait_and_retry',
      recovery_success: true,
    });
    // The same records always give the same trajectory id.
    expect(trajectoryFromRecords(records).trajectory_id).toBe(t.trajectory_id);
  });

  it('reads traces back from a store, page by page', async () => {
    const { records } = await agentRun();
    const store = createMemoryStore();
    await store.insert(records);
    const [fromStore] = await trajectoriesFromStore(store, [records[0]!.trace_id, 'no-such-trace']);
    expect(fromStore).toStrictEqual(trajectoryFromRecords(records));
    await store.close();
  });
});

describe('decision rules', () => {
  const at = (s: number) => new Date(T0 + s * 1000).toISOString();
  const attempt = (s: number, duration = 100) => [
    { attempt: 0, started_at: at(s), duration_ms: duration, outcome: 'failure' as const, failure_type: 'rate_limited', error_code: 'HTTP_429', delay_before_ms: 0 },
  ];
  const rateLimited = (s: number, retryAfterMs: number) =>
    makeFailureRecord({
      trace_id: 't',
      step_index: s,
      failure_stage: 'execution',
      failure_category: 'rate_limit',
      failure_type: 'rate_limited',
      error_code: 'HTTP_429',
      created_at: at(s),
      attempts: attempt(s),
      feedback: { action: 'wait_and_retry', hint: 'wait', retryable: true, retry_after_ms: retryAfterMs },
    });
  const ok = (s: number, overrides: Partial<ToolExecutionRecord> = {}) => makeRecord({ trace_id: 't', step_index: s, created_at: at(s), ...overrides });

  it('calls a repeat sooner than the Retry-After a plain retry, and one after it a wait', () => {
    const tooSoon = trajectoryFromRecords([rateLimited(0, 5000), ok(2)]);
    expect(tooSoon.steps[0]!.agent_decision.action).toBe('retry');
    const patient = trajectoryFromRecords([rateLimited(0, 5000), ok(6)]);
    expect(patient.steps[0]!.agent_decision).toMatchObject({ action: 'wait_and_retry', wait_seconds: 5.9 });
  });

  it('ends with abort after a final failure, and reports the trace end state as the outcome', () => {
    const t = trajectoryFromRecords([ok(0), rateLimited(1, 1000)]);
    expect(t.steps.map((s) => s.agent_decision.action)).toEqual(['proceed', 'abort']);
    expect(t.final_outcome).toBe('failure');
    expect(t.failure_summary.recovery_success).toBe(false);
    expect(trajectoryFromRecords([ok(0)], { outcomeOf: () => 'partial' }).final_outcome).toBe('partial');
  });

  it('groups mixed traces and refuses to build one trajectory from several', () => {
    const other = ok(0, { trace_id: 'u' });
    expect(trajectoriesFromRecords([ok(0), other, ok(1)]).map((t) => [t.source_id, t.steps.length])).toEqual([
      ['t', 2],
      ['u', 1],
    ]);
    expect(() => trajectoryFromRecords([ok(0), other])).toThrow(/several traces/);
    expect(() => trajectoryFromRecords([])).toThrow(RangeError);
  });

  it('keeps only changed keys in a params delta, with removed keys as null', () => {
    expect(paramsDelta({ a: 1, b: { c: [1, 2] }, d: 'x' }, { a: 1, b: { c: [1, 3] }, e: true })).toEqual({ b: { c: [1, 3] }, d: null, e: true });
    expect(paramsDelta('q', 'r')).toEqual({ $: 'r' });
  });
});
