/**
 * OpenTelemetry GenAI tool spans in OTLP JSON: the collector's file exporter writes one
 * `{ resourceSpans: [{ scopeSpans: [{ spans: [...] }] }] }` request per line. Spans with
 * `gen_ai.operation.name = execute_tool` are steps (`gen_ai.tool.name`,
 * `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`); a span status of ERROR is a failure,
 * classified from `http.response.status_code` or `error.type`. Spans are grouped by traceId
 * across lines, ordered by start time, and the trajectories come out when the input ends.
 */
import { paramsHash } from '../../core/params-hash.js';
import { classifyError } from '../../runtime/classify.js';
import { backoffCeiling, DEFAULT_BACKOFF } from '../../runtime/backoff.js';
import { categoryOfType } from '../../core/taxonomy.js';
import { assembleTrajectory, NO_FAILURE, stepFailure } from '../assemble.js';
import { deriveDecisions, type DecisionCall } from '../decide.js';
import type { FinalOutcome, Trajectory, TrajectoryStep } from '../../core/trajectory-types.js';
import { parseArguments } from './conversation.js';
import { nowIso, type ImportItem, type Importer, type ImportOptions } from './import-types.js';
import { isRecord, readJsonLines } from './json-lines.js';
import { failureResponse, parseResultText, readBody, type ResultFailure } from './tool-result.js';

interface ToolSpan {
  spanId: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  error: boolean;
  statusMessage: string;
}

interface TraceParts {
  line: number;
  spans: ToolSpan[];
  /** From the root span: OK -> success, ERROR -> failure. */
  outcome: FinalOutcome;
  /** The root span's status that stated it; null when no root span stated one. */
  outcomeEvidence: string | null;
}

/** An OTLP AnyValue as a plain value. int64 values arrive as strings in OTLP JSON. */
function anyValue(value: unknown): unknown {
  if (!isRecord(value)) return undefined;
  if ('stringValue' in value) return value['stringValue'];
  if ('boolValue' in value) return value['boolValue'];
  if ('intValue' in value) return Number(value['intValue']);
  if ('doubleValue' in value) return value['doubleValue'];
  if (isRecord(value['arrayValue'])) return ((value['arrayValue']['values'] as unknown[] | undefined) ?? []).map(anyValue);
  if (isRecord(value['kvlistValue'])) return attributesOf(value['kvlistValue']['values']);
  return undefined;
}

function attributesOf(list: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list) if (isRecord(kv) && typeof kv['key'] === 'string') out[kv['key']] = anyValue(kv['value']);
  return out;
}

function nanosToMs(value: unknown): number {
  if (typeof value !== 'string' && typeof value !== 'number') return NaN;
  try {
    // Nanosecond epochs exceed 2^53; BigInt keeps the millisecond part exact.
    return Number(BigInt(value) / 1_000_000n);
  } catch {
    return NaN;
  }
}

/** STATUS_CODE_ERROR is 2; OTLP JSON may spell the enum either way. */
const statusCodeOf = (status: unknown): number => {
  const code = isRecord(status) ? status['code'] : undefined;
  if (code === 2 || code === 'STATUS_CODE_ERROR') return 2;
  if (code === 1 || code === 'STATUS_CODE_OK') return 1;
  return 0;
};

const SPAN_ERROR = 'flag:span.status=ERROR';

