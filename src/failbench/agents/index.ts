/**
 * Agents by spec, as the `bench` command names them: a reference agent by name, `openai:<model>`,
 * `anthropic:<model>`, or `module:<path>`.
 */
import { ConfigError } from '../../core/errors.js';
import type { Agent } from '../types.js';
import { createAnthropicAgent } from './anthropic.js';
import type { FetchLike } from '../../llm/model-http.js';
import { loadModuleAgent } from './module-agent.js';
import { createFeedbackFollowingAgent } from './follow-feedback.js';
import { createNaiveAgent } from './naive.js';
import { createOpenAIAgent } from './openai.js';
import { createRobustAgent } from './robust.js';
import { createSamplingAgent } from './sampler.js';
import type { ModelAgentOptions } from './tool-call-loop.js';

export { createOpenAIAgent, DEFAULT_OPENAI_BASE_URL } from './openai.js';
export type { OpenAIAgentOptions } from './openai.js';
export { createAnthropicAgent, DEFAULT_ANTHROPIC_BASE_URL } from './anthropic.js';
export type { AnthropicAgentOptions } from './anthropic.js';
export { loadModuleAgent } from './module-agent.js';
export type { ModuleAgentOptions } from './module-agent.js';
export { ModelEndpointError } from '../../llm/model-endpoint-error.js';
export type { ModelFailure, ModelFailureKind } from '../../llm/model-endpoint-error.js';
export { DEFAULT_MODEL_RETRY } from '../../llm/model-retry.js';
export type { ModelRetryEvent, ModelRetryOptions } from '../../llm/model-retry.js';
export type { ModelAgentOptions } from './tool-call-loop.js';
export { buildSystemPrompt } from './system-prompt.js';
export { createNaiveAgent } from './naive.js';
export { createFeedbackFollowingAgent } from './follow-feedback.js';
export { createRobustAgent } from './robust.js';
export type { RobustAgentOptions } from './robust.js';
export { createSamplingAgent, SAMPLER_CHOICES } from './sampler.js';
export type { SamplingAgentOptions } from './sampler.js';
export { DEFAULT_SAMPLING_TEMPERATURE } from './branch-sampling.js';
export { FEEDBACK_RULES, NAIVE_RULES, ROBUST_RULES } from './playbook.js';
export type { PlaybookChoice, PlaybookRules } from './playbook.js';

/** Settings for `openai:` and `anthropic:` specs (flags such as --base-url, --max-turns). */
export interface ModelSpecOptions extends ModelAgentOptions {
  /** Overrides OPENAI_BASE_URL / ANTHROPIC_BASE_URL. */
  baseUrl?: string;
  /** Overrides OPENAI_API_KEY / ANTHROPIC_API_KEY. */
  apiKey?: string;
  fetch?: FetchLike;
}

export interface ResolveAgentOptions {
  /** Where API keys, base URLs and default models are read from. Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Base for relative `module:` paths. Default: process.cwd(). */
  cwd?: string;
  model?: ModelSpecOptions;
  /** Handed to a `module:` factory. */
  moduleOptions?: Record<string, unknown>;
}

/**
 * The reference agents, by the bare name a spec uses for them (`naive`, `robust`, `sampler`, the
 * robust playbook that can branch for `bench --fission`, and `follow-feedback`, naive habits that
 * do what the runtime's feedback says). Each entry
 * builds a fresh agent.
 */
const REFERENCE_AGENTS: Readonly<Record<string, () => Agent>> = {
  naive: () => createNaiveAgent(),
  robust: () => createRobustAgent(),
  sampler: () => createSamplingAgent(),
  'follow-feedback': () => createFeedbackFollowingAgent(),
};

/**
 * Builds the agent a spec names. `openai:` and `anthropic:` take the model after the colon (or
 * `OPENAI_MODEL` / `ANTHROPIC_MODEL` when it is empty), the key and base URL from `options.model`
 * or the environment. Every mistake is a one-line {@link ConfigError}.
 *
 * @example
 * const agent = await resolveAgent('openai:gpt-4o-mini', { env: process.env, model: { maxTurns: 15 } });
 */
export async function resolveAgent(spec: string, options: ResolveAgentOptions = {}): Promise<Agent> {
  const env = options.env ?? process.env;
  const colon = spec.indexOf(':');
  const kind = colon < 0 ? spec : spec.slice(0, colon);
  const rest = colon < 0 ? '' : spec.slice(colon + 1).trim();
  switch (kind) {
    case 'openai': {
      const model = rest || (env['OPENAI_MODEL'] ?? '').trim();
      if (model === '') throw new ConfigError('agent openai: needs a model, e.g. openai:gpt-4o-mini (or set OPENAI_MODEL)', 'agent');
      return createOpenAIAgent({ ...options.model, model, env });
    }
    case 'anthropic': {
      const model = rest || (env['ANTHROPIC_MODEL'] ?? '').trim();
      if (model === '') throw new ConfigError('agent anthropic: needs a model, e.g. anthropic:claude-sonnet-4-5 (or set ANTHROPIC_MODEL)', 'agent');
      return createAnthropicAgent({ ...options.model, model, env });
    }
    case 'module':
      return loadModuleAgent(rest, {
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        ...(options.moduleOptions !== undefined ? { options: options.moduleOptions } : {}),
      });
  }
  const reference = Object.hasOwn(REFERENCE_AGENTS, spec) ? REFERENCE_AGENTS[spec] : undefined;
  if (reference !== undefined) return reference();
  const known = [...Object.keys(REFERENCE_AGENTS), 'openai:<model>', 'anthropic:<model>', 'module:<path>'];
  throw new ConfigError(`unknown agent "${spec}": use ${known.join(', ')}`, 'agent');
}
