/**
 * `anthropic:<model>`: an agent backed by the Anthropic Messages API (`tools`, `tool_use` and
 * `tool_result` blocks), or any gateway that speaks it (`ANTHROPIC_BASE_URL`).
 *
 * It talks to the endpoint over `fetch` through `model-http.ts` rather than through
 * @anthropic-ai/sdk: the loop uses one endpoint, the SDK's retries would have to be switched off
 * and its errors translated anyway, and it would add three runtime dependencies.
 */
import { ConfigError } from '../../core/errors.js';
import { maskUrlPassword } from '../../core/mask-url-password.js';
import type { Agent, AgentTask } from '../types.js';
import { functionSpecs, type FunctionSpec } from './control-tools.js';
import type { ModelAttemptResult } from '../../llm/model-endpoint-error.js';
import { errorBodyMessage, joinUrl, postJson, scrubSecrets, type FetchLike } from '../../llm/model-http.js';
import { DEFAULT_SAMPLING_TEMPERATURE, modelSamplingOf, trackBranch } from './branch-sampling.js';
import { buildSystemPrompt } from './system-prompt.js';
import {
  argumentsObject,
  assertNoControlNameClash,
  loopSettings,
  parseArgumentsText,
  runToolLoop,
  type Conversation,
  type ModelAgentOptions,
  type ModelToolCall,
  type ModelTurn,
  type ToolCallAnswer,
} from './tool-call-loop.js';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';
/** The Messages API requires `max_tokens`. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

export interface AnthropicAgentOptions extends ModelAgentOptions {
  /** e.g. `claude-sonnet-4-5`. */
  model: string;
  /** Without `/v1` (as in `ANTHROPIC_BASE_URL`); a trailing `/v1` is tolerated. Default: `env.ANTHROPIC_BASE_URL`, then https://api.anthropic.com. */
  baseUrl?: string;
  /** Default: `env.ANTHROPIC_API_KEY`. Required one way or the other. */
  apiKey?: string;
  /** Where `ANTHROPIC_BASE_URL` / `ANTHROPIC_API_KEY` are read from. Default: nothing is read. */
  env?: Readonly<Record<string, string | undefined>>;
  fetch?: FetchLike;
  /** Default `anthropic:<model>`. */
  name?: string;
  /**
   * Temperature of the requests after a fission branch point (`task.sampling`). The Messages API
   * takes no seed, so branches differ by sampling alone. Requests before the branch point are
   * sent as in an unsampled run. Default 1.
   */
  samplingTemperature?: number;
}

/** A content block as the Messages API sends and accepts it; unknown block types pass through. */
export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }
  | { type: string; [key: string]: unknown };

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | AnthropicBlock[];
}

interface AnthropicTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/**
 * Creates the agent. One instance serves any number of concurrent scenarios.
 *
 * @example
 * const agent = createAnthropicAgent({ model: 'claude-sonnet-4-5', env: process.env });
 */
