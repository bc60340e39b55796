/**
 * Fixtures for the dashboard tests: records whose recorded strings are markup meant to run, a
 * short agent session recorded into a SQLite file by the real runtime, and a dashboard on a real
 * loopback socket.
 */
import { createServer } from 'node:http';
import { listen } from '../../net/listen.js';
import { makeFailureRecord } from '../../record/fixture.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { createVirtualClock } from '../../core/clock.js';
import { defineTool } from '../../runtime/define-tool.js';
import { createRuntime } from '../../runtime/runtime.js';
import { HttpError } from '../../runtime/tool-errors.js';
import { createDashboard, type DashboardOptions } from './create-dashboard.js';

/** Each payload would set `window.__pwned` if it ever ran. */
export const XSS_TOOL = '<img src=x onerror="window.__pwned=1">';
export const XSS_MESSAGE = '<script>window.__pwned=2</script> & "quoted" <b>not bold</b>';
export const XSS_TRACE = 'trace"><script>window.__pwned=3</script>';
export const XSS_CODE = '<svg onload=window.__pwned=4>';

/** A failed call whose tool name, message, code, trace id, feedback and arguments are all hostile. */
export function hostileRecord(atMs: number): ToolExecutionRecord {
  return makeFailureRecord({
    tool_name: XSS_TOOL,
    trace_id: XSS_TRACE,
    failure_stage: 'execution',
    failure_category: 'business',
    failure_type: 'not_found',
    error_code: XSS_CODE,
    error_message: XSS_MESSAGE,
    input_params: { query: XSS_MESSAGE },
    feedback: { action: 'try_alternative', hint: XSS_MESSAGE, retryable: false, retry_after_ms: null },
    created_at: new Date(atMs).toISOString(),
  });
}

// Built by concatenation so this file itself does not look like it holds a secret.
export const SECRET = 'sk-proj-' + 'Qw7'.repeat(16);

/**
 * Records a three-call session (a success, a 401 whose message carries an API key, a success)
 * into the SQLite file at `path` through the runtime and its recorder, on a clock starting at
 * `startMs`.
 */
export async function recordSession(path: string, spoolPath: string, startMs: number, traceId: string): Promise<void> {
  const tools = [
    defineTool({
      name: 'lookup_order',
      description: 'finds an order',
      input: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
      idempotent: true,
      execute: (args: { order_id: string }) => {
        if (args.order_id === 'O-2') throw new HttpError(401, `key ${SECRET} rejected <script>window.__pwned=5</script>`);
        return { order_id: args.order_id, status: 'shipped' };
      },
    }),
  ];
  const rt = createRuntime({ tools, store: `sqlite:${path}`, clock: createVirtualClock({ startMs }), recording: { spool: { path: spoolPath } } });
  try {
    const session = rt.session({ traceId, agent: 'test-agent', model: 'test-model', intent: 'check the order' });
    for (const order_id of ['O-1', 'O-2', 'O-3']) await session.execute('lookup_order', { order_id });
  } finally {
    await rt.close();
  }
}

/** A dashboard on 127.0.0.1 at a free port. */
export async function startDashboard(options: DashboardOptions): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server = createServer(createDashboard(options).handler);
  const { port } = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
