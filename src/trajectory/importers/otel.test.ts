import { describe, expect, it } from 'vitest';
import { collect, jsonl } from './collect.test-helpers.js';
import { importOtel } from './otel.js';

const T = 1_774_800_000_000; // ms
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n + 123n}`;
const str = (key: string, value: string) => ({ key, value: { stringValue: value } });

function toolSpan(traceId: string, spanId: string, tool: string, args: unknown, startMs: number, endMs: number, extra: { error?: string; status?: number; result?: string; retryAfter?: string } = {}) {
  const attributes = [str('gen_ai.operation.name', 'execute_tool'), str('gen_ai.tool.name', tool), str('gen_ai.tool.call.arguments', JSON.stringify(args))];
  if (extra.result !== undefined) attributes.push(str('gen_ai.tool.call.result', extra.result));
  if (extra.error !== undefined) attributes.push(str('error.type', extra.error));
  if (extra.status !== undefined) attributes.push({ key: 'http.response.status_code', value: { intValue: String(extra.status) } as never });
  if (extra.retryAfter !== undefined) attributes.push({ key: 'http.response.header.retry-after', value: { arrayValue: { values: [{ stringValue: extra.retryAfter }] } } as never });
  return {
    traceId,
    spanId,
    parentSpanId: 'root',
    name: `execute_tool ${tool}`,
    startTimeUnixNano: ns(startMs),
    endTimeUnixNano: ns(endMs),
    attributes,
    status: extra.error === undefined ? {} : { code: 2, message: `${tool} failed` },
  };
}

const request = (...spans: unknown[]) => ({ resourceSpans: [{ resource: { attributes: [str('service.name', 'agent')] }, scopeSpans: [{ scope: { name: 'gen_ai' }, spans }] }] });

describe('OTLP GenAI execute_tool importer', () => {
  it('groups tool spans by trace across lines, orders them by start, classifies errors and derives waits from span times', async () => {
    const root = { traceId: 'aa', spanId: 'root', name: 'invoke_agent', startTimeUnixNano: ns(T), endTimeUnixNano: ns(T + 60_000), attributes: [str('gen_ai.operation.name', 'invoke_agent')], status: { code: 'STATUS_CODE_OK' } };
    const text = jsonl(
      request(toolSpan('aa', 's3', 'search', { q: 'x' }, T + 10_650, T + 10_750, { result: '{"hits":3}' }), root),
      request(
        toolSpan('aa', 's1', 'search', { q: 'x' }, T, T + 100, { error: '429', retryAfter: '10' }),
        toolSpan('aa', 's2', 'search', { q: 'x' }, T + 10_500, T + 10_600, { error: 'timeout' }),
        toolSpan('bb', 't1', 'fetch', { url: 'u' }, T, T + 5, { error: 'ECONNREFUSED' }),
        toolSpan('bb', 't2', 'fetch', { url: 'v' }, T + 6, T + 8, { error: 'java.lang.IllegalStateException', status: 502 }),
      ),
    );
    const { trajectories, skipped } = await collect(importOtel, text);
    expect(skipped).toEqual([]);
    const [a, b] = trajectories;
    expect(a).toMatchObject({ source_id: 'aa', final_outcome: 'success', created_at: new Date(T).toISOString(), metadata: { source: 'otel' } });
    expect(a!.steps.map((s) => [s.source_ref, s.status, s.failure_category, s.failure_kind, s.agent_decision.action])).toEqual([
      ['s1', 'failure', 'rate_limit', 'rate_limited', 'wait_and_retry'],
      ['s2', 'timeout', 'network', 'timeout', 'retry'],
      ['s3', 'success', null, null, 'proceed'],
    ]);
    expect(a!.steps[0]!.agent_decision.wait_seconds).toBe(10.4);
    // 50 ms after a timeout is less than the first backoff step: a plain retry.
    expect(a!.steps[1]!.agent_decision.reasoning).toMatch(/after 50 ms, less than the 200 ms/);
    expect(a!.steps[2]!.response.body).toEqual({ hits: 3 });
    expect(b!.final_outcome).toBe('unknown');
    expect(b!.steps.map((s) => [s.failure_kind, s.response.error_code, s.agent_decision.action])).toEqual([
      ['connection_refused', 'ECONNREFUSED', 'retry_with_params'],
      ['server_error', 'HTTP_502', 'abort'],
    ]);
    expect(b!.steps[0]!.agent_decision.params_delta).toEqual({ url: 'v' });
  });

  it('skips malformed lines by number', async () => {
    const noName = toolSpan('cc', 'x', 'tool', {}, T, T + 1);
    noName.attributes = noName.attributes.filter((a) => a.key !== 'gen_ai.tool.name');
    const text = jsonl(request(toolSpan('cc', 'ok', 'tool', {}, T, T + 1)), { spans: [] }, request({ spanId: 'no-trace' }), request(noName), '[');
    const { trajectories, skipped } = await collect(importOtel, text);
    expect(trajectories.map((t) => t.steps.length)).toEqual([1]);
    expect(skipped.map((s) => [s.line, s.reason])).toEqual([
      [2, 'expected an OTLP JSON object with "resourceSpans"'],
      [3, 'a span has no traceId'],
      [4, 'execute_tool span x has no gen_ai.tool.name'],
      [5, expect.stringMatching(/^not JSON/)],
    ]);
  });
});
