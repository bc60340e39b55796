/**
 * What the LLM judge asks and what it must answer: the prompt (versioned, so a changed prompt
 * does not reuse old cached verdicts), the verdict's JSON Schema (sent as the structured-outputs
 * `response_format` and used to validate the reply), and the question built from one step with
 * its secrets redacted and its output cut short.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { defaultRedactor, type Redactor } from '../../record/redact.js';
import { toJsonText, truncateText } from '../../record/truncate.js';
import { jsonValue } from '../../core/deferred-json.js';
import type { TrajectoryStep } from '../../core/trajectory-types.js';

/** Bumped whenever the prompt or the schema changes meaning: part of every cache key. */
export const JUDGE_PROMPT_VERSION = 1;

export const MISMATCH_KINDS = ['date', 'timezone', 'entity', 'empty_under_narrow_filter', 'other'] as const;
export type MismatchKind = (typeof MISMATCH_KINDS)[number];

/** The judge's answer about one step. */
export interface Verdict {
  satisfies: boolean;
  reason: string;
  /** Null when the result satisfies the intent. */
  mismatch_kind: MismatchKind | null;
  /** 0..1: how sure the judge is of `satisfies`. */
  confidence: number;
}

/**
 * Strict structured outputs need every property required and no extra ones, so the optional
 * mismatch kind is a nullable enum rather than an optional property. Numeric bounds are left out
 * of what is sent (not every compatible endpoint accepts them in strict mode) and checked on
 * arrival instead (see {@link parseVerdict}).
 */
export const VERDICT_SCHEMA = {
  type: 'object',
  properties: {
    satisfies: { type: 'boolean', description: 'whether the call result satisfies the intent' },
    reason: { type: 'string', description: 'one sentence: why, naming the argument or result field that matters' },
    mismatch_kind: { type: ['string', 'null'], enum: [...MISMATCH_KINDS, null], description: 'null when it satisfies the intent' },
    confidence: { type: 'number', description: 'from 0 to 1' },
  },
  required: ['satisfies', 'reason', 'mismatch_kind', 'confidence'],
  additionalProperties: false,
} as const;

// Compiled on first use: the annotate command loads this module even when no LLM judge runs.
let validateVerdict: ValidateFunction<Verdict> | undefined;

/** The verdict in a reply's text, or why it is not one. */
export function parseVerdict(text: string): { ok: true; verdict: Verdict } | { ok: false; why: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, why: `the reply is not JSON: ${truncateText(text.trim(), 120) || '(empty)'}` };
  }
  validateVerdict ??= new Ajv({ allErrors: true, allowUnionTypes: true }).compile<Verdict>({
    ...VERDICT_SCHEMA,
    properties: { ...VERDICT_SCHEMA.properties, confidence: { type: 'number', minimum: 0, maximum: 1 } },
  });
  if (!validateVerdict(value)) {
    const errors = (validateVerdict.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
    return { ok: false, why: `the reply does not match the verdict schema: ${errors}` };
  }
  return { ok: true, verdict: value };
}

export const JUDGE_SYSTEM_PROMPT = [
  'You check tool calls made by an AI agent. A call can succeed and still miss what the user asked for:',
  'a relative date resolved to the wrong day, UTC confused with local time, the wrong city, person or id,',
  'or an empty result because the filters were narrower than the request.',
  'Given the user intent, the tool, its arguments and its (possibly truncated, redacted) output, say whether',
  'the result satisfies the intent. Judge only this call: it may be one step of several towards the intent,',
  'so a call that correctly does its part satisfies it. "[REDACTED]" marks removed secrets, not errors.',
  'Answer with the JSON object the schema describes; mismatch_kind is null when the result satisfies the intent.',
].join(' ');

/**
 * The outcome question (a log that states no outcome): was the task done, read from the
 * conversation's end. Its answer has the verdict's shape, `satisfies` meaning the task was
 * done, so it is validated and cached as one; the question's `tool` is {@link OUTCOME_QUESTION},
 * which no step's tool can be mistaken for in a cache key.
 */
export const OUTCOME_SCHEMA = {
  ...VERDICT_SCHEMA,
  properties: {
    ...VERDICT_SCHEMA.properties,
    satisfies: { type: 'boolean', description: "whether the agent completed the user's task" },
    reason: { type: 'string', description: 'one sentence: what in the final answer or the calls shows it' },
    mismatch_kind: { type: ['string', 'null'], enum: [...MISMATCH_KINDS, null], description: 'always null' },
  },
} as const;

export const OUTCOME_QUESTION = '(task outcome)';

export const OUTCOME_SYSTEM_PROMPT = [
  'You read the end of a conversation between a user and an AI agent that calls tools, and say whether the agent completed the task.',
  'A final answer that reports the task done (and calls that back it) means completed; one that gives up, says it could not,',
  'apologises for not doing it, hands the user over to someone else or asks for information it needs to go on means not completed.',
  'Courtesy ("sorry for the wait", "anything else?") says nothing either way. "[REDACTED]" marks removed secrets.',
  'Answer with the JSON object the schema describes; mismatch_kind is always null.',
].join(' ');

/** The question about one step, as the parts that also make up its cache key. */
export interface JudgeQuestion {
  intent: string;
  tool: string;
  /** Redacted arguments. */
  params: unknown;
  /** Redacted output text, cut to the limit. */
  output: string;
  /** When the call started, so relative dates can be resolved ("tomorrow" of which day). */
  started_at: string | null;
}

export const DEFAULT_MAX_OUTPUT_CHARS = 2000;

/** The question for a step, with secrets removed before anything can leave the process. */
export function questionFor(intent: string, step: TrajectoryStep, options: { redactor?: Redactor; maxOutputChars?: number } = {}): JudgeQuestion {
  const redactor = options.redactor ?? defaultRedactor;
  const body = jsonValue(step.response.body) ?? step.response.message ?? null;
  const output = redactor.text(toJsonText(body));
  const max = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  return {
    intent: redactor.text(intent),
    tool: step.tool_name,
    params: redactor.value(jsonValue(step.input_params)),
    output: output.length > max ? `${truncateText(output, max)}... [truncated, ${output.length} characters in all]` : output,
    started_at: step.started_at ?? null,
  };
}

/** The user message: the question as labelled JSON. */
export function questionText(question: JudgeQuestion): string {
  return JSON.stringify({
    intent: question.intent,
    tool: question.tool,
    arguments: question.params,
    output: question.output,
    ...(question.started_at === null ? {} : { called_at: question.started_at }),
  }, null, 2);
}
