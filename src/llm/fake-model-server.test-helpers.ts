/**
 * A real HTTP server on 127.0.0.1 that speaks the two wire formats the model adapters use:
 * OpenAI `POST /v1/chat/completions` and Anthropic `POST /v1/messages`, with their real response
 * shapes (tool-call turns, usage, error bodies, request-id headers). Tests script it with a queue
 * of replies or a function of the request, and read back every request it received.
 *
 * One scripted reply renders in whichever format the request came in, so the same conversation
 * script drives both adapters.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../core/clock.js';

export type WireFormat = 'openai' | 'anthropic';

/** The parts of an OpenAI chat.completions request the tests look at. */
export interface OpenAIRequestBody {
  model: string;
  messages: Array<{
    role: string;
    content: string | null;
    tool_call_id?: string;
    tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: Record<string, unknown> } }>;
  tool_choice?: unknown;
  temperature?: number;
  max_tokens?: number;
}

/** The parts of an Anthropic Messages request the tests look at. */
export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  system?: string;
  messages: Array<{
    role: string;
    content: string | Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: string; is_error?: boolean }>;
  }>;
  tools?: Array<{ name: string; description?: string; input_schema: Record<string, unknown> }>;
  temperature?: number;
}

export interface RecordedRequest {
  /** 1-based, in arrival order. */
  index: number;
  format: WireFormat;
  method: string;
  path: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The parsed JSON body (undefined if it did not parse). */
  body: unknown;
}

export interface ScriptedToolCall {
  name: string;
  /** An object, or raw text to simulate a model that emits broken JSON. */
  arguments: Record<string, unknown> | string;
  id?: string;
}

interface ReplyTiming {
  /** Replaces the server-wide latency for this reply. */
  delayMs?: number;
}

export type FakeReply = ReplyTiming &
  (
    | { kind: 'turn'; text?: string; toolCalls?: ScriptedToolCall[] }
    | { kind: 'error'; status: number; message?: string; headers?: Record<string, string> }
    | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
    | { kind: 'raw'; status?: number; body: string; contentType?: string }
    | { kind: 'reset' }
  );

export type FakeScript = (request: RecordedRequest) => FakeReply | Promise<FakeReply>;

/** Reply builders. */
export const reply = {
  text: (text: string, timing: ReplyTiming = {}): FakeReply => ({ kind: 'turn', text, ...timing }),
  toolCall: (name: string, args: Record<string, unknown> | string, timing: ReplyTiming = {}): FakeReply => ({ kind: 'turn', toolCalls: [{ name, arguments: args }], ...timing }),
  toolCalls: (calls: ScriptedToolCall[], text?: string, timing: ReplyTiming = {}): FakeReply => ({ kind: 'turn', toolCalls: calls, ...(text !== undefined ? { text } : {}), ...timing }),
  error: (status: number, message?: string, headers?: Record<string, string>): FakeReply => ({
    kind: 'error',
    status,
    ...(message !== undefined ? { message } : {}),
    ...(headers !== undefined ? { headers } : {}),
  }),
  /** A 429 with `Retry-After` (seconds, as real endpoints send it). */
  rateLimited: (retryAfterSeconds: string): FakeReply => ({ kind: 'error', status: 429, headers: { 'retry-after': retryAfterSeconds } }),
  /** Drops the connection without answering. */
  reset: (): FakeReply => ({ kind: 'reset' }),
  /** A body sent as-is, e.g. truncated JSON. */
  raw: (body: string, contentType = 'application/json', status = 200): FakeReply => ({ kind: 'raw', body, contentType, status }),
  json: (body: unknown, status = 200): FakeReply => ({ kind: 'json', body, status }),
};

export interface FakeModelServerOptions {
  /** Delay before every reply, in ms. Default 0. */
  latencyMs?: number;
  /** Replies served in order before `handler` is consulted. */
  replies?: FakeReply[];
  /** Consulted when the queue is empty. */
  handler?: FakeScript;
  /** When set, a request carrying another key gets a 401 whose message echoes the key it sent. */
  apiKey?: string;
}

export interface FakeModelServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `<url>/v1`, as OPENAI_BASE_URL is written. */
  readonly openaiBaseUrl: string;
  /** `<url>`, as ANTHROPIC_BASE_URL is written. */
  readonly anthropicBaseUrl: string;
  readonly requests: RecordedRequest[];
  /** The most requests that were being served at the same moment (arrived, reply not yet sent). */
  readonly maxInFlight: number;
  enqueue(...replies: FakeReply[]): void;
  respondWith(handler: FakeScript): void;
  close(): Promise<void>;
}

