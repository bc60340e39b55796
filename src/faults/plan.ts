/**
 * A running fault plan: rules matched against calls, triggers evaluated with counters kept per
 * plan instance, and one decision per call that every transport applies its own way. The
 * runtime uses it as its FaultInjector; the HTTP and MCP proxies call `decide()` directly.
 */
import { canonicalJson } from '../core/params-hash.js';
import { seededRandom } from '../core/seeded-random.js';
import { systemClock, type Clock } from '../core/clock.js';
import { cloneJson } from '../core/clone-json.js';
import { resolveFault, type FaultCall, type FaultDecision } from './decision.js';
import { globMatcher } from './glob.js';
import type { FaultCallInfo, FaultInjector, PlannedFault } from '../runtime/fault-injector.js';
import { toPlannedFault } from './inprocess.js';
import { OutputHistory } from './output-history.js';
import type { FaultPlanSpec, FaultRule, FaultTrigger } from './plan-spec.js';
import { validateFaultPlan } from './plan-validate.js';
import { fullBucket, takeToken, type TokenBucketState } from './token-bucket.js';
import { compileTrigger, type TriggerTest } from './triggers.js';

export interface FaultPlanOptions {
  /** The clock windows, token buckets and stale ages are measured on. Default: the system clock. */
  clock?: Clock;
  /** Overrides the plan's own `seed`. With neither, the seed is 0: runs are reproducible by default. */
  seed?: number;
  /** Where window offsets count from. Default: `clock.now()` when the plan is created. */
  startedAt?: number;
}

/** Counters of one rule. */
export interface FaultRuleState {
  /** Calls the rule matched, per tool (its triggers count these). */
  matched: Record<string, number>;
  /** Faults injected so far, over all tools. */
  injections: number;
  /** rate_limit_burst only: tokens left in the bucket when it was last used. */
  tokens?: number;
}

export interface FaultPlanState {
  /** Epoch ms window offsets count from. */
  startedAt: number;
  /** Every call the plan was asked about, per tool, whether or not a rule matched. */
  calls: Record<string, number>;
  /** Per rule id, for the rules of the current plan. */
  rules: Record<string, FaultRuleState>;
}

/** A call's output, for transports that see every answer (stale replays draw on these). */
export interface ObservedOutput {
  toolName: string;
  args: unknown;
  output: unknown;
  now?: number;
}

/**
 * A fault plan in action. It is the runtime's `FaultInjector` (`plan()`), and the
 * transport-neutral decision API the proxies use (`decide()`).
 */
export interface FaultPlan extends FaultInjector {
  /**
   * The fault for this call, or undefined. Every call counts towards its tool's triggers, so call
   * it exactly once per request that reaches (or would reach) the tool. Rules are tried in order
   * and the first whose trigger fires (and whose `max_injections` is not used up) wins; the
   * rules after it still count the call and draw their probabilities, but take no rate-limit
   * tokens and inject nothing.
   */
  decide(call: FaultCall): FaultDecision | undefined;
  /** Tells the plan what a call returned; stale replays can then serve it later. */
  observe(output: ObservedOutput): void;
  /** A snapshot of the counters. */
  state(): FaultPlanState;
  /**
   * Swaps the rules while the plan is in use. Counters and buckets follow rule ids: a rule that
   * keeps its id keeps its counts (so raising `max_injections` carries on from where it was);
   * a new id starts from zero. A rule without an `id` (named `rule-<index>` by validation) keeps its counts only
   * when it is the same rule at the same place; any other rule there starts from zero. Validates
   * like `createFaultPlan`; throws ConfigError.
   */
  update(spec: FaultPlanSpec): void;
  /** The current (validated, normalized) plan. */
  readonly spec: FaultPlanSpec;
}

interface CompiledRule {
  rule: FaultRule;
  id: string;
  matchesTool: (name: string) => boolean;
  matchesArgs: (args: unknown) => boolean;
  trigger: TriggerTest;
}

interface RuleCounters {
  matched: Map<string, number>;
  total: number;
  injections: number;
  /** Random streams per tool and purpose ("trigger", "sample"), created on first use. */
  streams: Map<string, () => number>;
  /** one_of's draw per tool (see pickOf). */
  picks: Map<string, number>;
  bucket: TokenBucketState | undefined;
}

