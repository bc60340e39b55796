// One tool call through the full runtime path, side by side with a bare call, ajv-only
// validation, and cockatiel's retry+breaker+timeout composite with the same validation.
import Ajv from 'ajv';
import { ConsecutiveBreaker, ExponentialBackoff, TimeoutStrategy, circuitBreaker, handleAll, handleWhen, retry, timeout, wrap } from 'cockatiel';
import { createRuntime, defineTool, HttpError } from '../dist/index.js';
import { randomUUID } from 'node:crypto';
import { compare, fmtNs, table } from './harness.js';

const inputSchema = {
  type: 'object',
  properties: { city: { type: 'string', minLength: 1 }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' }, days: { type: 'integer', minimum: 1, maximum: 7 } },
  required: ['city'],
};
const outputSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, temperature: { type: 'number' }, condition: { type: 'string' } },
  required: ['city', 'temperature', 'condition'],
};
const args = { city: 'Paris', unit: 'celsius', days: 3 };
const weather = async (a) => ({ city: a.city, temperature: 18, condition: 'cloudy' });
const badRequest = async () => {
  throw new HttpError(400, 'unknown city');
};

/** 64 bits of FNV-1a (two 32-bit passes with different offsets): the floor's params hash. */
function fnv1a(text, seed) {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

const hashOf = (text) => fnv1a(text, 0x811c9dc5) + fnv1a(text, 0x01000193);

/**
 * What any runtime that validates and records must do per call, written as directly as JS allows:
 * copy and validate the arguments, run the tool, validate its answer, and build and hand over a
 * record with the same fields the runtime stores (an id, timestamps, the arguments, a params hash,
 * the output's JSON text, one attempt). No breaker, no deadline, no redaction, no classification:
 * the floor the full path is measured against. Its pieces are the cheapest JS offers (Node's pooled
 * `randomUUID`, FNV-1a over the JSON text instead of a cryptographic digest), so the ratio to it
 * is not flattered by a slow floor.
 */
function recordFloor(validateIn, validateOut, sink) {
  return async () => {
    const started = Date.now();
    const a = { ...args };
    if (!validateIn(a)) throw new Error('invalid');
    const out = await weather(a);
    if (!validateOut(out)) throw new Error('bad output');
    const id = randomUUID();
    const at = new Date(started).toISOString();
    const rawOutput = JSON.stringify(out);
    const duration = Date.now() - started;
    sink.enqueue({
      execution_id: id, trace_id: id, step_index: 0, tool_name: 'get_weather', status: 'success',
      failure_stage: null, failure_category: null, failure_type: null, error_code: null,
      input_params: { ...a }, params_hash: hashOf(JSON.stringify(a)),
      raw_output: rawOutput, output_length: rawOutput.length, error_message: null, error_stack: null,
      duration_ms: duration, retry_count: 0,
      attempts: [{ attempt: 0, started_at: at, duration_ms: duration, outcome: 'success', failure_type: null, error_code: null, delay_before_ms: 0 }],
      breaker_state: 'closed', idempotent: true, fault: null, feedback: null, recovery: 'none', fallback: null,
      context_snapshot: {}, created_at: at, schema_version: 1, summary_only: false,
    });
    return out;
  };
}

export async function run() {
  const ajv = new Ajv.default({ allErrors: true, coerceTypes: true, useDefaults: true, strict: false });
  const validateIn = ajv.compile(inputSchema);
  const validateOut = ajv.compile(outputSchema);

  const records = [];
  const sink = { enqueue: (r) => void (records.length > 10_000 ? (records.length = 0) : records.push(r)) };
  const rt = createRuntime({
    tools: [
      defineTool({ name: 'get_weather', description: 'w', input: inputSchema, output: outputSchema, idempotent: true, timeoutMs: 10_000, execute: weather }),
      defineTool({ name: 'bad_request', description: 'b', input: inputSchema, idempotent: true, timeoutMs: 10_000, execute: badRequest }),
    ],
    recorder: sink,
  });

  // The same call with the runtime's optional checks on: the loop guard (the call carries a trace,
  // so it is watched), a post-condition (the answer must echo the city), an adaptive timeout and
  // background breaker probes. A build without them ignores the options.
  const checkedOutput = { ...outputSchema, properties: { ...outputSchema.properties, city: { type: 'string', 'x-echoes': 'city' } } };
  const rtChecks = createRuntime({
    tools: [defineTool({ name: 'get_weather', description: 'w', input: inputSchema, output: checkedOutput, idempotent: true, timeoutMs: 10_000, adaptiveTimeout: true, execute: weather })],
    recorder: sink,
    loopGuard: true,
    breakerProbes: true,
  });
  const traced = { traceId: 'bench-trace' };

  const policy = wrap(
    retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() }),
    circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
    timeout(10_000, TimeoutStrategy.Cooperative),
  );
  const failPolicy = wrap(
    retry(handleWhen((e) => !(e instanceof HttpError) || e.status >= 500), { maxAttempts: 3, backoff: new ExponentialBackoff() }),
    circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(1e9) }),
    timeout(10_000, TimeoutStrategy.Cooperative),
  );

  const success = await compare({
    bare: () => weather(args),
    'ajv only': async () => {
      const a = { ...args };
      if (!validateIn(a)) throw new Error('invalid');
      const out = await weather(a);
      if (!validateOut(out)) throw new Error('bad output');
      return out;
    },
    'cockatiel wrap(retry, breaker, timeout) + ajv': () =>
      policy.execute(async ({ signal }) => {
        const a = { ...args };
        if (!validateIn(a)) throw new Error('invalid');
        const out = await weather(a, signal);
        if (!validateOut(out)) throw new Error('bad output');
        return out;
      }),
    'floor: validate + build and hand over the record': recordFloor(validateIn, validateOut, sink),
    'faultline full path': async () => {
      const r = await rt.execute('get_weather', args);
      if (!r.ok) throw new Error(`unexpected failure: ${r.error.message}`);
    },
    'faultline full path, checks on (loop guard, post-condition, adaptive timeout, probes)': async () => {
      const r = await rtChecks.execute('get_weather', args, traced);
      if (!r.ok) throw new Error(`unexpected failure: ${r.error.message}`);
    },
  });

  const failure = await compare({
    'cockatiel + ajv, 400 not retried': async () => {
      try {
        await failPolicy.execute(async () => {
          const a = { ...args };
          if (!validateIn(a)) throw new Error('invalid');
          return badRequest();
        });
      } catch {
        // the caller has to classify it and write feedback itself
      }
    },
    'faultline: classified failure + feedback + record': async () => {
      const r = await rt.execute('bad_request', args);
      if (r.ok) throw new Error('expected a failure');
    },
  });

  await rt.close();
  await rtChecks.close();
  const cockatiel = success['cockatiel wrap(retry, breaker, timeout) + ajv'].medianNs;
  const rows = Object.entries(success).map(([name, m]) => [name, fmtNs(m.medianNs), fmtNs(m.p95Ns), (cockatiel / m.medianNs).toFixed(2) + 'x']);
  const failRows = Object.entries(failure).map(([name, m]) => [name, fmtNs(m.medianNs), fmtNs(m.p95Ns)]);
  const full = success['faultline full path'].medianNs;
  const floorNs = success['floor: validate + build and hand over the record'].medianNs;
  return {
    title: 'Runtime: one call through the full path',
    markdown: [
      table(['success path', 'median', 'p95', 'speed vs cockatiel'], rows),
      '',
      table(['failure path (HTTP 400, not retried)', 'median', 'p95'], failRows),
      '',
      `faultline full path vs cockatiel composite: ${(cockatiel / full).toFixed(2)}x faster (goal >= 5x); median ${fmtNs(full)} (goal <= 2.5 us); ${(full / floorNs).toFixed(2)}x the floor (${fmtNs(floorNs)}).`,
    ].join('\n'),
  };
}
