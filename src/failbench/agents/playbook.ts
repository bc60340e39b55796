/**
 * The reference agents' executor: it reads the instruction, plans the calls, runs them, and
 * handles what goes wrong according to a set of rules. The rules are the playbook of seed 004
 * section 4 (read the error, classify it, act on the class, verify before trusting) and each can
 * be switched to the anti-pattern seed 000 warns about, so the robust agent, the naive agent and
 * the ablations in between are one program with different rules, never different code paths
 * per scenario.
 */
import type { FailureCategory } from '../../core/taxonomy.js';
import type { AgentOutcome, AgentTask, AgentTool, AssistedInfo, Diagnosis } from '../types.js';
import { checkResult, missingParts, type Mismatch } from './check-result.js';
import { numberWord, parseIntent, type Language } from './intent.js';
import { readFailure, type FailureView, type Issue } from './read-failure.js';
import { buildPlan, type Step } from './task-plan.js';

/** How the agent handles failures. Each field is one habit, good or bad. */
export interface PlaybookRules {
  /** Identical failing calls it makes before it stops repeating one. Seed 000: more than 3 is a loop. */
  maxIdenticalFailures: number;
  /** Acts on the failure's class; false retries everything the same way ("maybe it works now"). */
  classify: boolean;
  /** Waits out Retry-After before calling a rate-limited tool again. */
  honorRetryAfter: boolean;
  /** Waits with a growing delay before retrying a transient failure. */
  backoff: boolean;
  /** On 401/403: escalate without touching the arguments; false edits an argument and tries again. */
  escalateAuth: boolean;
  /** Fixes the arguments a validation error names; false repeats them unchanged. */
  fixParameters: boolean;
  /** Checks every 200 against the request and flags missing fields; false trusts it. */
  verifyResults: boolean;
  /**
   * Idempotency keys on writes that take them, and a state check before repeating an ambiguous
   * write or one whose answer looks wrong; false repeats the write instead.
   */
  protectWrites: boolean;
  /** Stops the later steps when one they depend on failed. */
  stopOnFailure: boolean;
  /** Ends with gave_up / escalated when the task could not be done; false always claims completion. */
  honestOutcome: boolean;
  /**
   * Diagnoses from the evidence; 'guess' blames its own parameters, as seed 004 describes;
   * 'feedback' names the runtime's classification when a failure carries one, else guesses.
   */
  diagnoses: 'evidence' | 'guess' | 'feedback';
  /**
   * Does what an assisted failure's feedback says (`action`, `retryable`, `retryAfterMs`) instead
   * of the rules above; a failure without feedback (raw mode) is handled by the rules.
   */
  followFeedback?: boolean;
}

export const ROBUST_RULES: Readonly<PlaybookRules> = {
  maxIdenticalFailures: 3,
  classify: true,
  honorRetryAfter: true,
  backoff: true,
  escalateAuth: true,
  fixParameters: true,
  verifyResults: true,
  protectWrites: true,
  stopOnFailure: true,
  honestOutcome: true,
  diagnoses: 'evidence',
};

/** Seed 000's anti-patterns, all at once. */
export const NAIVE_RULES: Readonly<PlaybookRules> = {
  maxIdenticalFailures: 8,
  classify: false,
  honorRetryAfter: false,
  backoff: false,
  escalateAuth: false,
  fixParameters: false,
  verifyResults: false,
  protectWrites: false,
  stopOnFailure: false,
  honestOutcome: false,
  diagnoses: 'guess',
};

/**
 * The naive agent's habits, but every failure that carries the runtime's feedback is handled as
 * that feedback says: what the feedback is worth to an agent with no judgement of its own.
 */
export const FEEDBACK_RULES: Readonly<PlaybookRules> = { ...NAIVE_RULES, diagnoses: 'feedback', followFeedback: true };

