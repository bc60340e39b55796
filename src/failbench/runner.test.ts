import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.js';
import {
  hammerAgent,
  lostReplyScenario,
  outageScenario,
  patientAgent,
  rateLimitScenario,
  resendAgent,
  throwingAgent,
  verifyingAgent,
} from './bench.test-helpers.js';
import { ModelEndpointError, type ModelFailure } from '../llm/model-endpoint-error.js';
import { createNaiveAgent } from './agents/naive.js';
import { createRobustAgent } from './agents/robust.js';
import { BUDGET_EXHAUSTED, runScenario, runSuite, SuiteStoppedError, taskIdOf } from './runner.js';
import { scoreAgent } from './score.js';
import type { Agent, AgentTask, AgentToolResult, Scenario } from './types.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs `body` as the agent and returns what it saw. */
function probe<T>(body: (task: AgentTask) => Promise<T>): { agent: Agent; seen: () => T } {
  let value: T | undefined;
  return {
    agent: {
      name: 'probe',
      async run(task) {
        value = await body(task);
        return { status: 'gave_up', answer: '', diagnoses: [] };
      },
    },
    seen: () => value as T,
  };
}

describe('runScenario: what the agent sees', () => {
  it('raw mode shows the HTTP failure as a client would: status, Retry-After, body; no classification', async () => {
    const p = probe((task) => task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' }));
    const result = await runScenario(rateLimitScenario(), p.agent, { feedback: 'raw', seed: 1 });
    const seen = p.seen() as AgentToolResult & { ok: false };
    expect(seen.ok).toBe(false);
    expect(seen.error.code).toBe('HTTP_429');
    expect(seen.error.status).toBe(429);
    expect(seen.error.headers).toEqual({ 'retry-after': '30' });
    expect(seen).not.toHaveProperty('assisted');
    expect(Object.keys(seen.error).sort()).toEqual(expect.arrayContaining(['code', 'message']));
    for (const key of Object.keys(seen.error)) expect(['code', 'message', 'status', 'headers', 'body']).toContain(key);
    // The runtime did not retry on the agent's behalf.
    // The trace keeps the ground truth beside what the agent saw: the class of the failure, its wait.
    expect(result.calls).toEqual([
      { tool: 'get_weather', args: { city: 'Paris', date: '2026-03-30' }, ok: false, code: 'HTTP_429', fault: 'http_status', virtualMs: 0, endMs: 0, category: 'rate_limit', met: ['rate_limit'], retryAfterMs: 30_000 },
    ]);
    expect(result.absorbedFailures).toBe(0);
    expect(result.state.calls['get_weather']).toBe(0);
  });

  it('assisted mode retries for the agent and says how many failures it absorbed', async () => {
    const p = probe((task) => task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' }));
    const result = await runScenario(rateLimitScenario(), p.agent, { feedback: 'assisted', seed: 1 });
    const seen = p.seen();
    expect(seen.ok).toBe(true);
    expect(seen.assisted).toEqual({ absorbedFailures: 1 });
    expect(result.absorbedFailures).toBe(1);
    // The runtime waited out the 30 s Retry-After on the virtual clock.
    expect(result.virtualMs).toBeGreaterThanOrEqual(30_000);
  });

  it('assisted failures carry the classification and feedback', async () => {
    const p = probe((task) => task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' }));
    const result = await runScenario(outageScenario(), p.agent, { feedback: 'assisted', seed: 1 });
    const seen = p.seen() as AgentToolResult & { ok: false };
    expect(seen.error).toMatchObject({ code: 'HTTP_503', status: 503 });
    expect(seen.assisted).toMatchObject({ stage: 'execution', category: 'system', type: 'dependency_down', retryable: expect.any(Boolean) });
    expect(typeof seen.assisted?.hint).toBe('string');
    // 4 attempts (1 + 3 retries); the agent saw the last one.
    expect(seen.assisted?.absorbedFailures).toBe(3);
    expect(result.absorbedFailures).toBe(3);
  });

  it('offers only the scenario tools, with schemas and hints, an opaque id, the virtual now', async () => {
    const p = probe(async (task) => ({ id: task.id, now: task.now, tools: task.tools, feedback: task.feedback, aborted: task.signal.aborted }));
    await runScenario(lostReplyScenario({ now: '2026-04-01T09:00:00Z' }), p.agent, { feedback: 'raw', seed: 1, runId: 'run-1' });
    const seen = p.seen();
    expect(seen.id).toBe(taskIdOf('run-1', 'test/message-lost-reply'));
    expect(seen.id).not.toContain('message');
    expect(seen.now).toBe('2026-04-01T09:00:00.000Z');
    expect(seen.tools.map((t) => t.name)).toEqual(['send_message', 'list_messages']);
    expect(seen.tools[0]!.annotations).toEqual({ readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: true });
    expect(seen.tools[0]!.inputSchema).toMatchObject({ type: 'object', required: ['channel', 'text'] });
    expect(seen).toMatchObject({ feedback: 'raw', aborted: false });
  });

  it('a tool that is not in the scenario is an unknown tool to the agent', async () => {
    const p = probe((task) => task.callTool('create_order', { customer_id: 'CUS-001', items: [] }));
    await runScenario(outageScenario(), p.agent, { feedback: 'raw', seed: 1 });
    expect(p.seen()).toMatchObject({ ok: false, error: { code: 'UNKNOWN_TOOL' } });
  });

  it('rejects a scenario naming a tool the catalog lacks before the agent runs', async () => {
    let ran = false;
    const agent: Agent = { name: 'x', run: async () => ((ran = true), { status: 'completed', answer: '', diagnoses: [] }) };
    await expect(runScenario(outageScenario({ tools: ['get_weather', 'launch_rocket'] }), agent, { feedback: 'raw', seed: 1 })).rejects.toThrow(/unknown tool "launch_rocket"/);
    expect(ran).toBe(false);
  });
});

describe('runScenario: what the runner measures', () => {
  it('a hammering agent: 10 identical failing calls, loop avoidance and identification fail', async () => {
    const result = await runScenario(outageScenario(), hammerAgent(10), { feedback: 'raw', seed: 1 });
    expect(result.calls).toHaveLength(10);
    expect(result.maxIdenticalFailures).toBe(10);
    expect(result.scores).toEqual({ identification: false, loop_avoidance: false });
    expect(result.oraclePassed).toBe(false);
    expect(result.oracleFailures?.[0]).toMatch(/status completed/);
  });

  it('a patient agent gives up after one failure and names it', async () => {
    const result = await runScenario(outageScenario(), patientAgent(), { feedback: 'raw', seed: 1 });
    expect(result.maxIdenticalFailures).toBe(1);
    expect(result.scores).toEqual({ identification: true, loop_avoidance: true });
    expect(result.oraclePassed).toBe(true);
  });

  it('Retry-After compliance: waiting it out is honored, asking again at once is not', async () => {
    const patient = await runScenario(rateLimitScenario(), patientAgent(), { feedback: 'raw', seed: 1 });
    expect(patient.retryAfter).toEqual({ honored: 1, due: 1 });
    expect(patient.calls.map((c) => [c.ok, c.virtualMs])).toEqual([
      [false, 0],
      [true, 30_000],
    ]);
    expect(patient.scores).toEqual({ recovery: true, loop_avoidance: true, identification: true });

    const hasty = await runScenario(rateLimitScenario(), hammerAgent(2), { feedback: 'raw', seed: 1 });
    expect(hasty.retryAfter).toEqual({ honored: 0, due: 1 });
    // The second call was not throttled by the plan (nth: [1]), so the answer is right anyway.
    expect(hasty.scores.recovery).toBe(true);
  });

  it('counts duplicate side effects: resending after a lost reply duplicates, checking first does not', async () => {
    const resend = await runScenario(lostReplyScenario(), resendAgent(), { feedback: 'raw', seed: 1 });
    expect(resend.calls.map((c) => [c.tool, c.code ?? 'ok', c.fault])).toEqual([
      ['send_message', 'TIMEOUT', 'commit_then_drop'],
      ['send_message', 'ok', undefined],
    ]);
    expect(resend.duplicateSideEffects).toBe(1);
    expect(resend.writes).toBe(2);
    expect(resend.scores).toEqual({ idempotency_safety: false, recovery: false });
    expect(resend.oracleFailures).toEqual([expect.stringMatching(/expected 1 messages .* found 2/), 'created 2 messages during the run; the task asks for 1']);

    const verify = await runScenario(lostReplyScenario(), verifyingAgent(), { feedback: 'raw', seed: 1 });
    expect(verify.duplicateSideEffects).toBe(0);
    expect(verify.scores).toEqual({ idempotency_safety: true, recovery: true });
  });

  it('an agent that throws gets status error and fails every dimension it was scored on', async () => {
    const result = await runScenario(rateLimitScenario(), throwingAgent(), { feedback: 'raw', seed: 1 });
    expect(result.outcome.status).toBe('error');
    expect(result.outcome.answer).toContain('model endpoint returned garbage');
    expect(result.scores).toEqual({ recovery: false, loop_avoidance: false, identification: false });
    expect(result.calls).toHaveLength(1);
  });

  it('an agent whose model endpoint failed is a run lost to the harness: kept, not scored', async () => {
    const failure: ModelFailure = { kind: 'server', status: 503, message: 'HTTP 503: overloaded' };
    const agent: Agent = {
      name: 'model',
      async run(task) {
        await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
        throw new ModelEndpointError('openai', failure, 4);
      },
    };
    const result = await runScenario(rateLimitScenario(), agent, { feedback: 'raw', seed: 1 });
    expect(result.outcome.status).toBe('error');
    expect(result.outcome.answer).toBe('the model endpoint failed: openai model endpoint failed after 4 attempts: HTTP 503: overloaded');
    expect(result.scores).toEqual({});
    expect(result.modelEndpointFailure).toEqual({ provider: 'openai', kind: 'server', status: 503, message: 'HTTP 503: overloaded', attempts: 4 });
    expect(result.calls).toHaveLength(1);
  });

  it('an agent that returns something else than an outcome is an error too', async () => {
    const agent = { name: 'sloppy', run: async () => ({ status: 'done' }) } as unknown as Agent;
    const result = await runScenario(rateLimitScenario(), agent, { feedback: 'raw', seed: 1 });
    expect(result.outcome.status).toBe('error');
  });
});

describe('runScenario: budgets', () => {
  const scenario: Scenario = outageScenario({ budget: { calls: 3, virtual_ms: 60_000 } });

  it('aborts the signal when the calls are used up and answers the next call BUDGET_EXHAUSTED', async () => {
    const seen: string[] = [];
    const agent: Agent = {
      name: 'polite',
      async run(task) {
        while (!task.signal.aborted) await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
        const extra = await task.callTool('get_weather', { city: 'Paris' });
        seen.push(extra.ok ? 'ok' : extra.error.code);
        return { status: 'gave_up', answer: 'out of budget', diagnoses: [] };
      },
    };
    const result = await runScenario(scenario, agent, { feedback: 'raw', seed: 1 });
    expect(seen).toEqual([BUDGET_EXHAUSTED]);
    expect(result.calls).toHaveLength(3);
    expect(result.budgetExhausted).toBe('calls');
    expect(result.outcome.status).toBe('gave_up');
  });

  it('ends the run when the agent keeps calling past the budget', async () => {
    const agent: Agent = {
      name: 'relentless',
      async run(task) {
        for (;;) await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
      },
    };
    const result = await runScenario(scenario, agent, { feedback: 'raw', seed: 1 });
    expect(result.outcome.status).toBe('error');
    expect(result.outcome.answer).toMatch(/budget/);
    expect(result.calls).toHaveLength(3);
    expect(result.scores.loop_avoidance).toBe(false);
  });

  it('virtual time: a sleep past the budget ends at the deadline with the signal aborted', async () => {
    const p = probe(async (task) => {
      await task.sleep(3_600_000);
      const after = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
      return { aborted: task.signal.aborted, after };
    });
    const result = await runScenario(scenario, p.agent, { feedback: 'raw', seed: 1 });
    expect(p.seen().aborted).toBe(true);
    expect(p.seen().after).toMatchObject({ ok: false, error: { code: BUDGET_EXHAUSTED } });
    expect(result.virtualMs).toBe(60_000);
    expect(result.budgetExhausted).toBe('virtual_ms');
    expect(result.calls).toHaveLength(0);
  });
});

describe('records', () => {
  it('writes every call to the store under the run trace, with the injected fault as ground truth', async () => {
    const path = join(tempDir(), 'bench.db');
    const store = createSqliteStore({ path });
    const result = await runScenario(rateLimitScenario(), patientAgent(), { feedback: 'raw', seed: 1, store, runId: 'run-42' });
    await store.close();

    const reopened = createSqliteStore({ path });
    const records = await reopened.query({ traceId: result.traceId! });
    await reopened.close();
    expect(result.traceId).toBe('failbench:run-42:patient:test/weather-429:0');
    expect(records.map((r) => [r.step_index, r.tool_name, r.status, r.error_code, r.fault?.kind ?? null])).toEqual([
      [0, 'get_weather', 'failure', 'HTTP_429', 'http_status'],
      [1, 'get_weather', 'success', null, null],
    ]);
    expect(records[0]!.fault).toMatchObject({ kind: 'http_status', rule_id: 'limited', params: expect.objectContaining({ status: 429 }) });
    expect(records[0]!.context_snapshot).toMatchObject({ scenario_id: 'test/weather-429', agent: 'patient', repeat: 0, feedback_mode: 'raw', failbench_run_id: 'run-42' });
    // Raw mode: one attempt per call, nothing absorbed.
    expect(records[0]!.attempts).toHaveLength(1);
  });

  it('runSuite shares one recorder and flushes it before returning', async () => {
    const path = join(tempDir(), 'suite.db');
    const store = createSqliteStore({ path });
    const suite = await runSuite({
      scenarios: [outageScenario(), rateLimitScenario()],
      agents: [patientAgent(), hammerAgent(4)],
      feedback: 'assisted',
      seed: 3,
      repeat: 2,
      concurrency: 3,
      store,
    });
    const total = await store.count();
    await store.close();
    expect(suite.results).toHaveLength(8);
    const recorded = suite.results.reduce((n, r) => n + r.calls.length, 0);
    expect(total).toBe(recorded);
  });
});

describe('repeats: pass^k means something', () => {
  // A 503 outage whose length varies with the seed (2 to 5.5 s), and a reset that meets one of the
  // first two calls: what a repeat may vary.
  const flaky = (): Scenario =>
    outageScenario({
      id: 'test/flaky-outage',
      dimensions: ['identification', 'recovery', 'loop_avoidance'],
      recoverable: true,
      faults: [{ id: 'down', tool: 'get_weather', trigger: { window: { until: 2_000, jitter_ms: 3_500 } }, fault: 'http_status', params: { status: 503 } }],
      oracle: { status: ['completed'], answer_contains: ['paris'], diagnosis: { tool: 'get_weather', category: 'system' } },
    });
  const pick = (): Scenario =>
    outageScenario({
      id: 'test/one-of-reset',
      dimensions: ['identification', 'recovery'],
      recoverable: true,
      faults: [{ id: 'reset', tool: 'get_weather', trigger: { one_of: [1, 2] }, fault: 'connection_reset' }],
      oracle: { status: ['completed'], answer_contains: ['paris'], diagnosis: { tool: 'get_weather', category: 'network' } },
    });

  /** Retries a failed call once, after 3 s; a fixed habit, good enough only for short outages. */
  const onceAfter3s = (): Agent => ({
    name: 'once-after-3s',
    async run(task) {
      let r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
      if (!r.ok) {
        await task.sleep(3_000);
        r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
      }
      return r.ok ? { status: 'completed', answer: `Paris: ${JSON.stringify(r.output)}`, diagnoses: [{ tool: 'get_weather', category: 'system' }] } : { status: 'gave_up', answer: 'still down', diagnoses: [] };
    },
  });

  /** Waits a random 1-5 s (its own seeded draws) before its one retry: a stochastic agent. */
  const jittery = (seed: number): Agent => {
    let state = seed;
    const random = () => ((state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32);
    return {
      name: 'jittery',
      async run(task) {
        let r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
        if (!r.ok) {
          await task.sleep(1_000 + Math.floor(random() * 4_000));
          r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
        }
        return r.ok ? { status: 'completed', answer: `Paris: ${JSON.stringify(r.output)}`, diagnoses: [] } : { status: 'gave_up', answer: 'still down', diagnoses: [] };
      },
    };
  };

  it('each repeat draws its own faults: the outage lasts longer in some, and a one_of rule meets different calls', async () => {
    // Asks every 250 ms until the answer comes: its first success marks the end of the outage.
    const poller: Agent = {
      name: 'poller',
      async run(task) {
        for (let i = 0; i < 30; i++) {
          const r = await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
          if (r.ok) break;
          await task.sleep(250);
        }
        return { status: 'completed', answer: 'paris', diagnoses: [] };
      },
    };
    const suite = await runSuite({ scenarios: [flaky(), pick()], agents: [createRobustAgent(), poller], feedback: 'raw', seed: 3, repeat: 12, runId: 'repeats' });
    const ends = suite.results.filter((r) => r.agent === 'poller' && r.scenarioId === 'test/flaky-outage').map((r) => r.calls.find((c) => c.ok)!.virtualMs);
    for (const end of ends) expect(end).toBeGreaterThanOrEqual(2_000);
    expect(new Set(ends).size).toBeGreaterThan(3);
    const faulted = suite.results.filter((r) => r.agent === 'robust' && r.scenarioId === 'test/one-of-reset').map((r) => r.calls.findIndex((c) => c.fault === 'connection_reset'));
    expect(new Set(faulted.map((i) => (i === 0 ? 'first' : 'later')))).toEqual(new Set(['first', 'later']));
  });

  it('a fixed habit and a stochastic agent each pass some repeats and fail others: pass^k < pass^1', async () => {
    for (const agent of [onceAfter3s(), jittery(11)]) {
      const suite = await runSuite({ scenarios: [flaky()], agents: [agent], feedback: 'raw', seed: 5, repeat: 10, runId: 'pass-k' });
      const passK = scoreAgent(agent.name, suite.results).passK;
      expect(passK).toHaveLength(10);
      expect(passK[0], agent.name).toBeGreaterThan(0);
      expect(passK[9], agent.name).toBeLessThan(passK[0]!);
    }
  });

  it('the reference agents are reproducible for a seed, and robust passes every repeat', async () => {
    const run = () => runSuite({ scenarios: [flaky(), pick()], agents: [createRobustAgent(), createNaiveAgent()], feedback: 'raw', seed: 9, repeat: 6, runId: 'ref' });
    const [a, b] = [await run(), await run()];
    expect(JSON.stringify(b.results)).toBe(JSON.stringify(a.results));
    expect(scoreAgent('robust', a.results).passK[5]).toBe(1);
  });
});

describe('runSuite', () => {
  const scenarios = [
    outageScenario(),
    rateLimitScenario(),
    lostReplyScenario(),
    // Probability triggers make the seed matter.
    rateLimitScenario({ id: 'test/flaky', faults: [{ tool: 'get_weather', trigger: { probability: 0.5 }, fault: 'http_status', params: { status: 429, retry_after: 5 } }] }),
  ];
  const agents = () => [patientAgent(), hammerAgent(6), resendAgent(), verifyingAgent()];

  it('is deterministic: the same seed gives identical results JSON, whatever the concurrency', async () => {
    const a = await runSuite({ scenarios, agents: agents(), feedback: 'raw', seed: 7, repeat: 2, concurrency: 1, runId: 'same' });
    const b = await runSuite({ scenarios, agents: agents(), feedback: 'raw', seed: 7, repeat: 2, concurrency: 5, runId: 'same' });
    expect(JSON.stringify(b.results)).toBe(JSON.stringify(a.results));
    const c = await runSuite({ scenarios, agents: agents(), feedback: 'raw', seed: 8, repeat: 2, concurrency: 1, runId: 'same' });
    expect(JSON.stringify(c.results)).not.toBe(JSON.stringify(a.results));
  });

  it('orders results by agent, scenario, repeat and reports progress for each run', async () => {
    const progress: number[] = [];
    const suite = await runSuite({
      scenarios: scenarios.slice(0, 2),
      agents: [patientAgent(), throwingAgent()],
      feedback: 'raw',
      seed: 1,
      repeat: 2,
      concurrency: 4,
      version: '9.9.9',
      onProgress: (p) => {
        progress.push(p.done);
        if (p.done === 2) throw new Error('a broken progress bar');
      },
    });
    expect(progress).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(suite.results.map((r) => `${r.agent}/${r.scenarioId}/${r.repeat}`)).toEqual([
      'patient/test/weather-outage/0',
      'patient/test/weather-outage/1',
      'patient/test/weather-429/0',
      'patient/test/weather-429/1',
      'thrower/test/weather-outage/0',
      'thrower/test/weather-outage/1',
      'thrower/test/weather-429/0',
      'thrower/test/weather-429/1',
    ]);
    expect(suite.results.filter((r) => r.agent === 'thrower').every((r) => r.outcome.status === 'error')).toBe(true);
    expect(suite.meta).toMatchObject({ version: '9.9.9', seed: 1, feedback: 'raw', transport: 'inprocess', repeat: 2, agents: ['patient', 'thrower'] });
    expect(suite.scenarios.map((s) => s.faultKinds)).toEqual([['http_status'], ['http_status']]);
  });

  /** An agent whose model endpoint fails the runs `failing` says (by 0-based run index) with `failure`. */
  function endpointAgent(name: string, failing: (run: number) => ModelFailure | undefined): Agent & { runs: number } {
    const agent = {
      name,
      runs: 0,
      async run(task: AgentTask) {
        const failure = failing(agent.runs++);
        if (failure !== undefined) throw new ModelEndpointError('openai', failure, failure.kind === 'rejected' ? 1 : 4);
        await task.callTool('get_weather', { city: 'Paris', date: '2026-03-30' });
        return { status: 'gave_up' as const, answer: 'down', diagnoses: [] };
      },
    };
    return agent;
  }
  const five = Array.from({ length: 5 }, (_, i) => outageScenario({ id: `test/outage-${i}` }));
  const down: ModelFailure = { kind: 'connection', message: 'could not reach the model endpoint (ECONNREFUSED)' };

  it('stops at once on a request the endpoint rejects, flushing the records made so far', async () => {
    const store = createSqliteStore({ path: join(tempDir(), 'stopped.db') });
    const agent = endpointAgent('model', (run) => (run === 2 ? { kind: 'rejected', status: 401, message: 'HTTP 401: Incorrect API key provided: [redacted]' } : undefined));
    const error = await runSuite({ scenarios: five, agents: [agent], feedback: 'raw', seed: 1, store, runId: 'stop' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(SuiteStoppedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reason: 'rejected', agent: 'model', consecutive: 1, completed: 3, total: 5, failure: { provider: 'openai', kind: 'rejected', status: 401 } });
    expect((error as Error).message).toBe('the openai endpoint rejected the request (HTTP 401: Incorrect API key provided: [redacted])');
    expect(agent.runs).toBe(3);
    // The two runs before it made one call each; their records are in the store.
    expect((await store.query({})).map((r) => r.trace_id).sort()).toEqual(['failbench:stop:model:test/outage-0:0', 'failbench:stop:model:test/outage-1:0']);
    await store.close();
  });

  it('stops after 3 runs in a row the endpoint failed; a run it served in between resets the count', async () => {
    const flaky = endpointAgent('model', (run) => (run === 0 || run === 1 || run >= 3 ? down : undefined));
    const error = await runSuite({ scenarios: [...five, outageScenario({ id: 'test/outage-5' })], agents: [flaky], feedback: 'raw', seed: 1 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'stopped_answering', consecutive: 3, completed: 6, total: 6 });
    expect((error as Error).message).toBe('the openai endpoint stopped answering: 3 runs in a row failed after every retry (could not reach the model endpoint (ECONNREFUSED))');

    // Fewer in a row than the limit: the suite finishes, those runs are in the results, unscored.
    const twice = endpointAgent('model', (run) => (run === 1 || run === 2 ? down : undefined));
    const suite = await runSuite({ scenarios: five, agents: [twice], feedback: 'raw', seed: 1 });
    expect(suite.results.map((r) => r.modelEndpointFailure?.kind ?? 'served')).toEqual(['served', 'connection', 'connection', 'served', 'served']);
    // endpointFailureLimit: Infinity never stops for failures that were retried.
    const always = endpointAgent('model', () => down);
    const all = await runSuite({ scenarios: five, agents: [always], feedback: 'raw', seed: 1, endpointFailureLimit: Infinity });
    expect(all.results.every((r) => r.modelEndpointFailure !== undefined)).toBe(true);
    await expect(runSuite({ scenarios: five, agents: [always], feedback: 'raw', seed: 1, endpointFailureLimit: 0 })).rejects.toThrow(/endpointFailureLimit must be >= 1/);
  });

  it('counts the runs in a row per agent, and cancels the runs in flight when it stops', async () => {
    // a's last two runs and b's first follow one another, but each endpoint failed fewer than 3 in a row.
    const a = endpointAgent('a', (run) => (run >= 3 ? down : undefined));
    const b = endpointAgent('b', (run) => (run === 0 ? down : undefined));
    const suite = await runSuite({ scenarios: five, agents: [a, b], feedback: 'raw', seed: 1 });
    expect(suite.results.filter((r) => r.modelEndpointFailure !== undefined).map((r) => `${r.agent}/${r.scenarioId}`)).toEqual(['a/test/outage-3', 'a/test/outage-4', 'b/test/outage-0']);

    let cancelled = 0;
    const slow: Agent = {
      name: 'slow',
      run: (task) =>
        new Promise((resolve) => {
          task.signal.addEventListener('abort', () => {
            cancelled++;
            resolve({ status: 'gave_up', answer: 'cancelled', diagnoses: [] });
          });
        }),
    };
    const rejected = endpointAgent('rejected', () => ({ kind: 'rejected', status: 404, message: 'HTTP 404: no such model' }));
    const started = Date.now();
    await expect(runSuite({ scenarios: five, agents: [slow, rejected], feedback: 'raw', seed: 1, concurrency: 10 })).rejects.toMatchObject({ reason: 'rejected', agent: 'rejected' });
    expect(cancelled).toBe(5);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('refuses duplicate agents, unknown transports and bad scenarios before running anything', async () => {
    await expect(runSuite({ scenarios, agents: [patientAgent(), patientAgent()], feedback: 'raw', seed: 1 })).rejects.toThrow(/listed twice/);
    await expect(runSuite({ scenarios, agents: [patientAgent()], feedback: 'raw', seed: 1, transport: 'grpc' as 'inprocess' })).rejects.toThrow(/transport "grpc" is not one of inprocess, http, mcp/);
    let runs = 0;
    const counting: Agent = { name: 'counting', run: async () => (runs++, { status: 'completed', answer: '', diagnoses: [] }) };
    await expect(runSuite({ scenarios: [outageScenario(), rateLimitScenario({ tools: ['nope'] })], agents: [counting], feedback: 'raw', seed: 1 })).rejects.toThrow(/unknown tool "nope"/);
    expect(runs).toBe(0);
  });
});
