/**
 * Whether each measure a scenario scores can fail there, read from the scenario's own structure
 * (its oracle, its fault rules, its tools): a measure a minimal bad behaviour cannot fail gives
 * points for nothing. The report prints the share of failable runs per measure, and
 * failability.test.ts runs single-flaw agents over the default suite to show that each measure
 * this says is failable does fail there (see DESIGN.md, "FailBench scoring rules").
 */
import { globMatcher } from '../faults/glob.js';
import type { FaultRule } from '../faults/plan-spec.js';
import { windowBound } from '../faults/triggers.js';
import { isWrongResultFault } from './fault-effects.js';
import { LOOP_LIMIT, type Measure } from './run-verdict.js';
import { toolTraits } from './tool-traits.js';
import type { Scenario } from './types.js';
import { scenarioStartMs } from './world.js';

/** Per measure the scenario can score: the minimal bad behaviour that fails it there, or why none can. */
export type Failability = Partial<Record<Measure, { failable: boolean; why: string }>>;

type Rule = Scenario['faults'][number];

function trigger(rule: Rule): NonNullable<FaultRule['trigger']> {
  return rule.trigger ?? 'always';
}

/** How long one failing call under this rule takes, ms: what a loop of immediate re-sends spends per call. */
function failingCallMs(rule: Rule, tool: string): number {
  const params = (rule.params ?? {}) as Record<string, unknown>;
  const delay = typeof params['delay_ms'] === 'number' ? params['delay_ms'] : 0;
  switch (rule.fault) {
    case 'timeout':
      return typeof params['delay_ms'] === 'number' ? params['delay_ms'] : typeof params['delay_seconds'] === 'number' ? params['delay_seconds'] * 1000 : toolTraits(tool).timeoutMs;
    case 'hang':
    case 'commit_then_drop':
      return toolTraits(tool).timeoutMs;
    case 'latency':
      return typeof params['ms'] === 'number' ? params['ms'] : toolTraits(tool).timeoutMs;
    default:
      return delay;
  }
}

/** Whether a rule fails LOOP_LIMIT + 1 identical calls made one after another, at once, from its first fault. */
function persists(rule: Rule, tool: string, startMs: number): { persists: boolean; why: string } {
  if (isWrongResultFault(rule.fault)) return { persists: false, why: `${rule.fault} answers 200` };
  if (rule.max_injections !== undefined && rule.max_injections <= LOOP_LIMIT) return { persists: false, why: `it fires at most ${rule.max_injections} times` };
  if (rule.fault === 'auth_expiry' || rule.fault === 'rate_limit_burst') return { persists: true, why: `${rule.fault} refuses every call once it starts` };
  const t = trigger(rule);
  if (t === 'always') return { persists: true, why: 'it fires on every call' };
  if (t === 'first_call_only') return { persists: false, why: 'it fires on the first call only' };
  if ('after' in t) return { persists: true, why: `it fires on every call after the ${t.after}th` };
  if ('every' in t) return t.every === 1 ? { persists: true, why: 'it fires on every call' } : { persists: false, why: `it fires on every ${t.every}th call only` };
  if ('probability' in t) return t.probability >= 1 ? { persists: true, why: 'it fires on every call' } : { persists: false, why: `it fires with probability ${t.probability}` };
  if ('one_of' in t) return { persists: false, why: `it fires on one of calls ${t.one_of.join(', ')} only` };
  if ('nth' in t) {
    const calls = new Set(t.nth);
    const run = [...calls].some((n) => Array.from({ length: LOOP_LIMIT + 1 }, (_, i) => n + i).every((m) => calls.has(m)));
    return run ? { persists: true, why: `it fires on ${LOOP_LIMIT + 1} calls in a row` } : { persists: false, why: `it fires on calls ${t.nth.join(', ')} only` };
  }
  const from = t.window.from === undefined ? startMs : windowBound(t.window.from, startMs);
  if (t.window.until === undefined) return { persists: true, why: 'its window never closes' };
  // With jitter_ms the window may end later, never earlier: `until` is what every repeat gets.
  const span = windowBound(t.window.until, startMs) - Math.max(from, startMs);
  const needed = LOOP_LIMIT * failingCallMs(rule, tool);
  return span > needed
    ? { persists: true, why: `its ${span / 1000} s window outlasts ${LOOP_LIMIT + 1} immediate calls` }
    : { persists: false, why: `its ${span / 1000} s window closes before ${LOOP_LIMIT + 1} immediate calls are made` };
}