/**
 * What a sampling agent may do at one decision instead of what its rules say (see sampler.ts):
 * `playbook` follows the rules, `naive` applies {@link NAIVE_RULES} to this decision, `retry`
 * repeats the call at once, `give_up` / `escalate` end the task there.
 */
export type PlaybookChoice = 'playbook' | 'naive' | 'retry' | 'give_up' | 'escalate';

/**
 * Asked at each decision after a failed call (`failure`) or a 200 that does not match the
 * request (`mismatch`); undefined means: follow the rules.
 */
export type ChoosePlaybookAction = (moment: { tool: string; kind: 'failure' | 'mismatch' }) => PlaybookChoice | undefined;

/** Backoff before retry n (1-based) of a transient failure. */
const BACKOFF_MS = [2_000, 4_000, 8_000];
/** Re-queries of a read whose answer did not match the request. */
const MAX_REQUERIES = 2;
/** Calls one step may make in all, whatever happens. */
const MAX_CALLS_PER_STEP = 10;

type Obj = Record<string, unknown>;
const asObject = (value: unknown): Obj | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined);

type StepEnd =
  | { ok: true; output: unknown; args: Obj; notes: string[] }
  | { ok: false; outcome: 'gave_up' | 'escalated'; reason: string; args: Obj | undefined; byFeedback?: true };

/** What following a failure's feedback comes to: call again with these arguments, or end the step. */
type Obeyed = { kind: 'again'; args: Obj } | { kind: 'end'; end: StepEnd };

/** The wait when feedback says to wait but not for how long. */
const UNSTATED_WAIT_MS = 1_000;

const TEXT: Record<Language, { done: string; gaveUp: string; escalated: string; missing: string; skipped: string; unverified: string }> = {
  en: { done: 'Done.', gaveUp: 'I could not finish the task.', escalated: 'This needs your action before I can continue.', missing: 'Not available in the result (partial data)', skipped: 'Skipped', unverified: 'Checked and corrected' },
  zh: { done: '已完成。', gaveUp: '任务未能完成。', escalated: '需要您处理后才能继续。', missing: '结果中缺少以下字段（部分数据）', skipped: '已跳过', unverified: '已核对并更正' },
};

function categoryLabel(f: FailureView): string {
  return `${f.category}/${f.type}${f.status !== undefined ? ` (HTTP ${f.status})` : f.code !== '' ? ` (${f.code})` : ''}`;
}

/** The closest allowed value by edit distance, if it is close enough to be the same word. */
function closest(received: string, allowed: readonly unknown[]): string | undefined {
  const distance = (a: string, b: string) => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) d[0]![j] = j;
    for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    return d[a.length]![b.length]!;
  };
  let best: { value: string; d: number } | undefined;
  for (const value of allowed) {
    if (typeof value !== 'string') continue;
    const d = distance(received.toLowerCase(), value.toLowerCase());
    if (best === undefined || d < best.d) best = { value, d };
  }
  return best !== undefined && best.d <= Math.max(2, Math.floor(best.value.length / 3)) ? best.value : undefined;
}

