/**
 * The builder: stored records (one trace = one trajectory) into trajectories, with each agent
 * decision derived from the call that followed (see `decide.ts`).
 */
import type { ToolExecutionRecord } from '../core/record-types.js';
import { backoffCeiling, DEFAULT_BACKOFF } from '../runtime/backoff.js';
import type { RecordReader } from '../core/store-types.js';
import { assembleTrajectory, NO_FAILURE, stepFailure } from './assemble.js';
import { deriveDecisions, type DecisionCall } from './decide.js';
import type { FinalOutcome, Trajectory, TrajectoryStep } from '../core/trajectory-types.js';

export interface FromRecordsOptions {
  /**
   * The task's outcome, when the caller knows it (a FailBench score, a user rating). Default: the
   * trace's own end state, `success` when its last call succeeded and `failure` otherwise.
   */
  outcomeOf?: (traceId: string, records: readonly ToolExecutionRecord[]) => FinalOutcome;
  /** Default: the first call's `context_snapshot.intent`. */
  taskOf?: (traceId: string, records: readonly ToolExecutionRecord[]) => string | null;
  domain?: string;
}

const HTTP_CODE = /^HTTP_(\d{3})$/;

function parseOutput(raw: string | null): unknown {
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    // Truncated or non-JSON output is still worth keeping as text.
    return raw;
  }
}

function endMsOf(record: ToolExecutionRecord): number {
  const last = record.attempts[record.attempts.length - 1];
  if (last === undefined) return Date.parse(record.created_at) + record.duration_ms;
  return Date.parse(last.started_at) + last.duration_ms;
}

/**
 * The least wait that honours a failure: the server's Retry-After when it gave one, else the next
 * backoff ceiling of the runtime's default schedule after the retries the runtime already made.
 * Failures that waiting cannot fix (bad arguments, not found) have none, so repeating them is a
 * plain retry however long the agent paused.
 */
function requiredWaitMs(record: ToolExecutionRecord): number | undefined {
  const category = record.failure_category;
  const waitable = record.feedback?.retryable === true || category === 'network' || category === 'rate_limit' || category === 'system';
  if (!waitable) return undefined;
  if (record.feedback?.retry_after_ms != null) return record.feedback.retry_after_ms;
  return backoffCeiling(record.retry_count, DEFAULT_BACKOFF);
}

function responseOf(record: ToolExecutionRecord): TrajectoryStep['response'] {
  const response: TrajectoryStep['response'] = {};
  const status = record.error_code === null ? undefined : HTTP_CODE.exec(record.error_code)?.[1];
  if (status !== undefined) response.status_code = Number(status);
  if (record.error_code !== null) response.error_code = record.error_code;
  if (record.error_message !== null) response.message = record.error_message;
  const body = parseOutput(record.raw_output);
  if (body !== undefined) response.body = body;
  return response;
}

function byPosition(a: ToolExecutionRecord, b: ToolExecutionRecord): number {
  return a.step_index - b.step_index || a.created_at.localeCompare(b.created_at) || a.execution_id.localeCompare(b.execution_id);
}

/** One trace's records (any order) as a trajectory. */
export function trajectoryFromRecords(records: readonly ToolExecutionRecord[], options: FromRecordsOptions = {}): Trajectory {
  const ordered = [...records].sort(byPosition);
  const first = ordered[0];
  if (first === undefined) throw new RangeError('a trajectory needs at least one record');
  const traceId = first.trace_id;
  if (ordered.some((r) => r.trace_id !== traceId)) throw new RangeError(`records of several traces given; group them by trace_id first`);

  const calls: DecisionCall[] = ordered.map((r) => {
    const call: DecisionCall = {
      tool_name: r.tool_name,
      params_hash: r.params_hash,
      input_params: r.input_params,
      failed: r.status !== 'success',
      startMs: Date.parse(r.created_at),
      endMs: endMsOf(r),
    };
    const wait = r.status === 'success' ? undefined : requiredWaitMs(r);
    if (wait !== undefined) call.requiredWaitMs = wait;
    return call;
  });
  const decisions = deriveDecisions(calls);
  const steps = ordered.map((r, i): TrajectoryStep => {
    const failure =
      r.status === 'success' || r.failure_category === null || r.failure_stage === null
        ? NO_FAILURE
        : stepFailure(r.failure_category, r.failure_type ?? 'unknown', r.failure_stage);
    return {
      step_index: i + 1,
      tool_name: r.tool_name,
      input_params: r.input_params,
      response: responseOf(r),
      status: r.status,
      ...failure,
      agent_decision: decisions[i]!,
      decision_correctness: null,
      correctness_reason: null,
      correct_action: null,
      source_ref: r.execution_id,
      started_at: r.created_at,
    };
  });
  const last = ordered[ordered.length - 1]!;
  const intent = first.context_snapshot['intent'];
  return assembleTrajectory({
    source: 'faultline',
    source_id: traceId,
    task_description: options.taskOf?.(traceId, ordered) ?? (typeof intent === 'string' ? intent : null),
    final_outcome: options.outcomeOf?.(traceId, ordered) ?? (last.status === 'success' ? 'success' : 'failure'),
    created_at: first.created_at,
    steps,
    metadata: { domain: options.domain ?? null },
  });
}

/** Records of any number of traces, grouped by trace_id, as trajectories in first-seen order. */
export function trajectoriesFromRecords(records: readonly ToolExecutionRecord[], options: FromRecordsOptions = {}): Trajectory[] {
  const groups = new Map<string, ToolExecutionRecord[]>();
  for (const record of records) {
    let group = groups.get(record.trace_id);
    if (group === undefined) groups.set(record.trace_id, (group = []));
    group.push(record);
  }
  return [...groups.values()].map((group) => trajectoryFromRecords(group, options));
}

const PAGE = 1000;

/**
 * Reads each trace from the store (paging with the execution_id cursor) and builds its
 * trajectory; traces with no records are left out.
 */
export async function trajectoriesFromStore(store: RecordReader, traceIds: readonly string[], options: FromRecordsOptions = {}): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for (const traceId of traceIds) {
    const records: ToolExecutionRecord[] = [];
    for (let afterId: string | undefined; ; ) {
      const page = await store.query({ traceId, limit: PAGE, ...(afterId === undefined ? {} : { afterId }) });
      records.push(...page);
      if (page.length < PAGE) break;
      afterId = page[page.length - 1]!.execution_id;
    }
    if (records.length > 0) out.push(trajectoryFromRecords(records, options));
  }
  return out;
}
