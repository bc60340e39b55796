/**
 * OpenTelemetry: every record as an `execute_tool` span in the GenAI semantic conventions, so the
 * calls faultline sees show up in whatever tracing backend a team already runs (Jaeger, Tempo,
 * Langfuse, Phoenix, an OTel collector writing OTLP JSON), and come back in through
 * `faultline import --format otel` with nothing lost that the importer reads.
 *
 * Use it as (or inside) the runtime's `onRecord`. The span starts at the call's start
 * (`created_at`) and lasts `duration_ms`; attempts become `faultline.attempt` events. Its parent
 * is the active span when the agent runs inside one (an OTel context manager carries it through
 * `rt.execute`); otherwise spans of one faultline trace share an OTel trace id derived from the
 * record's `trace_id`, so a conversation stays one trace in the backend.
 *
 * Attributes: `gen_ai.operation.name` (`execute_tool`), `gen_ai.tool.name`, `gen_ai.tool.type`,
 * `gen_ai.tool.call.id` (the model's tool-call id when the integrations recorded one, else the
 * execution id), `error.type` (the failure type), `http.response.status_code` for HTTP failures,
 * and `faultline.*` for the rest of the record (status, stage, category, error code, retries,
 * breaker state, idempotency, injected fault, feedback action, recovery, params hash). With
 * `content` (default true), `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result` carry the
 * record's input and output, which the runtime has already redacted and truncated.
 *
 * @example
 * const tracer = trace.getTracer('my-agent');
 * const rt = createRuntime({ tools, onRecord: otelRecordListener({ tracer }) });
 */
import { createHash } from 'node:crypto';
import { context as otelContext, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Tracer } from '@opentelemetry/api';
import type { ToolExecutionRecord } from '../record/types.js';

export interface OtelRecordListenerOptions {
  tracer: Tracer;
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
  if (content) {
    attributes['gen_ai.tool.call.arguments'] = typeof record.input_params === 'string' ? record.input_params : JSON.stringify(record.input_params ?? null);
    if (record.raw_output !== null) attributes['gen_ai.tool.call.result'] = record.raw_output;
  }
  return attributes;
}

/** An `onRecord` listener that ends one span per record. */
export function otelRecordListener(options: OtelRecordListenerOptions): (record: ToolExecutionRecord) => void {
  const { tracer, content = true } = options;
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
