import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { DuplicateToolError, RuntimeClosedError, ToolDefinitionError } from '../core/errors.js';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createVirtualClock } from '../core/clock.js';
import { defineTool, type ToolSpec } from './define-tool.js';
import { createRuntime, type RuntimeOptions } from './runtime.js';
import { AuthError, BusinessError, HttpError, ParameterError, ToolError } from './tool-errors.js';

function setup(tools: ToolSpec<any, unknown>[], extra: Partial<RuntimeOptions> = {}) {
  const clock = createVirtualClock();
  const records: ToolExecutionRecord[] = [];
  const rt = createRuntime({ tools: tools.map((t) => defineTool(t)), clock, seed: 7, onRecord: (r) => records.push(r), ...extra });
  return { clock, records, rt };
}

const objectInput = { type: 'object', properties: {} } as const;

function httpError(status: number, headers: Record<string, string> = {}, body?: unknown) {
  return Object.assign(new Error(`HTTP ${status}`), { status, headers, body });
}

function errno(code: string) {
  return Object.assign(new Error(`socket: ${code}`), { code });
}

describe('runtime: success path and records', () => {
  it('returns the output with one success record in the DESIGN.md shape', async () => {
    const { rt, records } = setup([
      {
        name: 'get_weather',
        description: 'Weather by city',
        input: { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' } }, required: ['city'] },
        output: { type: 'object', properties: { temp: { type: 'number' } }, required: ['temp'] },
        idempotent: true,
        execute: async (args: { city: string; unit: string }) => ({ temp: 18, city: args.city, unit: args.unit }),
      },
    ]);
    const r = await rt.execute('get_weather', { city: 'Paris' }, { traceId: 't1', intent: 'weather in Paris', sessionId: 's1', agent: 'a', model: 'm' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.output).toEqual({ temp: 18, city: 'Paris', unit: 'celsius' });
    expect(records).toHaveLength(1);
    const rec = records[0]!;
    expect(rec).toBe(r.record);
    expect(rec.execution_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(rec).toMatchObject({
      trace_id: 't1',
      step_index: 0,
      tool_name: 'get_weather',
      status: 'success',
      failure_stage: null,
      failure_category: null,
      failure_type: null,
      error_code: null,
      input_params: { city: 'Paris' },
      retry_count: 0,
      breaker_state: 'closed',
      idempotent: true,
      fault: null,
      feedback: null,
      recovery: 'none',
      schema_version: 1,
      summary_only: false,
      context_snapshot: { intent: 'weather in Paris', session_id: 's1', agent: 'a', model: 'm' },
    });
    expect(rec.raw_output).toBe('{"temp":18,"city":"Paris","unit":"celsius"}');
    expect(rec.output_length).toBe(rec.raw_output!.length);
    expect(rec.params_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(rec.created_at).toBe('2026-01-01T00:00:00.000Z');
    expect(rec.attempts).toEqual([
      { attempt: 0, started_at: '2026-01-01T00:00:00.000Z', duration_ms: 0, outcome: 'success', failure_type: null, error_code: null, delay_before_ms: 0 },
    ]);
  });

  it('numbers steps per trace and in sessions', async () => {
    const { rt, records } = setup([{ name: 'noop', description: 'no-op', input: objectInput, execute: () => 'ok' }]);
    await rt.execute('noop', {}, { traceId: 'A' });
    await rt.execute('noop', {}, { traceId: 'A' });
    await rt.execute('noop', {}, { traceId: 'B' });
    const session = rt.session({ agent: 'robust' });
    await session.execute('noop', {});
    await session.execute('noop', {});
    expect(records.map((r) => [r.trace_id === session.traceId ? 'S' : r.trace_id, r.step_index])).toEqual([
      ['A', 0],
      ['A', 1],
      ['B', 0],
      ['S', 0],
      ['S', 1],
    ]);
    expect(records[3]!.context_snapshot).toEqual({ agent: 'robust' });
  });

  it("shares one frozen, redacted context snapshot across a session's calls; a call adding context gets its own", async () => {
    const { rt, records } = setup([{ name: 'noop', description: 'no-op', input: objectInput, execute: () => 'ok' }], {
      context: { deployment: 'eu-1', api_key: 'sk-live-0123456789abcdef' },
    });
    const session = rt.session({ intent: 'refund order 7', sessionId: 's-1' });
    await session.execute('noop', {});
    await session.execute('noop', {});
    await session.execute('noop', {}, { context: { ticket: 'T-9' } });
    await session.execute('noop', {}, { agent: 'robust' });
    const [first, second, third, fourth] = records.map((r) => r.context_snapshot);
    expect(first).toEqual({ deployment: 'eu-1', api_key: '[REDACTED]', intent: 'refund order 7', session_id: 's-1' });
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(third).toEqual({ ...first, ticket: 'T-9' });
    expect(fourth).toEqual({ ...first, agent: 'robust' });
    expect(fourth).not.toBe(first);
  });

  it('truncates raw output to 2000 characters and keeps the original length', async () => {
    const { rt, records } = setup([{ name: 'big', description: 'big output', input: objectInput, idempotent: true, execute: () => 'x'.repeat(5000) }]);
    await rt.execute('big', {});
    expect(records[0]!.raw_output).toHaveLength(2000);
    expect(records[0]!.output_length).toBe(5000);
  });

  it('keeps the last 5 stack frames of an unknown throw and classifies it as system/runtime_error', async () => {
    function deep(n: number): never {
      if (n === 0) throw new RangeError('boom');
      return deep(n - 1);
    }
    const { rt } = setup([{ name: 'crash', description: 'crashes', input: objectInput, execute: () => deep(12) }]);
    const r = await rt.execute('crash', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'execution', category: 'system', type: 'runtime_error', code: 'RangeError' });
    const stack = r.record.error_stack!;
    expect(stack.split('\n').filter((l) => /^\s+at /.test(l))).toHaveLength(5);
    expect(stack.startsWith('RangeError: boom')).toBe(true);
    expect(r.record.retry_count).toBe(0);
  });

  it('records the innermost 5 frames of a system ToolError; classified answers capture no stack at all', async () => {
    function deep(n: number, make: () => Error): never {
      if (n === 0) throw make();
      return deep(n - 1, make);
    }
    const limit = Error.stackTraceLimit;
    const system = new ToolError('system', 'runtime_error', 'disk full');
    expect(Error.stackTraceLimit).toBe(limit);
    expect(system.stack!.split('\n').filter((l) => /^\s+at /.test(l)).length).toBeGreaterThan(0);
    expect(new BusinessError('not_found', 'no such order').stack).toBe('BusinessError: no such order');
    expect(new HttpError(404, 'missing').stack).toBe('HttpError: missing');
    expect(new HttpError(502, 'bad gateway').stack).toContain('runtime.test.ts');
    expect(Error.stackTraceLimit).toBe(limit);
    const { rt } = setup([
      { name: 'broken', description: 'fails', input: objectInput, execute: () => deep(12, () => new ToolError('system', 'runtime_error', 'disk full')) },
      { name: 'upstream', description: 'fails', input: objectInput, execute: () => deep(12, () => new HttpError(503, 'down')) },
      { name: 'lookup', description: 'fails', input: objectInput, execute: () => deep(12, () => new BusinessError('not_found', 'no such order')) },
    ]);
    for (const [tool, head] of [['broken', 'ToolError: disk full'], ['upstream', 'HttpError: down']] as const) {
      const r = await rt.execute(tool, {});
      const stack = r.record.error_stack!;
      expect(stack.startsWith(head)).toBe(true);
      expect(stack.split('\n').filter((l) => /^\s+at /.test(l))).toHaveLength(5);
      expect(stack).toContain('deep');
    }
    expect((await rt.execute('lookup', {})).record.error_stack).toBeNull();
  });

  it('redacts secrets in params, outputs and messages by default', async () => {
    const { rt, records } = setup([
      {
        name: 'login',
        description: 'logs in',
        input: { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string' } } },
        execute: () => {
          throw new Error('denied for token Bearer abcdefghijklmnopqrstuvwxyz012345');
        },
      },
    ]);
    await rt.execute('login', { user: 'ann', password: 'hunter2-very-secret' });
    const text = JSON.stringify(records[0]);
    expect(text).not.toContain('hunter2-very-secret');
    expect(text).not.toContain('abcdefghijklmnopqrstuvwxyz012345');
    expect(records[0]!.input_params).toMatchObject({ user: 'ann' });
  });

  it('swallows listener errors and reports them', async () => {
    const errors: string[] = [];
    const { rt } = setup([{ name: 'noop', description: 'no-op', input: objectInput, execute: () => 1 }], {
      onRecord: () => {
        throw new Error('listener broke');
      },
      onListenerError: (e, where) => errors.push(`${where}:${(e as Error).message}`),
    });
    const r = await rt.execute('noop', {});
    expect(r.ok).toBe(true);
    expect(errors).toEqual(['onRecord:listener broke']);
  });

  it('a custom recorder that returns a value, throws or rejects never breaks the call', async () => {
    const errors: string[] = [];
    const kept: ToolExecutionRecord[] = [];
    const tools = [
      { name: 'noop', description: 'no-op', input: objectInput, execute: () => 1 },
      { name: 'boom', description: 'fails', input: objectInput, execute: () => Promise.reject(httpError(400)) },
    ];
    const onListenerError = (e: unknown, where: string) => errors.push(`${where}:${(e as Error).message}`);
    // `(r) => kept.push(r)` returns a number, the shorthand a JavaScript user writes.
    const pushing = setup(tools, { recorder: { enqueue: (r) => kept.push(r) as unknown as undefined }, onListenerError }).rt;
    expect((await pushing.execute('noop', {})).ok).toBe(true);
    expect((await pushing.execute('boom', {})).ok).toBe(false);
    expect(kept.map((r) => r.status)).toEqual(['success', 'failure']);

    const throwing = setup(tools, {
      recorder: {
        enqueue: () => {
          throw new Error('sink threw');
        },
      },
      onListenerError,
    }).rt;
    expect((await throwing.execute('noop', {})).ok).toBe(true);
    const failed = await throwing.execute('boom', {});
    expect(failed.ok).toBe(false);
    if (!failed.ok) expect(failed.error.type).toBe('schema_mismatch');

    const rejecting = setup(tools, { recorder: { enqueue: () => Promise.reject(new Error('sink rejected')) }, onListenerError }).rt;
    expect((await rejecting.execute('noop', {})).ok).toBe(true);
    expect((await rejecting.execute('boom', {})).ok).toBe(false);
    expect(errors).toEqual([
      'recorder.enqueue:sink threw',
      'recorder.enqueue:sink threw',
      'recorder.enqueue:sink rejected',
      'recorder.enqueue:sink rejected',
    ]);
  });
});

describe('runtime: rejections (status rejected, tool not invoked)', () => {
  it('unknown tool -> request_build / parameter / unknown_tool with suggestions', async () => {
    const { rt } = setup([{ name: 'get_weather', description: 'w', input: objectInput, execute: () => 1 }]);
    const r = await rt.execute('get_wether', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.record.status).toBe('rejected');
    expect(r.error).toMatchObject({ stage: 'request_build', category: 'parameter', type: 'unknown_tool', code: 'UNKNOWN_TOOL' });
    expect(r.feedback.action).toBe('retry_with_fixed_params');
    expect(r.feedback.hint).toContain('"get_weather"');
  });

  it('an unknown tool name the model made up is redacted and cut before it reaches the record and the hint', async () => {
    const { rt } = setup([{ name: 'get_weather', description: 'w', input: objectInput, execute: () => 1 }]);
    const key = 'sk-proj-Zq9xR2mT8vL4kP7nW3bY6cF1aB5dE0gH';
    const r = await rt.execute(`tool ${key}`, {});
    if (r.ok) throw new Error('expected a rejection');
    expect(JSON.stringify([r.record, r.feedback, r.error])).not.toContain(key);
    expect(r.record.tool_name).toBe('tool sk-proj-…[REDACTED]');
    const long = await rt.execute('x'.repeat(5000), {});
    if (long.ok) throw new Error('expected a rejection');
    expect(long.record.tool_name.length).toBeLessThan(200);
    // A key that runs across the cut leaves no fragment of itself behind.
    const across = await rt.execute(`${'x'.repeat(110)} ${key}`, {});
    if (across.ok) throw new Error('expected a rejection');
    expect(across.record.tool_name).not.toContain('sk-proj-Zq9');
    // A registered name is the tool's own and stays whole.
    expect((await rt.execute('get_weather', {})).record.tool_name).toBe('get_weather');
  });

  it('invalid input -> param_validation with actionable issues, tool not run', async () => {
    const execute = vi.fn(() => 1);
    const { rt } = setup([
      {
        name: 'search',
        description: 's',
        input: {
          type: 'object',
          properties: { q: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: 50 }, sort: { enum: ['asc', 'desc'] } },
          required: ['q'],
        },
        execute,
      },
    ]);
    const r = await rt.execute('search', { limit: 500, sort: 'sideways' });
    expect(execute).not.toHaveBeenCalled();
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.record.status).toBe('rejected');
    expect(r.error).toMatchObject({ stage: 'param_validation', category: 'parameter', type: 'missing_required', retryable: true });
    expect(r.error.issues).toEqual([
      { code: 'missing_required', path: 'q', message: 'required property "q" is missing' },
      expect.objectContaining({ code: 'boundary_violation', path: 'limit', expected: { maximum: 50 }, received: 500 }),
      expect.objectContaining({ code: 'enum_mismatch', path: 'sort', expected: ['asc', 'desc'], received: 'sideways' }),
    ]);
    expect(r.feedback.action).toBe('retry_with_fixed_params');
    expect(r.feedback.hint).toContain('q: required property "q" is missing');
    expect(r.record.input_params).toEqual({ limit: 500, sort: 'sideways' });
  });

  it('normalizes before rejecting: defaults, numeric strings, enum case and synonyms', async () => {
    const seen: unknown[] = [];
    const { rt, records } = setup([
      {
        name: 'list_docs',
        description: 'l',
        input: {
          type: 'object',
          properties: {
            limit: { type: 'number', default: 10 },
            page: { type: 'integer' },
            order: { enum: ['asc', 'desc'], 'x-synonyms': { ascending: 'asc', descending: 'desc' } },
            kind: { enum: ['PDF', 'Word'] },
          },
        },
        execute: (args) => {
          seen.push(args);
          return [];
        },
      },
    ]);
    const original = { page: '3', order: 'Ascending', kind: 'pdf', extra: true };
    const r = await rt.execute('list_docs', original);
    expect(r.ok).toBe(true);
    expect(seen[0]).toEqual({ limit: 10, page: 3, order: 'asc', kind: 'PDF', extra: true });
    expect(original).toEqual({ page: '3', order: 'Ascending', kind: 'pdf', extra: true });
    expect(records[0]!.input_params).toEqual(original);
  });

  it('accepts zod 4 schemas', async () => {
    const { rt } = setup([
      {
        name: 'z',
        description: 'zod tool',
        input: z.object({ city: z.string().min(1), days: z.number().int().max(7).default(1) }),
        execute: (args: { city: string; days: number }) => `${args.city}:${args.days}`,
      },
    ]);
    const ok = await rt.execute('z', { city: 'Oslo' });
    expect(ok).toMatchObject({ ok: true, output: 'Oslo:1' });
    const bad = await rt.execute('z', { city: '', days: 30 });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.error.issues?.map((i) => i.code)).toEqual(['boundary_violation', 'boundary_violation']);
  });
});

describe('runtime: retry by category', () => {
  it('network errors retry with exponential backoff (max 3) on the virtual clock', async () => {
    let calls = 0;
    const { rt, clock } = setup([
      {
        name: 'flaky',
        description: 'f',
        input: objectInput,
        idempotent: true,
        retry: { baseDelayMs: 1000, factor: 2, maxDelayMs: 30_000 },
        execute: () => {
          calls++;
          throw errno('ECONNREFUSED');
        },
      },
    ]);
    const r = await rt.execute('flaky', {});
    expect(calls).toBe(4);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.record.status).toBe('failure');
    expect(r.error).toMatchObject({ category: 'network', type: 'connection_refused', code: 'ECONNREFUSED' });
    expect(r.record.retry_count).toBe(3);
    const delays = r.record.attempts.map((a) => a.delay_before_ms);
    expect(delays[0]).toBe(0);
    [1000, 2000, 4000].forEach((ceiling, i) => {
      expect(delays[i + 1]).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delays[i + 1]).toBeLessThanOrEqual(ceiling);
    });
    expect(clock.slept).toBe(delays.reduce((a, b) => a + b, 0));
    expect(r.feedback.action).toBe('retry');
  });

  it('recovers after transient failures and marks the record auto_recovered', async () => {
    let calls = 0;
    const { rt } = setup([
      {
        name: 'flaky',
        description: 'f',
        input: objectInput,
        idempotent: true,
        execute: () => {
          if (++calls < 3) throw httpError(503);
          return 'ok';
        },
      },
    ]);
    const r = await rt.execute('flaky', {});
    expect(r.ok).toBe(true);
    expect(r.record.recovery).toBe('auto_recovered');
    expect(r.record.attempts.map((a) => [a.outcome, a.error_code])).toEqual([
      ['failure', 'HTTP_503'],
      ['failure', 'HTTP_503'],
      ['success', null],
    ]);
  });

  it.each([
    ['parameter (HTTP 400)', httpError(400), 'parameter'],
    ['parameter (ParameterError)', new ParameterError('boundary_violation', 'date out of range'), 'parameter'],
    ['business (not found)', new BusinessError('not_found', 'no order 42'), 'business'],
    ['business (HTTP 409)', httpError(409), 'business'],
    ['auth (HTTP 401, no refresher)', httpError(401), 'auth'],
    ['auth (HTTP 403)', httpError(403), 'auth'],
    ['system runtime error', new TypeError('x is undefined'), 'system'],
  ])('%s is never retried', async (_label, error, category) => {
    let calls = 0;
    const { rt } = setup([
      {
        name: 't',
        description: 't',
        input: objectInput,
        idempotent: true,
        execute: () => {
          calls++;
          throw error;
        },
      },
    ]);
    const r = await rt.execute('t', {});
    expect(calls).toBe(1);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.category).toBe(category);
  });

  it('429 honors Retry-After in seconds', async () => {
    let calls = 0;
    const { rt, clock } = setup([
      {
        name: 'limited',
        description: 'l',
        input: objectInput,
        idempotent: true,
        execute: () => {
          if (++calls === 1) throw httpError(429, { 'Retry-After': '30' });
          return 'ok';
        },
      },
    ]);
    const r = await rt.execute('limited', {});
    expect(r.ok).toBe(true);
    expect(r.record.attempts[1]!.delay_before_ms).toBe(30_000);
    expect(clock.slept).toBe(30_000);
  });

  it('429 honors Retry-After as an HTTP-date, read from error.response.headers (Headers object)', async () => {
    let calls = 0;
    const { rt, clock } = setup([
      {
        name: 'limited',
        description: 'l',
        input: objectInput,
        idempotent: true,
        execute: (_a, ctx) => {
          if (++calls === 1) {
            const at = new Date(ctx.clock.now() + 12_000).toUTCString();
            throw Object.assign(new Error('too many'), { response: { status: 429, headers: new Headers({ 'retry-after': at }) } });
          }
          return 'ok';
        },
      },
    ]);
    const r = await rt.execute('limited', {});
    expect(r.ok).toBe(true);
    // HTTP-dates have one-second resolution.
    expect(r.record.attempts[1]!.delay_before_ms).toBeGreaterThan(11_000);
    expect(r.record.attempts[1]!.delay_before_ms).toBeLessThanOrEqual(12_000);
    expect(clock.slept).toBe(r.record.attempts[1]!.delay_before_ms);
  });

  it('a Retry-After longer than maxRetryAfterMs goes back to the agent with wait_and_retry', async () => {
    const { rt, clock } = setup([
      {
        name: 'limited',
        description: 'l',
        input: objectInput,
        idempotent: true,
        execute: () => {
          throw new HttpError(429, 'slow down', { 'retry-after': '600' });
        },
      },
    ]);
    const r = await rt.execute('limited', {});
    expect(clock.slept).toBe(0);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.feedback).toMatchObject({ action: 'wait_and_retry', retryAfterMs: 600_000, retryable: true });
    expect(r.error.retryAfterMs).toBe(600_000);
    expect(r.record.feedback?.retry_after_ms).toBe(600_000);
  });

  it('auth is retried once after the credential refresher succeeds', async () => {
    let token = 'old';
    const refresh = vi.fn(async () => {
      token = 'new';
      return true;
    });
    const { rt } = setup(
      [
        {
          name: 'api',
          description: 'a',
          input: objectInput,
          execute: () => {
            if (token === 'old') throw new AuthError('credential_expired', 'token expired');
            return 'data';
          },
        },
      ],
      { refreshCredential: refresh },
    );
    const r = await rt.execute('api', {});
    expect(refresh).toHaveBeenCalledTimes(1);
    expect(r.ok).toBe(true);
    expect(r.record.recovery).toBe('auto_recovered');
    expect(r.record.retry_count).toBe(1);
  });

  it('auth fails for good when refreshing does not help, and escalates', async () => {
    const refresh = vi.fn(async () => true);
    let calls = 0;
    const { rt } = setup(
      [
        {
          name: 'api',
          description: 'a',
          input: objectInput,
          execute: () => {
            calls++;
            throw httpError(401);
          },
        },
      ],
      { refreshCredential: refresh },
    );
    const r = await rt.execute('api', {});
    expect(refresh).toHaveBeenCalledTimes(1);
    expect(calls).toBe(2);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.feedback.action).toBe('refresh_credential');
  });

  it('a refresher that fails stops the call without a retry', async () => {
    let calls = 0;
    const { rt } = setup(
      [
        {
          name: 'api',
          description: 'a',
          input: objectInput,
          execute: () => {
            calls++;
            throw httpError(401);
          },
        },
      ],
      { refreshCredential: () => false },
    );
    await rt.execute('api', {});
    expect(calls).toBe(1);
  });
});

