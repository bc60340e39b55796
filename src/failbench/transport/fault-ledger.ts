/**
 * Which injected fault each agent call met, when the faults are decided by a proxy on the other
 * side of a socket. The proxy's record of each request is ground truth, as the runtime's record
 * is in process: `record.fault` is the fault the request met; a decision that met the tool's own
 * failure (a rewrite, a drop after the write; see appliesOnlyOnSuccess) is no fault, noted in
 * `context_snapshot.fault_not_applied`.
 *
 * Each record is matched to the agent call that sent the request by the call's idempotency key:
 * the client sends it with every request (the Idempotency-Key header, MCP `_meta`) and the proxy
 * records it (`context_snapshot.idempotency_key`). The runtime makes one key per call, the same
 * on its retries, so two calls in flight at once with the same tool, arguments and rule are told
 * apart whatever order the proxy decides and records their requests in. Neither decisions nor
 * records are matched by tool and arguments, which cannot tell such calls apart. A call's own
 * requests are ordered by the record's `step_index` (the order the proxy took them up in), so a
 * call learns the first fault any of its attempts met, as in process.
 *
 * The client opens a ticket (tool and key) just before it sends a request; the ticket belongs to
 * the agent call it was opened in (AsyncLocalStorage, through the runtime's retries). A record
 * can come after the client has its answer (over HTTP it always does), so {@link
 * FaultLedger.track} waits for the record of each of the call's requests the proxy may have
 * taken up: the plan view ({@link FaultLedger.plan}) was asked about the tool while the ticket
 * was open. A request abandoned before the proxy took it up is not waited for, and its late
 * record, if any, lands on no other call. The run's clock is held meanwhile (see io-gate.ts); a
 * record that never comes (a proxy bug) is given up after {@link STUCK_MS} of real time, as the
 * gate gives it up, and its request counts as no fault.
 *
 * The view changes one thing about a decision: a hang (a timeout without a delay) is held for
 * {@link HANG_MS} of virtual time instead of with no timer at all, so that the wait is visible to
 * the run's clock (see io-gate.ts) and the client's own timeout ends it, as it does in process.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FaultDecision } from '../../faults/decision.js';
import type { FaultPlan } from '../../faults/plan.js';
import type { InjectedFault, ToolExecutionRecord } from '../../core/record-types.js';
import { STUCK_MS } from './io-gate.js';

/** How long a hang holds a request on the virtual clock: longer than any tool's timeout or scenario budget. */
export const HANG_MS = 24 * 3_600_000;

/** Where the proxies record the idempotency key a request came with. */
const KEY_FIELD = 'idempotency_key';

/** What one agent call's requests met. */
interface CallFaults {
  tickets: PendingTicket[];
  /** The faults its records name, with the order the proxy took their requests up in. */
  met: Array<{ step: number; fault: InjectedFault }>;
}

interface PendingTicket {
  toolName: string;
  key: string | undefined;
  call: CallFaults | undefined;
  /** The client still waits for the answer. */
  open: boolean;
  /** The proxy took up a request of this tool while the ticket was open: its record is awaited. */
  awaited: boolean;
  /** Its record came, or was given up on. */
  done: boolean;
  /** Resolves once done; made when first awaited. */
  settled: Promise<void> | undefined;
  settle: () => void;
}

export interface Ticket {
  /** The client is done with the request (answered, failed, or abandoned). */
  close(): void;
}

export interface FaultLedger {
  /** The plan to give the proxy. */
  readonly plan: FaultPlan;
  /** Runs `fn` (one agent call) and returns what it returned and the first fault its requests met. */
  track<T>(fn: () => Promise<T>): Promise<{ value: T; fault: InjectedFault | null }>;
  /** Opens a ticket for a request about to be sent with idempotency key `key` (the call's; see the header). */
  open(toolName: string, key: string | undefined): Ticket;
  /** The proxy recorded a request: ground truth for the call that sent it. */
  recorded(record: ToolExecutionRecord): void;
}

function firstFault(call: CallFaults): InjectedFault | null {
  let first: { step: number; fault: InjectedFault } | undefined;
  for (const m of call.met) if (first === undefined || m.step < first.step) first = m;
  return first?.fault ?? null;
}

/**
 * One scope for every ledger: Node runs each enabled AsyncLocalStorage on every new promise, and
 * a storage stays enabled once used, so one per run made each call of a suite cost more than the
 * one before (a 1352-run suite over the MCP wire took minutes). The store names its ledger.
 */
const scope = new AsyncLocalStorage<{ ledger: object; call: CallFaults }>();

export function createFaultLedger(inner: FaultPlan): FaultLedger {
  const self = {};
  // Tickets whose record may still come, in the order they were opened.
  const pending: PendingTicket[] = [];

  function drop(ticket: PendingTicket): void {
    ticket.done = true;
    const index = pending.indexOf(ticket);
    if (index !== -1) pending.splice(index, 1);
    ticket.settle();
  }

  /** Waits for the records of the call's requests the proxy took up; gives up on the missing ones after STUCK_MS. */
  async function known(call: CallFaults): Promise<void> {
    const waiting = call.tickets.filter((t) => t.awaited && !t.done);
    if (waiting.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STUCK_MS);
      timer.unref();
    });
    await Promise.race([Promise.all(waiting.map((t) => t.settled)), stuck]);
    clearTimeout(timer);
    for (const t of waiting) if (!t.done) drop(t);
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
      // The proxy is taking up a request of this tool: one of the tool's open tickets, which
      // cannot say which, so each of them waits for its own record.
      for (const t of pending) {
        if (!t.open || t.awaited || t.toolName !== call.toolName) continue;
        t.awaited = true;
        t.settled = new Promise<void>((resolve) => (t.settle = resolve));
      }
      const decision = inner.decide(call);
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
      const call: CallFaults = { tickets: [], met: [] };
      const value = await scope.run({ ledger: self, call }, fn);
      await known(call);
      return { value, fault: firstFault(call) };
    },
    recorded(record) {
      const key = record.context_snapshot[KEY_FIELD];
      // A record without a key (a proxy that did not keep it) goes to the tool's oldest ticket.
      const index = pending.findIndex((t) => t.toolName === record.tool_name && (typeof key !== 'string' || t.key === key));
      if (index === -1) return;
      const ticket = pending[index]!;
      if (record.fault !== null) ticket.call?.met.push({ step: record.step_index, fault: record.fault });
      drop(ticket);
    },
    open(toolName, key) {
      const store = scope.getStore();
      const call = store?.ledger === self ? store.call : undefined;
      const ticket: PendingTicket = { toolName, key, call, open: true, awaited: false, done: false, settled: undefined, settle: () => undefined };
      pending.push(ticket);
      call?.tickets.push(ticket);
      return {
        close() {
          if (!ticket.open) return;
          ticket.open = false;
          // Never taken up by the proxy: no record to wait for, and a late one belongs to no call.
          if (!ticket.awaited && !ticket.done) drop(ticket);
        },
      };
    },
  };
}
