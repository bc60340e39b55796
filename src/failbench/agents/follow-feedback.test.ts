import { describe, expect, it } from 'vitest';
import type { FeedbackAction } from '../../core/taxonomy.js';
import { lostReplyScenario, outageScenario, rateLimitScenario } from '../bench.test-helpers.js';
import { runScenario } from '../runner.js';
import type { AgentToolResult, AssistedInfo, RawToolError } from '../types.js';
import { createFeedbackFollowingAgent } from './follow-feedback.js';
import { createNaiveAgent } from './naive.js';
import { http, ok, scriptedTask, weather } from './scripted-task.test-helpers.js';

const follower = createFeedbackFollowingAgent();
const WEATHER = "What's the weather in Shanghai tomorrow?";

/** A failure as assisted mode hands it over: the raw error plus the runtime's feedback. */
function assisted(error: RawToolError, info: Partial<AssistedInfo> & { action: FeedbackAction }): AgentToolResult {
  return {
    ok: false,
    error,
    assisted: { stage: 'execution', category: 'system', type: 'server_error', hint: 'see action', retryable: true, absorbedFailures: 0, ...info },
  };
}

describe('the feedback-following agent', () => {
  it('calls again at once on retry, and stops when the feedback says calling again cannot help', async () => {
    const again = scriptedTask(WEATHER, ['get_weather'], (_t, _a, n) =>
      n === 1 ? assisted({ code: 'ECONNREFUSED', message: 'refused' }, { action: 'retry', category: 'network', type: 'connection_refused' }) : ok(weather('Shanghai', '2026-03-30')),
    );
    expect((await follower.run(again.task)).status).toBe('completed');
    expect([again.calls.length, again.sleeps]).toEqual([2, []]);

    const stop = scriptedTask(WEATHER, ['get_weather'], () => assisted({ code: 'HTTP_500', message: 'HTTP 500', status: 500 }, { action: 'retry', retryable: false }));
    const outcome = await follower.run(stop.task);
    expect(stop.calls).toHaveLength(1);
    expect(outcome.status).toBe('gave_up');
  });

  it('waits exactly retryAfterMs on wait_and_retry, and a second when no wait is stated', async () => {
    const { task, calls, sleeps } = scriptedTask(WEATHER, ['get_weather'], (_t, _a, n) =>
      n === 1
        ? assisted({ code: 'HTTP_429', message: 'HTTP 429', status: 429 }, { action: 'wait_and_retry', category: 'rate_limit', type: 'rate_limited', retryAfterMs: 42_000 })
        : n === 2
          ? assisted({ code: 'HTTP_429', message: 'HTTP 429', status: 429 }, { action: 'wait_and_retry', category: 'rate_limit', type: 'rate_limited' })
          : ok(weather('Shanghai', '2026-03-30')),
    );
    expect((await follower.run(task)).status).toBe('completed');
    expect(sleeps).toEqual([42_000, 1_000]);
    expect(calls.map((c) => c.at)).toEqual([0, 42_000, 43_000]);
  });

  it('fixes the arguments the issues name on retry_with_fixed_params, and stops when none can be fixed', async () => {
    const { task, calls } = scriptedTask('Weather in London tomorrow, unit "farenheit".', ['get_weather'], (_t, args) =>
      args['unit'] === 'fahrenheit'
        ? ok(weather('London', '2026-03-30', { unit: 'fahrenheit', timezone: 'Europe/London' }))
        : assisted(
            { code: 'INVALID_ARGUMENTS', message: 'invalid arguments', status: 400, body: { issues: [{ path: 'unit', code: 'enum_mismatch', expected: ['celsius', 'fahrenheit'], received: 'farenheit' }] } },
            { action: 'retry_with_fixed_params', stage: 'param_validation', category: 'parameter', type: 'enum_mismatch' },
          ),
    );
    expect((await follower.run(task)).status).toBe('completed');
    expect(calls.map((c) => c.args['unit'])).toEqual(['farenheit', 'fahrenheit']);

    const unfixable = scriptedTask(WEATHER, ['get_weather'], () =>
      assisted({ code: 'DATE_OUT_OF_RANGE', message: 'no data', status: 400 }, { action: 'retry_with_fixed_params', category: 'parameter', type: 'boundary_violation' }),
    );
    expect((await follower.run(unfixable.task)).status).toBe('gave_up');
    expect(unfixable.calls).toHaveLength(1);
  });

  it('reads the state on verify_state: a write found there is not repeated, one that is missing is sent again', async () => {
    const found = scriptedTask('Post "Deploy finished." to #engineering.', ['send_message', 'list_messages'], (tool) =>
      tool === 'send_message'
        ? assisted({ code: 'TIMEOUT', message: 'timed out' }, { action: 'verify_state', category: 'network', type: 'timeout' })
        : ok({ channel: 'engineering', messages: [{ message_id: 'MSG-000055', channel: 'engineering', text: 'Deploy finished.', author: 'agent' }] }),
    );
    expect((await follower.run(found.task)).status).toBe('completed');
    expect(found.calls.map((c) => c.tool)).toEqual(['send_message', 'list_messages']);

    const missing = scriptedTask('Post "Deploy finished." to #engineering.', ['send_message', 'list_messages'], (tool, _a, n) =>
      tool === 'list_messages'
        ? ok({ channel: 'engineering', messages: [] })
        : n === 1
          ? assisted({ code: 'TIMEOUT', message: 'timed out' }, { action: 'verify_state', category: 'network', type: 'timeout' })
          : ok({ message_id: 'MSG-000055', channel: 'engineering', text: 'Deploy finished.' }),
    );
    expect((await follower.run(missing.task)).status).toBe('completed');
    expect(missing.calls.map((c) => c.tool)).toEqual(['send_message', 'list_messages', 'send_message']);
  });

  it('escalates on escalate_to_user and refresh_credential, and says so although naive habits claim success', async () => {
    for (const action of ['escalate_to_user', 'refresh_credential'] as const) {
      const { task, calls } = scriptedTask(WEATHER, ['get_weather'], () => assisted({ code: 'HTTP_401', message: 'HTTP 401', status: 401 }, { action, category: 'auth', type: 'unauthorized', retryable: false }));
      const outcome = await follower.run(task);
      expect([outcome.status, calls.length]).toEqual(['escalated', 1]);
      // The diagnosis is the runtime's classification, not the naive guess about its own arguments.
      expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'get_weather', category: 'auth', type: 'unauthorized' })]);
    }
  });

  it('stops the step, and the later ones, on skip, abort, use_fallback and try_alternative', async () => {
    for (const action of ['skip', 'abort', 'use_fallback', 'try_alternative'] as const) {
      const { task, calls } = scriptedTask('Check the weather in Beijing tomorrow and post it to #general.', ['get_weather', 'send_message', 'list_messages'], (tool) =>
        tool === 'get_weather' ? assisted({ code: 'HTTP_503', message: 'HTTP 503', status: 503 }, { action, type: 'dependency_down' }) : ok({ message_id: 'MSG-000055', channel: 'general' }),
      );
      const outcome = await follower.run(task);
      expect([action, outcome.status, calls.map((c) => c.tool)]).toEqual([action, 'gave_up', ['get_weather']]);
    }
  });

  it('uses what came back on use_partial', async () => {
    const partial = weather('Shanghai', '2026-03-30', { humidity_pct: undefined });
    const { task, calls } = scriptedTask(WEATHER, ['get_weather'], () =>
      assisted({ code: 'PARTIAL', message: 'partial', body: { partial } }, { action: 'use_partial', category: 'business', type: 'partial_result', retryable: false }),
    );
    const outcome = await follower.run(task);
    expect([outcome.status, calls.length]).toEqual(['completed', 1]);
    expect(outcome.answer).toContain('Shanghai');
  });

  it('without feedback (raw mode) behaves as the naive agent', async () => {
    const script = () => scriptedTask(WEATHER, ['get_weather'], () => http(503));
    const a = script();
    const b = script();
    const [mine, naive] = [await follower.run(a.task), await createNaiveAgent().run(b.task)];
    expect(a.calls).toEqual(b.calls);
    expect(mine.status).toBe(naive.status);
  });

  it('on the real runtime: stops a 503 outage at once in assisted mode where raw mode repeats it', async () => {
    const raw = await runScenario(outageScenario(), follower, { feedback: 'raw', seed: 1 });
    const helped = await runScenario(outageScenario(), follower, { feedback: 'assisted', seed: 1 });
    expect(raw.calls.length).toBeGreaterThan(3);
    expect(raw.scores.loop_avoidance).toBe(false);
    expect(helped.outcome.status).toBe('gave_up');
    expect(helped.scores).toMatchObject({ loop_avoidance: true, identification: true });
  });

  it('on the real runtime: waits out a Retry-After, and checks a lost reply before sending again', async () => {
    const limited = await runScenario(rateLimitScenario(), follower, { feedback: 'assisted', seed: 1 });
    expect(limited.oraclePassed).toBe(true);
    const lost = await runScenario(lostReplyScenario(), follower, { feedback: 'assisted', seed: 1 });
    expect(lost.calls.map((c) => c.tool)).toEqual(['send_message', 'list_messages']);
    expect(lost.scores).toMatchObject({ idempotency_safety: true, recovery: true });
    expect(lost.duplicateSideEffects).toBe(0);
  });
});