describe('runtime: idempotency', () => {
  it('a non-idempotent tool hit by a timeout is executed exactly once, and the agent is told to verify state', async () => {
    let executions = 0;
    const { rt } = setup([
      {
        name: 'create_order',
        description: 'creates an order',
        input: objectInput,
        timeoutMs: 5000,
        execute: async (_a, ctx) => {
          executions++;
          await ctx.clock.sleep(60_000); // the write lands, the response never comes in time
          return { id: 1 };
        },
      },
    ]);
    const r = await rt.execute('create_order', {});
    expect(executions).toBe(1);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.record.status).toBe('timeout');
    expect(r.error).toMatchObject({ category: 'network', type: 'timeout', code: 'TIMEOUT' });
    expect(r.feedback.action).toBe('verify_state');
    expect(r.record.idempotent).toBe(false);
    expect(r.record.duration_ms).toBe(5000);
  });

  it('a non-idempotent tool is not retried after a connection reset either, but is after a refused connection', async () => {
    const counts = { reset: 0, refused: 0 };
    const { rt } = setup([
      {
        name: 'send_reset',
        description: 's',
        input: objectInput,
        execute: () => {
          counts.reset++;
          throw errno('ECONNRESET');
        },
      },
      {
        name: 'send_refused',
        description: 's',
        input: objectInput,
        execute: () => {
          counts.refused++;
          throw errno('ECONNREFUSED');
        },
      },
    ]);
    await rt.execute('send_reset', {});
    await rt.execute('send_refused', {});
    expect(counts).toEqual({ reset: 1, refused: 4 });
  });

  it('a tool that takes idempotency keys is retried with the same key on every attempt', async () => {
    const keys: string[] = [];
    const { rt } = setup([
      {
        name: 'create_order',
        description: 'c',
        input: objectInput,
        idempotencyKey: true,
        timeoutMs: 1000,
        execute: async (_a, ctx) => {
          keys.push(ctx.idempotencyKey);
          if (keys.length < 3) await ctx.clock.sleep(5000);
          return { id: 7 };
        },
      },
    ]);
    const r = await rt.execute('create_order', {});
    expect(r.ok).toBe(true);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it('seeded runtimes derive idempotency keys from the call, so reruns send the same keys', async () => {
    const keysOf = async () => {
      const keys: string[] = [];
      const { rt } = setup([{ name: 'create_order', description: 'c', input: objectInput, idempotencyKey: true, execute: (_a, ctx) => keys.push(ctx.idempotencyKey) }]);
      await rt.execute('create_order', {}, { traceId: 'run-1' });
      await rt.execute('create_order', {}, { traceId: 'run-1' });
      return keys;
    };
    const first = await keysOf();
    expect(first).toEqual(['idem-run-1-0-create_order', 'idem-run-1-1-create_order']);
    expect(await keysOf()).toEqual(first);
  });

  it('MCP annotations declare idempotency', async () => {
    let calls = 0;
    const { rt } = setup([
      {
        name: 'read_file',
        description: 'r',
        input: objectInput,
        annotations: { readOnlyHint: true },
        execute: () => {
          calls++;
          throw errno('ECONNRESET');
        },
      },
    ]);
    await rt.execute('read_file', {});
    expect(calls).toBe(4);
    expect(rt.tools[0]!.idempotent).toBe(true);
  });
});

describe('runtime: timeouts', () => {
  it('times out a tool that ignores its signal, with real time', async () => {
    const rt = createRuntime({
      tools: [defineTool({ name: 'hang', description: 'never answers', input: objectInput, timeoutMs: 40, retry: { maxRetries: 0 }, idempotent: true, execute: () => new Promise(() => {}) })],
    });
    const started = Date.now();
    const r = await rt.execute('hang', {});
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.record.status).toBe('timeout');
  });

  it('aborts the signal on timeout so cooperative tools can stop', async () => {
    let aborted: unknown;
    const { rt } = setup([
      {
        name: 'slow',
        description: 's',
        input: objectInput,
        timeoutMs: 100,
        retry: { maxRetries: 0 },
        execute: (_a, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => {
              aborted = ctx.signal.reason;
              reject(ctx.signal.reason);
            });
          }),
      },
    ]);
    const r = await rt.execute('slow', {});
    expect((aborted as DOMException).name).toBe('TimeoutError');
    expect(r.record.status).toBe('timeout');
  });

  it('the caller can cancel through options.signal', async () => {
    const { rt } = setup([{ name: 'slow', description: 's', input: objectInput, timeoutMs: 100_000, execute: () => new Promise(() => {}) }]);
    const controller = new AbortController();
    const pending = rt.execute('slow', {}, { signal: controller.signal });
    controller.abort();
    const r = await pending;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ category: 'system', type: 'cancelled' });
  });
});

