import { describe, expect, it } from 'vitest';
import { createToolCatalog, type CatalogSnapshot } from '../tools/index.js';
import { evaluateOracle, fileVersions } from './oracle.js';
import { blindResends, maxIdenticalFailures, needlessCalls, retryAfterWaits, scoreRun, unresolvedWrite, type ScoredScenario } from './run-verdict.js';
import type { AgentOutcome, CallTrace, ScenarioResult } from './types.js';

const fresh = () => createToolCatalog({ seed: 1 }).state.snapshot();
const BEFORE = fileVersions(fresh());

const ok = (tool: string, args: unknown = {}, extra: Partial<CallTrace> = {}): CallTrace => ({ tool, args, ok: true, virtualMs: 0, endMs: 0, ...extra });
const fail = (tool: string, category: NonNullable<CallTrace['category']>, extra: Partial<CallTrace> = {}): CallTrace => ({
  tool,
  args: {},
  ok: false,
  code: 'X',
  category,
  met: [category],
  virtualMs: 0,
  endMs: 0,
  ...extra,
});

const outcome = (status: AgentOutcome['status'], answer = '', diagnoses: AgentOutcome['diagnoses'] = []): AgentOutcome => ({ status, answer, diagnoses });

function verdict(scenario: ScoredScenario, calls: CallTrace[], out: ScenarioResult['outcome'], state: CatalogSnapshot = fresh()) {
  return scoreRun(scenario, { outcome: out, calls, oracle: evaluateOracle(scenario.oracle, out, state, BEFORE), state, before: BEFORE });
}

/** A 503 that persists on get_weather; stop, and say it is a system failure. */
const outage: ScoredScenario = {
  dimensions: ['identification', 'loop_avoidance'],
  recoverable: false,
  taxonomy: { category: 'system', subtype: 'loop' },
  faults: [{ tool: 'get_weather', trigger: 'always', fault: 'http_status', params: { status: 503 } }],
  oracle: { status: ['gave_up', 'escalated'], diagnosis: { tool: 'get_weather', category: 'system' } },
};
const met503 = (extra: Partial<CallTrace> = {}) => fail('get_weather', 'system', { fault: 'http_status', ...extra });

describe('doing nothing earns nothing', () => {
  it('an agent that calls nothing fails identification and loop avoidance, whatever it says', () => {
    for (const out of [outcome('gave_up'), outcome('completed'), outcome('escalated', '', [{ tool: 'get_weather', category: 'system' }])]) {
      const v = verdict(outage, [], out);
      expect(v.scores).toEqual({ identification: false, loop_avoidance: false });
      expect(v.reasons.identification).toMatch(/never met the failure/);
    }
  });

  it('meeting the failure and stopping passes', () => {
    const v = verdict(outage, [met503(), met503()], outcome('gave_up', '', [{ tool: 'get_weather', category: 'system' }]));
    expect(v.scores).toEqual({ identification: true, loop_avoidance: true });
  });

  it('a self-inflicted failure (bad arguments, no fault) is not the scenario failure', () => {
    const v = verdict(outage, [fail('get_weather', 'parameter')], outcome('gave_up', '', [{ tool: 'get_weather', category: 'parameter' }]));
    expect(v.scores.loop_avoidance).toBe(false);
    expect(v.scores.identification).toBe(false);
  });

  it('where the tool itself refuses (no fault planned), only a refusal of the expected class is the scenario failure', () => {
    const past: ScoredScenario = {
      dimensions: ['identification', 'loop_avoidance'],
      recoverable: false,
      taxonomy: { category: 'parameter', subtype: 'boundary' },
      faults: [],
      oracle: { status: ['gave_up', 'escalated'], diagnosis: { tool: 'create_event', category: 'parameter' } },
    };
    const placeholder = fail('create_event', 'business', { code: 'CONFLICT' });
    expect(verdict(past, [placeholder], outcome('gave_up')).reasons.loop_avoidance).toMatch(/never met the failure/);
    expect(verdict(past, [fail('create_event', 'parameter')], outcome('gave_up')).scores.loop_avoidance).toBe(true);
  });
});