function failureOf(span: ToolSpan): ResultFailure | null {
  if (!span.error) return null;
  const attrs = span.attributes;
  const errorType = typeof attrs['error.type'] === 'string' ? attrs['error.type'] : undefined;
  const message = span.statusMessage || errorType || 'the tool span ended with status ERROR';
  const retryHeader = attrs['http.response.header.retry-after'];
  const retryAfter = Array.isArray(retryHeader) ? retryHeader[0] : retryHeader;
  const status = typeof attrs['http.response.status_code'] === 'number' ? attrs['http.response.status_code'] : errorType !== undefined && /^\d{3}$/.test(errorType) ? Number(errorType) : undefined;
  if (status !== undefined && status >= 400) {
    const failure = readBody({ error: message }, { status, retryAfter }).failure;
    if (failure !== null) return { ...failure, message, evidence: { confidence: 0.95, evidence: [`field:http.response.status_code=${status}`, SPAN_ERROR] } };
  }
  if (errorType !== undefined) {
    const evidence = { confidence: 0.9, evidence: [`field:error.type=${errorType}`, SPAN_ERROR] };
    const known = categoryOfType(errorType);
    if (known !== undefined) return { category: known, type: errorType, stage: 'execution', code: errorType.toUpperCase(), message, evidence };
    // error.type is often an exception class or errno code; the runtime's classifier knows those.
    const c = classifyError({ name: errorType, code: errorType, message }, 0);
    if (!(c.category === 'system' && c.type === 'runtime_error')) return { category: c.category, type: c.type, stage: c.stage, code: c.code, message, evidence };
  }
  return { category: 'business', type: 'tool_reported_error', stage: 'execution', code: errorType ?? 'OTEL_ERROR', message, evidence: { confidence: 0.7, evidence: [SPAN_ERROR] } };
}

function trajectoryOf(traceId: string, parts: TraceParts, options?: ImportOptions): Trajectory {
  // Spans that start in the same millisecond keep their order when the exporter wrote it
  // (faultline's `faultline.step_index`); otherwise the span id decides, for a stable order.
  const stepOf = (span: ToolSpan) => (typeof span.attributes['faultline.step_index'] === 'number' ? span.attributes['faultline.step_index'] : Number.MAX_SAFE_INTEGER);
  const spans = [...parts.spans].sort((a, b) => a.startMs - b.startMs || stepOf(a) - stepOf(b) || a.spanId.localeCompare(b.spanId));
  const failures = spans.map(failureOf);
  const calls = spans.map((span, i): DecisionCall => {
    const input = parseArguments(span.attributes['gen_ai.tool.call.arguments']);
    const call: DecisionCall = { tool_name: span.attributes['gen_ai.tool.name'] as string, params_hash: paramsHash(input), input_params: input, failed: failures[i] !== null, startMs: span.startMs, endMs: span.endMs };
    const failure = failures[i];
    if (failure != null && (failure.retryAfterMs !== undefined || ['network', 'rate_limit', 'system'].includes(failure.category))) {
      call.requiredWaitMs = failure.retryAfterMs ?? backoffCeiling(0, DEFAULT_BACKOFF);
    }
    return call;
  });
  const decisions = deriveDecisions(calls);
  const steps = spans.map((span, i): TrajectoryStep => {
    const failure = failures[i] ?? null;
    const response = failureResponse(failure);
    const result = span.attributes['gen_ai.tool.call.result'];
    if (result !== undefined) response.body = typeof result === 'string' ? parseResultText(result) : result;
    return {
      step_index: i + 1,
      tool_name: calls[i]!.tool_name,
      input_params: calls[i]!.input_params,
      response,
      status: failure === null ? 'success' : failure.type === 'timeout' ? 'timeout' : 'failure',
      ...(failure === null ? NO_FAILURE : stepFailure(failure.category, failure.type, failure.stage)),
      agent_decision: decisions[i]!,
      decision_correctness: null,
      correctness_reason: null,
      correct_action: null,
      source_ref: span.spanId,
      started_at: new Date(span.startMs).toISOString(),
      ...(failure?.evidence === undefined ? {} : { failure_evidence: failure.evidence }),
    };
  });
  return assembleTrajectory({
    source: 'otel',
    source_id: traceId,
    task_description: null,
    final_outcome: parts.outcome,
    outcome_basis: parts.outcomeEvidence === null ? { source: 'unstated', confidence: 0, evidence: null } : { source: 'stated', confidence: 1, evidence: parts.outcomeEvidence },
    created_at: spans.length > 0 ? new Date(spans[0]!.startMs).toISOString() : nowIso(options),
    steps,
    metadata: options?.domain === undefined ? {} : { domain: options.domain },
  });
}

