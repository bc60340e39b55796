/**
 * `faultline demo`: a session of tool calls failing in different ways, run through the runtime
 * on a virtual clock, printing how each call was classified and what the agent is told.
 */
import { Command } from 'commander';
import { ConfigError } from '../../core/errors.js';
import { createVirtualClock } from '../../core/clock.js';
import { createRuntime } from '../../runtime/runtime.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import type { Store } from '../../core/store-types.js';
import { DEFAULT_SQLITE_PATH, openStore } from '../../store/open-store.js';
import { createDemoTools, DEMO_CALLS, type DemoState } from '../demo-tools.js';
import { formatTable } from '../format-table.js';
import { writeLine, type CliContext } from '../io.js';
import { assertSqliteStoreCreatable } from '../report-options.js';
import { storeOption } from '../store-option.js';

export function demoCommand(ctx: CliContext): Command {
  return new Command('demo')
    .description('Run a short agent session whose tools fail in different ways, and show what the runtime makes of each call')
    .addOption(storeOption('where to store the records'))
    .option('--json', 'print the records as JSON lines')
    .action(async (opts: { json?: boolean; db?: string }) => {
      const { io } = ctx;
      // Opened here, not by the runtime, so that a bad --db fails the command instead of spooling.
      assertSqliteStoreCreatable(opts.db ?? DEFAULT_SQLITE_PATH, io.cwd);
      const store = await openStore(opts.db ?? DEFAULT_SQLITE_PATH, { cwd: io.cwd });
      // Dated so that the session ends now: a first pass on a virtual clock measures how long
      // the session takes (its waits and timeouts are virtual; the tools are deterministic), and
      // the recorded pass starts that long ago. Starting at now would date the last calls up to
      // a minute ahead, and `alerts` would count them only once that minute has passed.
      const rehearsal = await playSession(0);
      const length = Math.max(...rehearsal.records.map((r) => Date.parse(r.created_at) + r.duration_ms));
      // A store that opened but cannot take the records (a damaged file) fails the demo, which
      // would otherwise say it wrote them.
      let storeFailure: unknown;
      const { records, shown, state, slept } = await playSession(Date.now() - Math.ceil(length), store, (error) => (storeFailure ??= error));
      await store.close();
      if (storeFailure !== undefined) {
        // The recorder wraps a store's refusal of part of a batch; what the store said is the news.
        const cause = (storeFailure as { cause?: unknown }).cause;
        throw ConfigError.isInstance(cause) ? cause : storeFailure;
      }

      if (opts.json === true) {
        for (const record of records) writeLine(io.stdout, JSON.stringify(record));
        return;
      }
      writeLine(io.stdout, `faultline demo: ${DEMO_CALLS.length} tool calls, ${records.length} records, ${(slept / 1000).toFixed(1)} s of backoff waited on a virtual clock`);
      writeLine(io.stdout);
      writeLine(
        io.stdout,
        formatTable(shown, [
          { header: '#', value: (s) => s.call, align: 'right' },
          { header: 'tool', value: (s) => s.record.tool_name },
          { header: 'status', value: (s) => s.record.status },
          { header: 'stage/category/type', value: (s) => (s.record.failure_type === null ? '' : `${s.record.failure_stage}/${s.record.failure_category}/${s.record.failure_type}`) },
          { header: 'code', value: (s) => s.record.error_code ?? '' },
          { header: 'tries', value: (s) => s.record.attempts.length, align: 'right' },
          { header: 'recovery', value: (s) => s.record.recovery },
          { header: 'action', value: (s) => s.record.feedback?.action ?? '' },
        ]),
      );
      writeLine(io.stdout);
      writeLine(io.stdout, 'Feedback the agent received:');
      for (const s of shown) {
        if (s.record.feedback !== null) writeLine(io.stdout, `  #${s.call} ${s.record.tool_name}: ${s.record.feedback.hint}`);
      }
      writeLine(io.stdout);
      writeLine(io.stdout, `Orders actually created by create_order: ${state.ordersCreated} (the runtime did not retry the timed-out write).`);
      writeLine(io.stdout, `${records.length} records written to ${opts.db ?? DEFAULT_SQLITE_PATH}.`);
    });
}

interface DemoSession {
  records: ToolExecutionRecord[];
  shown: { call: number; record: ToolExecutionRecord }[];
  state: DemoState;
  /** Virtual milliseconds of backoff waited. */
  slept: number;
}

/** The demo's calls, on a virtual clock from `startMs`; recorded into `store` when given. */
async function playSession(startMs: number, store?: Store, onError?: (error: unknown) => void): Promise<DemoSession> {
  const state: DemoState = { ordersCreated: 0, salesCalls: 0, translateCalls: 0 };
  const clock = createVirtualClock({ startMs });
  const records: ToolExecutionRecord[] = [];
  const rt = createRuntime({
    tools: createDemoTools(state),
    clock,
    seed: 1,
    ...(store === undefined ? {} : { store }),
    recording: { spool: false, ...(onError === undefined ? {} : { onError }) },
    onRecord: (r) => records.push(r),
    context: { agent: 'demo' },
  });
  const session = rt.session();
  const shown: DemoSession['shown'] = [];
  for (const [i, call] of DEMO_CALLS.entries()) {
    const r = await session.execute(call.tool, call.args, { intent: call.intent });
    if (r.fallbackFrom !== undefined) shown.push({ call: i + 1, record: r.fallbackFrom.record });
    shown.push({ call: i + 1, record: r.record });
  }
  await rt.close();
  return { records, shown, state, slept: clock.slept };
}
