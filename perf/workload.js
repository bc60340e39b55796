// Shared workloads for the store and recorder benchmarks (not a benchmark itself: run.js only
// picks up *.bench.js).
//
// - `workloadTools()` + `drive()`: a realistic agent workload through a real runtime: four tools
//   with different payloads, 80% successes and 20% non-successes (HTTP 404/409/400/403 errors,
//   empty searches, and ~2% calls rejected by input validation), short sessions with an
//   intent, and a payment token in some arguments so redaction has something to do.
// - `syntheticRecords()`: cheap, deterministic records built without a runtime, for bulk loads
//   (stats over millions of rows, the outage feed), spread over ~20 tools and a time range.
import { AuthError, BusinessError, defineTool, HttpError } from '../dist/index.js';
import { uuidv7 } from '../dist/record/uuid-v7.js';
import { prng } from './prng.js';

/**
 * Whether the call being started should fail. A tool's `execute` starts synchronously inside
 * `rt.execute` (before its first await), so the flag `drive` sets just before a call is the one
 * that call's tool reads, whatever the interleaving of concurrent sessions. None of the failures
 * below is retried by the runtime, so no attempt starts later.
 */
const failing = { value: false };

const CITIES = ['Paris', 'Berlin', 'Lisbon', 'Osaka', 'Toronto', 'Nairobi', 'Lima', 'Oslo'];

/** The four tools of the runtime workload; `drive` decides which calls fail. */
export function workloadTools() {
  const weatherInput = {
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' }, days: { type: 'integer', minimum: 1, maximum: 7 } },
    required: ['city'],
  };
  const searchInput = {
    type: 'object',
    properties: { query: { type: 'string', minLength: 1 }, limit: { type: 'integer', minimum: 1, maximum: 50 } },
    required: ['query'],
  };
  const orderInput = {
    type: 'object',
    properties: {
      sku: { type: 'string' },
      quantity: { type: 'integer', minimum: 1 },
      payment_token: { type: 'string' },
      shipping: { type: 'object', properties: { city: { type: 'string' }, street: { type: 'string' } } },
    },
    required: ['sku', 'quantity'],
  };
  const messageInput = {
    type: 'object',
    properties: { to: { type: 'string' }, body: { type: 'string', maxLength: 2000 } },
    required: ['to', 'body'],
  };
  return [
    defineTool({
      name: 'get_weather',
      description: 'Weather forecast for a city.',
      input: weatherInput,
      idempotent: true,
      execute: async (a, ctx) => {
        if (failing.value) throw new HttpError(404, `no forecast for ${a.city}`, {}, { error: 'not_found', city: a.city });
        return {
          city: a.city,
          unit: a.unit,
          days: Array.from({ length: a.days ?? 1 }, (_, i) => ({ day: i + 1, hi: 18 + i, lo: 9 + i, condition: 'cloudy' })),
        };
      },
    }),
    defineTool({
      name: 'search_docs',
      description: 'Full-text search over the knowledge base.',
      input: searchInput,
      idempotent: true,
      execute: async (a, ctx) => {
        if (failing.value) throw new BusinessError('no_results', `no document matches "${a.query}"`);
        return {
          total: 3,
          hits: [1, 2, 3].map((i) => ({ id: `doc-${i}`, title: `Result ${i} for ${a.query}`, score: 1 / i, snippet: 'Refunds are processed within 5 business days of the request.' })),
        };
      },
    }),
    defineTool({
      name: 'create_order',
      description: 'Places an order.',
      input: orderInput,
      idempotent: false,
      idempotencyKey: true,
      execute: async (a, ctx) => {
        if (failing.value) throw new HttpError(409, `order for ${a.sku} conflicts with an open order`, {}, { error: 'conflict', sku: a.sku });
        return { order_id: `ord_${ctx.idempotencyKey.slice(-12)}`, status: 'confirmed', total_cents: 1299 * a.quantity };
      },
    }),
    defineTool({
      name: 'send_message',
      description: 'Sends a message to a user.',
      input: messageInput,
      idempotent: false,
      execute: async (a, ctx) => {
        if (failing.value) {
          if (ctx.attempt === 0 && a.to.length % 2 === 0) throw new AuthError('forbidden', `not allowed to message ${a.to}`);
          throw new HttpError(400, 'message body rejected by the provider', {}, { error: 'bad_request' });
        }
        return { message_id: `msg_${ctx.traceId.slice(-8)}`, delivered: true };
      },
    }),
  ];
}