describe('runtime: circuit breaker', () => {
  it('opens after 5 consecutive tool failures, rejects without invoking, then probes after the cooldown', async () => {
    let calls = 0;
    let healthy = false;
    const { rt, clock } = setup(
      [
        {
          name: 'svc',
          description: 's',
          input: objectInput,
          idempotent: true,
          retry: { maxRetries: 0 },
          execute: () => {
            calls++;
            if (!healthy) throw httpError(500);
            return 'ok';
          },
        },
      ],
      { breaker: { failureThreshold: 5, cooldownMs: 10_000 } },
    );
    for (let i = 0; i < 5; i++) await rt.execute('svc', {});
    expect(rt.breakers.state('svc')?.state).toBe('open');
    const rejected = await rt.execute('svc', {});
    expect(calls).toBe(5);
    expect(rejected.ok).toBe(false);
    if (rejected.ok) return;
    expect(rejected.record.status).toBe('rejected');
    expect(rejected.error).toMatchObject({ type: 'circuit_open', category: 'system' });
    expect(rejected.feedback).toMatchObject({ action: 'skip', retryAfterMs: 10_000 });

    await clock.advance(10_000);
    healthy = true;
    const probe = await rt.execute('svc', {});
    expect(probe.ok).toBe(true);
    expect(rt.breakers.state('svc')?.state).toBe('closed');
  });

  it('parameter errors never trip the breaker', async () => {
    const { rt } = setup([
      {
        name: 'svc',
        description: 's',
        input: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        execute: () => {
          throw httpError(422);
        },
      },
    ]);
    for (let i = 0; i < 20; i++) await rt.execute('svc', {});
    for (let i = 0; i < 20; i++) await rt.execute('svc', { n: 1 });
    expect(rt.breakers.state('svc')).toMatchObject({ state: 'closed', trips: 0 });
  });

  it('stops retrying the moment its own failures open the circuit', async () => {
    let calls = 0;
    const { rt } = setup(
      [
        {
          name: 'svc',
          description: 's',
          input: objectInput,
          idempotent: true,
          retry: { maxRetries: 10 },
          execute: () => {
            calls++;
            throw errno('ETIMEDOUT');
          },
        },
      ],
      { breaker: { failureThreshold: 3 } },
    );
    const r = await rt.execute('svc', {});
    expect(calls).toBe(3);
    expect(r.record.breaker_state).toBe('open');
  });

  it('breaker state can be saved and restored', async () => {
    const { rt } = setup([{ name: 'svc', description: 's', input: objectInput, retry: { maxRetries: 0 }, execute: () => Promise.reject(httpError(502)) }], {
      breaker: { failureThreshold: 2 },
    });
    await rt.execute('svc', {});
    await rt.execute('svc', {});
    const saved = JSON.parse(JSON.stringify(rt.breakers.snapshot()));
    const { rt: other } = setup([{ name: 'svc', description: 's', input: objectInput, execute: vi.fn(() => 'ok') }], { breaker: { failureThreshold: 2 } });
    other.breakers.restore(saved);
    const r = await other.execute('svc', {});
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.type).toBe('circuit_open');
  });

  it('circuit_open goes to the fallback tool, and both records say so', async () => {
    const { rt, records } = setup(
      [
        { name: 'primary', description: 'p', input: objectInput, idempotent: true, retry: { maxRetries: 0 }, fallback: 'backup', execute: () => Promise.reject(httpError(500)) },
        { name: 'backup', description: 'b', input: objectInput, idempotent: true, execute: () => 'from backup' },
      ],
      { breaker: { failureThreshold: 1 } },
    );
    const first = await rt.execute('primary', {}, { traceId: 'T' });
    expect(first).toMatchObject({ ok: true, output: 'from backup' });
    const second = await rt.execute('primary', {}, { traceId: 'T' });
    expect(second.ok).toBe(true);
    expect(second.fallbackFrom).toMatchObject({ tool: 'primary', reason: 'circuit_open' });
    const primaryRecord = second.fallbackFrom!.record;
    expect(primaryRecord).toMatchObject({ status: 'rejected', failure_type: 'circuit_open', recovery: 'auto_recovered' });
    expect(primaryRecord.fallback).toEqual({ role: 'primary', to: 'backup', reason: 'circuit_open' });
    expect(primaryRecord.feedback?.action).toBe('use_fallback');
    expect(second.record.fallback).toEqual({ role: 'fallback', from: 'primary', primary_execution_id: primaryRecord.execution_id, reason: 'circuit_open' });
    expect(records.filter((r) => r.tool_name === 'backup')).toHaveLength(2);
  });

  it('an exhausted rate limit goes to the fallback', async () => {
    const { rt } = setup([
      {
        name: 'primary',
        description: 'p',
        input: objectInput,
        idempotent: true,
        retry: { maxRetries: 1 },
        fallback: 'backup',
        execute: () => Promise.reject(httpError(429, { 'retry-after': '1' })),
      },
      { name: 'backup', description: 'b', input: objectInput, execute: () => 'b' },
    ]);
    const r = await rt.execute('primary', {});
    expect(r).toMatchObject({ ok: true, output: 'b', fallbackFrom: { reason: 'rate_limit_exhausted' } });
    expect(r.fallbackFrom!.record.retry_count).toBe(1);
    expect(r.fallbackFrom!.record.feedback).toMatchObject({ action: 'use_fallback', hint: expect.stringContaining('went to backup') });
  });
});

