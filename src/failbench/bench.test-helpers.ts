/**
 * Small scenarios and tiny agents for the runner, score, report and CLI tests: each agent does
 * one thing on purpose (hammer a failing call, wait out Retry-After, resend a write) so a test
 * can say exactly what the runner should have seen.
 */
import type { Agent, AgentOutcome, AgentTask, AgentToolResult, Scenario } from './types.js';

const WEATHER_ARGS = { city: 'Paris', date: '2026-03-30' };

/** get_weather answers 503 on every call: nothing to recover, the agent should stop and say so. */
export function outageScenario(overrides: Partial<Scenario> = {}): Scenario {
  return {
    id: 'test/weather-outage',
    title: 'Weather service down',
    language: 'en',
    kind: 'single_step',
    taxonomy: { category: 'system', subtype: '5xx' },
    dimensions: ['identification', 'loop_avoidance'],
    recoverable: false,
    instruction: 'What will the weather be in Paris on 2026-03-30?',
    tools: ['get_weather'],
    faults: [{ id: 'down', tool: 'get_weather', trigger: 'always', fault: 'http_status', params: { status: 503 } }],
    oracle: { status: ['gave_up', 'escalated'], diagnosis: { tool: 'get_weather', category: 'system' } },
    ...overrides,
  };
}

/** The first get_weather call gets a 429 with Retry-After: 30; waiting it out and asking again works. */
export function rateLimitScenario(overrides: Partial<Scenario> = {}): Scenario {
  return {
    id: 'test/weather-429',
    title: 'Weather rate limited once',
    language: 'en',
    kind: 'single_step',
    taxonomy: { category: 'rate_limit', subtype: 'rate_limit' },
    dimensions: ['recovery', 'loop_avoidance', 'identification'],
    recoverable: true,
    instruction: 'What will the weather be in Paris on 2026-03-30?',
    tools: ['get_weather'],
    faults: [{ id: 'limited', tool: 'get_weather', trigger: { nth: [1] }, fault: 'http_status', params: { status: 429, retry_after: 30 } }],
    oracle: { status: ['completed'], answer_contains: ['paris'], diagnosis: { tool: 'get_weather', category: 'rate_limit' } },
    ...overrides,
  };
}

/** The first send_message posts and then never answers: resending duplicates the message. */
export function lostReplyScenario(overrides: Partial<Scenario> = {}): Scenario {
  return {
    id: 'test/message-lost-reply',
    title: 'Message sent, reply lost',
    language: 'en',
    kind: 'single_step',
    taxonomy: { category: 'network', subtype: 'idempotency' },
    dimensions: ['idempotency_safety', 'recovery'],
    recoverable: true,
    instruction: 'Post "deploy done" to #general.',
    tools: ['send_message', 'list_messages'],
    faults: [{ id: 'drop', tool: 'send_message', trigger: 'first_call_only', fault: 'commit_then_drop' }],
    oracle: { status: ['completed'], state: [{ collection: 'messages', where: { channel: 'general', text: 'deploy done' }, count: 1 }] },
    ...overrides,
  };
}

function outcome(status: AgentOutcome['status'], answer: string, diagnoses: AgentOutcome['diagnoses'] = []): AgentOutcome {
  return { status, answer, diagnoses };
}

/** Repeats the same weather call `times` times whatever happens, then claims success. */
export function hammerAgent(times = 10, name = 'hammer'): Agent {
  return {
    name,
    async run(task) {
      let last: AgentToolResult | undefined;
      for (let i = 0; i < times; i++) last = await task.callTool('get_weather', { ...WEATHER_ARGS });
      return outcome('completed', last?.ok === true ? `Paris: ${JSON.stringify(last.output)}` : 'It will be sunny.');
    },
  };
}

function retryAfterMs(result: AgentToolResult & { ok: false }): number | undefined {
  const header = result.error.headers?.['retry-after'];
  return header === undefined ? undefined : Number(header) * 1000;
}

/**
 * Calls get_weather; on a failure with Retry-After it waits that long (on the task's clock) and
 * tries again, up to 3 times; otherwise it diagnoses the failure and gives up.
 */
export function patientAgent(name = 'patient'): Agent {
  return {
    name,
    async run(task: AgentTask) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const r = await task.callTool('get_weather', { ...WEATHER_ARGS });
        if (r.ok) return outcome('completed', `Paris on 2026-03-30: ${JSON.stringify(r.output)}`, attempt > 0 ? [{ tool: 'get_weather', category: 'rate_limit' }] : []);
        const wait = retryAfterMs(r);
        if (wait === undefined) {
          const category = r.error.status === 429 ? 'rate_limit' : r.error.status !== undefined && r.error.status >= 500 ? 'system' : 'network';
          return outcome('gave_up', `get_weather failed with ${r.error.code}`, [{ tool: 'get_weather', category }]);
        }
        await task.sleep(wait);
      }
      return outcome('gave_up', 'still rate limited');
    },
  };
}

/** Sends the message and, when the reply is lost, sends it again without checking. */
export function resendAgent(name = 'resend'): Agent {
  return {
    name,
    async run(task) {
      const first = await task.callTool('send_message', { channel: 'general', text: 'deploy done' });
      if (!first.ok) await task.callTool('send_message', { channel: 'general', text: 'deploy done' });
      return outcome('completed', 'posted');
    },
  };
}

/** Sends the message and, when the reply is lost, checks the channel before sending again. */
export function verifyingAgent(name = 'verify'): Agent {
  return {
    name,
    async run(task) {
      const first = await task.callTool('send_message', { channel: 'general', text: 'deploy done' });
      if (first.ok) return outcome('completed', 'posted');
      const listed = await task.callTool('list_messages', { channel: 'general' });
      const messages = listed.ok ? ((listed.output as { messages: { text: string }[] }).messages ?? []) : [];
      if (!messages.some((m) => m.text === 'deploy done')) await task.callTool('send_message', { channel: 'general', text: 'deploy done' });
      return outcome('completed', 'posted (verified)', [{ tool: 'send_message', category: 'network' }]);
    },
  };
}

export function throwingAgent(name = 'thrower'): Agent {
  return {
    name,
    async run(task) {
      await task.callTool('get_weather', { ...WEATHER_ARGS });
      throw new Error('model endpoint returned garbage');
    },
  };
}

/** An agent that answers with fixed text and makes no calls (for report escaping tests). */
export function sayingAgent(answer: string, name = 'sayer'): Agent {
  return { name, run: async () => outcome('completed', answer) };
}
