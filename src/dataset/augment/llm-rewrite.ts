/**
 * The optional LLM rewrite of a variant (`faultline augment --llm <model>`): the instruction and
 * the tools' natural-language error messages reworded by a model behind any OpenAI-compatible
 * chat.completions endpoint, so variants differ in phrasing and not only in names and values.
 *
 * Every tool name, field name, id, number and date must survive the rewrite (they carry the
 * failure pattern): the model is told so, and a reply that drops any of those found in the
 * original text, or is not the requested JSON, is asked for once more and then given up on (the
 * variant is not stored; the count says so). Texts are redacted before they leave the process.
 * Requests go through the shared JSON chat client (src/llm/json-chat.ts: the model
 * adapters' HTTP edge and retry policy, 429 and 5xx retried, Retry-After honoured); an endpoint
 * that refuses outright (bad key, unknown model) stops the run with `ModelEndpointError`.
 *
 * The rewrite is not deterministic (it is a model); its variants get their own ids
 * (`…:llm:<model>`) and `metadata.augmentation.llm_model`, and one already stored is not asked for again.
 */
import { createJsonChat, type JsonChatOptions } from '../../llm/json-chat.js';
import { defaultRedactor, type Redactor } from '../../record/redact.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { tagVariant } from './augment.js';
import { parameterKeysOf, toolNamesOf } from './variant-plan.js';

export const REWRITE_SYSTEM_PROMPT = [
  'You reword texts from an AI agent\'s tool-use log so that a training set has more varied phrasing.',
  'You get JSON: {"instruction": the user\'s task, "messages": error messages the tools returned}.',
  'Rewrite each text with other words and the same meaning. Copy every tool name, field name, identifier, number, date and quoted value exactly as written.',
  'Answer with JSON only: {"instruction": string, "messages": [string, ...]} with exactly as many messages, in the same order.',
].join(' ');

const REWRITE_SCHEMA: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['instruction', 'messages'],
  properties: { instruction: { type: 'string' }, messages: { type: 'array', items: { type: 'string' } } },
};

/** The endpoint (`baseUrl`, else `env.OPENAI_BASE_URL`; `apiKey`, else `env.OPENAI_API_KEY`), retries and clock. */
export interface LlmRewriterOptions extends Omit<JsonChatOptions, 'provider' | 'apiKeyEnv'> {
  redactor?: Redactor;
}

export interface LlmRewriteStats {
  requests: number;
  rewritten: number;
  /** Variants given up on: the replies kept dropping names or were not the JSON asked for. */
  failed: number;
  /** Variants with no instruction and no message: nothing to ask the model about, not stored again. */
  nothing_to_rewrite: number;
}

export interface LlmRewriter {
  readonly model: string;
  readonly stats: Readonly<LlmRewriteStats>;
  /** The variant with its texts rewritten and its id and tag set for the model, or undefined when the model could not do it. */
  rewrite(variant: Trajectory, original: Trajectory): Promise<Trajectory | undefined>;
  /** The id the rewrite of `variant` is stored under, so a stored one is not asked for again. */
  idFor(variant: Trajectory, original: Trajectory): string;
}

interface Texts {
  instruction: string;
  messages: string[];
}

/** The names and values a rewrite must keep: every tool name, field name, number, date and id found in `text`. */
export function protectedTokens(text: string, trajectory: Trajectory): string[] {
  const names = [...toolNamesOf(trajectory), ...parameterKeysOf(trajectory).keys()].filter((n) => n.length >= 3 && text.includes(n));
  const values = text.match(/\d{4}-\d{2}(?:-\d{2})?|[A-Z]{2,}[-_]?\d+|\d+(?:\.\d+)?/g) ?? [];
  return [...new Set([...names, ...values])];
}

function parseTexts(text: string, expected: Texts, trajectory: Trajectory): Texts | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'the reply is not JSON';
  }
  const p = parsed as Partial<Texts>;
  if (typeof p.instruction !== 'string' || !Array.isArray(p.messages) || !p.messages.every((m) => typeof m === 'string')) return 'the reply is not {instruction, messages}';
  if (p.messages.length !== expected.messages.length) return `expected ${expected.messages.length} messages, got ${p.messages.length}`;
  const pairs: [string, string][] = [[expected.instruction, p.instruction], ...expected.messages.map((m, i): [string, string] => [m, p.messages![i]!])];
  for (const [before, after] of pairs) {
    const lost = protectedTokens(before, trajectory).find((token) => !after.includes(token));
    if (lost !== undefined) return `the rewrite dropped ${JSON.stringify(lost)}`;
  }
  return { instruction: p.instruction, messages: p.messages };
}

export function createLlmRewriter(options: LlmRewriterOptions): LlmRewriter {
  const { redactor = defaultRedactor, ...endpoint } = options;
  const chat = createJsonChat({ ...endpoint, provider: 'augment' });
  const model = chat.model;
  const stats: LlmRewriteStats = { requests: 0, rewritten: 0, failed: 0, nothing_to_rewrite: 0 };
  const ask = (texts: Texts) =>
    chat.ask({ system: REWRITE_SYSTEM_PROMPT, user: JSON.stringify(texts), schemaName: 'rewritten_texts', schema: REWRITE_SCHEMA, temperature: 0.7 });

  const tagOf = (variant: Trajectory) => {
    const tag = variant.metadata.augmentation!;
    return { kind: tag.kind, seed: tag.seed, variant: tag.variant, ...(tag.target_domain === undefined ? {} : { target_domain: tag.target_domain }), llm_model: model };
  };

  return {
    model,
    stats,
    idFor: (variant, original) => tagVariant(variant, original, tagOf(variant)).trajectory_id,
    async rewrite(variant, original) {
      const withMessage = variant.steps.filter((s) => s.response.message !== undefined && s.response.message !== '');
      const texts: Texts = redactor.value({ instruction: variant.task_description ?? '', messages: withMessage.map((s) => s.response.message!) });
      if (texts.instruction === '' && texts.messages.length === 0) {
        stats.nothing_to_rewrite++;
        return undefined;
      }
      for (let attempt = 1; attempt <= 2; attempt++) {
        const reply = await ask(texts);
        stats.requests = chat.requests;
        if (!reply.ok) break;
        const parsed = parseTexts(reply.text, texts, variant);
        if (typeof parsed === 'string') continue;
        const steps = variant.steps.map((s) => {
          const at = withMessage.indexOf(s);
          return at < 0 ? s : { ...s, response: { ...s.response, message: parsed.messages[at]! } };
        });
        stats.rewritten++;
        const rewritten = { ...variant, task_description: variant.task_description === null ? null : parsed.instruction, steps };
        return tagVariant(rewritten, original, tagOf(variant));
      }
      stats.failed++;
      return undefined;
    },
  };
}