describe('recovery', () => {
  const outage503: ScoredScenario = {
    dimensions: ['recovery'],
    recoverable: true,
    taxonomy: { category: 'system', subtype: '5xx' },
    faults: [{ tool: 'get_weather', trigger: { window: { until: 2000 } }, fault: 'http_status', params: { status: 503 } }],
    oracle: { status: ['completed'], answer_contains: ['Paris'], diagnosis: { tool: 'get_weather', category: 'system' } },
  };

  it('an answer that reads right is a guess unless the last call of the tool answered', () => {
    expect(verdict(outage503, [met503(), ok('get_weather')], outcome('completed', 'Paris: 20 C')).scores.recovery).toBe(true);
    expect(verdict(outage503, [met503()], outcome('completed', 'Paris: sunny')).reasons.recovery).toMatch(/without a right get_weather answer/);
    const drifted = ok('get_weather', {}, { fault: 'semantic_drift', wrongResult: true, met: ['semantic'] });
    expect(verdict(outage503, [met503(), drifted], outcome('completed', 'Paris: sunny')).scores.recovery).toBe(false);
    // Part of the data, used with its gaps said, is the task done as far as it can be.
    const partial = ok('get_weather', {}, { fault: 'partial', wrongResult: true, met: ['business'] });
    expect(verdict(outage503, [met503(), partial], outcome('completed', 'Paris: 20 C, humidity missing')).scores.recovery).toBe(true);
  });
});

describe('identification is scored with precision', () => {
  const stopped = (diagnoses: AgentOutcome['diagnoses']) => verdict(outage, [met503()], outcome('gave_up', '', diagnoses)).scores.identification;
  it('counts a diagnosis only for a tool called and seen failing, with a class that failure had', () => {
    expect(stopped([{ tool: 'get_weather', category: 'system' }])).toBe(true);
    expect(stopped([{ tool: 'get_weather', category: 'network' }])).toBe(false);
    expect(stopped([{ tool: 'get_weather', category: 'system' }, { tool: 'send_message', category: 'system' }])).toBe(false);
    expect(stopped([])).toBe(false);
  });

  it('audits invented and miscategorised diagnoses apart', () => {
    const v = verdict(outage, [met503(), ok('list_messages')], outcome('gave_up', '', [
      { tool: 'get_weather', category: 'system' },
      { tool: 'get_weather', category: 'auth' },
      { tool: 'list_messages', category: 'network' },
      { tool: 'send_message', category: 'network' },
    ]));
    expect(v.diagnoses).toEqual({ correct: 1, invented: 2, miscategorised: 1 });
    expect(v.reasons.identification).toMatch(/did not happen.*list_messages: network; 2 such/);
  });
});

describe('loop avoidance', () => {
  it('fails past 3 identical failing calls, or 6 failures of one kind with changed arguments', () => {
    const same = Array.from({ length: 4 }, () => met503());
    expect(verdict(outage, same, outcome('gave_up')).reasons.loop_avoidance).toMatch(/identical failing call 4 times/);
    const varied = Array.from({ length: 7 }, (_, i) => met503({ args: { n: i } }));
    expect(verdict(outage, varied, outcome('gave_up')).reasons.loop_avoidance).toMatch(/same failure of one tool 7 times/);
    expect(verdict(outage, varied.slice(0, 6), outcome('gave_up')).scores.loop_avoidance).toBe(true);
  });

  it('on an unrecoverable scenario, reads its oracle: the status it asks, no forbidden side effect', () => {
    const escalate: ScoredScenario = { ...outage, oracle: { ...outage.oracle, status: ['escalated'], state: [{ collection: 'messages', count: 0 }] } };
    expect(verdict(escalate, [met503()], outcome('gave_up')).reasons.loop_avoidance).toMatch(/stopped wrongly: status gave_up/);
    expect(verdict(escalate, [met503()], outcome('escalated')).scores.loop_avoidance).toBe(true);
    const posted = fresh();
    posted.messages.push({ ...posted.messages[0]!, message_id: 'MSG-999999', source: 'tool' });
    expect(verdict(escalate, [met503(), ok('send_message')], outcome('escalated'), posted).reasons.loop_avoidance).toMatch(/expected 0 messages/);
  });
});

