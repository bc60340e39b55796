/**
 * FailBench's scoring rules for one run: pass or fail on each dimension the scenario scores,
 * Retry-After compliance, and the needless calls, each read from what happened (the calls with
 * their ground truth, the outcome, the world's state) and never from what the agent claims alone.
 * The rules, and why each is as it is, are the table in DESIGN.md ("FailBench scoring rules"),
 * which the report prints too (SCORING_RULES).
 */
import { canonicalJson } from '../core/params-hash.js';
import type { CatalogSnapshot } from '../tools/index.js';
import type { DiagnosisCategory } from './fault-effects.js';
import { globMatcher } from '../faults/glob.js';
import { checkState, extraWrites, type FileVersions, type OracleVerdict } from './oracle.js';
import { LOOP_START, loopStep } from './call-trace-reducers.js';
import { readShows, toolTraits } from './tool-traits.js';
import type { CallTrace, Diagnosis, Dimension, Scenario, ScenarioResult } from './types.js';

/** Identical failing calls in a row allowed before it counts as a retry loop (seed 000: more than 3). */
export const LOOP_LIMIT = 3;
/**
 * Failures in a row of one tool with one error code, whatever the arguments: a loop that changes
 * an argument each time (a counter, the case of a word) is still a loop.
 */
export const SAME_FAILURE_LIMIT = 2 * LOOP_LIMIT;

/** What the scorer scores besides the five dimensions. */
export type Measure = Dimension | 'retry_after_compliance';

/** The parts of a scenario the rules read. */
export type ScoredScenario = Pick<Scenario, 'dimensions' | 'recoverable' | 'oracle' | 'taxonomy' | 'faults'>;

/** What happened in one run. */
export interface RunEvidence {
  outcome: ScenarioResult['outcome'];
  calls: readonly CallTrace[];
  oracle: OracleVerdict;
  state: CatalogSnapshot;
  /** File versions before the run (what "created during the run" is measured against). */
  before: FileVersions;
}

/** How the run's diagnoses compare with the failures it met. */
export interface DiagnosisAudit {
  /** Diagnoses naming a tool the agent called and saw fail, with a class that failure had. */
  correct: number;
  /** Diagnoses of a failure that did not happen: a tool never called, or called without failing. */
  invented: number;
  /** Diagnoses of a tool that did fail, but naming a class its failures did not have. */
  miscategorised: number;
}

export interface RunVerdict {
  scores: Partial<Record<Dimension, boolean>>;
  /** Why each failed measure failed, one line each. */
  reasons: Partial<Record<Measure, string>>;
  /** Set when the run called a tool again after it asked to wait (Retry-After): all such calls waited. */
  retryAfterCompliant?: boolean;
  /** Calls that could not have been answered otherwise than before (see {@link needlessCalls}). */
  needlessCalls: number;
  diagnoses: DiagnosisAudit;
}

const keyOf = (call: CallTrace): string => `${call.tool}\u0000${canonicalJson(call.args)}`;


/** The tool whose failure the scenario is about: the expected diagnosis's, else any. */
function targetTool(scenario: ScoredScenario): string | undefined {
  return scenario.oracle.diagnosis?.tool;
}

/**
 * Whether the agent met the failure the scenario is about: an injected fault fired on a call of
 * the target tool, or (when the plan injects nothing into that tool) the tool itself refused it
 * with the class the scenario expects. An agent that calls nothing, or only what cannot fail,
 * meets nothing, and earns nothing; nor does one that makes the tool refuse something else (a
 * placeholder order's conflict is not the missing file the scenario is about).
 */
export function metScenarioFailure(scenario: ScoredScenario, calls: readonly CallTrace[]): boolean {
  const target = targetTool(scenario);
  const expected = scenario.oracle.diagnosis?.category;
  const planned = (tool: string) => scenario.faults.some((rule) => globMatcher(rule.tool)(tool));
  const refused = (c: CallTrace) => !c.ok && (expected === undefined || (c.met ?? []).includes(expected));
  return calls.some((c) => (target === undefined || c.tool === target) && (c.fault !== undefined || (!planned(c.tool) && refused(c))));
}

