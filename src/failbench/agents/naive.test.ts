import { describe, expect, it } from 'vitest';
import { createNaiveAgent } from './naive.js';
import { fail, http, ok, scriptedTask, weather } from './scripted-task.test-helpers.js';

const naive = createNaiveAgent();

describe('the naive agent (seed 000 anti-patterns)', () => {
  it('repeats a failing call unchanged up to 8 times, without waiting, and still claims completion', async () => {
    const { task, calls, sleeps } = scriptedTask('How was the weather in Guangzhou yesterday?', ['get_weather'], () => http(503));
    const outcome = await naive.run(task);
    expect(calls).toHaveLength(8);
    expect(new Set(calls.map((c) => JSON.stringify(c.args))).size).toBe(1);
    expect(sleeps).toEqual([]);
    expect(outcome.status).toBe('completed');
  });

  it('ignores Retry-After', async () => {
    const { task, calls, sleeps } = scriptedTask("What's the weather in Shanghai tomorrow?", ['get_weather'], (_t, _a, n) =>
      n <= 2 ? http(429, { headers: { 'retry-after': '90' } }) : ok(weather('Shanghai', '2026-03-30')),
    );
    await naive.run(task);
    expect(calls.map((c) => c.at)).toEqual([0, 0, 0]);
    expect(sleeps).toEqual([]);
  });

  it('repeats a write after an ambiguous failure without looking at the state', async () => {
    const { task, calls } = scriptedTask('Post "Deploy finished." to #engineering.', ['send_message', 'list_messages'], (_t, _a, n) =>
      n === 1 ? fail({ code: 'TIMEOUT', message: 'timed out' }) : ok({ message_id: 'MSG-000055', channel: 'engineering', text: 'Deploy finished.' }),
    );
    await naive.run(task);
    expect(calls.map((c) => c.tool)).toEqual(['send_message', 'send_message']);
    expect(calls[0]!.args['idempotency_key']).toBeUndefined();
  });

  it('trusts a 200 with the wrong date and passes it on', async () => {
    const { task } = scriptedTask("What's the weather in Shanghai tomorrow?", ['get_weather'], () => ok(weather('Shanghai', '2026-03-29')));
    const outcome = await naive.run(task);
    expect(outcome.status).toBe('completed');
    expect(outcome.answer).toContain('Shanghai on 2026-03-29');
    expect(outcome.diagnoses).toEqual([]);
  });

  it('answers a 401 by editing an argument and blames its own parameters', async () => {
    const { task, calls } = scriptedTask("What's the weather in Shanghai tomorrow?", ['get_weather'], () => http(401));
    const outcome = await naive.run(task);
    expect(new Set(calls.map((c) => c.args['city'])).size).toBeGreaterThan(1);
    expect(outcome.status).toBe('completed');
    expect(outcome.diagnoses).toEqual([expect.objectContaining({ tool: 'get_weather', category: 'parameter' })]);
  });

  it('carries on with the next step after one failed', async () => {
    const { task, calls } = scriptedTask('Check the weather in Beijing tomorrow and post it to #general.', ['get_weather', 'send_message', 'list_messages'], (tool) =>
      tool === 'get_weather' ? http(503) : ok({ message_id: 'MSG-000055', channel: 'general' }),
    );
    await naive.run(task);
    expect(calls.filter((c) => c.tool === 'send_message')).toHaveLength(1);
  });
});
