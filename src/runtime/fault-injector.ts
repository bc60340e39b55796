/**
 * The seam between the runtime and fault injection. A fault plan (see plan.ts) implements
 * `FaultInjector`; the runtime asks it once per attempt and applies what it returns. Transports
 * (the HTTP and MCP proxies) use the same plan model and apply faults on the wire instead.
 */
import type { InjectedFault } from '../core/record-types.js';
import type { ToolContext } from './define-tool.js';

/** What an injector knows about the attempt it is asked about. */
export interface FaultCallInfo {
  toolName: string;
  args: unknown;
  /** 0-based attempt within the logical call. */
  attempt: number;
  traceId: string;
  /** Epoch ms on the runtime's clock. */
  now: number;
  idempotent: boolean;
}

/** One fault to apply to one attempt. */
export interface PlannedFault {
  /** Written into the record as ground truth. */
  fault: InjectedFault;
  /**
   * Runs instead of the tool. It may throw (the error is classified as usual), wait on
   * `ctx.clock` (latency, hangs: the runtime's timeout still applies), call `runTool` (so the
   * side effect happens) and then fail, or return a value. `runTool({ dryRun: true })` runs the
   * tool with `ctx.dryRun` set (lost_write).
   */
  replace?: (ctx: ToolContext, runTool: (options?: { dryRun?: boolean }) => Promise<unknown>) => Promise<unknown>;
  /** Rewrites the tool's output after it ran: partial results, schema or semantic drift. */
  transform?: (output: unknown, ctx: ToolContext) => unknown;
  /**
   * The fault acts on the tool's answer, or after the tool did its work (a rewrite, a drop after
   * the write): when the tool throws, its error reaches the caller as it came, and the record's
   * `fault` stays null, with this fault kept as `context_snapshot.fault_not_applied`.
   */
  onlyOnSuccess?: boolean;
}

export interface FaultInjector {
  /** Called before every attempt; undefined means "no fault this time". Must not throw. */
  plan(call: FaultCallInfo): PlannedFault | undefined;
  /** Told what each attempt's tool answered (before any rewrite): `stale` faults replay these. */
  observe?(output: { toolName: string; args: unknown; output: unknown; now: number }): void;
}