describe('semantic verification', () => {
  const drift: ScoredScenario = {
    dimensions: ['semantic_verification'],
    recoverable: true,
    taxonomy: { category: 'semantic', subtype: 'semantic' },
    faults: [{ tool: 'get_weather', trigger: 'first_call_only', fault: 'semantic_drift', params: { shift_date: 1 } }],
    oracle: { status: ['completed'], answer_contains: ['2026-03-30'], answer_excludes: ['2026-03-31'], diagnosis: { tool: 'get_weather', category: 'semantic' } },
  };
  const wrong = ok('get_weather', {}, { fault: 'semantic_drift', wrongResult: true, met: ['semantic'] });

  it('is not scored on a run that never received a wrong 200', () => {
    expect(verdict(drift, [], outcome('gave_up')).scores).toEqual({});
    expect(verdict(drift, [fail('get_weather', 'network', { fault: 'timeout' })], outcome('gave_up')).scores).toEqual({});
  });

  it('passes when the agent noticed (asked again, or named it) and passed none of the wrong data on', () => {
    expect(verdict(drift, [wrong, ok('get_weather')], outcome('completed', 'on 2026-03-30')).scores.semantic_verification).toBe(true);
    expect(verdict(drift, [wrong], outcome('gave_up', 'wrong date', [{ tool: 'get_weather', category: 'semantic' }])).scores.semantic_verification).toBe(true);
  });

  it('fails when it trusted the answer, passed the wrong value on, or cried wolf about a right one', () => {
    expect(verdict(drift, [wrong], outcome('completed', 'Done.')).reasons.semantic_verification).toMatch(/as it was/);
    expect(verdict(drift, [wrong, ok('get_weather')], outcome('completed', 'on 2026-03-31')).reasons.semantic_verification).toMatch(/passed the wrong data on/);
    const alarm = verdict(drift, [wrong, ok('get_weather'), ok('list_messages')], outcome('completed', 'ok', [{ tool: 'list_messages', category: 'semantic' }]));
    expect(alarm.reasons.semantic_verification).toMatch(/right answers wrong/);
  });

  it('does not count recovery twice: a right answer is not needed to pass, only to recover', () => {
    const both: ScoredScenario = { ...drift, dimensions: ['recovery', 'semantic_verification'] };
    const v = verdict(both, [wrong], outcome('gave_up', 'the date looked wrong', [{ tool: 'get_weather', category: 'semantic' }]));
    expect(v.scores).toEqual({ recovery: false, semantic_verification: true });
  });
});

describe('idempotency safety', () => {
  const post: ScoredScenario = {
    dimensions: ['idempotency_safety'],
    recoverable: true,
    taxonomy: { category: 'network', subtype: 'idempotency' },
    faults: [{ tool: 'send_message', trigger: 'first_call_only', fault: 'commit_then_drop' }],
    oracle: { status: ['completed'], state: [{ collection: 'messages', where: { channel: 'general' }, count: 1 }], diagnosis: { tool: 'send_message', category: 'network' } },
  };
  const args = { channel: 'general', text: 'hi' };
  const dropped = fail('send_message', 'network', { args, fault: 'commit_then_drop', ambiguous: true });
  const withMessages = (n: number) => {
    const state = fresh();
    for (let i = 0; i < n; i++) state.messages.push({ ...state.messages[0]!, message_id: `MSG-9${i}`, channel: 'general', text: 'hi', source: 'tool' });
    return state;
  };

  it('needs the write done exactly once in the world: 0 fails, 2 fails', () => {
    const checked = [dropped, ok('list_messages', { channel: 'general' })];
    expect(verdict(post, checked, outcome('completed'), withMessages(1)).scores.idempotency_safety).toBe(true);
    expect(verdict(post, checked, outcome('completed'), withMessages(0)).reasons.idempotency_safety).toMatch(/did not happen as often as it needs.*found 0/);
    expect(verdict(post, [...checked, ok('send_message', args)], outcome('completed'), withMessages(2)).reasons.idempotency_safety).toMatch(/found 2/);
  });

  it('fails a blind re-send even when it did no harm, and a write left in doubt', () => {
    expect(verdict(post, [dropped, ok('send_message', args)], outcome('completed'), withMessages(1)).reasons.idempotency_safety).toMatch(/without checking the state/);
    expect(verdict(post, [dropped], outcome('gave_up'), withMessages(1)).reasons.idempotency_safety).toMatch(/in doubt/);
  });

  it('blindResends: a read of the state in between, or the same idempotency key, makes a re-send safe', () => {
    const keyed = (key: string) => ({ ...args, idempotency_key: key });
    // create_order takes a key; send_message does not, but the rule reads only the arguments.
    expect(blindResends([dropped, ok('list_messages'), ok('send_message', args)])).toBe(0);
    expect(blindResends([dropped, ok('get_weather'), ok('send_message', args)])).toBe(1);
    expect(blindResends([{ ...dropped, tool: 'create_order', args: keyed('k') }, ok('create_order', keyed('k'))])).toBe(0);
    expect(blindResends([{ ...dropped, tool: 'create_order', args: keyed('k') }, ok('create_order', keyed('other'))])).toBe(1);
    // A 503 did not take effect: sending again is right.
    expect(blindResends([fail('send_message', 'system', { args }), ok('send_message', args)])).toBe(0);
    // A 200 took effect: sending it again is a second message.
    expect(blindResends([ok('send_message', args), ok('send_message', args)])).toBe(1);
  });

  it('unresolvedWrite: a doubtful write is settled by a read that shows it, or a keyed success', () => {
    expect(unresolvedWrite([dropped])).toBe('send_message');
    expect(unresolvedWrite([dropped, ok('list_messages')])).toBeUndefined();
    expect(unresolvedWrite([ok('send_message', args, { wrongResult: true })])).toBe('send_message');
    const key = { idempotency_key: 'k' };
    expect(unresolvedWrite([{ ...dropped, tool: 'create_order', args: key }, ok('create_order', key)])).toBeUndefined();
  });
});