describe('runtime: output checks', () => {
  it('an output that breaks the schema is a result_parse failure', async () => {
    const { rt } = setup([
      {
        name: 'price',
        description: 'p',
        input: objectInput,
        idempotent: true,
        output: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
        execute: () => ({ amount: '123' }),
      },
    ]);
    const r = await rt.execute('price', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'result_parse', category: 'system', type: 'output_schema_mismatch' });
    expect(r.error.issues?.[0]).toMatchObject({ code: 'type_mismatch', path: 'amount' });
    expect(r.record.raw_output).toBe('{"amount":"123"}');
    expect(r.feedback.action).toBe('skip');
  });

  it('an MCP result with isError is a failure, and a non-ok fetch Response too', async () => {
    const { rt } = setup([
      { name: 'mcp', description: 'm', input: objectInput, execute: () => ({ isError: true, content: [{ type: 'text', text: 'file missing' }] }) },
      { name: 'http', description: 'h', input: objectInput, retry: { maxRetries: 0 }, execute: () => new Response('nope', { status: 404 }) },
    ]);
    const a = await rt.execute('mcp', {});
    const b = await rt.execute('http', {});
    expect(!a.ok && a.error).toMatchObject({ category: 'business', type: 'tool_reported_error', code: 'MCP_TOOL_ERROR', message: 'file missing' });
    expect(!b.ok && b.error).toMatchObject({ category: 'business', type: 'not_found', code: 'HTTP_404', status: 404 });
  });

  it('a partial result is handed back with use_partial', async () => {
    const { rt } = setup([
      {
        name: 'report',
        description: 'r',
        input: objectInput,
        execute: () => {
          throw new BusinessError('partial_result', 'region EU missing', { partial: { US: 10 } });
        },
      },
    ]);
    const r = await rt.execute('report', {});
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.partial).toEqual({ US: 10 });
    expect(r.feedback.action).toBe('use_partial');
  });
});

