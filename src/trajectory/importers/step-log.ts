/**
 * Seed 000's step log (section 2.1): JSONL, one tool call per line with trace_id, step_index,
 * timestamp, tool_name, intent, input_params, raw_response { status_code, body },
 * agent_observation, next_action { type, params_delta, reasoning } and failure_annotation.
 *
 * Lines of one trace may be interleaved with others (several agents logging to one file), so
 * steps are grouped by trace_id and the trajectories come out when the file ends: memory holds
 * the steps, not the file text. A logged next_action is the agent's own account and wins over
 * the derived one; a logged annotation wins over the runtime mapping.
 */
import { paramsHash } from '../../core/params-hash.js';
import { backoffCeiling, DEFAULT_BACKOFF } from '../../runtime/backoff.js';
import type { TrainingFailureSubtype, TrainingFailureType } from '../../core/taxonomy.js';
import { assembleTrajectory, NO_FAILURE, stepFailure, type StepFailure } from '../assemble.js';
import { deriveDecisions, type DecisionCall } from '../decide.js';
import type { AgentDecision, CorrectAction, DecisionAction, DecisionCorrectness, Trajectory, TrajectoryStep } from '../../core/trajectory-types.js';
import { nowIso, type ImportItem, type Importer, type ImportOptions } from './import-types.js';
import { isRecord, readJsonLines } from './json-lines.js';
import { outcomeParts, statedOutcome, type Stated } from './stated-outcome.js';
import { evidenceOfReading, readBody, type ResultReading } from './tool-result.js';

interface LoggedStep {
  line: number;
  entry: Record<string, unknown>;
  step_index: number;
}

const ACTION_NAMES: Record<string, DecisionAction> = {
  proceed: 'proceed',
  continue: 'proceed',
  respond: 'proceed',
  answer: 'proceed',
  finish: 'proceed',
  retry: 'retry',
  retry_with_params: 'retry_with_params',
  retry_with_fixed_params: 'retry_with_params',
  modify_params: 'retry_with_params',
  self_verify_and_retry: 'retry_with_params',
  wait: 'wait_and_retry',
  wait_and_retry: 'wait_and_retry',
  retry_with_backoff: 'wait_and_retry',
  backoff: 'wait_and_retry',
  switch_tool: 'switch_tool',
  switch: 'switch_tool',
  use_fallback: 'switch_tool',
  fallback: 'switch_tool',
  try_alternative: 'switch_tool',
  abort: 'abort',
  stop: 'abort',
  give_up: 'abort',
  escalate: 'escalate',
  escalate_to_user: 'escalate',
  ask_user: 'escalate',
  handoff: 'escalate',
};

const SUBTYPE_PARENT: Record<TrainingFailureSubtype, TrainingFailureType> = {
  timeout: 'infrastructure',
  authz: 'infrastructure',
  '5xx': 'infrastructure',
  rate_limit: 'infrastructure',
  syntactic: 'parameter',
  boundary: 'parameter',
  semantic: 'parameter',
  loop: 'logic',
  idempotency: 'logic',
  cascade: 'logic',
};

/** Seed 000 writes subtypes with suffixes in places (`semantic_error`, `loop_failure`, `idempotency_risk`). */
function subtypeOf(text: unknown): TrainingFailureSubtype | undefined {
  if (typeof text !== 'string') return undefined;
  const bare = text.toLowerCase().replace(/_(?:error|failure|violation|risk)$/, '');
  return Object.hasOwn(SUBTYPE_PARENT, bare) ? (bare as TrainingFailureSubtype) : undefined;
}

const CORRECTNESS = new Set<DecisionCorrectness>(['correct', 'incorrect', 'uncertain']);

interface Annotation {
  label?: { failure_type: TrainingFailureType; failure_subtype: TrainingFailureSubtype };
  decision_correctness: DecisionCorrectness | null;
  correctness_reason: string | null;
  correct_action: CorrectAction | null;
  annotator: string | null;
}