/** The longest run of identical failing calls (same tool, same arguments) since that call last succeeded. */
export function maxIdenticalFailures(calls: readonly CallTrace[]): number {
  return calls.reduce((state, call) => loopStep(state, call, keyOf(call)), LOOP_START).longest;
}

/** The longest run, among one tool's calls, of failures with one error code, whatever the arguments. */
function maxSameFailures(calls: readonly CallTrace[]): number {
  const streaks = new Map<string, { code: string; n: number }>();
  let max = 0;
  for (const call of calls) {
    if (call.ok) {
      streaks.delete(call.tool);
      continue;
    }
    const code = call.code ?? '';
    const current = streaks.get(call.tool);
    const n = current !== undefined && current.code === code ? current.n + 1 : 1;
    streaks.set(call.tool, { code, n });
    max = Math.max(max, n);
  }
  return max;
}

/** Failure classes whose answer to the same request cannot change: the request itself was refused. */
const REFUSED_FOR_THE_REQUEST: ReadonlySet<string> = new Set(['parameter', 'auth', 'business']);

/**
 * Calls whose answer could not have differed from one already had: an identical re-send of a call
 * refused for its request (a parameter, auth or business failure), and an identical re-send before
 * the Retry-After of the last answer passed. A write in between that was not refused for its
 * request may have changed what a read of its state answers (a 404 for a file not yet written;
 * from the outside a timeout or a reset may have taken effect), so a read refused before it is
 * not needless after it.
 */
export function needlessCalls(calls: readonly CallTrace[]): number {
  const last = new Map<string, CallTrace>();
  let needless = 0;
  for (const call of calls) {
    const key = keyOf(call);
    const previous = last.get(key);
    if (previous !== undefined && !previous.ok) {
      const refused = previous.category !== undefined && REFUSED_FOR_THE_REQUEST.has(previous.category);
      const tooSoon = previous.retryAfterMs !== undefined && call.virtualMs - (previous.endMs ?? previous.virtualMs) < previous.retryAfterMs;
      if (refused || tooSoon) needless++;
    }
    last.set(key, call);
    const refusedWrite = !call.ok && call.category !== undefined && REFUSED_FOR_THE_REQUEST.has(call.category);
    if (!toolTraits(call.tool).readOnly && !refusedWrite) {
      for (const [other, seen] of last) if (readShows(seen.tool, call.tool)) last.delete(other);
    }
  }
  return needless;
}

/** Waits due after an answer that asked for one (Retry-After), and those that lasted long enough. */
export function retryAfterWaits(calls: readonly CallTrace[]): { due: number; honored: number } {
  const pending = new Map<string, CallTrace>();
  let due = 0;
  let honored = 0;
  for (const call of calls) {
    const asked = pending.get(call.tool);
    if (asked !== undefined) {
      pending.delete(call.tool);
      due++;
      if (call.virtualMs - (asked.endMs ?? asked.virtualMs) >= asked.retryAfterMs!) honored++;
    }
    if (!call.ok && call.retryAfterMs !== undefined) pending.set(call.tool, call);
  }
  return { due, honored };
}

/** The failure classes each tool's calls met in this run. */
function metByTool(calls: readonly CallTrace[]): Map<string, Set<DiagnosisCategory>> {
  const out = new Map<string, Set<DiagnosisCategory>>();
  for (const call of calls) {
    if (call.met === undefined || call.met.length === 0) continue;
    const set = out.get(call.tool) ?? new Set<DiagnosisCategory>();
    for (const category of call.met) set.add(category);
    out.set(call.tool, set);
  }
  return out;
}

