/**
 * Which injected fault each agent call met, when the faults are decided by a proxy on the other
 * side of a socket. The proxy asks the run's fault plan through {@link FaultLedger.plan}, a view
 * of the plan that also notes each decision against the request it was made for: the client
 * opens a ticket (tool and arguments) just before it sends a request, and the plan's next
 * decision for that tool and those arguments lands on the oldest open ticket. The ticket belongs
 * to the agent call it was opened in (tracked with AsyncLocalStorage through the runtime's
 * retries), so a call learns the first fault any of its attempts met, as in process.
 *
 * The view changes one thing about a decision: a hang (a timeout without a delay) is held for
 * {@link HANG_MS} of virtual time instead of with no timer at all, so that the wait is visible to
 * the run's clock (see io-gate.ts) and the client's own timeout ends it, as it does in process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FaultDecision } from '../../faults/decision.js';
import type { FaultPlan } from '../../faults/plan.js';
import { canonicalJson } from '../../record/params-hash.js';
import type { InjectedFault } from '../../record/types.js';

/** How long a hang holds a request on the virtual clock: longer than any tool's timeout or scenario budget. */
export const HANG_MS = 24 * 3_600_000;

/** What one agent call met. */
export interface CallFaults {
  fault: InjectedFault | null;
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

export function createFaultLedger(inner: FaultPlan): FaultLedger {
  const scope = new AsyncLocalStorage<CallFaults>();
  const tickets: OpenTicket[] = [];

  function land(toolName: string, args: unknown, decision: FaultDecision | undefined): void {
    // Arguments are unknown when the proxy had no rule for the tool and did not parse them: any
    // open ticket for the tool will do, since no rule can have fired for it either.
    const key = args === undefined ? undefined : argsKey(args);
    const index = tickets.findIndex((t) => t.open && t.toolName === toolName && (key === undefined || t.key === key));
    if (index === -1) return;
    const ticket = tickets[index]!;
    tickets.splice(index, 1);
    ticket.open = false;
    if (decision !== undefined && ticket.call !== undefined) ticket.call.fault ??= decision.fault;
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
      const call: CallFaults = { fault: null };
      const value = await scope.run(call, fn);
      return { value, fault: call.fault };
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