function annotationOf(raw: unknown): Annotation | null {
  if (raw === null || raw === undefined) return null;
  const annotation: Annotation = { decision_correctness: null, correctness_reason: null, correct_action: null, annotator: null };
  const subtype = subtypeOf(isRecord(raw) ? (raw['failure_subtype'] ?? raw['label']) : raw);
  if (subtype !== undefined) annotation.label = { failure_type: SUBTYPE_PARENT[subtype], failure_subtype: subtype };
  if (isRecord(raw)) {
    const correctness = raw['decision_correctness'];
    if (typeof correctness === 'string' && CORRECTNESS.has(correctness as DecisionCorrectness)) annotation.decision_correctness = correctness as DecisionCorrectness;
    if (typeof raw['correctness_reason'] === 'string') annotation.correctness_reason = raw['correctness_reason'];
    const correct = raw['correct_action'];
    if (isRecord(correct) && typeof correct['action'] === 'string') annotation.correct_action = correct as unknown as CorrectAction;
    if (typeof raw['annotator'] === 'string') annotation.annotator = raw['annotator'];
  }
  return annotation;
}

function readingOf(entry: Record<string, unknown>): ResultReading {
  const response = isRecord(entry['raw_response']) ? entry['raw_response'] : {};
  const headers = isRecord(response['headers']) ? response['headers'] : {};
  return readBody(response['body'], { status: response['status_code'], retryAfter: headers['retry-after'] ?? headers['Retry-After'] });
}

function loggedDecision(raw: unknown): AgentDecision | undefined {
  if (!isRecord(raw) || typeof raw['type'] !== 'string') return undefined;
  const source = raw['type'];
  const delta = isRecord(raw['params_delta']) && Object.keys(raw['params_delta']).length > 0 ? raw['params_delta'] : undefined;
  let action = ACTION_NAMES[source.toLowerCase()] ?? 'other';
  // Seed 000's own example logs a retry with changed params as type "retry".
  if (action === 'retry' && delta !== undefined) action = 'retry_with_params';
  const decision: AgentDecision = { action, source_action: source };
  if (delta !== undefined) decision.params_delta = delta;
  if (typeof raw['wait_seconds'] === 'number') decision.wait_seconds = raw['wait_seconds'];
  if (typeof raw['reasoning'] === 'string') decision.reasoning = raw['reasoning'];
  return decision;
}