/** FNV-1a over a string: spreads (seed, rule, tool, purpose) into independent PRNG seeds. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function argsMatcher(when: Record<string, unknown> | undefined): (args: unknown) => boolean {
  if (when === undefined) return () => true;
  const expected = Object.entries(when).map(([key, value]) => [key, canonicalJson(value)] as const);
  return (args) => {
    if (args === null || typeof args !== 'object') return false;
    const actual = args as Record<string, unknown>;
    return expected.every(([key, value]) => Object.hasOwn(actual, key) && canonicalJson(actual[key]) === value);
  };
}

function compile(spec: FaultPlanSpec, startedAt: number, seed: number): CompiledRule[] {
  return spec.rules.map((rule, index) => {
    const id = rule.id ?? `rule-${index}`;
    return {
      rule,
      id,
      matchesTool: globMatcher(rule.tool),
      matchesArgs: argsMatcher(rule.when),
      trigger: compileTrigger(rule.trigger ?? ('always' satisfies FaultTrigger), startedAt, seededRandom(hash32(`${seed}\u0000${id}\u0000window`))),
    };
  });
}

/**
 * Creates a running fault plan from a plan spec (parsed from a file with `loadFaultPlan` /
 * `parseFaultPlan`, or written in code; it is validated either way and a ConfigError names the
 * first problem).
 *
 * @example
 * const clock = createVirtualClock();
 * const faults = createFaultPlan(
 *   {
 *     version: 1,
 *     seed: 42,
 *     rules: [
 *       { id: 'slow-weather', tool: 'get_weather', trigger: { probability: 0.2 }, fault: 'latency', params: { distribution: 'exponential', mean_ms: 800 } },
 *       { id: 'orders-429', tool: 'create_*', trigger: { nth: [2] }, fault: 'http_status', params: { status: 429, retry_after: 30 } },
 *     ],
 *   },
 *   { clock },
 * );
 * const rt = createRuntime({ tools, clock, faults });
 * // later, while it runs:
 * faults.update(await loadFaultPlan('faults/outage.yaml'));
 */