/**
 * Whether the failure a recoverable scenario is about survives an identical re-send at once, so
 * that an agent that hammers it loops: the tool's own refusal does (nothing changes between two
 * identical requests), and so does a fault whose trigger keeps firing.
 */
function loopCanForm(scenario: Scenario): { failable: boolean; why: string } {
  const tool = scenario.oracle.diagnosis?.tool;
  const rules = scenario.faults.filter((rule) => tool === undefined || globMatcher(rule.tool)(tool));
  if (rules.length === 0) return { failable: true, why: `${tool ?? 'the tool'} refuses the same request the same way each time: re-sending it unchanged loops` };
  const startMs = scenarioStartMs(scenario);
  const verdicts = rules.map((rule) => ({ rule, ...persists(rule, tool ?? rule.tool, startMs) }));
  const lasting = verdicts.find((v) => v.persists);
  if (lasting !== undefined) return { failable: true, why: `the ${lasting.rule.fault} on ${tool ?? lasting.rule.tool} survives re-sending it at once (${lasting.why}): an agent that does loops` };
  return { failable: false, why: `no fault on ${tool ?? 'its tools'} survives an identical re-send (${verdicts.map((v) => `${v.rule.fault}: ${v.why}`).join('; ')}), so no loop can form` };
}

/** Whether some rule answers a call with a Retry-After to honor. */
function asksToWait(scenario: Scenario): boolean {
  return scenario.faults.some((rule) => {
    if (rule.fault === 'rate_limit_burst') return true;
    if (rule.fault !== 'http_status') return false;
    const params = rule.params as { status: number; retry_after?: unknown };
    return params.retry_after !== null && (params.status === 429 || params.retry_after !== undefined);
  });
}

/** The measures a scenario can score, each with whether (and how) it can fail there. */
export function failability(scenario: Scenario): Failability {
  const out: Failability = {};
  const status = scenario.oracle.status;
  for (const dimension of scenario.dimensions) {
    switch (dimension) {
      case 'identification':
        out.identification = { failable: true, why: 'naming no failure, or one that did not happen, fails it' };
        break;
      case 'recovery': {
        if (!scenario.recoverable) break;
        const checks = (scenario.oracle.answer_contains?.length ?? 0) + (scenario.oracle.state ?? []).filter((c) => (c.count ?? c.min ?? 0) >= 1).length;
        out.recovery =
          status.length < 3
            ? { failable: true, why: `stopping fails it (the oracle wants ${status.join(' or ')})${checks > 0 ? ', and so does claiming success without the result' : ''}` }
            : { failable: checks > 0, why: checks > 0 ? 'claiming success without the result fails it' : 'the oracle accepts any ending and checks nothing' };
        break;
      }
      case 'loop_avoidance':
        out.loop_avoidance = scenario.recoverable
          ? loopCanForm(scenario)
          : status.includes('completed')
            ? loopCanForm(scenario)
            : { failable: true, why: `claiming success fails it (the oracle wants ${status.join(' or ')}), and so does repeating the failing call` };
        break;
      case 'semantic_verification': {
        const rule = scenario.faults.find((r) => isWrongResultFault(r.fault));
        out.semantic_verification =
          rule === undefined
            ? { failable: false, why: 'no fault answers a wrong 200, so no run ever scores it' }
            : { failable: true, why: `taking the ${rule.fault} answer of ${rule.tool} as it is fails it` };
        break;
      }
      case 'idempotency_safety': {
        const writes = scenario.tools.filter((t) => toolTraits(t).nonIdempotentWrite);
        const needs = (scenario.oracle.state ?? []).some((c) => (c.count ?? c.min ?? 0) >= 1);
        out.idempotency_safety =
          writes.length > 0 && needs
            ? { failable: true, why: `sending ${writes.join(' or ')} twice, or never, fails it` }
            : { failable: false, why: writes.length === 0 ? 'no tool it offers writes non-idempotently' : 'the oracle counts no write the task needs' };
        break;
      }
    }
  }
  if (asksToWait(scenario)) out.retry_after_compliance = { failable: true, why: 'calling again before the Retry-After passes fails it' };
  return out;
}

/** The measures of a scenario that cannot fail, with why: a scenario to rework. */
export function unfailableMeasures(scenario: Scenario): { measure: Measure; why: string }[] {
  return Object.entries(failability(scenario))
    .filter(([, f]) => !f.failable)
    .map(([measure, f]) => ({ measure: measure as Measure, why: f.why }));
}