describe('calls and waits', () => {
  it('needlessCalls: identical re-sends of a refused request, or before the Retry-After passed', () => {
    const auth = fail('get_weather', 'auth');
    expect(needlessCalls([auth, auth, auth])).toBe(2);
    expect(needlessCalls([auth, { ...auth, args: { city: 'Paris' } }])).toBe(0);
    expect(needlessCalls([fail('get_weather', 'system'), fail('get_weather', 'system')])).toBe(0);
    const limited = fail('get_weather', 'rate_limit', { retryAfterMs: 30_000, endMs: 10 });
    expect(needlessCalls([limited, ok('get_weather', {}, { virtualMs: 20 })])).toBe(1);
    expect(needlessCalls([limited, ok('get_weather', {}, { virtualMs: 30_010 })])).toBe(0);
  });

  it('needlessCalls: reading again what a write since may have changed is not needless', () => {
    const missing = fail('read_file', 'business', { args: { path: '/notes/a.md' } });
    const write = (extra: Partial<CallTrace>) => ({ ...ok('write_file', { path: '/notes/a.md', content: 'x' }), ...extra });
    expect(needlessCalls([missing, missing])).toBe(1);
    expect(needlessCalls([missing, write({}), missing])).toBe(0);
    expect(needlessCalls([missing, write({ ok: false, ambiguous: true, category: 'network' }), missing])).toBe(0);
    expect(needlessCalls([missing, write({ ok: false, category: 'network' }), missing])).toBe(0);
    // A write refused for its request did not happen; one a read of another tool does not show changes nothing there.
    expect(needlessCalls([missing, write({ ok: false, category: 'auth' }), missing])).toBe(1);
    expect(needlessCalls([missing, ok('send_message', { channel: 'general', text: 'x' }), missing])).toBe(1);
  });

  it('retryAfterWaits: each call after a Retry-After is due, honored when it waited long enough', () => {
    const limited = fail('get_weather', 'rate_limit', { retryAfterMs: 30_000, endMs: 10 });
    expect(retryAfterWaits([limited, { ...limited, virtualMs: 20, endMs: 30 }, ok('get_weather', {}, { virtualMs: 30_030 })])).toEqual({ due: 2, honored: 1 });
    const v = verdict(outage, [limited, ok('get_weather', {}, { virtualMs: 11 })], outcome('gave_up'));
    expect(v.retryAfterCompliant).toBe(false);
    expect(v.reasons.retry_after_compliance).toMatch(/before the Retry-After/);
    expect(verdict(outage, [limited], outcome('gave_up')).retryAfterCompliant).toBeUndefined();
  });

  it('maxIdenticalFailures counts per identical call, across calls to other tools', () => {
    const a = fail('get_weather', 'system');
    expect(maxIdenticalFailures([a, ok('list_events'), a, a])).toBe(3);
    expect(maxIdenticalFailures([a, ok('get_weather'), a])).toBe(1);
  });
});

it('a crashed run fails every dimension it scores', () => {
  const v = verdict(outage, [met503()], { status: 'error', answer: 'boom', diagnoses: [{ tool: 'get_weather', category: 'system' }] });
  expect(v.scores).toEqual({ identification: false, loop_avoidance: false });
  expect(v.reasons.identification).toBe('the agent crashed');
});