describe('runtime: feedback overrides', () => {
  it('tool > runtime, type > category', async () => {
    const { rt } = setup(
      [
        {
          name: 'a',
          description: 'a',
          input: objectInput,
          feedback: { not_found: { hint: 'tool says: use search_orders first' } },
          execute: () => Promise.reject(httpError(404)),
        },
        { name: 'b', description: 'b', input: objectInput, execute: () => Promise.reject(httpError(404)) },
        { name: 'c', description: 'c', input: objectInput, execute: () => Promise.reject(httpError(409)) },
      ],
      { feedback: { business: { action: 'escalate_to_user' }, not_found: { hint: (ctx) => `runtime says: ${ctx.toolName} has no such item` } } },
    );
    const a = await rt.execute('a', {});
    const b = await rt.execute('b', {});
    const c = await rt.execute('c', {});
    expect(!a.ok && a.feedback).toMatchObject({ action: 'escalate_to_user', hint: 'tool says: use search_orders first' });
    expect(!b.ok && b.feedback).toMatchObject({ action: 'escalate_to_user', hint: 'runtime says: b has no such item' });
    expect(!c.ok && c.feedback.action).toBe('escalate_to_user');
  });
});

describe('runtime: API misuse throws typed errors', () => {
  it('duplicate names, unknown fallbacks, bad definitions, use after close', async () => {
    const t = defineTool({ name: 'x', description: 'x', input: objectInput, execute: () => 1 });
    expect(() => createRuntime({ tools: [t, t] })).toThrow(DuplicateToolError);
    expect(() => createRuntime({ tools: [defineTool({ name: 'y', description: 'y', input: objectInput, fallback: 'nope', execute: () => 1 })] })).toThrow(/fallback "nope"/);
    expect(() => defineTool({ name: 'bad name!', description: 'x', input: objectInput, execute: () => 1 })).toThrow(ToolDefinitionError);
    expect(() => defineTool({ name: 'z', description: 'x', input: { type: 'string' }, execute: () => 1 })).toThrow(/type: "object"/);
    expect(() => defineTool({ name: 'z', description: 'x', input: { type: 'object', properties: { a: { type: 'nonsense' } } }, execute: () => 1 })).toThrow(/invalid input schema/);
    expect(() => defineTool({ name: 'z', description: 'x', input: objectInput, timeoutMs: -1, execute: () => 1 })).toThrow(/timeoutMs/);
    expect(ToolDefinitionError.isInstance(new ToolDefinitionError('a', 'b'))).toBe(true);
    const rt = createRuntime({ tools: [t] });
    await rt.close();
    await rt.close();
    await expect(rt.execute('x', {})).rejects.toBeInstanceOf(RuntimeClosedError);
  });
});

