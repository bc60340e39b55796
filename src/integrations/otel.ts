/**
 * OpenTelemetry: every record as an `execute_tool` span in the GenAI semantic conventions, so the
 * calls faultline sees show up in whatever tracing backend a team already runs (Jaeger, Tempo,
 * Langfuse, Phoenix, an OTel collector writing OTLP JSON), and come back in through
 * `faultline import --format otel` with nothing lost that the importer reads; and, with a
 * `meter`, the GenAI `gen_ai.execute_tool.duration` metric plus an attempt counter.
 *
 * Use it as (or inside) the runtime's `onRecord`. The span starts at the call's start
 * (`created_at`) and lasts `duration_ms`; attempts become `faultline.attempt` events. Its parent
 * is the active span when the agent runs inside one (an OTel context manager carries it through
 * `rt.execute`); otherwise spans of one faultline trace share an OTel trace id derived from the
 * record's `trace_id`, so a conversation stays one trace in the backend.
 *
 * Logical calls and attempts (the conventions leave open which one GenAI metrics count): the span
 * and `gen_ai.execute_tool.duration` are the logical call, retries and backoff included, so the
 * metric equals the span's duration as the conventions ask; `faultline.tool.attempts` counts
 * every try the runtime made, by outcome. Attempts are span events rather than child spans: they
 * are the runtime's retries of one call with the same arguments, an event keeps each one's start,
 * duration, outcome and error on the call's span, the importer reads them back from there, and a
 * tool's own instrumentation (an HTTP client's spans) already nests each try's I/O under the
 * active context.
 *
 * Span attributes: `gen_ai.operation.name` (`execute_tool`), `gen_ai.tool.name`,
 * `gen_ai.tool.type`, `gen_ai.tool.call.id` (the model's tool-call id when the integrations
 * recorded one, else the execution id), `error.type` (the failure type), `gen_ai.agent.name`,
 * `http.response.status_code` for HTTP failures, and `faultline.*` for the rest of the record
 * (status, stage, category, error code, retries, breaker state, idempotency, injected fault,
 * feedback action, recovery, params hash). With `content` (default true),
 * `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` carry the record's input and output,
 * which the runtime has already redacted and truncated. Metric attributes are the low-cardinality
 * part of these; a name the runtime rejected as `unknown_tool` counts as `gen_ai.tool.name`
 * `(unknown)`, as in the Prometheus metrics, so made-up names cannot create series.
 *
 * @example
 * const rt = createRuntime({ tools, onRecord: otelRecordListener({ tracer: trace.getTracer('my-agent'), meter: metrics.getMeter('my-agent') }) });
 */
import { createHash } from 'node:crypto';
import { context as otelContext, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Meter, type Tracer } from '@opentelemetry/api';
import { ConfigError } from '../core/errors.js';
import { UNKNOWN_TOOL_LABEL, UNKNOWN_TOOL_TYPE } from '../monitor/tool-labels.js';
import type { ToolExecutionRecord } from '../core/record-types.js';

export interface OtelRecordListenerOptions {
  /** Spans: one `execute_tool` span per record. */
  tracer?: Tracer;
  /** Metrics: `gen_ai.execute_tool.duration` per record and `faultline.tool.attempts` per attempt. */
  meter?: Meter;
  /** Put the (redacted) arguments and result on the span. Default true. */
  content?: boolean;
  /** The parent for a record's span. Default: the active context, or one derived from `trace_id`. */
  parent?: (record: ToolExecutionRecord) => Context | undefined;
}

/** A deterministic 32-hex-digit trace id and 16-hex-digit parent span id for a faultline trace. */
function derivedSpanContext(traceId: string): { traceId: string; spanId: string } {
  const digest = createHash('sha256').update(`faultline-trace:${traceId}`).digest('hex');
  return { traceId: digest.slice(0, 32), spanId: digest.slice(32, 48) };
}

function parentOf(record: ToolExecutionRecord): Context {
  const active = otelContext.active();
  if (trace.getSpanContext(active) !== undefined) return active;
  const derived = derivedSpanContext(record.trace_id);
  return trace.setSpanContext(ROOT_CONTEXT, { ...derived, traceFlags: TraceFlags.SAMPLED, isRemote: true });
}

function httpStatusOf(errorCode: string | null): number | undefined {
  const match = errorCode === null ? null : /^HTTP_(\d{3})$/.exec(errorCode);
  return match === null ? undefined : Number(match[1]);
}

