/**
 * The LLM semantic judge (`--judge llm:<model>`, seed 000 2.2): for each successful call of a
 * trajectory with an intent, asks an OpenAI-compatible chat.completions endpoint whether the
 * result satisfies the intent, and gets back a structured verdict (JSON-schema
 * `response_format`, validated here). A call that misses the intent becomes a `semantic_error`
 * label with the judge's reason, mismatch kind and confidence.
 *
 * Endpoint failures go through the model adapters' HTTP edge and retry policy (429 and 5xx
 * retried with Retry-After honoured). A reply that is not a valid verdict is asked again once;
 * when a step still has no verdict it gets a `judge_error` label and the run goes on. Only an
 * endpoint that refuses the request outright (bad key, unknown model) stops the run.
 * Verdicts are cached (see judge-cache.ts); secrets are redacted before a request is built.
 */
import { ConfigError } from '../../core/errors.js';
import { createJsonChat, type JsonChatOptions } from '../../llm/json-chat.js';
import type { Redactor } from '../../record/redact.js';
import type { Trajectory, TrajectoryLabel, TrajectoryStep } from '../../core/trajectory-types.js';
import { outcomeIsOpen, type OutcomeJudgement } from '../inferred-outcome.js';
import { JUDGE_ERROR, type Label } from '../label.js';
import { isSucceeded } from '../step-facts.js';
import { judgeCacheKey, memoryJudgeCache, type JudgeCache } from './judge-cache.js';
import { closingAnswer, inferOutcomeFromConversation } from './final-answer.js';
import { JUDGE_SYSTEM_PROMPT, OUTCOME_QUESTION, OUTCOME_SCHEMA, OUTCOME_SYSTEM_PROMPT, parseVerdict, questionFor, questionText, VERDICT_SCHEMA, type JudgeQuestion, type Verdict } from './llm-verdict.js';
import { defaultRedactor } from '../../record/redact.js';
import { truncateText } from '../../record/truncate.js';

/** The endpoint options (model, base URL, key, retries, clock) are the JSON chat's. */
export interface LlmJudgeOptions extends Omit<JsonChatOptions, 'provider'> {
  /** Default: in memory only. */
  cache?: JudgeCache;
  /** Steps of one trajectory judged at once. Default 4. */
  concurrency?: number;
  redactor?: Redactor;
  /** Output characters sent per step. Default 2000. */
  maxOutputChars?: number;
  /** The intent a step served. Default: the step's own `intent`, else the trajectory's `task_description`. */
  intentOf?: (step: TrajectoryStep, trajectory: Trajectory) => string | null;
}

/** What the judge found in one trajectory. */
export interface LlmJudgement {
  /** `semantic_error` labels for calls that miss the intent. */
  labels: Label[];
  /** `judge_error` labels for steps the judge could not give a verdict on. */
  errors: TrajectoryLabel[];
  /** For a trajectory whose log states no outcome: the outcome the judge read from the conversation. */
  outcome?: OutcomeJudgement;
}

export interface LlmJudgeStats {
  /** HTTP requests sent (retries included). */
  requests: number;
  cache_hits: number;
  verdicts: number;
  errors: number;
}

export interface LlmJudge {
  /** `judge:llm:<model>`: the `source` of its labels. */
  readonly source: string;
  readonly stats: Readonly<LlmJudgeStats>;
  judgeTrajectory(trajectory: Trajectory): Promise<LlmJudgement>;
}

type StepVerdict = { ok: true; verdict: Verdict } | { ok: false; why: string };

/**
 * Creates the judge.
 * @example
 * const judge = createLlmJudge({ model: 'gpt-4o-mini', env: process.env, cache: fileJudgeCache(path, 'gpt-4o-mini') });
 * const { labels, errors } = await judge.judgeTrajectory(trajectory);
 */