describe('runtime: fault injection seam', () => {
  it('applies planned faults per attempt and records the first as ground truth', async () => {
    let executions = 0;
    const { rt } = setup(
      [
        {
          name: 'get_stock',
          description: 's',
          input: objectInput,
          idempotent: true,
          execute: () => {
            executions++;
            return { qty: 5 };
          },
        },
      ],
      {
        faults: {
          plan: ({ attempt }) =>
            attempt === 0
              ? {
                  fault: { kind: 'http_status', rule_id: 'r1', params: { status: 503 } },
                  replace: async () => {
                    throw new HttpError(503, 'injected');
                  },
                }
              : attempt === 1
                ? { fault: { kind: 'partial', rule_id: 'r2' }, transform: (out) => ({ ...(out as object), partial: true }) }
                : undefined,
        },
      },
    );
    const r = await rt.execute('get_stock', {});
    expect(r).toMatchObject({ ok: true, output: { qty: 5, partial: true } });
    expect(executions).toBe(1);
    expect(r.record.fault).toEqual({ kind: 'http_status', rule_id: 'r1', params: { status: 503 } });
    expect(r.record.attempts.map((a) => a.fault_kind)).toEqual(['http_status', 'partial']);
  });

  it('commit-then-drop: the side effect happens, the caller sees a timeout, and nothing is repeated', async () => {
    let orders = 0;
    const { rt } = setup(
      [
        {
          name: 'create_order',
          description: 'c',
          input: objectInput,
          timeoutMs: 2000,
          execute: () => {
            orders++;
            return { id: orders };
          },
        },
      ],
      {
        faults: {
          plan: () => ({
            fault: { kind: 'commit_then_drop' },
            replace: async (ctx, runTool) => {
              await runTool();
              await ctx.clock.sleep(60_000);
              return undefined;
            },
          }),
        },
      },
    );
    const r = await rt.execute('create_order', {});
    expect(orders).toBe(1);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.feedback.action).toBe('verify_state');
    expect(r.record).toMatchObject({ status: 'timeout', fault: { kind: 'commit_then_drop' } });
  });

  it('an injector that throws is reported and ignored', async () => {
    const errors: string[] = [];
    const { rt } = setup([{ name: 'n', description: 'n', input: objectInput, execute: () => 1 }], {
      faults: {
        plan: () => {
          throw new Error('bad plan');
        },
      },
      onListenerError: (e, where) => errors.push(`${where}: ${(e as Error).message}`),
    });
    expect((await rt.execute('n', {})).ok).toBe(true);
    expect(errors).toEqual(['faults.plan: bad plan']);
  });
});