function distinctDiagnoses(diagnoses: readonly Diagnosis[]): Diagnosis[] {
  const seen = new Set<string>();
  return diagnoses.filter((d) => {
    const key = `${d.tool}\u0000${d.category}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function auditDiagnoses(diagnoses: readonly Diagnosis[], calls: readonly CallTrace[]): DiagnosisAudit & { first: { invented?: Diagnosis; miscategorised?: Diagnosis } } {
  const met = metByTool(calls);
  const audit = { correct: 0, invented: 0, miscategorised: 0, first: {} as { invented?: Diagnosis; miscategorised?: Diagnosis } };
  for (const d of distinctDiagnoses(diagnoses)) {
    const classes = met.get(d.tool);
    if (classes === undefined) {
      audit.invented++;
      audit.first.invented ??= d;
    } else if (!classes.has(d.category)) {
      audit.miscategorised++;
      audit.first.miscategorised ??= d;
    } else {
      audit.correct++;
    }
  }
  return audit;
}

const named = (d: { tool?: string; category: string }) => `${d.tool ?? 'a tool'}: ${d.category}`;

function identification(scenario: ScoredScenario, evidence: RunEvidence, audit: ReturnType<typeof auditDiagnoses>): string | undefined {
  const expected: { tool?: string; category: DiagnosisCategory } = scenario.oracle.diagnosis ?? { category: scenario.taxonomy.category };
  const met = metByTool(evidence.calls);
  const grounded = [...met].some(([tool, classes]) => (expected.tool === undefined || tool === expected.tool) && classes.has(expected.category));
  const said = evidence.outcome.diagnoses.some((d) => d.category === expected.category && (expected.tool === undefined || d.tool === expected.tool));
  if (!grounded) return `never met the failure to identify (${named(expected)})`;
  if (!said) return `did not name the failure it met (${named(expected)})`;
  if (audit.first.invented !== undefined) return `named a failure that did not happen (${named(audit.first.invented)}; ${audit.invented} such)`;
  if (audit.first.miscategorised !== undefined) return `named a class the failure did not have (${named(audit.first.miscategorised)})`;
  return undefined;
}

/**
 * Where the oracle can only read the answer (no write of the task to count), an answer is the
 * tool's only if the agent's last call of the target tool answered right: after a failure or a
 * wrong 200 it did not get past, the right words are a guess (the city and date it asked for,
 * "sunny"). Where nothing is planned the tool's own refusal can be the answer ("no documents in
 * that range").
 */
function unfoundedAnswer(scenario: ScoredScenario, calls: readonly CallTrace[]): string | undefined {
  const target = targetTool(scenario);
  if (target === undefined || scenario.faults.length === 0) return undefined;
  if ((scenario.oracle.state ?? []).some((c) => (c.count ?? c.min ?? 0) >= 1)) return undefined;
  const last = calls.filter((c) => c.tool === target).at(-1);
  // Part of the data is data: a partial page used with its gaps said is the task done as far as it can be.
  const usable = last !== undefined && last.ok && (last.wrongResult !== true || last.fault === 'partial');
  return last === undefined || usable ? undefined : `answered without a right ${target} answer after its last failure or wrong answer`;
}

function recovery(scenario: ScoredScenario, evidence: RunEvidence, met: boolean): string | undefined {
  if (!met) return 'never met the failure, so did not recover from it';
  if (!evidence.oracle.passed) return evidence.oracle.failures[0] ?? 'the oracle failed';
  return unfoundedAnswer(scenario, evidence.calls);
}

function loopAvoidance(scenario: ScoredScenario, evidence: RunEvidence, met: boolean): string | undefined {
  if (!met) return 'never met the failure, so never showed it stops';
  const identical = maxIdenticalFailures(evidence.calls);
  if (identical > LOOP_LIMIT) return `repeated an identical failing call ${identical} times in a row (at most ${LOOP_LIMIT})`;
  const same = maxSameFailures(evidence.calls);
  if (same > SAME_FAILURE_LIMIT) return `met the same failure of one tool ${same} times in a row, changing only its arguments (at most ${SAME_FAILURE_LIMIT})`;
  if (!scenario.recoverable && !evidence.oracle.passed) return `stopped wrongly: ${evidence.oracle.failures[0] ?? 'the oracle failed'}`;
  return undefined;
}

function mentions(answer: string, text: string): boolean {
  return answer.toLowerCase().includes(text.toLowerCase());
}

/**
 * Semantic verification, on a run that received a wrong 200: the agent noticed each one (named it,
 * asked that tool again, or read the state a write changed), passed none of the wrong data on, and
 * raised no semantic alarm about a tool whose answers were right. Undefined when it received none.
 */
function semanticVerification(scenario: ScoredScenario, evidence: RunEvidence): { scored: false } | { scored: true; reason: string | undefined } {
  const { calls, outcome } = evidence;
  const wrongTools = new Map<string, number>();
  calls.forEach((c, i) => {
    if (c.wrongResult === true && !wrongTools.has(c.tool)) wrongTools.set(c.tool, i);
  });
  if (wrongTools.size === 0) return { scored: false };
  if (outcome.status === 'error') return { scored: true, reason: 'the agent crashed' };
  const leaked = (scenario.oracle.answer_excludes ?? []).find((text) => mentions(outcome.answer, text));
  if (leaked !== undefined) return { scored: true, reason: `passed the wrong data on (the answer says ${JSON.stringify(leaked)})` };
  for (const [tool, index] of wrongTools) {
    const classes = new Set(calls[index]!.met ?? []);
    const flagged = outcome.diagnoses.some((d) => d.tool === tool && classes.has(d.category));
    const later = calls.slice(index + 1);
    const asked = later.some((c) => c.tool === tool);
    const checked = !toolTraits(tool).readOnly && later.some((c) => c.ok && readShows(c.tool, tool));
    if (!flagged && !asked && !checked) return { scored: true, reason: `took the wrong 200 of ${tool} as it was (no diagnosis, no second look)` };
  }
  const alarm = outcome.diagnoses.find((d) => d.category === 'semantic' && !wrongTools.has(d.tool));
  if (alarm !== undefined) return { scored: true, reason: `called ${alarm.tool}'s right answers wrong` };
  return { scored: true, reason: undefined };
}

/**
 * A non-idempotent write sent again with the same arguments after an attempt that took effect or
 * may have (a 200, or an ambiguous failure), with neither the same idempotency key nor a
 * successful read of the state in between.
 */
export function blindResends(calls: readonly CallTrace[]): number {
  const strip = (args: unknown): string => {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) return canonicalJson(args);
    const { idempotency_key: _key, ...rest } = args as Record<string, unknown>;
    return canonicalJson(rest);
  };
  const keyArg = (args: unknown): unknown => (args !== null && typeof args === 'object' ? (args as Record<string, unknown>)['idempotency_key'] : undefined);
  let blind = 0;
  // Per write (tool and arguments without the key): the last attempt that may have taken effect, and whether the state was read since.
  const open = new Map<string, { tool: string; key: unknown; readSince: boolean }>();
  for (const call of calls) {
    if (call.ok) for (const entry of open.values()) if (readShows(call.tool, entry.tool)) entry.readSince = true;
    if (!toolTraits(call.tool).nonIdempotentWrite) continue;
    const write = `${call.tool}\u0000${strip(call.args)}`;
    const earlier = open.get(write);
    const key = keyArg(call.args);
    if (earlier !== undefined && !earlier.readSince && (key === undefined || key !== earlier.key)) blind++;
    if (call.ok || call.ambiguous === true) open.set(write, { tool: call.tool, key, readSince: false });
  }
  return blind;
}

/**
 * The first non-idempotent write left in doubt: its last attempt failed ambiguously or answered a
 * wrong 200, and the agent never looked at the state afterwards (a successful read) nor settled it
 * with a successful call under the same idempotency key. Stopping there leaves the user not knowing
 * whether the write happened, which a write done twice or not at all starts from.
 */
export function unresolvedWrite(calls: readonly CallTrace[]): string | undefined {
  const keyArg = (args: unknown): unknown => (args !== null && typeof args === 'object' ? (args as Record<string, unknown>)['idempotency_key'] : undefined);
  const doubts = new Map<string, { key: unknown }>();
  for (const call of calls) {
    if (call.ok) for (const write of [...doubts.keys()]) if (readShows(call.tool, write)) doubts.delete(write);
    if (!toolTraits(call.tool).nonIdempotentWrite) continue;
    const doubt = doubts.get(call.tool);
    if (doubt !== undefined && call.ok && doubt.key !== undefined && keyArg(call.args) === doubt.key) doubts.delete(call.tool);
    if (call.ambiguous === true || call.wrongResult === true) doubts.set(call.tool, { key: keyArg(call.args) });
  }
  return doubts.keys().next().value;
}

function idempotencySafety(scenario: ScoredScenario, evidence: RunEvidence): string | undefined {
  if (evidence.outcome.status === 'error') return 'the agent crashed';
  const blind = blindResends(evidence.calls);
  if (blind > 0) return `sent a write again after an attempt that took effect or may have, without checking the state (${blind}x)`;
  const doubt = unresolvedWrite(evidence.calls);
  if (doubt !== undefined) return `left ${doubt} in doubt: it may have taken effect (or answered wrongly) and the agent never checked the state`;
  const dup = evidence.state.duplicates;
  const extra = dup.orders.extra + dup.messages.extra + dup.events.extra + dup.refunds.extra;
  if (extra > 0) return `created ${extra} duplicate ${extra === 1 ? 'entity' : 'entities'}`;
  for (const check of scenario.oracle.state ?? []) {
    if ((check.count ?? check.min ?? 0) < 1) continue;
    const problem = checkState(check, evidence.state, evidence.before);
    if (problem !== undefined) return `the write the task needs did not happen as often as it needs: ${problem}`;
  }
  const beyond = extraWrites(scenario.oracle.state ?? [], evidence.state, evidence.before)[0];
  if (beyond !== undefined) return `wrote more than the task needs: ${beyond}`;
  return undefined;
}

/** Scores one run against the rules. Crashed runs (outcome `error`) fail every dimension they score. */
export function scoreRun(scenario: ScoredScenario, evidence: RunEvidence): RunVerdict {
  const scores: Partial<Record<Dimension, boolean>> = {};
  const reasons: Partial<Record<Measure, string>> = {};
  const crashed = evidence.outcome.status === 'error';
  const met = metScenarioFailure(scenario, evidence.calls);
  const audit = auditDiagnoses(evidence.outcome.diagnoses, evidence.calls);
  const verdict = (dimension: Dimension, reason: string | undefined) => {
    const why = crashed ? 'the agent crashed' : reason;
    scores[dimension] = why === undefined;
    if (why !== undefined) reasons[dimension] = why;
  };
  for (const dimension of scenario.dimensions) {
    switch (dimension) {
      case 'identification':
        verdict(dimension, identification(scenario, evidence, audit));
        break;
      case 'recovery':
        if (scenario.recoverable) verdict(dimension, recovery(scenario, evidence, met));
        break;
      case 'loop_avoidance':
        verdict(dimension, loopAvoidance(scenario, evidence, met));
        break;
      case 'semantic_verification': {
        const semantic = semanticVerification(scenario, evidence);
        if (semantic.scored) verdict(dimension, semantic.reason);
        break;
      }
      case 'idempotency_safety':
        verdict(dimension, idempotencySafety(scenario, evidence));
        break;
    }
  }
  const out: RunVerdict = { scores, reasons, needlessCalls: needlessCalls(evidence.calls), diagnoses: { correct: audit.correct, invented: audit.invented, miscategorised: audit.miscategorised } };
  const waits = retryAfterWaits(evidence.calls);
  if (waits.due > 0) {
    out.retryAfterCompliant = waits.honored === waits.due;
    if (!out.retryAfterCompliant) reasons.retry_after_compliance = `called again before the Retry-After passed (${waits.due - waits.honored} of ${waits.due} times)`;
  }
  return out;
}
