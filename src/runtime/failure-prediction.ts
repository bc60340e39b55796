/**
 * The pre-flight failure predictor (off by default): before a call runs, a model trained with
 * `faultline predictor train` scores the features the call has at that point (its tool, its
 * arguments' shape, what happened earlier in its trace), computed by the same `callFeatures` the
 * predictor export uses. A call is scored once the checks that know for certain (a known tool,
 * valid arguments, the loop guard) have let it through, so what they refuse is told what to fix,
 * not that it would fail. The estimate goes into the record's context_snapshot and a failed
 * call's feedback as `predicted_failure`; with `refuseAbove`, a call scoring at or above it is
 * refused before it runs (`rejected` / `system` / `predicted_failure`).
 *
 * Per trace, the predictor keeps what the features need of its earlier calls; memory is bounded
 * by `maxTraces`, least recently used first.
 */
import { isAbsolute, resolve } from 'node:path';
import { ConfigError } from '../core/errors.js';
import { canonicalJson } from '../core/params-hash.js';
import type { PredictedFailure, ToolExecutionRecord } from '../core/record-types.js';
import { readInputTextSync } from '../io/read-input-file.js';
import { callFeatures, type CallHistory } from '../predict/call-features.js';
import { FailurePredictor, parsePredictorModel, type PredictorModel } from '../predict/predictor-model.js';
import type { Call } from './call.js';
import { rejection, type Classification } from './classify.js';

export interface PredictorOptions {
  /** A model written by `faultline predictor train`: its path (read once, at createRuntime) or the parsed file. */
  model: PredictorModel | string;
  /** Refuse calls whose predicted probability of failure is at or above this, in (0, 1]. Default: none refused. */
  refuseAbove?: number;
  /** Traces whose earlier calls are remembered for the features of their next one. Default 10 000. */
  maxTraces?: number;
}

interface ToolHistory {
  calls: number;
  failures: number;
  lastFailureCategory: string | null;
}

interface TraceHistory {
  calls: number;
  previous: { toolName: string; paramsJson: string } | undefined;
  tools: Map<string, ToolHistory>;
}

function loadModel(model: PredictorModel | string, cwd: string): PredictorModel {
  if (typeof model !== 'string') return parsePredictorModel(model);
  const read = readInputTextSync(isAbsolute(model) ? model : resolve(cwd, model));
  if (!read.ok) throw new ConfigError(`cannot read predictor model ${model}: ${read.reason}`, 'predictor.model', { cause: read.cause });
  let parsed: unknown;
  try {
    parsed = JSON.parse(read.value);
  } catch (error) {
    throw new ConfigError(`predictor model ${model} is not JSON`, 'predictor.model', { cause: error });
  }
  return parsePredictorModel(parsed);
}

export class PreflightPredictor {
  readonly refuseAbove: number | undefined;
  private readonly predictor: FailurePredictor;
  private readonly maxTraces: number;
  private readonly traces = new Map<string, TraceHistory>();

  constructor(options: PredictorOptions, cwd = process.cwd()) {
    if (typeof options !== 'object' || options === null || options.model === undefined) throw new ConfigError('predictor needs { model: <path or parsed model> }', 'predictor.model');
    const { refuseAbove, maxTraces = 10_000 } = options;
    if (refuseAbove !== undefined && !(typeof refuseAbove === 'number' && refuseAbove > 0 && refuseAbove <= 1)) {
      throw new ConfigError(`predictor.refuseAbove must be a number in (0, 1], got ${String(refuseAbove)}`, 'predictor.refuseAbove');
    }
    if (!Number.isInteger(maxTraces) || maxTraces < 1) throw new ConfigError(`predictor.maxTraces must be a positive integer, got ${String(maxTraces)}`, 'predictor.maxTraces');
    this.predictor = new FailurePredictor(loadModel(options.model, cwd));
    this.refuseAbove = refuseAbove;
    this.maxTraces = maxTraces;
  }

  private history(call: Call): CallHistory {
    const trace = call.options.traceId === undefined ? undefined : this.traces.get(call.traceId);
    const tool = trace?.tools.get(call.toolName);
    return {
      stepIndex: (trace?.calls ?? 0) + 1,
      priorCallsSameTool: tool?.calls ?? 0,
      priorFailuresSameTool: tool?.failures ?? 0,
      lastFailureCategory: tool?.lastFailureCategory ?? null,
      previous: trace?.previous,
    };
  }

  /** The estimate for a call about to run. */
  predict(call: Call): PredictedFailure {
    return this.predictor.predict(callFeatures({ toolName: call.toolName, params: call.args, nowMs: call.startedAt, history: this.history(call) }));
  }

  refuses(prediction: PredictedFailure): boolean {
    return this.refuseAbove !== undefined && prediction.probability >= this.refuseAbove;
  }

  /** Remembers an ended call of a trace for the features of the trace's next calls. */
  observe(call: Call, record: ToolExecutionRecord): void {
    if (call.options.traceId === undefined) return;
    let trace = this.traces.get(call.traceId);
    if (trace === undefined) {
      if (this.traces.size >= this.maxTraces) this.traces.delete(this.traces.keys().next().value!);
      trace = { calls: 0, previous: undefined, tools: new Map() };
    } else {
      // Re-inserted, so the Map's order is least recently used first.
      this.traces.delete(call.traceId);
    }
    this.traces.set(call.traceId, trace);
    trace.calls++;
    // The call's own arguments, not the record's redacted copy: the next call is compared with what it sent.
    trace.previous = { toolName: call.toolName, paramsJson: canonicalJson(call.args ?? null) };
    let tool = trace.tools.get(call.toolName);
    if (tool === undefined) trace.tools.set(call.toolName, (tool = { calls: 0, failures: 0, lastFailureCategory: null }));
    tool.calls++;
    if (record.status !== 'success') {
      tool.failures++;
      tool.lastFailureCategory = record.failure_category;
    }
  }
}

/** The classification of a call the predictor refused. */
export function predictedRefusal(toolName: string, prediction: PredictedFailure, threshold: number): Classification {
  const why = prediction.top_features.map((f) => f.feature).join(', ');
  const message =
    `${toolName} was not run: the failure predictor gives this call a ${Math.round(prediction.probability * 100)}% chance of failing ` +
    `(refusing at ${Math.round(threshold * 100)}%)${why === '' ? '' : `, mostly for ${why}`}. Change the arguments, or use another tool.`;
  return rejection('request_build', 'system', 'predicted_failure', 'PREDICTED_FAILURE', message);
}