export function createAnthropicAgent(options: AnthropicAgentOptions): Agent {
  const provider = 'anthropic';
  if (options.model.trim() === '') throw new ConfigError('anthropic: a model name is required, e.g. anthropic:claude-sonnet-4-5', 'model');
  const settings = loopSettings(provider, options);
  const apiKey = options.apiKey ?? nonEmpty(options.env?.['ANTHROPIC_API_KEY']);
  if (apiKey === undefined) throw new ConfigError('anthropic: no API key: set ANTHROPIC_API_KEY or pass apiKey', 'apiKey');
  const baseUrl = options.baseUrl ?? nonEmpty(options.env?.['ANTHROPIC_BASE_URL']) ?? DEFAULT_ANTHROPIC_BASE_URL;
  if (!URL.canParse(baseUrl)) throw new ConfigError(`anthropic: base URL is not a URL: ${baseUrl}`, 'baseUrl');
  const url = /\/v1\/?$/.test(baseUrl) ? joinUrl(baseUrl, 'messages') : joinUrl(baseUrl, 'v1/messages');
  const secrets = [apiKey];
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = settings.requestTimeoutMs;
  const headers = { 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION };
  const nowMs = () => settings.clock.now();
  const samplingTemperature = options.samplingTemperature ?? DEFAULT_SAMPLING_TEMPERATURE;

  return {
    name: options.name ?? `anthropic:${options.model}`,
    canSample: true,
    endpoint: { provider, url: scrubSecrets(maskUrlPassword(baseUrl), secrets), urlEnv: 'ANTHROPIC_BASE_URL' },
    async run(given: AgentTask) {
      const branch = trackBranch(given);
      const task = branch.task;
      assertNoControlNameClash(provider, task);
      const system = (options.systemPrompt ?? buildSystemPrompt)(task);
      const messages: AnthropicMessage[] = [{ role: 'user', content: task.instruction }];
      const tools = functionSpecs(task.tools).map(toAnthropicTool);
      const conversation: Conversation<AnthropicBlock[]> = {
        async complete(signal) {
          const body: Record<string, unknown> = { model: options.model, max_tokens: options.maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS, system, messages, tools };
          const sampling = modelSamplingOf(task, branch, samplingTemperature);
          if (sampling !== undefined) body['temperature'] = sampling.temperature;
          else if (options.temperature !== undefined) body['temperature'] = options.temperature;
          const result = await postJson({ url, headers, body, timeoutMs, signal, fetch: fetchImpl, secrets, nowMs });
          return result.ok ? parseMessage(result.value, secrets) : result;
        },
        append: (turn, answers) => appendTurn(messages, turn, answers),
      };
      return runToolLoop(task, conversation, settings);
    },
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function toAnthropicTool(spec: FunctionSpec): AnthropicTool {
  return { name: spec.name, description: spec.description, input_schema: spec.parameters };
}

function appendTurn(messages: AnthropicMessage[], turn: ModelTurn<AnthropicBlock[]>, answers: readonly ToolCallAnswer[]): void {
  messages.push({ role: 'assistant', content: turn.raw });
  // Every tool_use of the turn is answered in one user message, in order, as the API requires.
  messages.push({
    role: 'user',
    content: answers.map((a) => (a.isError ? { type: 'tool_result', tool_use_id: a.call.id, content: a.content, is_error: true } : { type: 'tool_result', tool_use_id: a.call.id, content: a.content })),
  });
}

/** Validates a Messages API response; anything off the wire format is `malformed` (and retried). */
export function parseMessage(response: unknown, secrets: readonly string[] = []): ModelAttemptResult<ModelTurn<AnthropicBlock[]>> {
  const malformed = (why: string): ModelAttemptResult<never> => ({ ok: false, failure: { kind: 'malformed', message: scrubSecrets(why, secrets) } });
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return malformed('the response is not a message object');
  const body = response as { type?: unknown; content?: unknown };
  if (body.type === 'error') return malformed(`the response carries an error: ${errorBodyMessage(body, '')}`);
  if (!Array.isArray(body.content)) return malformed('the response has no content array');

  let text = '';
  const toolCalls: ModelToolCall[] = [];
  const echoed: AnthropicBlock[] = [];
  for (const [index, block] of (body.content as unknown[]).entries()) {
    if (typeof block !== 'object' || block === null) return malformed(`content block ${index} is not an object`);
    const b = block as { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown };
    if (b.type === 'text') {
      if (typeof b.text !== 'string') return malformed(`text block ${index} has no text`);
      text += b.text;
      echoed.push({ type: 'text', text: b.text });
    } else if (b.type === 'tool_use') {
      if (typeof b.name !== 'string' || b.name === '') return malformed(`tool_use block ${index} has no name`);
      const id = typeof b.id === 'string' && b.id !== '' ? b.id : `toolu_${index}`;
      // Gateways translating from other formats sometimes pass the arguments through as JSON text.
      const args = typeof b.input === 'string' ? parseArgumentsText(b.input) : argumentsObject(b.input);
      toolCalls.push({ id, name: b.name, args });
      // The API refuses a history whose tool_use input is not an object; the model still learns
      // what was wrong from the INVALID_ARGUMENTS result.
      echoed.push({ type: 'tool_use', id, name: b.name, input: args.ok ? args.value : {} });
    } else {
      // Thinking and other blocks must go back unchanged for the conversation to stay valid.
      echoed.push(block as AnthropicBlock);
    }
  }
  return { ok: true, value: { text, toolCalls, raw: echoed } };
}