export async function startFakeModelServer(options: FakeModelServerOptions = {}): Promise<FakeModelServer> {
  const queue: FakeReply[] = [...(options.replies ?? [])];
  let handler = options.handler;
  const requests: RecordedRequest[] = [];
  let sequence = 0;
  let inFlight = 0;
  let maxInFlight = 0;

  const server = createServer((req, res) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    void serve(req, res)
      .catch((error: unknown) => {
        if (!res.headersSent) send(res, 500, { error: { message: `fake model server crashed: ${String(error)}` } });
      })
      .finally(() => (inFlight -= 1));
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const format: WireFormat | undefined = path.endsWith('/chat/completions') ? 'openai' : path.endsWith('/messages') ? 'anthropic' : undefined;
    if (req.method !== 'POST' || format === undefined) {
      send(res, 404, { error: { message: `fake model server: no route for ${req.method ?? '?'} ${path}` } });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
    const request: RecordedRequest = { index: requests.length + 1, format, method: req.method, path, headers, body };
    requests.push(request);

    const id = ++sequence;
    let scripted: FakeReply;
    const provided = format === 'openai' ? (headers['authorization'] ?? '').replace(/^Bearer /, '') : (headers['x-api-key'] ?? '');
    if (options.apiKey !== undefined && provided !== options.apiKey) {
      scripted = { kind: 'error', status: 401, message: `Incorrect API key provided: ${provided}` };
    } else if (body === undefined) {
      scripted = { kind: 'error', status: 400, message: 'the request body is not valid JSON' };
    } else {
      const next = queue.shift();
      scripted = next ?? (handler !== undefined ? await handler(request) : { kind: 'error', status: 500, message: 'fake model server: no scripted reply left' });
    }

    const delay = scripted.delayMs ?? options.latencyMs ?? 0;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    render(res, req, format, scripted, body, id);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    enqueue: (...replies) => void queue.push(...replies),
    respondWith: (next) => void (handler = next),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

function render(res: ServerResponse, req: IncomingMessage, format: WireFormat, scripted: FakeReply, requestBody: unknown, id: number): void {
  const requestId = format === 'openai' ? { 'x-request-id': `req_fake_${id}` } : { 'request-id': `req_fake_${id}` };
  switch (scripted.kind) {
    case 'reset':
      req.socket.destroy();
      return;
    case 'raw':
      res.writeHead(scripted.status ?? 200, { 'content-type': scripted.contentType ?? 'application/json', ...requestId });
      res.end(scripted.body);
      return;
    case 'json':
      send(res, scripted.status ?? 200, scripted.body, { ...requestId, ...scripted.headers });
      return;
    case 'error':
      send(res, scripted.status, errorBody(format, scripted.status, scripted.message, id), { ...requestId, ...rateLimitHeaders(format, scripted.status), ...scripted.headers });
      return;
    case 'turn':
      send(res, 200, format === 'openai' ? openaiCompletion(scripted, requestBody, id) : anthropicMessage(scripted, requestBody, id), requestId);
  }
}

function modelOf(body: unknown): string {
  const model = (body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' ? model : 'unknown-model';
}

/** A rough token count, so usage fields carry plausible, input-dependent numbers. */
function tokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4));
}

function openaiCompletion(turn: Extract<FakeReply, { kind: 'turn' }>, requestBody: unknown, id: number): unknown {
  const calls = (turn.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_fake_${id}_${i}`,
    type: 'function',
    function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
  }));
  const message: Record<string, unknown> = { role: 'assistant', content: turn.text ?? null, refusal: null, annotations: [] };
  if (calls.length > 0) message['tool_calls'] = calls;
  const prompt = tokens((requestBody as { messages?: unknown } | undefined)?.messages);
  const completion = tokens(message);
  return {
    id: `chatcmpl-fake${id}`,
    object: 'chat.completion',
    created: 1_767_225_600 + id,
    model: modelOf(requestBody),
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

function anthropicMessage(turn: Extract<FakeReply, { kind: 'turn' }>, requestBody: unknown, id: number): unknown {
  const content: unknown[] = [];
  if (turn.text !== undefined && turn.text !== '') content.push({ type: 'text', text: turn.text });
  for (const [i, call] of (turn.toolCalls ?? []).entries()) {
    content.push({ type: 'tool_use', id: call.id ?? `toolu_fake_${id}_${i}`, name: call.name, input: call.arguments });
  }
  const hasTools = (turn.toolCalls ?? []).length > 0;
  return {
    id: `msg_fake${id}`,
    type: 'message',
    role: 'assistant',
    model: modelOf(requestBody),
    content,
    stop_reason: hasTools ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: tokens((requestBody as { messages?: unknown } | undefined)?.messages),
      output_tokens: tokens(content),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

const OPENAI_ERROR_TYPES: Record<number, [type: string, code: string | null, message: string]> = {
  400: ['invalid_request_error', null, 'Invalid request.'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'],
  403: ['invalid_request_error', 'unsupported_country_region_territory', 'Country, region, or territory not supported.'],
  404: ['invalid_request_error', 'model_not_found', 'The model does not exist or you do not have access to it.'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests. Please try again later.'],
  500: ['server_error', null, 'The server had an error while processing your request. Sorry about that!'],
  502: ['server_error', null, 'Bad gateway.'],
  503: ['server_error', null, 'The engine is currently overloaded, please try again later.'],
};

const ANTHROPIC_ERROR_TYPES: Record<number, [type: string, message: string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  500: ['api_error', 'Internal server error'],
  529: ['overloaded_error', 'Overloaded'],
};

function errorBody(format: WireFormat, status: number, message: string | undefined, id: number): unknown {
  if (format === 'openai') {
    const [type, code, fallback] = OPENAI_ERROR_TYPES[status] ?? ['server_error', null, `HTTP ${status}`];
    return { error: { message: message ?? fallback, type, param: null, code } };
  }
  const [type, fallback] = ANTHROPIC_ERROR_TYPES[status] ?? ['api_error', `HTTP ${status}`];
  return { type: 'error', error: { type, message: message ?? fallback }, request_id: `req_fake_${id}` };
}

function rateLimitHeaders(format: WireFormat, status: number): Record<string, string> {
  if (status !== 429) return {};
  return format === 'openai'
    ? { 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1s' }
    : { 'anthropic-ratelimit-requests-limit': '50', 'anthropic-ratelimit-requests-remaining': '0' };
}

// ---------------------------------------------------------------------------------------------
// Reading recorded requests without caring which format they are in
// ---------------------------------------------------------------------------------------------

/** A tool result the adapter sent back, in either format. */
export interface SentToolResult {
  id: string;
  content: string;
  /** Anthropic's `is_error`; always undefined for OpenAI, which has no such field. */
  isError: boolean | undefined;
}

/** The tool results carried by the last turn of a request (the answers to the previous tool calls). */
export function toolResultsIn(request: RecordedRequest): SentToolResult[] {
  if (request.format === 'openai') {
    const messages = (request.body as OpenAIRequestBody).messages;
    const out: SentToolResult[] = [];
    for (let i = messages.length - 1; i >= 0 && messages[i]?.role === 'tool'; i--) {
      const m = messages[i]!;
      out.unshift({ id: m.tool_call_id ?? '', content: m.content ?? '', isError: undefined });
    }
    return out;
  }
  const messages = (request.body as AnthropicRequestBody).messages;
  const last = messages[messages.length - 1];
  if (last === undefined || last.role !== 'user' || typeof last.content === 'string') return [];
  return last.content.filter((b) => b.type === 'tool_result').map((b) => ({ id: b.tool_use_id ?? '', content: b.content ?? '', isError: b.is_error }));
}

/** Names of the functions offered in a request, in order. */
export function offeredToolNames(request: RecordedRequest): string[] {
  if (request.format === 'openai') return ((request.body as OpenAIRequestBody).tools ?? []).map((t) => t.function.name);
  return ((request.body as AnthropicRequestBody).tools ?? []).map((t) => t.name);
}

/** The JSON Schema offered for one function. */
export function offeredSchema(request: RecordedRequest, name: string): Record<string, unknown> | undefined {
  if (request.format === 'openai') return (request.body as OpenAIRequestBody).tools?.find((t) => t.function.name === name)?.function.parameters;
  return (request.body as AnthropicRequestBody).tools?.find((t) => t.name === name)?.input_schema;
}

export function systemPromptOf(request: RecordedRequest): string | undefined {
  if (request.format === 'openai') {
    const first = (request.body as OpenAIRequestBody).messages[0];
    return first?.role === 'system' ? (first.content ?? undefined) : undefined;
  }
  return (request.body as AnthropicRequestBody).system;
}

/** The first user message: the task instruction. */
export function instructionOf(request: RecordedRequest): string | undefined {
  const messages = (request.body as { messages: Array<{ role: string; content: unknown }> }).messages;
  const user = messages.find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : undefined;
}

/** The API key the request authenticated with. */
export function apiKeyOf(request: RecordedRequest): string | undefined {
  return request.format === 'openai' ? request.headers['authorization']?.replace(/^Bearer /, '') : request.headers['x-api-key'];
}

/** An API key shaped like a real one, so the tests see it scrubbed from what is reported. */
export const TEST_KEY = 'sk-test-0123456789abcdef';

/** A clock whose sleeps return at once and are recorded, for asserting model-side waits. */
export function recordingClock(): Clock & { waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    now: () => Date.now(),
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      waits.push(ms);
    },
  };
}
