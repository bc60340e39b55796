/**
 * Which injected fault each agent call met, when the faults are decided by a proxy on the other
 * side of a socket. The proxy asks the run's fault plan through {@link FaultLedger.plan}, a view
 * of the plan that also notes each decision against the request it was made for: the client
 * opens a ticket (tool and arguments) just before it sends a request, and the plan's next
 * decision for that tool and those arguments lands on the oldest open ticket. The ticket belongs
 * to the agent call it was opened in (tracked with AsyncLocalStorage through the runtime's
 * retries), so a call learns the first fault any of its attempts met, as in process.
 *
 * The record, not the decision, is ground truth: a decision that may meet the tool's own failure
 * (a rewrite, a drop after the write; see appliesOnlyOnSuccess) counts only once the proxy's
 * record of that request ({@link FaultLedger.recorded}) says it was applied, as `record.fault`
 * says in process. Such a record can come after the client has its answer, so {@link
 * FaultLedger.track} waits for it (the run's clock is held meanwhile; see io-gate.ts).
 *
 * The view changes one thing about a decision: a hang (a timeout without a delay) is held for
 * {@link HANG_MS} of virtual time instead of with no timer at all, so that the wait is visible to
 * the run's clock (see io-gate.ts) and the client's own timeout ends it, as it does in process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { appliesOnlyOnSuccess, type FaultDecision } from '../../faults/decision.js';
import type { FaultPlan } from '../../faults/plan.js';
import { canonicalJson } from '../../record/params-hash.js';
import type { InjectedFault, ToolExecutionRecord } from '../../record/types.js';
import { STUCK_MS } from './io-gate.js';

/** How long a hang holds a request on the virtual clock: longer than any tool's timeout or scenario budget. */
export const HANG_MS = 24 * 3_600_000;

/** A decision that landed on one of a call's requests. */
interface Met {
  toolName: string;
  fault: InjectedFault;
  /** Unknown until the proxy's record says, for a decision that may not apply. */
  applied: boolean | undefined;
  /** Resolves once `applied` is known. */
  known: Promise<void>;
  settle(applied: boolean): void;
}

/** What one agent call met, in the order its requests were decided. */
interface CallFaults {
  met: Met[];
}

export interface Ticket {
  /** The request is over (answered, failed, or abandoned); a decision can no longer land on it. */
  close(): void;
}

export interface FaultLedger {
  /** The plan to give the proxy. */
  readonly plan: FaultPlan;
  /** Runs `fn` (one agent call) and returns what it returned and the first fault its requests met. */
  track<T>(fn: () => Promise<T>): Promise<{ value: T; fault: InjectedFault | null }>;
  /** Opens a ticket for a request about to be sent. */
  open(toolName: string, args: unknown): Ticket;
  /** The proxy recorded a request: whether a decision that may not apply was applied. */
  recorded(record: ToolExecutionRecord): void;
}

interface OpenTicket {
  toolName: string;
  key: string;
  call: CallFaults | undefined;
  open: boolean;
}

function argsKey(args: unknown): string {
  try {
    return canonicalJson(args ?? {});
  } catch {
    return '';
  }
}

function met(toolName: string, decision: FaultDecision): Met {
  if (!appliesOnlyOnSuccess(decision)) return { toolName, fault: decision.fault, applied: true, known: Promise.resolve(), settle: () => undefined };
  let resolve: () => void = () => undefined;
  const entry: Met = {
    toolName,
    fault: decision.fault,
    applied: undefined,
    known: new Promise<void>((r) => (resolve = r)),
    settle(applied) {
      entry.applied ??= applied;
      resolve();
    },
  };
  return entry;
}

/** The fault a record names, applied or (in `context_snapshot.fault_not_applied`) not. */
function decidedFault(record: ToolExecutionRecord): { ruleId: unknown; applied: boolean } | undefined {
  if (record.fault !== null) return { ruleId: record.fault.rule_id, applied: true };
  const skipped = record.context_snapshot['fault_not_applied'];
  if (skipped === null || typeof skipped !== 'object') return undefined;
  return { ruleId: (skipped as Record<string, unknown>)['rule_id'], applied: false };
}

/** Waits for what the call's records say; a record that never comes (a proxy bug) leaves the decision counted, as before. */
async function known(call: CallFaults): Promise<void> {
  const pending = call.met.filter((m) => m.applied === undefined);
  if (pending.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, STUCK_MS);
    timer.unref();
  });
  await Promise.race([Promise.all(pending.map((m) => m.known)), stuck]);
  clearTimeout(timer);
}

export function createFaultLedger(inner: FaultPlan): FaultLedger {
  const scope = new AsyncLocalStorage<CallFaults>();
  const tickets: OpenTicket[] = [];
  // Decisions that may not apply, in the order they were made, until their record says.
  const unsettled: Met[] = [];

  function land(toolName: string, args: unknown, decision: FaultDecision | undefined): void {
    // Arguments are unknown when the proxy had no rule for the tool and did not parse them: any
    // open ticket for the tool will do, since no rule can have fired for it either.
    const key = args === undefined ? undefined : argsKey(args);
    const index = tickets.findIndex((t) => t.open && t.toolName === toolName && (key === undefined || t.key === key));
    if (index === -1) return;
    const ticket = tickets[index]!;
    tickets.splice(index, 1);
    ticket.open = false;
    if (decision === undefined || ticket.call === undefined) return;
    const entry = met(toolName, decision);
    ticket.call.met.push(entry);
    if (entry.applied === undefined) unsettled.push(entry);
  }

  function heldHang(decision: FaultDecision): FaultDecision {
    const effect = decision.effect;
    if (effect.type !== 'timeout' || effect.afterMs !== null) return decision;
    return { ...decision, effect: { type: 'timeout', afterMs: HANG_MS } };
  }

  // A view, not a copy: counters, history and live updates stay the inner plan's.
  const plan: FaultPlan = {
    plan: (info) => inner.plan(info),
    decide(call) {
      const decision = inner.decide(call);
      land(call.toolName, call.args, decision);
      return decision === undefined ? undefined : heldHang(decision);
    },
    observe: (output) => inner.observe(output),
    state: () => inner.state(),
    update: (spec) => inner.update(spec),
    get spec() {
      return inner.spec;
    },
  };

  return {
    plan,
    async track(fn) {
      const call: CallFaults = { met: [] };
      const value = await scope.run(call, fn);
      await known(call);
      return { value, fault: call.met.find((m) => m.applied !== false)?.fault ?? null };
    },
    recorded(record) {
      const decided = decidedFault(record);
      if (decided === undefined) return;
      const index = unsettled.findIndex((m) => m.toolName === record.tool_name && m.fault.rule_id === decided.ruleId);
      if (index === -1) return;
      unsettled.splice(index, 1)[0]!.settle(decided.applied);
    },
    open(toolName, args) {
      const ticket: OpenTicket = { toolName, key: argsKey(args), call: scope.getStore(), open: true };
      tickets.push(ticket);
      return {
        close() {
          if (!ticket.open) return;
          ticket.open = false;
          const index = tickets.indexOf(ticket);
          if (index !== -1) tickets.splice(index, 1);
        },
      };
    },
  };
}