/** Arguments for call `i` of a tool; `invalid` makes them fail input validation. */
function argsFor(tool, i, invalid) {
  const city = CITIES[i % CITIES.length];
  switch (tool) {
    case 'get_weather':
      return invalid ? { city: '', days: 12 } : { city, unit: 'celsius', days: 1 + (i % 3) };
    case 'search_docs':
      return invalid ? { limit: 10 } : { query: `refund policy ${city}`, limit: 10 };
    case 'create_order':
      return invalid
        ? { sku: 'SKU-1', quantity: 0 }
        : { sku: `SKU-${i % 97}`, quantity: 1 + (i % 4), payment_token: `tok_live_${(i * 2654435761) >>> 0}abcdef`, shipping: { city, street: '1 Main St' } };
    default:
      return invalid ? { to: 'u1' } : { to: `user-${i % 1000}`, body: `Your order has shipped. Track it at https://example.com/t/${i}` };
  }
}

const TOOL_NAMES = ['get_weather', 'search_docs', 'create_order', 'send_message'];

/**
 * Runs `n` calls through `rt` from `concurrency` concurrent workers, each opening a new agent
 * session (with an intent) about every 8 calls: 80% successes, 18% tool failures, 2% invalid
 * arguments (rejected before the tool runs).
 */
export async function drive(rt, n, { concurrency = 1, seed = 7 } = {}) {
  const random = prng(seed);
  let next = 0;
  const worker = async () => {
    let session = null;
    while (next < n) {
      const i = next++;
      if (i % 8 === 0 || session === null) session = rt.session({ intent: 'help the customer with their order', sessionId: `s-${i >> 3}` });
      const roll = random();
      const tool = TOOL_NAMES[i % 4];
      failing.value = roll < 0.18;
      await session.execute(tool, argsFor(tool, i, roll >= 0.18 && roll < 0.2));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

// ---------------------------------------------------------------------------------------------
// Synthetic records (no runtime): for bulk loads.
// ---------------------------------------------------------------------------------------------

const FAILURE_SHAPES = [
  { status: 'failure', failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', error_code: 'ETIMEDOUT', error_message: 'connect ETIMEDOUT 10.0.0.12:443', action: 'retry' },
  { status: 'failure', failure_stage: 'execution', failure_category: 'network', failure_type: 'connection_refused', error_code: 'ECONNREFUSED', error_message: 'connect ECONNREFUSED 10.0.0.12:443', action: 'retry' },
  { status: 'failure', failure_stage: 'execution', failure_category: 'rate_limit', failure_type: 'rate_limited', error_code: 'HTTP_429', error_message: 'rate limit exceeded, retry after 30s', action: 'wait_and_retry' },
  { status: 'failure', failure_stage: 'execution', failure_category: 'system', failure_type: 'server_error', error_code: 'HTTP_500', error_message: 'internal server error (request 8f3a)', action: 'skip' },
  { status: 'failure', failure_stage: 'execution', failure_category: 'business', failure_type: 'not_found', error_code: 'HTTP_404', error_message: 'order ord_1234 not found', action: 'try_alternative' },
  { status: 'failure', failure_stage: 'execution', failure_category: 'business', failure_type: 'no_results', error_code: 'NO_RESULTS', error_message: 'no document matches the query', action: 'try_alternative' },
  { status: 'failure', failure_stage: 'execution', failure_category: 'auth', failure_type: 'unauthorized', error_code: 'HTTP_401', error_message: 'token expired', action: 'refresh_credential' },
  { status: 'rejected', failure_stage: 'param_validation', failure_category: 'parameter', failure_type: 'missing_required', error_code: 'INVALID_ARGUMENTS', error_message: 'invalid arguments: /city is required', action: 'retry_with_fixed_params' },
  { status: 'rejected', failure_stage: 'param_validation', failure_category: 'parameter', failure_type: 'boundary_violation', error_code: 'INVALID_ARGUMENTS', error_message: 'invalid arguments: /days must be <= 7', action: 'retry_with_fixed_params' },
  { status: 'timeout', failure_stage: 'execution', failure_category: 'network', failure_type: 'timeout', error_code: 'TIMEOUT', error_message: 'timed out after 10000 ms', action: 'retry' },
];

/** `count` tool names, e.g. crm.lookup_customer_3. */
export function toolNames(count) {
  const verbs = ['lookup_customer', 'search_docs', 'get_weather', 'create_order', 'refund_payment', 'send_message', 'list_invoices', 'update_ticket', 'geocode', 'translate'];
  return Array.from({ length: count }, (_, i) => `${['crm', 'kb', 'ops', 'pay'][i % 4]}.${verbs[i % verbs.length]}${i >= verbs.length ? `_${i}` : ''}`);
}

/**
 * Yields `count` records with created_at spread evenly over [fromMs, untilMs) in time order (so
 * UUIDv7 ids and trace ids are time-ordered, as they are in production). Each tool has its own
 * failure rate (2-30%) and latency scale. Records are small but complete: ~0.6 KB as JSON.
 */
export function* syntheticRecords(count, { fromMs, untilMs, tools = toolNames(20), seed = 11 }) {
  const random = prng(seed);
  const failureRates = tools.map((_, i) => 0.02 + ((i * 7) % 15) / 50);
  const latency = tools.map((_, i) => 20 + ((i * 37) % 400));
  const step = (untilMs - fromMs) / count;
  let traceId = '';
  let stepIndex = 0;
  for (let i = 0; i < count; i++) {
    const ms = Math.floor(fromMs + i * step);
    const t = Math.floor(random() * tools.length);
    const tool = tools[t];
    if (stepIndex === 0 || stepIndex >= 8) {
      traceId = uuidv7(ms);
      stepIndex = 0;
    }
    const failed = random() < failureRates[t];
    const shape = failed ? FAILURE_SHAPES[Math.floor(random() * FAILURE_SHAPES.length)] : null;
    const duration = Math.round(latency[t] * (0.3 + random() * random() * 6) * 10) / 10;
    const retried = failed && shape.failure_category !== 'parameter' && random() < 0.3 ? 1 + Math.floor(random() * 3) : 0;
    const iso = new Date(ms).toISOString();
    yield {
      execution_id: uuidv7(ms),
      trace_id: traceId,
      step_index: stepIndex++,
      tool_name: tool,
      status: shape?.status ?? 'success',
      failure_stage: shape?.failure_stage ?? null,
      failure_category: shape?.failure_category ?? null,
      failure_type: shape?.failure_type ?? null,
      error_code: shape?.error_code ?? null,
      input_params: { id: `c-${i % 5000}`, limit: 10 },
      params_hash: ((i * 2654435761) >>> 0).toString(16).padStart(16, '0'),
      raw_output: failed ? null : `{"ok":true,"items":${i % 7},"next":null}`,
      output_length: failed ? null : 34,
      error_message: shape?.error_message ?? null,
      error_stack: null,
      duration_ms: duration,
      retry_count: retried,
      attempts: [{ attempt: 0, started_at: iso, duration_ms: duration, outcome: failed ? 'failure' : 'success', failure_type: shape?.failure_type ?? null, error_code: shape?.error_code ?? null, delay_before_ms: 0 }],
      breaker_state: failed && shape.failure_category === 'system' && random() < 0.05 ? 'open' : 'closed',
      idempotent: t % 3 !== 0,
      fault: null,
      feedback: shape === null ? null : { action: shape.action, hint: 'see the error message', retryable: shape.action !== 'skip', retry_after_ms: null },
      recovery: failed ? 'needs_decision' : retried > 0 ? 'auto_recovered' : 'none',
      fallback: null,
      context_snapshot: { intent: 'resolve the customer ticket', session_id: traceId.slice(-8) },
      created_at: iso,
      schema_version: 1,
      summary_only: false,
    };
  }
}