export function createFaultPlan(spec: FaultPlanSpec, options: FaultPlanOptions = {}): FaultPlan {
  const clock = options.clock ?? systemClock;
  const startedAt = options.startedAt ?? clock.now();
  let current = validateFaultPlan(spec, 'fault plan');
  const seedOf = (plan: FaultPlanSpec) => options.seed ?? plan.seed ?? 0;
  let seed = seedOf(current);
  let rules = compile(current, startedAt, seed);
  let counters = new Map<string, RuleCounters>();
  const calls = new Map<string, number>();
  const history = new OutputHistory();
  let watchesOutputs = rules.some((r) => r.rule.fault === 'stale');

  const countersFor = (id: string): RuleCounters => {
    let c = counters.get(id);
    if (c === undefined) {
      c = { matched: new Map(), total: 0, injections: 0, streams: new Map(), picks: new Map(), bucket: undefined };
      counters.set(id, c);
    }
    return c;
  };

  const stream = (c: RuleCounters, ruleId: string, toolName: string, purpose: string): (() => number) => {
    const key = `${purpose}\u0000${toolName}`;
    let random = c.streams.get(key);
    if (random === undefined) {
      random = seededRandom(hash32(`${seed}\u0000${ruleId}\u0000${toolName}\u0000${purpose}`));
      c.streams.set(key, random);
    }
    return random;
  };

  /** One draw per rule and tool, made on first use and kept: one_of's choice of call. */
  const pickOf = (c: RuleCounters, ruleId: string, toolName: string): number => {
    let p = c.picks.get(toolName);
    if (p === undefined) {
      p = seededRandom(hash32(`${seed}\u0000${ruleId}\u0000${toolName}\u0000pick`))();
      c.picks.set(toolName, p);
    }
    return p;
  };

  function decide(call: FaultCall): FaultDecision | undefined {
    const now = call.now ?? clock.now();
    const toolName = call.toolName;
    calls.set(toolName, (calls.get(toolName) ?? 0) + 1);
    let decision: FaultDecision | undefined;
    for (const compiled of rules) {
      if (!compiled.matchesTool(toolName) || !compiled.matchesArgs(call.args)) continue;
      const c = countersFor(compiled.id);
      const count = (c.matched.get(toolName) ?? 0) + 1;
      c.matched.set(toolName, count);
      c.total++;
      // Every matching rule evaluates its trigger, even after another rule has won, so that a
      // probability rule's draws depend only on its own calls: adding a rule does not reshuffle it.
      const fires = compiled.trigger({ count, now, random: stream(c, compiled.id, toolName, 'trigger'), pick: () => pickOf(c, compiled.id, toolName) });
      if (decision !== undefined || !fires) continue;
      const rule = compiled.rule;
      if (rule.max_injections !== undefined && c.injections >= rule.max_injections) continue;
      const resolved = resolveFault(rule, {
        toolName,
        args: call.args,
        now,
        random: stream(c, compiled.id, toolName, 'sample'),
        ruleCalls: c.total,
        takeToken: () => {
          if (rule.fault !== 'rate_limit_burst') return undefined;
          const options = { capacity: rule.params.capacity, refillPerSec: rule.params.refill_per_sec };
          const taken = takeToken(c.bucket ?? fullBucket(options, now), options, now);
          c.bucket = taken.state;
          return taken.granted ? undefined : taken.waitMs;
        },
        history,
        clockNow: () => clock.now(),
      });
      if (resolved === undefined) continue;
      c.injections++;
      // A copy: records and proxies may hold on to it, and the spec's own objects must stay untouched.
      const params = cloneJson({ ...(rule.params as Record<string, unknown> | undefined), ...resolved.applied }) as Record<string, unknown>;
      decision = {
        kind: rule.fault,
        ruleId: compiled.id,
        params,
        fault: { kind: rule.fault, rule_id: compiled.id, params, transport: call.transport ?? 'inprocess' },
        delayMs: resolved.delayMs,
        forward: resolved.forward,
        effect: resolved.effect,
      };
    }
    return decision;
  }

  return {
    decide,
    plan(info: FaultCallInfo): PlannedFault | undefined {
      const decision = decide({ toolName: info.toolName, args: info.args, now: info.now, transport: 'inprocess' });
      return decision === undefined ? undefined : toPlannedFault(decision);
    },
    observe({ toolName, args, output, now }) {
      if (!watchesOutputs) return;
      if (!rules.some((r) => r.rule.fault === 'stale' && r.matchesTool(toolName) && r.matchesArgs(args))) return;
      history.record(toolName, args, output, now ?? clock.now());
    },
    state() {
      const out: FaultPlanState = { startedAt, calls: Object.fromEntries(calls), rules: {} };
      for (const { id, rule } of rules) {
        const c = counters.get(id);
        const entry: FaultRuleState = { matched: Object.fromEntries(c?.matched ?? []), injections: c?.injections ?? 0 };
        if (rule.fault === 'rate_limit_burst') entry.tokens = c?.bucket?.tokens ?? rule.params.capacity;
        out.rules[id] = entry;
      }
      return out;
    },
    update(next: FaultPlanSpec) {
      const validated = validateFaultPlan(next, 'fault plan');
      const compiled = compile(validated, startedAt, seedOf(validated));
      const kept = new Map<string, RuleCounters>();
      const before = new Map(rules.map((r) => [r.id, r.rule]));
      compiled.forEach(({ id, rule }, index) => {
        const c = counters.get(id);
        if (c === undefined) return;
        // A generated id (validation fills in `rule-<index>`) names a position, not a rule: only
        // the same rule there carries on.
        if (id === `rule-${index}` && canonicalJson(before.get(id)) !== canonicalJson(rule)) return;
        kept.set(id, c);
      });
      current = validated;
      rules = compiled;
      counters = kept;
      seed = seedOf(validated);
      watchesOutputs = rules.some((r) => r.rule.fault === 'stale');
    },
    get spec() {
      return current;
    },
  };
}
