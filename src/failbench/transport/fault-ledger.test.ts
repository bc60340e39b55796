import { describe, expect, it } from 'vitest';
import type { FaultCall } from '../../faults/decision.js';
import { createFaultPlan } from '../../faults/plan.js';
import type { FaultRule } from '../../faults/plan-spec.js';
import { makeRecord } from '../../record/fixture.js';
import type { InjectedFault } from '../../core/record-types.js';
import { createVirtualClock } from '../../core/clock.js';
import { createFaultLedger, HANG_MS, type FaultLedger } from './fault-ledger.js';

function ledger(rules: FaultRule[]): FaultLedger {
  return createFaultLedger(createFaultPlan({ version: 1, rules }, { clock: createVirtualClock({ startMs: 0 }), seed: 1 }));
}

/** What the proxy does for one request: asks the plan, and later records what the request met. */
function takeUp(l: FaultLedger, call: FaultCall) {
  const decision = l.plan.decide(call);
  return {
    decision,
    record(key: string | undefined, step: number, applied = true) {
      const fault = decision?.fault ?? null;
      l.recorded(
        makeRecord({
          tool_name: call.toolName,
          step_index: step,
          input_params: call.args,
          fault: applied ? fault : null,
          context_snapshot: { ...(key === undefined ? {} : { idempotency_key: key }), ...(applied || fault === null ? {} : { fault_not_applied: fault }) },
        }),
      );
    },
  };
}

/** Resolves after the events already queued have run: long enough for a ledger that is not waiting to be done. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** Whether `p` has resolved by now. */
async function isDone(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await settled();
  return done;
}

const READ = { toolName: 'read_file', args: { path: '/a' } };
const cut: FaultRule = { id: 'cut', tool: 'read_file', trigger: 'always', fault: 'partial', params: { drop_fraction: 0.5 } };

describe('the fault ledger', () => {
  it('credits each call with what the record of its own request says, matched by its idempotency key, whatever order the proxy decides and records in', async () => {
    const l = ledger([cut]);
    // Two calls in flight at once, same tool, same arguments, same rule.
    const opened: Array<() => void> = [];
    const call = (key: string) =>
      l.track(async () => {
        const ticket = l.open('read_file', key);
        await new Promise<void>((resolve) => opened.push(resolve));
        ticket.close();
        return key;
      });
    const first = call('idem-1');
    const second = call('idem-2');
    await settled();
    // The proxy took up the second call's request first, then the first call's.
    const forSecond = takeUp(l, READ);
    const forFirst = takeUp(l, READ);
    for (const answer of opened) answer();
    expect(await isDone(first)).toBe(false);
    // The rewrite met the first call's file; the second call's read failed (nothing to rewrite). Records in either order.
    forFirst.record('idem-1', 1, true);
    forSecond.record('idem-2', 0, false);
    expect(await first).toEqual({ value: 'idem-1', fault: expect.objectContaining({ kind: 'partial', rule_id: 'cut' }) });
    expect(await second).toEqual({ value: 'idem-2', fault: null });
  });

  it('gives a call the first fault its requests met, in the order the proxy took them up', async () => {
    const l = ledger([
      { id: 'slow', tool: 'get_weather', trigger: { nth: [1] }, fault: 'hang' },
      { id: 'limited', tool: 'get_weather', trigger: { nth: [2] }, fault: 'http_status', params: { status: 429, retry_after: 3 } },
    ]);
    const paris = { toolName: 'get_weather', args: { city: 'Paris' } };
    const result = l.track(async () => {
      const attempt = l.open('get_weather', 'idem-paris');
      const hung = takeUp(l, paris);
      attempt.close();
      const retry = l.open('get_weather', 'idem-paris');
      const limited = takeUp(l, paris);
      retry.close();
      // The retry's record comes before the first attempt's (the proxy saw the client leave later).
      limited.record('idem-paris', 1);
      hung.record('idem-paris', 0);
      return 'paris';
    });
    expect(await result).toEqual({ value: 'paris', fault: expect.objectContaining({ kind: 'hang', rule_id: 'slow' }) });
  });

  it('waits for the record of a request the proxy took up, not for one it never saw', async () => {
    const l = ledger([cut]);
    const seen = l.track(async () => {
      const ticket = l.open('read_file', 'idem-seen');
      takeUp(l, READ);
      ticket.close();
    });
    expect(await isDone(seen)).toBe(false);
    l.recorded(makeRecord({ tool_name: 'read_file', context_snapshot: { idempotency_key: 'idem-seen' } }));
    expect(await seen).toEqual({ value: undefined, fault: null });

    // The client gave up before the proxy took the request up: there is no record to wait for.
    const unseen = l.track(async () => l.open('read_file', 'idem-unseen').close());
    expect(await isDone(unseen)).toBe(true);
  });

  it('a request abandoned before the proxy took it up lands on no other call when the proxy takes it up late', async () => {
    const l = ledger([{ id: 'first', tool: 'get_weather', trigger: { nth: [1] }, fault: 'http_status', params: { status: 503 } }]);
    const rome = { toolName: 'get_weather', args: { city: 'Rome' } };
    const abandoned = await l.track(async () => l.open('get_weather', 'idem-1').close());
    expect(abandoned.fault).toBeNull();
    const next = l.track(async () => {
      const ticket = l.open('get_weather', 'idem-2');
      // The first call's request reaches the proxy now and meets the rule; then the second call's.
      const late = takeUp(l, rome);
      const own = takeUp(l, rome);
      ticket.close();
      late.record('idem-1', 0);
      own.record('idem-2', 1);
    });
    expect((await next).fault).toBeNull();
  });

  it('matches a record that names no idempotency key to the oldest request of its tool', async () => {
    const l = ledger([cut]);
    const result = l.track(async () => {
      const ticket = l.open('read_file', 'idem-1');
      const taken = takeUp(l, READ);
      ticket.close();
      taken.record(undefined, 0);
    });
    expect((await result).fault).toMatchObject<Partial<InjectedFault>>({ kind: 'partial', rule_id: 'cut' });
  });

  it('holds a hang on the virtual clock, so that the client timeout ends it, and leaves every other decision alone', () => {
    const l = ledger([
      { id: 'slow-paris', tool: 'get_weather', when: { city: 'Paris' }, trigger: { nth: [1] }, fault: 'hang' },
      { id: 'limited', tool: 'get_weather', when: { city: 'Rome' }, trigger: 'always', fault: 'http_status', params: { status: 429, retry_after: 3 } },
    ]);
    expect(l.plan.decide({ toolName: 'get_weather', args: { city: 'Paris' } })?.effect).toEqual({ type: 'timeout', afterMs: HANG_MS });
    expect(l.plan.decide({ toolName: 'get_weather', args: { city: 'Rome' } })?.effect).toMatchObject({ type: 'respond', status: 429 });
    expect(l.plan.decide({ toolName: 'get_weather', args: { city: 'Paris' } })).toBeUndefined();
    expect(l.plan.state().calls).toEqual({ get_weather: 3 });
  });
});
