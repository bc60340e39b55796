/**
 * Fixtures for the dashboard tests: records whose recorded strings are markup meant to run, a
 * short agent session recorded into a SQLite file by the real runtime, and a dashboard on a real
 * loopback socket.
 */
import { createServer } from 'node:http';
import { trajectory } from '../../annotate/trajectory.test-helpers.js';
import type { Trajectory, TrajectoryLabel } from '../../core/trajectory-types.js';
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

/** Made by concatenation, as above: text that would run if a page ever interpolated it as markup. */
export const XSS_TASK = '<img src=x onerror="window.__pwned=6">book a flight & "confirm"';
export const XSS_REASON = '<script>window.__pwned=7</script> the result says nothing of the booking';

/**
 * 40 stored trajectories for the trajectory and review pages: every fourth one has a failed
 * step, each has a rule label and one judge label (an LLM judge on even ids, the heuristic on
 * odd), and the first carries hostile text in its task, tool name, arguments, result and reason.
 */
export function dashboardTrajectories(): Trajectory[] {
  return Array.from({ length: 40 }, (_, i) => {
    const id = `traj-${String(i).padStart(2, '0')}`;
    const failing = i % 4 === 0;
    const base = trajectory(
      [
        { tool: i === 0 ? XSS_TOOL : 'search_flights', params: { from: 'SHA', to: 'PEK', note: i === 0 ? XSS_MESSAGE : 'aisle' }, ...(failing ? { fail: { category: 'network' as const, kind: 'timeout', status: 'timeout' as const } } : { body: { flights: 3 } }) },
        { tool: 'book_flight', params: { flight: `MU${500 + i}` }, body: i === 0 ? XSS_MESSAGE : { booked: true } },
      ],
      { outcome: failing ? 'failure' : 'success', task: i === 0 ? XSS_TASK : `book a flight from Shanghai to Beijing #${i}` },
    );
    const judge: TrajectoryLabel = { name: 'semantic_error', step_index: 2, confidence: 0.7, reason: i === 0 ? XSS_REASON : `judged ${id}`, source: i % 2 === 0 ? 'judge:llm:test-model' : 'judge:heuristic', mismatch_kind: 'claims_success' };
    const rule: TrajectoryLabel = { name: failing ? 'ignored_error' : 'blind_retry', step_index: 1, confidence: 0.9, reason: 'a rule' };
    return { ...base, trajectory_id: id, source_id: `log:${i}`, labels: i % 10 === 9 ? [] : [rule, judge] };
  });
}
