import { describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createVirtualClock } from '../core/clock.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';

function setup() {
  const records: ToolExecutionRecord[] = [];
  const calls: unknown[] = [];
  const rt = createRuntime({
    tools: [
      defineTool({
        name: 'create_order',
        description: 'Creates an order.',
        input: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer', minimum: 1 } }, required: ['sku'] },
        execute: (args: { sku: string; qty?: number }) => {
          calls.push(args);
          return { order_id: 'ORD-1', ...args };
        },
      }),
      defineTool({ name: 'ping', description: 'No arguments.', input: { type: 'object', properties: {} }, idempotent: true, execute: () => 'pong' }),
    ],
    clock: createVirtualClock(),
    onRecord: (r) => records.push(r),
  });
  return { rt, records, calls };
}

describe('runtime.executeJson: arguments as the JSON text a model wrote', () => {
  it('parses valid JSON and runs the call as execute would', async () => {
    const { rt, records, calls } = setup();
    const r = await rt.executeJson('create_order', '{"sku":"A-1","qty":"2"}', { traceId: 't' });
    expect(r.ok).toBe(true);
    expect(calls).toEqual([{ sku: 'A-1', qty: 2 }]);
    // The record keeps what the model sent; the tool got the normalized arguments.
    expect(records[0]).toMatchObject({ status: 'success', input_params: { sku: 'A-1', qty: '2' }, trace_id: 't' });
  });

  it('treats an empty string as no arguments', async () => {
    const { rt } = setup();
    const r = await rt.executeJson('ping', '');
    expect(r).toMatchObject({ ok: true, output: 'pong' });
  });

  it('rejects text that does not parse at request_build, without running the tool, and records the raw text', async () => {
    const { rt, records, calls } = setup();
    const raw = '{"sku": "A-1", "qty": 2,,}';
    const r = await rt.executeJson('create_order', raw, { traceId: 't' });
    expect(calls).toEqual([]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ stage: 'request_build', category: 'parameter', type: 'malformed_arguments', code: 'MALFORMED_ARGUMENTS', retryable: true });
    expect(r.error.message).toMatch(/JSON/);
    expect(r.feedback.action).toBe('retry_with_fixed_params');
    expect(r.feedback.hint).toContain('not valid JSON');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      status: 'rejected',
      failure_stage: 'request_build',
      failure_type: 'malformed_arguments',
      input_params: raw,
      retry_count: 0,
      attempts: [],
    });
  });

  it('redacts secrets in malformed text before it is recorded', async () => {
    const { rt, records } = setup();
    const raw = '{"sku": "A-1", "api_key": "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"';
    await rt.executeJson('create_order', raw);
    expect(JSON.stringify(records[0])).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');
  });

  it('reports an unknown tool before looking at the arguments', async () => {
    const { rt } = setup();
    const r = await rt.executeJson('create_ordr', '{oops');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.type).toBe('unknown_tool');
  });

  it('works in sessions: consecutive steps of one trace', async () => {
    const { rt, records } = setup();
    const s = rt.session({ agent: 'a' });
    await s.executeJson('ping', '{}');
    await s.executeJson('create_order', 'not json');
    await s.execute('ping', {});
    expect(records.map((r) => [r.trace_id, r.step_index, r.status])).toEqual([
      [s.traceId, 0, 'success'],
      [s.traceId, 1, 'rejected'],
      [s.traceId, 2, 'success'],
    ]);
  });
});
