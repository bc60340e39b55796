import { describe, expect, it } from 'vitest';
import { createFaultPlan } from '../../faults/plan.js';
import { makeRecord } from '../../record/fixture.js';
import { createVirtualClock } from '../../runtime/clock.js';
import { createFaultLedger, HANG_MS } from './fault-ledger.js';

function ledger() {
  const clock = createVirtualClock({ startMs: 0 });
  const plan = createFaultPlan(
    {
      version: 1,
      rules: [
        { id: 'slow-paris', tool: 'get_weather', when: { city: 'Paris' }, trigger: { nth: [1] }, fault: 'hang' },
        { id: 'limited', tool: 'get_weather', when: { city: 'Rome' }, trigger: 'always', fault: 'http_status', params: { status: 429, retry_after: 3 } },
      ],
    },
    { clock, seed: 1 },
  );
  return createFaultLedger(plan);
}

describe('the fault ledger', () => {
  it('gives each call the first fault its requests met, matched by tool and arguments', async () => {
    const l = ledger();
    const rome = l.track(async () => {
      const ticket = l.open('get_weather', { city: 'Rome' });
      await Promise.resolve();
      ticket.close();
      return 'rome';
    });
    const paris = l.track(async () => {
      const first = l.open('get_weather', { city: 'Paris' });
      await Promise.resolve();
      first.close();
      const retry = l.open('get_weather', { city: 'Paris' });
      await Promise.resolve();
      retry.close();
      return 'paris';
    });
    // The proxy decides in its own order, for requests it cannot name: arguments tell them apart.
    l.plan.decide({ toolName: 'get_weather', args: { city: 'Paris' } });
    l.plan.decide({ toolName: 'get_weather', args: { city: 'Rome' } });
    await new Promise((resolve) => setImmediate(resolve));
    l.plan.decide({ toolName: 'get_weather', args: { city: 'Paris' } });
    expect(await rome).toEqual({ value: 'rome', fault: expect.objectContaining({ kind: 'http_status', rule_id: 'limited' }) });
    expect(await paris).toEqual({ value: 'paris', fault: expect.objectContaining({ kind: 'hang', rule_id: 'slow-paris' }) });
  });

  it('holds a hang on the virtual clock, so that the client timeout ends it, and leaves every other decision alone', () => {
    const l = ledger();
    expect(l.plan.decide({ toolName: 'get_weather', args: { city: 'Paris' } })?.effect).toEqual({ type: 'timeout', afterMs: HANG_MS });
    expect(l.plan.decide({ toolName: 'get_weather', args: { city: 'Rome' } })?.effect).toMatchObject({ type: 'respond', status: 429 });
    expect(l.plan.decide({ toolName: 'get_weather', args: { city: 'Paris' } })).toBeUndefined();
    expect(l.plan.state().calls).toEqual({ get_weather: 3 });
  });

  it('counts a rewrite only once the proxy\'s record says it was applied: one that met the tool\'s own failure is no fault', async () => {
    const clock = createVirtualClock({ startMs: 0 });
    const l = createFaultLedger(createFaultPlan({ version: 1, rules: [{ id: 'cut', tool: 'read_file', trigger: 'always', fault: 'partial', params: { drop_fraction: 0.5 } }] }, { clock, seed: 1 }));
    const call = () =>
      l.track(async () => {
        const ticket = l.open('read_file', { path: '/a' });
        const decision = l.plan.decide({ toolName: 'read_file', args: { path: '/a' } })!;
        ticket.close();
        return decision.fault;
      });
    const missing = call();
    const found = call();
    // The records come after the client has its answers, in the order the proxy finished.
    await new Promise((resolve) => setImmediate(resolve));
    const fault = { kind: 'partial', rule_id: 'cut', transport: 'http' };
    l.recorded(makeRecord({ tool_name: 'read_file', fault: null, context_snapshot: { fault_not_applied: fault } }));
    l.recorded(makeRecord({ tool_name: 'read_file', fault }));
    expect((await missing).fault).toBeNull();
    expect((await found).fault).toMatchObject({ kind: 'partial', rule_id: 'cut' });
  });
});