/** The span attributes of one record. */
export function spanAttributes(record: ToolExecutionRecord, content = true): Attributes {
  const toolCallId = record.context_snapshot['tool_call_id'];
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': record.tool_name,
    'gen_ai.tool.type': 'function',
    'gen_ai.tool.call.id': typeof toolCallId === 'string' ? toolCallId : record.execution_id,
    'faultline.execution_id': record.execution_id,
    'faultline.trace_id': record.trace_id,
    'faultline.step_index': record.step_index,
    'faultline.status': record.status,
    'faultline.retry_count': record.retry_count,
    'faultline.breaker_state': record.breaker_state,
    'faultline.idempotent': record.idempotent,
    'faultline.recovery': record.recovery,
    'faultline.params_hash': record.params_hash,
  };
  if (record.failure_type !== null) attributes['error.type'] = record.failure_type;
  if (record.failure_stage !== null) attributes['faultline.failure.stage'] = record.failure_stage;
  if (record.failure_category !== null) attributes['faultline.failure.category'] = record.failure_category;
  if (record.error_code !== null) attributes['faultline.error_code'] = record.error_code;
  const status = httpStatusOf(record.error_code);
  if (status !== undefined) attributes['http.response.status_code'] = status;
  if (record.feedback !== null) {
    attributes['faultline.feedback.action'] = record.feedback.action;
    if (record.feedback.retry_after_ms !== null) attributes['faultline.feedback.retry_after_ms'] = record.feedback.retry_after_ms;
  }
  if (record.fault !== null) {
    attributes['faultline.fault.kind'] = record.fault.kind;
    if (record.fault.rule_id !== undefined) attributes['faultline.fault.rule_id'] = record.fault.rule_id;
  }
  const intent = record.context_snapshot['intent'];
  if (typeof intent === 'string') attributes['faultline.intent'] = intent;
  const agent = record.context_snapshot['agent'];
  if (typeof agent === 'string') attributes['gen_ai.agent.name'] = agent;
  if (content) {
    attributes['gen_ai.tool.call.arguments'] = typeof record.input_params === 'string' ? record.input_params : JSON.stringify(record.input_params ?? null);
    if (record.raw_output !== null) attributes['gen_ai.tool.call.result'] = record.raw_output;
  }
  return attributes;
}

/** The metric names, as the OTel API takes them (a Prometheus exporter adds the unit and `_total`). */
export const OTEL_METRIC_NAMES = {
  /** Histogram, seconds: one logical call, retries and backoff included (the GenAI conventions' metric). */
  duration: 'gen_ai.execute_tool.duration',
  /** Counter, `{attempt}`: every try the runtime made, by outcome. */
  attempts: 'faultline.tool.attempts',
} as const;

/**
 * The GenAI conventions' advised bucket boundaries for operation durations, in seconds: doubling
 * from 10 ms to about 80 s, which spans a local lookup to a slow remote tool under retries.
 */
const DURATION_BOUNDARIES_SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/** The low-cardinality attributes of a record's metrics. */
function metricAttributes(record: ToolExecutionRecord): Attributes {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': record.failure_type === UNKNOWN_TOOL_TYPE ? UNKNOWN_TOOL_LABEL : record.tool_name,
    'gen_ai.tool.type': 'function',
  };
  const agent = record.context_snapshot['agent'];
  if (typeof agent === 'string') attributes['gen_ai.agent.name'] = agent;
  return attributes;
}

function spanRecorder(tracer: Tracer, options: OtelRecordListenerOptions): (record: ToolExecutionRecord) => void {
  const content = options.content ?? true;
  return (record) => {
    const startTime = Date.parse(record.created_at);
    const span = tracer.startSpan(
      `execute_tool ${record.tool_name}`,
      { kind: SpanKind.INTERNAL, startTime, attributes: spanAttributes(record, content) },
      options.parent?.(record) ?? parentOf(record),
    );
    for (const attempt of record.attempts) {
      const attributes: Attributes = { 'faultline.attempt': attempt.attempt, 'faultline.outcome': attempt.outcome, 'faultline.duration_ms': attempt.duration_ms, 'faultline.delay_before_ms': attempt.delay_before_ms };
      if (attempt.failure_type !== null) attributes['error.type'] = attempt.failure_type;
      if (attempt.error_code !== null) attributes['faultline.error_code'] = attempt.error_code;
      span.addEvent('faultline.attempt', attributes, Date.parse(attempt.started_at));
    }
    if (record.status !== 'success') span.setStatus({ code: SpanStatusCode.ERROR, message: record.error_message ?? record.failure_type ?? record.status });
    span.end(startTime + record.duration_ms);
  };
}

function metricRecorder(meter: Meter): (record: ToolExecutionRecord) => void {
  const duration = meter.createHistogram(OTEL_METRIC_NAMES.duration, {
    description: 'Duration of tool executions: one logical call, retries and backoff included.',
    unit: 's',
    advice: { explicitBucketBoundaries: DURATION_BOUNDARIES_SECONDS },
  });
  const attempts = meter.createCounter(OTEL_METRIC_NAMES.attempts, {
    description: 'Attempts of tool executions: every try the runtime made, by outcome (a logical call with retries counts several).',
    unit: '{attempt}',
  });
  return (record) => {
    const base = metricAttributes(record);
    const call: Attributes = { ...base, 'faultline.status': record.status };
    if (record.status !== 'success' && record.failure_type !== null) call['error.type'] = record.failure_type;
    duration.record(Math.max(0, record.duration_ms) / 1000, call);
    for (const attempt of record.attempts) {
      const tried: Attributes = { ...base, 'faultline.attempt.outcome': attempt.outcome };
      if (attempt.failure_type !== null) tried['error.type'] = attempt.failure_type;
      attempts.add(1, tried);
    }
  };
}

/**
 * An `onRecord` listener that ends one span per record (with a `tracer`) and records its metrics
 * (with a `meter`). Instruments are created once, here.
 */
export function otelRecordListener(options: OtelRecordListenerOptions): (record: ToolExecutionRecord) => void {
  const recorders: ((record: ToolExecutionRecord) => void)[] = [];
  if (options.tracer !== undefined) recorders.push(spanRecorder(options.tracer, options));
  if (options.meter !== undefined) recorders.push(metricRecorder(options.meter));
  if (recorders.length === 0) throw new ConfigError('otelRecordListener needs a tracer, a meter or both', 'tracer');
  return (record) => {
    for (const recorder of recorders) recorder(record);
  };
}