export function createLlmJudge(options: LlmJudgeOptions): LlmJudge {
  const chat = createJsonChat({ ...options, provider: 'judge' });
  const model = chat.model;
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new ConfigError('judge: concurrency must be a positive integer', 'concurrency');
  const cache = options.cache ?? memoryJudgeCache();
  const source = `judge:llm:${model}`;
  const counts = { cache_hits: 0, verdicts: 0, errors: 0 };
  const stats: LlmJudgeStats = {
    get requests() {
      return chat.requests;
    },
    get cache_hits() {
      return counts.cache_hits;
    },
    get verdicts() {
      return counts.verdicts;
    },
    get errors() {
      return counts.errors;
    },
  };

  async function verdictFor(question: JudgeQuestion, kind: 'step' | 'outcome' = 'step'): Promise<StepVerdict> {
    const key = judgeCacheKey(model, question);
    const cached = cache.get(key);
    if (cached !== undefined) {
      counts.cache_hits++;
      return { ok: true, verdict: cached };
    }
    let why = '';
    // A reply that is not a valid verdict is asked again once: sampling noise, not an outage.
    for (let round = 0; round < 2; round++) {
      const reply = await chat.ask(
        kind === 'step'
          ? { system: JUDGE_SYSTEM_PROMPT, user: questionText(question), schemaName: 'tool_call_verdict', schema: VERDICT_SCHEMA }
          : { system: OUTCOME_SYSTEM_PROMPT, user: questionText(question), schemaName: 'task_outcome_verdict', schema: OUTCOME_SCHEMA },
      );
      if (!reply.ok) return reply;
      const parsed = parseVerdict(reply.text);
      if (parsed.ok) {
        cache.put(key, parsed.verdict);
        return parsed;
      }
      why = parsed.why;
    }
    return { ok: false, why: `no valid verdict after 2 replies: ${why}` };
  }

  /**
   * The task's outcome for a log that states none, from its closing answer and its calls. With
   * no verdict from the model, the heuristic reading stands in, under its own name.
   */
  async function outcomeFor(trajectory: Trajectory): Promise<OutcomeJudgement | undefined> {
    if (!outcomeIsOpen(trajectory)) return undefined;
    const answer = closingAnswer(trajectory);
    // A conversation cut off after a call tells nothing of how it ended: nothing to ask.
    if (answer === null || answer.trim() === '') return undefined;
    const redactor = options.redactor ?? defaultRedactor;
    const max = options.maxOutputChars ?? 2000;
    const text = redactor.text(answer);
    const question: JudgeQuestion = {
      intent: redactor.text(trajectory.task_description ?? ''),
      tool: OUTCOME_QUESTION,
      params: { calls: trajectory.steps.map((s) => ({ tool: s.tool_name, status: s.status, ...(s.response.error_code === undefined ? {} : { error: s.response.error_code }) })) },
      output: text.length > max ? `${truncateText(text, max)}... [truncated]` : text,
      started_at: null,
    };
    const result = await verdictFor(question, 'outcome');
    if (!result.ok) {
      counts.errors++;
      return { inferred: inferOutcomeFromConversation(trajectory), by: 'judge:heuristic' };
    }
    counts.verdicts++;
    const { verdict } = result;
    return { inferred: { outcome: verdict.satisfies ? 'success' : 'failure', confidence: verdict.confidence, evidence: `llm:${JSON.stringify(verdict.reason)}` }, by: source };
  }

  return {
    source,
    stats,
    async judgeTrajectory(trajectory) {
      const outcome = outcomeFor(trajectory);
      const asked: { step: TrajectoryStep; question: JudgeQuestion }[] = [];
      for (const step of trajectory.steps) {
        if (!isSucceeded(step)) continue;
        const intent = options.intentOf?.(step, trajectory) ?? step.intent ?? trajectory.task_description;
        if (intent === null || intent.trim() === '') continue;
        asked.push({ step, question: questionFor(intent, step, { ...(options.redactor === undefined ? {} : { redactor: options.redactor }), ...(options.maxOutputChars === undefined ? {} : { maxOutputChars: options.maxOutputChars }) }) });
      }
      const verdicts = await mapLimited(asked, concurrency, ({ question }) => verdictFor(question));
      const judgement: LlmJudgement = { labels: [], errors: [] };
      verdicts.forEach((result, i) => {
        const { step } = asked[i]!;
        if (!result.ok) {
          counts.errors++;
          judgement.errors.push({ name: JUDGE_ERROR, step_index: step.step_index, confidence: 0, reason: result.why, source });
          return;
        }
        counts.verdicts++;
        const { verdict } = result;
        if (verdict.satisfies) return;
        const label: Label = { name: 'semantic_error', step_index: step.step_index, confidence: verdict.confidence, reason: verdict.reason, source };
        if (verdict.mismatch_kind !== null) label.mismatch_kind = verdict.mismatch_kind;
        judgement.labels.push(label);
      });
      const inferred = await outcome;
      if (inferred !== undefined) judgement.outcome = inferred;
      return judgement;
    },
  };
}

/** `map` with at most `limit` calls in flight, results in input order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
