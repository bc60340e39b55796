/**
 * One attempt of a call: the tool runs (or a planned fault stands in for it) against the tool's
 * timeout and the caller's signal, and the attempt settles once, whichever comes first.
 */
import type { PlannedFault } from './fault-injector.js';
import { uuidv7 } from '../record/uuid-v7.js';
import type { Call, CallEnv } from './call.js';
import { canSchedule, type Clock } from '../core/clock.js';
import type { ToolContext } from './define-tool.js';
import type { RegisteredTool } from './registry.js';

export type AttemptResult =
  | { kind: 'ok'; value: unknown }
  /** `fromTool`: the tool's own error, come through a planned fault unchanged. */
  | { kind: 'error'; error: unknown; fromTool?: true }
  | { kind: 'timeout' }
  | { kind: 'cancelled'; reason: unknown };

/** The context handed to `execute`. The AbortController is made only if the tool asks for the signal. */
export class AttemptContext implements ToolContext {
  private controller: AbortController | undefined;
  /** Set by a planned fault that runs the attempt as a dry run (lost_write). */
  dryRun = false;
  constructor(
    private readonly call: Call,
    readonly attempt: number,
    readonly clock: Clock,
  ) {}
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }
  get idempotencyKey(): string {
    const call = this.call;
    // Seeded runtimes are for reproducible runs (FailBench, tests): their keys derive from the
    // call's place in its trace, so a rerun sends the same keys. Otherwise keys are random.
    return (call.idempotencyKey ??=
      call.options.idempotencyKey ?? (call.seededKeys ? `idem-${call.traceId}-${call.stepIndex}-${call.toolName}` : uuidv7()));
  }
  get traceId(): string {
    return this.call.traceId;
  }
  get toolName(): string {
    return this.call.toolName;
  }
  /** The arguments as the call gave them, as the fault injector saw them (before defaults were filled in). */
  get callArgs(): unknown {
    return this.call.args;
  }
  abort(reason: unknown): void {
    this.controller?.abort(reason);
  }
}

/** The fault the injector plans for this attempt; an injector that throws plans none. */
export function planFault(env: CallEnv, call: Call, entry: RegisteredTool, attempt: number, now: number): PlannedFault | undefined {
  try {
    return env.faults!.plan({ toolName: call.toolName, args: call.args, attempt, traceId: call.traceId, now, idempotent: entry.tool.idempotent });
  } catch (error) {
    env.reportListenerError(error, 'faults.plan');
    return undefined;
  }
}

/**
 * Shows the injector what the tool answered (what a later `stale` fault may replay), as the
 * proxies show their plan every answer they pass on. A stale fault remembers its own.
 */
function observed(env: CallEnv, call: { toolName: string; args: unknown }, output: unknown): unknown {
  const faults = env.faults;
  if (faults?.observe === undefined) return output;
  const show = (value: unknown) => {
    try {
      faults.observe!({ toolName: call.toolName, args: call.args, output: value, now: env.clock.now() });
    } catch (error) {
      env.reportListenerError(error, 'faults.observe');
    }
    return value;
  };
  return output !== null && typeof (output as PromiseLike<unknown>)?.then === 'function' ? Promise.resolve(output).then(show) : show(output);
}

/** `toolFailure` is given the tool's own error, when a planned fault ran the tool and it threw. */
function startTool(env: CallEnv, entry: RegisteredTool, args: unknown, ctx: AttemptContext, planned: PlannedFault | undefined, toolFailure: { error?: unknown }): unknown {
  const call = { toolName: entry.tool.name, args: ctx.callArgs };
  if (planned === undefined) return observed(env, call, entry.tool.execute(args, ctx));
  const runTool = (options?: { dryRun?: boolean }) =>
    Promise.resolve()
      .then(() => {
        if (options?.dryRun === true) ctx.dryRun = true;
        const output = entry.tool.execute(args, ctx);
        return planned.fault.kind === 'stale' ? output : observed(env, call, output);
      })
      .catch((error: unknown) => {
        toolFailure.error = error;
        throw error;
      });
  const pending = planned.replace !== undefined ? planned.replace(ctx, runTool) : runTool();
  const transform = planned.transform;
  return transform === undefined ? pending : Promise.resolve(pending).then((output) => transform(output, ctx));
}

export function runAttempt(
  env: CallEnv,
  entry: RegisteredTool,
  args: unknown,
  ctx: AttemptContext,
  signal: AbortSignal | undefined,
  startedAt: number,
  planned: PlannedFault | undefined,
  timeoutMs: number = entry.tool.timeoutMs,
): Promise<AttemptResult> {
  const clock = env.clock;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let cancelTimer: () => void;
    let onCallerAbort: (() => void) | undefined;
    const settle = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      if (onCallerAbort !== undefined) signal!.removeEventListener('abort', onCallerAbort);
      resolve(result);
    };
    const onTimeout = () => {
      if (settled) return;
      ctx.abort(new DOMException(`${entry.tool.name} timed out after ${timeoutMs} ms`, 'TimeoutError'));
      settle({ kind: 'timeout' });
    };
    const deadline = startedAt + timeoutMs;
    if (canSchedule(clock)) {
      cancelTimer = clock.schedule(deadline, onTimeout);
    } else {
      const stopSleep = new AbortController();
      clock.sleep(timeoutMs, stopSleep.signal).then(onTimeout, () => undefined);
      cancelTimer = () => stopSleep.abort();
    }
    if (signal !== undefined) {
      onCallerAbort = () => {
        ctx.abort(signal.reason);
        settle({ kind: 'cancelled', reason: signal.reason });
      };
      signal.addEventListener('abort', onCallerAbort, { once: true });
    }
    let pending: unknown;
    const toolFailure: { error?: unknown } = {};
    try {
      pending = startTool(env, entry, args, ctx, planned, toolFailure);
    } catch (error) {
      settle({ kind: 'error', error });
      return;
    }
    if (pending !== null && typeof (pending as PromiseLike<unknown>)?.then === 'function') {
      (pending as PromiseLike<unknown>).then(
        (value) => settle({ kind: 'ok', value }),
        (error: unknown) => settle('error' in toolFailure && toolFailure.error === error ? { kind: 'error', error, fromTool: true } : { kind: 'error', error }),
      );
    } else {
      settle({ kind: 'ok', value: pending });
    }
  });
}