function trajectoryOf(traceId: string, logged: LoggedStep[], options?: ImportOptions): Trajectory {
  logged.sort((a, b) => a.step_index - b.step_index || a.line - b.line);
  const readings = logged.map((s) => readingOf(s.entry));
  const failures = readings.map((r) => r.failure);
  const times = logged.map((s) => (typeof s.entry['timestamp'] === 'string' ? Date.parse(s.entry['timestamp']) : NaN));
  const calls = logged.map((s, i): DecisionCall => {
    const failure = failures[i] ?? null;
    const call: DecisionCall = {
      tool_name: s.entry['tool_name'] as string,
      params_hash: paramsHash(s.entry['input_params'] ?? null),
      input_params: s.entry['input_params'] ?? null,
      failed: failure !== null,
    };
    const start = times[i]!;
    if (!Number.isNaN(start)) {
      call.startMs = start;
      call.endMs = start + (typeof s.entry['duration_ms'] === 'number' ? s.entry['duration_ms'] : 0);
    }
    if (failure !== null && (failure.retryAfterMs !== undefined || ['network', 'rate_limit', 'system'].includes(failure.category))) {
      call.requiredWaitMs = failure.retryAfterMs ?? backoffCeiling(0, DEFAULT_BACKOFF);
    }
    return call;
  });
  const derived = deriveDecisions(calls);
  let annotator: string | null = null;
  const steps = logged.map((s, i): TrajectoryStep => {
    const failure = failures[i] ?? null;
    const annotation = annotationOf(s.entry['failure_annotation']);
    if (annotation !== null) annotator ??= annotation.annotator ?? 'source_log';
    let labels: StepFailure = failure === null ? NO_FAILURE : stepFailure(failure.category, failure.type, failure.stage);
    // An annotator's label (semantic, loop, ...) says more than a single call can.
    if (annotation?.label !== undefined) labels = { ...labels, ...annotation.label };
    const response: TrajectoryStep['response'] = {};
    const raw = isRecord(s.entry['raw_response']) ? s.entry['raw_response'] : {};
    if (typeof raw['status_code'] === 'number') response.status_code = raw['status_code'];
    if (failure !== null) {
      response.error_code = failure.code;
      response.message = failure.message;
    }
    if (raw['body'] !== undefined) response.body = raw['body'];
    const step: TrajectoryStep = {
      step_index: i + 1,
      tool_name: calls[i]!.tool_name,
      input_params: calls[i]!.input_params,
      response,
      status: failure === null ? 'success' : failure.category === 'network' && failure.type === 'timeout' ? 'timeout' : 'failure',
      ...labels,
      agent_decision: loggedDecision(s.entry['next_action']) ?? derived[i]!,
      decision_correctness: annotation?.decision_correctness ?? null,
      correctness_reason: annotation?.correctness_reason ?? null,
      correct_action: annotation?.correct_action ?? null,
      source_ref: `${traceId}#${s.step_index}`,
    };
    if (!Number.isNaN(times[i]!)) step.started_at = new Date(times[i]!).toISOString();
    const intent = s.entry['intent'];
    if (typeof intent === 'string' && intent !== '') step.intent = intent;
    const observation = s.entry['agent_observation'];
    if (typeof observation === 'string' && observation !== '') step.agent_observation = observation;
    const evidence = evidenceOfReading(readings[i]!);
    if (evidence !== undefined) step.failure_evidence = evidence;
    return step;
  });
  const first = logged[0]!.entry;
  // The outcome is known when the trace ends: the last line that states one wins.
  let stated: Stated | null = null;
  for (const s of logged) stated = statedOutcome(s.entry, 'step') ?? stated;
  const validTimes = times.filter((t) => !Number.isNaN(t));
  const task = typeof first['task_description'] === 'string' ? first['task_description'] : typeof first['intent'] === 'string' ? first['intent'] : null;
  return assembleTrajectory({
    source: 'step-log',
    source_id: traceId,
    task_description: task,
    ...outcomeParts(stated),
    created_at: validTimes.length > 0 ? new Date(Math.min(...validTimes)).toISOString() : nowIso(options),
    steps,
    metadata: { annotator, ...(options?.domain === undefined ? {} : { domain: options.domain }) },
  });
}

function validate(value: unknown): Record<string, unknown> | string {
  if (!isRecord(value)) return 'expected a JSON object (one step)';
  if (typeof value['trace_id'] !== 'string' || value['trace_id'] === '') return 'missing trace_id';
  if (typeof value['step_index'] !== 'number' || !Number.isInteger(value['step_index'])) return 'missing or non-integer step_index';
  if (typeof value['tool_name'] !== 'string' || value['tool_name'] === '') return 'missing tool_name';
  if (value['raw_response'] !== undefined && value['raw_response'] !== null && !isRecord(value['raw_response'])) return 'raw_response is not an object';
  return value;
}

/** Reads a seed 000 step log; trajectories come out, in first-seen trace order, when the input ends. */
export const importStepLog: Importer = async function* (input, options): AsyncGenerator<ImportItem> {
  const traces = new Map<string, LoggedStep[]>();
  for await (const item of readJsonLines(input)) {
    if ('error' in item) {
      yield { kind: 'skipped', line: item.line, reason: item.error };
      continue;
    }
    const entry = validate(item.value);
    if (typeof entry === 'string') {
      yield { kind: 'skipped', line: item.line, reason: entry };
      continue;
    }
    const traceId = entry['trace_id'] as string;
    let steps = traces.get(traceId);
    if (steps === undefined) traces.set(traceId, (steps = []));
    steps.push({ line: item.line, entry, step_index: entry['step_index'] as number });
  }
  for (const [traceId, steps] of traces) {
    const line = Math.min(...steps.map((s) => s.line));
    yield { kind: 'trajectory', trajectory: trajectoryOf(traceId, steps, options), line };
  }
};