/** Arguments with what the validation issues name fixed, or undefined when nothing could be. */
function fixArguments(args: Obj, issues: readonly Issue[], tool: AgentTool | undefined): Obj | undefined {
  const fixed: Obj = structuredClone(args);
  let changed = false;
  const properties = (tool?.inputSchema['properties'] ?? {}) as Record<string, Obj>;
  for (const issue of issues) {
    const field = issue.path.split(/[.[]/)[0] ?? '';
    const current = fixed[field];
    if (issue.code === 'unknown_property' && field in fixed) {
      delete fixed[field];
      changed = true;
      continue;
    }
    const allowed = Array.isArray(issue.expected) ? issue.expected : Array.isArray(properties[field]?.['enum']) ? (properties[field]['enum'] as unknown[]) : undefined;
    if (typeof current === 'string' && allowed !== undefined) {
      const value = closest(current, allowed);
      if (value !== undefined && value !== current) {
        fixed[field] = value;
        changed = true;
      }
      continue;
    }
    const wanted = issue.expected ?? properties[field]?.['type'];
    if (typeof current === 'string' && (wanted === 'integer' || wanted === 'number')) {
      const n = numberWord(current) ?? Number(current);
      if (Number.isFinite(n)) {
        fixed[field] = n;
        changed = true;
      }
    }
  }
  return changed ? fixed : undefined;
}

/** The seed's hallucinated fix: change some argument and hope. */
function tweakArguments(args: Obj, attempt: number): Obj {
  const out = structuredClone(args);
  for (const [key, value] of Object.entries(out)) {
    if (typeof value === 'string' && key !== 'idempotency_key') {
      out[key] = attempt % 2 === 1 ? value.toLowerCase() : value.toUpperCase();
      return out;
    }
  }
  return out;
}

function decode(output: unknown): { ok: true; value: unknown } | { ok: false } {
  if (typeof output !== 'string') return { ok: true, value: output };
  try {
    return { ok: true, value: JSON.parse(output) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Runs one task under a set of rules. */
export class PlaybookRun {
  private readonly diagnoses: Diagnosis[] = [];
  private readonly outputs = new Map<string, { args: Obj; output: unknown }>();
  private readonly started: number;
  /** What the agent itself waited: its sense of "now" for freshness checks. */
  private elapsed = 0;
  private lang: Language = 'en';

  constructor(
    private readonly task: AgentTask,
    private readonly rules: PlaybookRules,
    private readonly choose?: ChoosePlaybookAction,
  ) {
    this.started = Date.parse(task.now);
  }

  private now(): number {
    return this.started + this.elapsed;
  }

  private async sleep(ms: number): Promise<void> {
    this.elapsed += ms;
    await this.task.sleep(ms);
  }

  /** `classified`: the category and type are the runtime's (an assisted failure), not the agent's reading. */
  private diagnose(tool: string, category: FailureCategory | 'semantic', type: string, note: string, classified = false): void {
    if (this.rules.diagnoses === 'guess' || (this.rules.diagnoses === 'feedback' && !classified)) {
      // Seed 004: without reading the error, the agent makes up a cause, usually its own arguments.
      if (category === 'semantic') return;
      category = 'parameter';
      type = 'invalid_parameter';
      note = 'the parameters were probably wrong';
    }
    if (this.diagnoses.some((d) => d.tool === tool && d.category === category && d.type === type)) return;
    this.diagnoses.push({ tool, category, type, note });
  }

  private tool(name: string): AgentTool | undefined {
    return this.task.tools.find((t) => t.name === name);
  }

  async run(): Promise<AgentOutcome> {
    const intent = parseIntent(this.task.instruction);
    const plan = buildPlan(intent, { nowMs: this.started, tools: new Set(this.task.tools.map((t) => t.name)), taskId: this.task.id });
    this.lang = intent.language;
    const text = TEXT[intent.language];
    if (plan === undefined) return { status: this.rules.honestOutcome ? 'gave_up' : 'completed', answer: `${text.gaveUp} I did not understand what to do with the tools available.`, diagnoses: [] };

    const lines: string[] = [];
    const notes: string[] = [];
    let failure: Extract<StepEnd, { ok: false }> | undefined;
    for (const step of plan.steps) {
      if (failure !== undefined && (this.rules.stopOnFailure || failure.byFeedback === true)) break;
      const gate = step.when?.(this.outputs);
      if (gate !== undefined && !gate.run) {
        if (gate.done) notes.push(`${text.skipped}: ${gate.why}.`);
        else failure ??= { ok: false, outcome: 'gave_up', reason: `${gate.why}.`, args: undefined };
        continue;
      }
      const args = step.args(this.outputs) ?? (this.rules.stopOnFailure ? undefined : this.pressOnArgs(step));
      if (args === undefined) {
        failure ??= { ok: false, outcome: 'gave_up', reason: `${step.tool} was not called: what it needs is missing`, args: undefined };
        continue;
      }
      const end = await this.runStep(step, args);
      if (!end.ok) {
        failure ??= end;
        continue;
      }
      this.outputs.set(step.key, { args: end.args, output: end.output });
      lines.push(step.summary(end.output, end.args));
      notes.push(...end.notes);
    }

    const diagnoses = [...this.diagnoses];
    if (failure === undefined) {
      return { status: 'completed', answer: [text.done, ...lines, ...notes].join('\n'), diagnoses };
    }
    // Feedback that says to stop or to escalate is followed to the end: the outcome says so.
    if (!this.rules.honestOutcome && failure.byFeedback !== true) return { status: 'completed', answer: [text.done, ...lines].join('\n'), diagnoses };
    const head = failure.outcome === 'escalated' ? text.escalated : text.gaveUp;
    return { status: failure.outcome, answer: [head, failure.reason, ...lines, ...notes].join('\n'), diagnoses };
  }

  /** What a "carry on regardless" agent sends when the data it needed never arrived. */
  private pressOnArgs(step: Step): Obj | undefined {
    const placeholder = new Map<string, { args: Obj; output: unknown }>();
    for (const [key, value] of this.outputs) placeholder.set(key, value);
    placeholder.set('main', this.outputs.get('main') ?? { args: {}, output: {} });
    return step.args(placeholder);
  }

  private async runStep(step: Step, initial: Obj): Promise<StepEnd> {
    let rules: Readonly<PlaybookRules> = this.rules;
    let args = initial;
    const tool = this.tool(step.tool);
    const takesKey = tool !== undefined && Object.hasOwn((tool.inputSchema['properties'] ?? {}) as object, 'idempotency_key');
    if (!(rules.protectWrites && takesKey)) {
      args = structuredClone(args);
      delete args['idempotency_key'];
    }
    const notes: string[] = [];
    const tried = new Set<string>();
    let identical = 0;
    let lastKey = '';
    let requeries = 0;
    let calls = 0;
    let suggestionUsed = false;
    /** A write that answered 200 without taking effect is sent once more, no more. */
    let resent = false;

    for (;;) {
      if (calls >= MAX_CALLS_PER_STEP) return { ok: false, outcome: 'gave_up', reason: `${step.tool} kept failing; stopped after ${calls} calls`, args };
      const key = JSON.stringify(args);
      tried.add(key);
      if (key !== lastKey) identical = 0;
      lastKey = key;
      calls++;
      const result = await this.task.callTool(step.tool, args);
      if (result.ok) {
        const decoded = decode(result.output);
        if (!decoded.ok) {
          this.diagnose(step.tool, 'system', 'malformed_response', 'the response body is not valid JSON');
          identical++;
          if (step.write && rules.protectWrites) {
            const found = await this.confirm(step, args);
            if (found !== undefined) return { ok: true, output: found, args, notes };
          }
          if (identical >= rules.maxIdenticalFailures) return { ok: false, outcome: 'gave_up', reason: `${step.tool} kept returning a body that is not valid JSON`, args };
          if (rules.backoff) await this.sleep(BACKOFF_MS[Math.min(identical, BACKOFF_MS.length) - 1]!);
          continue;
        }
        const output = decoded.value;
        if (rules.verifyResults) {
          const mismatches = [...checkResult(step.tool, args, output, { ...step.check, nowMs: this.now() }), ...(step.verify?.(output, this.outputs) ?? [])];
          if (mismatches.length > 0) {
            const choice = this.choose?.({ tool: step.tool, kind: 'mismatch' });
            if (choice === 'naive') return { ok: true, output, args, notes };
            if (choice === 'retry') continue;
            if (choice === 'give_up' || choice === 'escalate') return this.stopHere(choice, step.tool, 'its result did not match the request', args);
            const end = await this.onMismatch(step, args, mismatches, requeries);
            if (end === 'requery') {
              requeries++;
              continue;
            }
            if (end.ok) notes.push(...end.notes);
            return end;
          }
          const missing = missingParts(step.tool, output);
          if (missing.length > 0) {
            this.diagnose(step.tool, 'business', 'partial_result', `missing: ${missing.join(', ')}`);
            notes.push(`${TEXT[this.language()].missing}: ${missing.join(', ')}.`);
          }
          if (step.write && step.confirm !== undefined) {
            // A 200 is the service's word, not the state: read the change back before relying on it.
            const state = await this.checkState(step, args);
            if (state.kind === 'missing') {
              const choice = this.choose?.({ tool: step.tool, kind: 'mismatch' });
              if (choice === 'naive') return { ok: true, output, args, notes };
              if (choice === 'give_up' || choice === 'escalate') return this.stopHere(choice, step.tool, 'the change it answered 200 for is not there', args);
              if (!resent) {
                resent = true;
                notes.push(`${step.tool} answered 200 but the change was not there; it was sent once more.`);
                continue;
              }
              this.diagnose(step.tool, 'semantic', 'write_not_applied', 'it answered 200, but the change is not there');
              return { ok: false, outcome: 'escalated', reason: `${step.tool} answered 200 twice, but the change is not there. Please check it.`, args };
            }
            // Sent again because the read did not show it: a service that answers with the first
            // write (its idempotency key) says the write was there and the read was behind.
            if (resent) this.blameMissingChange(step, args, asObject(output)?.['replayed'] === true);
          }
        }
        return { ok: true, output, args, notes };
      }

      const f = readFailure(result, this.now());
      if (f.code === 'BUDGET_EXHAUSTED') return { ok: false, outcome: 'gave_up', reason: 'the call budget ran out', args };
      this.diagnose(step.tool, f.category, f.type, `${f.code}${f.status !== undefined ? ` / HTTP ${f.status}` : ''}`, result.assisted !== undefined);
      identical++;
      if (this.rules.followFeedback === true && result.assisted !== undefined) {
        if (identical >= this.rules.maxIdenticalFailures) return { ok: false, outcome: 'gave_up', reason: `${step.tool} failed ${identical} times in a row: ${categoryLabel(f)}`, args };
        const next = await this.obey(step, args, result.assisted, f, tried);
        if (next.kind === 'end') return next.end;
        args = next.args;
        continue;
      }
      const choice = this.choose?.({ tool: step.tool, kind: 'failure' });
      if (choice === 'retry') continue;
      if (choice === 'give_up' || choice === 'escalate') return this.stopHere(choice, step.tool, categoryLabel(f), args);
      rules = choice === 'naive' ? NAIVE_RULES : this.rules;

      if (!rules.classify) {
        // Without reading the error every failure looks like bad luck, or (a 401) like bad arguments.
        if (identical >= rules.maxIdenticalFailures || calls >= rules.maxIdenticalFailures) return { ok: false, outcome: 'gave_up', reason: `${step.tool} failed ${calls} times: ${categoryLabel(f)}`, args };
        if (f.category === 'auth' && !rules.escalateAuth) args = tweakArguments(args, calls);
        if (rules.backoff) await this.sleep(BACKOFF_MS[Math.min(identical, BACKOFF_MS.length) - 1]!);
        continue;
      }

      switch (f.category) {
        case 'auth': {
          if (rules.escalateAuth) return { ok: false, outcome: 'escalated', reason: `${step.tool} rejected the credentials: ${categoryLabel(f)}. Please renew or grant access; changing the request would not help.`, args };
          // The anti-pattern: blame the arguments and try "fixed" ones.
          if (calls >= rules.maxIdenticalFailures) return { ok: false, outcome: 'gave_up', reason: `${step.tool} kept failing: ${categoryLabel(f)}`, args };
          args = tweakArguments(args, calls);
          continue;
        }
        case 'parameter': {
          const fixed = rules.fixParameters ? fixArguments(args, f.issues, tool) : undefined;
          if (fixed !== undefined && !tried.has(JSON.stringify(fixed))) {
            notes.push(`Corrected the arguments of ${step.tool} as its validation error asked (${f.issues.map((i) => i.path).join(', ')}).`);
            args = fixed;
            continue;
          }
          if (rules.fixParameters || identical >= rules.maxIdenticalFailures) return { ok: false, outcome: 'gave_up', reason: this.parameterReason(step.tool, f), args };
          continue;
        }
        case 'business': {
          if (f.type === 'partial_result' && f.partial !== undefined) {
            notes.push(`${TEXT[this.language()].missing}: ${step.tool}.`);
            return { ok: true, output: f.partial, args, notes };
          }
          const suggestions = f.details['suggestions'];
          if (f.type === 'not_found' && rules.fixParameters && !suggestionUsed && Array.isArray(suggestions) && typeof suggestions[0] === 'string') {
            const field = Object.keys(args).find((k) => typeof args[k] === 'string' && f.details[k] === args[k]);
            if (field !== undefined) {
              suggestionUsed = true;
              notes.push(`"${String(args[field])}" was not found; used the service's suggestion "${suggestions[0]}".`);
              args = { ...args, [field]: suggestions[0] };
              continue;
            }
          }
          // A write refused because of the state it would change may mean it already happened
          // (an earlier attempt whose answer was lost, or one the runtime retried): look first.
          if ((f.type === 'conflict' || f.type === 'precondition_failed') && step.write && rules.protectWrites) {
            const found = await this.confirm(step, args);
            if (found !== undefined) {
              // Refused as already done after a read that did not show it: that read was behind.
              if (resent) this.blameMissingChange(step, args, true);
              return { ok: true, output: found, args, notes };
            }
          }
          if (f.type === 'no_results') return { ok: true, output: { total: 0, results: [] }, args, notes };
          return { ok: false, outcome: 'gave_up', reason: `${step.tool} answered ${categoryLabel(f)}${this.detailText(f)}`, args };
        }
        case 'rate_limit': {
          if (identical >= rules.maxIdenticalFailures) return { ok: false, outcome: 'gave_up', reason: `${step.tool} is still rate limited after ${identical} tries`, args };
          const wait = rules.honorRetryAfter && f.retryAfterMs !== undefined ? f.retryAfterMs : rules.backoff ? BACKOFF_MS[Math.min(identical, BACKOFF_MS.length) - 1]! : 0;
          if (wait > 0) await this.sleep(wait);
          continue;
        }
        case 'semantic':
        case 'logic':
          // The runtime's own checks: the answer missed the request, or the runtime refused a
          // repeat. Sending the same call again cannot change either.
          return { ok: false, outcome: 'gave_up', reason: `${step.tool}: ${categoryLabel(f)}`, args };
        case 'network':
        case 'system': {
          if (step.write && f.ambiguous && rules.protectWrites) {
            const found = await this.confirm(step, args);
            if (found !== undefined) {
              notes.push(`${step.tool} failed with ${categoryLabel(f)} but had gone through; it was not repeated.`);
              return { ok: true, output: found, args, notes };
            }
            if (step.confirm === undefined && !takesKey) {
              return { ok: false, outcome: 'escalated', reason: `${step.tool} failed with ${categoryLabel(f)} and may have gone through; there is no way to check, so it was not repeated.`, args };
            }
          }
          if (identical >= rules.maxIdenticalFailures) return { ok: false, outcome: 'gave_up', reason: `${step.tool} failed ${identical} times in a row: ${categoryLabel(f)}`, args };
          // A 503 with Retry-After, or an open circuit that says when it closes, names its own wait.
          const backoff = rules.backoff ? BACKOFF_MS[Math.min(identical, BACKOFF_MS.length) - 1]! : 0;
          const wait = rules.honorRetryAfter && f.retryAfterMs !== undefined ? Math.max(backoff, f.retryAfterMs) : backoff;
          if (wait > 0) await this.sleep(wait);
          continue;
        }
      }
    }
  }

  /**
   * Does what a failure's feedback says, and nothing of the agent's own: no backoff of its own,
   * no check of its own, no other tool than the feedback points to. An action it cannot carry
   * out (fix arguments nothing names, try an alternative it is not told) ends the step, as the
   * feedback asks by not saying "call again".
   */
  private async obey(step: Step, args: Obj, feedback: AssistedInfo, f: FailureView, tried: ReadonlySet<string>): Promise<Obeyed> {
    const stop = (outcome: 'gave_up' | 'escalated', why: string): Obeyed => ({ kind: 'end', end: { ok: false, outcome, reason: `${step.tool}: ${categoryLabel(f)}; ${why}`, args, byFeedback: true } });
    const again = async (next: Obj, waitMs: number | undefined): Promise<Obeyed> => {
      if (waitMs !== undefined && waitMs > 0) await this.sleep(waitMs);
      return { kind: 'again', args: next };
    };
    switch (feedback.action) {
      case 'retry_with_fixed_params': {
        const fixed = fixArguments(args, f.issues, this.tool(step.tool));
        if (fixed === undefined || tried.has(JSON.stringify(fixed))) return stop('gave_up', 'the arguments need a change the error does not name.');
        return again(fixed, undefined);
      }
      case 'retry':
        return feedback.retryable ? again(args, feedback.retryAfterMs) : stop('gave_up', 'calling again cannot help.');
      case 'wait_and_retry':
        return again(args, feedback.retryAfterMs ?? UNSTATED_WAIT_MS);
      case 'verify_state': {
        // The feedback asks for the state before anything else; the step knows which read shows it.
        const state = step.write ? await this.checkState(step, args) : ({ kind: 'unknown' } as const);
        if (state.kind === 'found') return { kind: 'end', end: { ok: true, output: state.value, args, notes: [`${step.tool} failed with ${categoryLabel(f)} but had gone through; it was not repeated.`] } };
        if (state.kind === 'missing' && feedback.retryable) return again(args, feedback.retryAfterMs);
        return stop('escalated', 'it may have taken effect and the state could not settle it, so it was not repeated. Please check it.');
      }
      case 'use_partial':
        if (f.partial !== undefined) return { kind: 'end', end: { ok: true, output: f.partial, args, notes: [`${TEXT[this.language()].missing}: ${step.tool}.`] } };
        return stop('gave_up', 'only part of the result came back, and none of it with the failure.');
      case 'refresh_credential':
      case 'escalate_to_user':
        return stop('escalated', 'this needs your action.');
      case 'use_fallback':
      case 'try_alternative':
      case 'skip':
      case 'abort':
        return stop('gave_up', 'the step was left out, as the runtime advised.');
    }
  }

  /**
   * A write was sent again because reading the state back did not show it: either the first one
   * never took effect (a 200 for nothing), or it had and the read served an old copy.
   */
  private blameMissingChange(step: Step, args: Obj, wasThere: boolean): void {
    const read = step.confirm?.(args)?.tool;
    if (wasThere && read !== undefined) this.diagnose(read, 'semantic', 'stale_mismatch', `it did not show the ${step.tool} that had gone through`);
    else this.diagnose(step.tool, 'semantic', 'write_not_applied', 'it answered 200, but the change was not there');
  }

  private stopHere(choice: 'give_up' | 'escalate', tool: string, why: string, args: Obj): StepEnd {
    return { ok: false, outcome: choice === 'give_up' ? 'gave_up' : 'escalated', reason: `${tool}: ${why}; stopped there.`, args };
  }

  private language(): Language {
    return this.lang;
  }

  private detailText(f: FailureView): string {
    const entries = Object.entries(f.details).filter(([, v]) => v === null || typeof v !== 'object');
    return entries.length === 0 ? '' : ` (${entries.map(([k, v]) => `${k}: ${String(v)}`).join(', ')})`;
  }

  private parameterReason(tool: string, f: FailureView): string {
    const d = f.details;
    if (d['min'] !== undefined && d['max'] !== undefined) return `${tool} cannot serve ${String(d['received'] ?? 'that value')}: the valid range is ${String(d['min'])} to ${String(d['max'])}. Please choose a value in that range.`;
    return `${tool} rejected the request: ${categoryLabel(f)}${this.detailText(f)}. It needs a different request from you.`;
  }

  /** What to do when a 200 does not match the request. */
  private async onMismatch(step: Step, args: Obj, mismatches: Mismatch[], requeries: number): Promise<StepEnd | 'requery'> {
    const kinds = [...new Set(mismatches.map((m) => m.kind))];
    const fields = mismatches.map((m) => m.field).join(', ');
    const shape = kinds.every((k) => k === 'shape');
    this.diagnose(step.tool, shape ? 'system' : 'semantic', shape ? 'output_schema_mismatch' : `${kinds[0]!}_mismatch`, `the result does not match the request (${fields})`);
    const note = `${TEXT[this.language()].unverified}: ${step.tool} returned data that did not match the request (${fields}).`;
    if (step.write && !this.rules.protectWrites && requeries < MAX_REQUERIES) {
      // The anti-pattern: send the write again to get a better answer, doing it twice.
      return 'requery';
    }
    if (step.write) {
      // Repeating a write to "fix" its answer would do it twice: read the state instead.
      const found = await this.confirm(step, args);
      if (found !== undefined && checkResult(step.tool, args, found, { ...step.check, nowMs: this.now() }).length === 0) return { ok: true, output: found, args, notes: [note] };
      return { ok: false, outcome: 'escalated', reason: `${step.tool} answered with data that does not match the request (${fields}), and the stored state could not confirm it. Please check it.`, args };
    }
    if (requeries < MAX_REQUERIES) return 'requery';
    return { ok: false, outcome: 'gave_up', reason: `${step.tool} kept returning data that does not match the request (${fields}); I did not use it.`, args };
  }

  /** Looks up whether a write already happened. */
  private async confirm(step: Step, args: Obj): Promise<Obj | undefined> {
    const state = await this.checkState(step, args);
    return state.kind === 'found' ? state.value : undefined;
  }

  /** Reads whether a write is in the state: found, missing, or unknown when the read kept failing. */
  private async checkState(step: Step, args: Obj): Promise<{ kind: 'found'; value: Obj } | { kind: 'missing' } | { kind: 'unknown' }> {
    const confirmation = step.confirm?.(args);
    if (confirmation === undefined) return { kind: 'unknown' };
    for (let attempt = 0; attempt < 2; attempt++) {
      const result = await this.task.callTool(confirmation.tool, confirmation.args);
      if (result.ok) {
        const decoded = decode(result.output);
        if (!decoded.ok) return { kind: 'unknown' };
        const value = confirmation.find(decoded.value, this.outputs);
        return value === undefined ? { kind: 'missing' } : { kind: 'found', value };
      }
      const f = readFailure(result, this.now());
      // Nothing at that path yet is an answer, not a failure.
      if (f.type === 'not_found') return { kind: 'missing' };
      this.diagnose(confirmation.tool, f.category, f.type, f.code, result.assisted !== undefined);
      if (f.code === 'BUDGET_EXHAUSTED') return { kind: 'unknown' };
      if (this.rules.backoff) await this.sleep(f.retryAfterMs ?? BACKOFF_MS[0]!);
    }
    return { kind: 'unknown' };
  }
}