/** The spans of one OTLP request, or the reason the line is malformed. */
function spansOf(value: unknown): Record<string, unknown>[] | string {
  if (!isRecord(value) || !Array.isArray(value['resourceSpans'])) return 'expected an OTLP JSON object with "resourceSpans"';
  const spans: Record<string, unknown>[] = [];
  for (const [r, resource] of value['resourceSpans'].entries()) {
    const scopes = isRecord(resource) ? resource['scopeSpans'] : undefined;
    if (!Array.isArray(scopes)) return `resourceSpans[${r}] has no scopeSpans array`;
    for (const scope of scopes) {
      const list = isRecord(scope) ? scope['spans'] : undefined;
      if (!Array.isArray(list)) return `resourceSpans[${r}].scopeSpans has an entry without a spans array`;
      for (const span of list) {
        if (!isRecord(span) || typeof span['traceId'] !== 'string' || span['traceId'] === '') return 'a span has no traceId';
        spans.push(span);
      }
    }
  }
  return spans;
}

/** Reads OTLP JSON lines; trajectories (one per trace with tool spans) come out when the input ends. */
export const importOtel: Importer = async function* (input, options): AsyncGenerator<ImportItem> {
  const traces = new Map<string, TraceParts>();
  const rootOutcome = new Map<string, FinalOutcome>();
  for await (const item of readJsonLines(input)) {
    if ('error' in item) {
      yield { kind: 'skipped', line: item.line, reason: item.error };
      continue;
    }
    const spans = spansOf(item.value);
    if (typeof spans === 'string') {
      yield { kind: 'skipped', line: item.line, reason: spans };
      continue;
    }
    const tools: { traceId: string; span: ToolSpan }[] = [];
    let bad: string | undefined;
    for (const span of spans) {
      const traceId = span['traceId'] as string;
      const attributes = attributesOf(span['attributes']);
      const code = statusCodeOf(span['status']);
      if (span['parentSpanId'] === undefined || span['parentSpanId'] === '') {
        if (code !== 0) rootOutcome.set(traceId, code === 1 ? 'success' : 'failure');
      }
      if (attributes['gen_ai.operation.name'] !== 'execute_tool') continue;
      const startMs = nanosToMs(span['startTimeUnixNano']);
      const endMs = nanosToMs(span['endTimeUnixNano']);
      if (typeof attributes['gen_ai.tool.name'] !== 'string') bad ??= `execute_tool span ${String(span['spanId'])} has no gen_ai.tool.name`;
      else if (Number.isNaN(startMs) || Number.isNaN(endMs)) bad ??= `execute_tool span ${String(span['spanId'])} has no start/end time`;
      const status = span['status'];
      tools.push({
        traceId,
        span: {
          spanId: typeof span['spanId'] === 'string' ? span['spanId'] : '',
          startMs,
          endMs,
          attributes,
          error: code === 2,
          statusMessage: isRecord(status) && typeof status['message'] === 'string' ? status['message'] : '',
        },
      });
    }
    if (bad !== undefined) {
      yield { kind: 'skipped', line: item.line, reason: bad };
      continue;
    }
    for (const { traceId, span } of tools) {
      let parts = traces.get(traceId);
      if (parts === undefined) traces.set(traceId, (parts = { line: item.line, spans: [], outcome: 'unknown', outcomeEvidence: null }));
      parts.spans.push(span);
    }
  }
  for (const [traceId, parts] of traces) {
    const root = rootOutcome.get(traceId);
    if (root !== undefined) {
      parts.outcome = root;
      parts.outcomeEvidence = root === 'success' ? 'root span status=OK' : 'root span status=ERROR';
    }
    yield { kind: 'trajectory', trajectory: trajectoryOf(traceId, parts, options), line: parts.line };
  }
};
