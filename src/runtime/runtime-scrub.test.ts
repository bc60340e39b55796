import { describe, expect, it } from 'vitest';
import type { ToolExecutionRecord } from '../core/record-types.js';
import { createVirtualClock } from '../core/clock.js';
import { defineTool } from './define-tool.js';
import { createRuntime } from './runtime.js';
import { HttpError } from './tool-errors.js';

const KEY = 'k_live_4f9Q2mZx7Lp0Vb6N';

describe('runtime: a secret found in one field of a call is scrubbed from all of them', () => {
  it('an API key masked under its header is gone where the service echoes it, in the record and in what the agent gets', async () => {
    const records: ToolExecutionRecord[] = [];
    const rt = createRuntime({
      clock: createVirtualClock(),
      retry: { maxRetries: 0 },
      correctionMemory: false,
      // The upstream's words reach the agent only when disclosed; they are what is scrubbed here.
      discloseAuthDetails: true,
      onRecord: (r) => records.push(r),
      tools: [
        defineTool({
          name: 'list_orders',
          description: 'lists orders',
          input: { type: 'object', properties: { headers: { type: 'object' } } },
          execute: async () => {
            throw new HttpError(401, `Invalid API key provided: ${KEY}`, {}, { error: { message: `key ${KEY} is not valid`, tried: [KEY] } });
          },
        }),
      ],
    });
    const result = await rt.execute('list_orders', { headers: { 'x-api-key': KEY } }, { intent: `list my orders using ${KEY}`, traceId: 't1' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(JSON.stringify(records)).not.toContain(KEY);
    expect(JSON.stringify({ error: result.error, feedback: result.feedback })).not.toContain(KEY);
    expect(result.error.message).toBe('Invalid API key provided: [REDACTED]');
    expect(records[0]!.input_params).toEqual({ headers: { 'x-api-key': '[REDACTED]' } });
    expect((records[0]!.context_snapshot as { intent: string }).intent).toBe('list my orders using [REDACTED]');
    await rt.close();
  });

  it('a secret keyed in a session context is scrubbed from each of its calls', async () => {
    const records: ToolExecutionRecord[] = [];
    const rt = createRuntime({
      clock: createVirtualClock(),
      correctionMemory: false,
      onRecord: (r) => records.push(r),
      tools: [defineTool({ name: 'echo', description: 'echoes', input: { type: 'object' }, execute: async (args: unknown) => ({ said: `using ${KEY}`, args }) })],
    });
    const session = rt.session({ context: { api_key: KEY } });
    await session.execute('echo', { note: 'first' });
    await session.execute('echo', { note: 'second' });
    expect(records).toHaveLength(2);
    expect(JSON.stringify(records)).not.toContain(KEY);
    await rt.close();
  });
});
