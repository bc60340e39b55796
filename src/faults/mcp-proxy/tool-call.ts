/**
 * One tools/call through the proxy: ask the plan, forward (or not), apply the fault in its MCP
 * form (see fault-answers.ts), record what the client was sent, and send it. Once the upstream is
 * gone, calls fail as upstream-loss.ts describes, whatever the plan says.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, type CallToolRequest, type CallToolResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Recorder } from '../../record/recorder.js';
import type { Redactor } from '../../record/redact.js';
import type { ToolExecutionRecord } from '../../core/record-types.js';
import { uuidv7 } from '../../record/uuid-v7.js';
import { classifyError, classifyOutput, rejection, timeoutClassification, type Classification } from '../../runtime/classify.js';
import { compileOutputValidator, describeIssues, redactIssues } from '../../runtime/validate.js';
import type { Clock } from '../../core/clock.js';
import { retryAfterFrom } from '../../runtime/retry-after.js';
import type { FaultDecision } from '../decision.js';
import { DRY_RUN_META } from '../dry-run.js';
import type { FaultPlan } from '../plan.js';
import { buildCallRecord, type RecordShaping } from './call-record.js';
import { dropAnswer, respondAnswer, timeoutAnswer, type FaultAnswer } from './fault-answers.js';
import { malformedResult, rawBody, toolOutput, withOutput } from './result-output.js';
import { connectionErrno, JsonRpcError, relayedError } from './rpc-error.js';
import { isIdempotentTool, type ToolCatalog } from './tool-catalog.js';
import { UpstreamLostError } from './upstream-loss.js';

/** Where a record goes: a Recorder, or anything with `enqueue`. */
export type RecordSink = Pick<Recorder, 'enqueue'>;

/** What the SDK hands a server's request handler. */
export type HandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The downstream session a call arrived on. */
export interface CallSession {
  traceId: string;
  nextStep(): number;
  context(): Record<string, unknown>;
}

export interface ToolCallDeps {
  plan: FaultPlan;
  clock: Clock;
  catalog: ToolCatalog;
  /**
   * Sends tools/call upstream with the caller's signal and progress relay. Rejects with an
   * UpstreamLostError when the upstream is gone, or went away while the call was out.
   */
  forward: (params: CallToolRequest['params'], extra: HandlerExtra) => Promise<CallToolResult>;
  /** True once the upstream has gone away; `forward` then fails every call. */
  upstreamGone: () => boolean;
  shaping: RecordShaping;
  /** A promise when the sink asks the caller to wait (a durable recorder, a full queue in `block` mode). */
  emit: (record: ToolExecutionRecord) => Promise<void> | undefined;
  log: (line: string) => void;
}

type Outcome =
  | { kind: 'result'; served: CallToolResult; classified?: CallToolResult; type?: string; retryAfterMs?: number; rewritten?: true }
  | { kind: 'error'; error: JsonRpcError; classifyAs?: unknown }
  /** The client cancelled or went away before it was answered; `heldByFault` when a fault was holding the answer back. */
  | { kind: 'abandoned'; heldByFault: boolean };

/** Resolves when the signal aborts; arms no timer, so a hung call costs nothing while it waits. */
function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

function fromAnswer(answer: FaultAnswer, retryAfterMs: number | undefined): Outcome {
  if (answer.form === 'error') return { kind: 'error', error: answer.error, ...(answer.classifyAs === undefined ? {} : { classifyAs: answer.classifyAs }) };
  return {
    kind: 'result',
    served: answer.served,
    classified: answer.classified,
    ...(answer.type === undefined ? {} : { type: answer.type }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

async function sleepOrAbandon(clock: Clock, ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await clock.sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Handles one tools/call. Resolves with the result to send, or rejects with the JSON-RPC error
 * to send; for a call the client abandoned it rejects too, and the SDK sends nothing.
 */
export async function proxyToolCall(deps: ToolCallDeps, session: CallSession, request: CallToolRequest, extra: HandlerExtra): Promise<CallToolResult> {
  const { plan, clock, catalog } = deps;
  const startedAt = clock.now();
  const stepIndex = session.nextStep();
  const toolName = request.params.name;
  const args: unknown = request.params.arguments ?? {};
  const tool = await catalog.get(toolName);
  const hasOutputSchema = tool?.outputSchema !== undefined;
  // Asked before the plan: a fault injected in front of a dead server would be recorded as the
  // cause of a failure that the dead server caused, and would use up the rule's counters.
  let decision: FaultDecision | undefined;
  if (!deps.upstreamGone()) {
    try {
      decision = plan.decide({ toolName, args, now: startedAt, transport: 'mcp' });
    } catch (error) {
      // A broken plan must not break the call it was asked about.
      deps.log(`fault plan failed for ${toolName}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  const signal = extra.signal;
  // A rewrite that meets a failure has nothing to rewrite: the client gets the failure as it came.
  let faultApplied = true;
  // A dry run is marked by the proxy alone (lost_write, recorded as such): a client's own mark is dropped.
  const paramsFor = (dryRun: boolean): CallToolRequest['params'] => {
    const meta = request.params._meta as Record<string, unknown> | undefined;
    if (!dryRun && (meta === undefined || !Object.hasOwn(meta, DRY_RUN_META))) return request.params;
    const { [DRY_RUN_META]: _client, ...rest } = meta ?? {};
    return { ...request.params, _meta: dryRun ? { ...rest, [DRY_RUN_META]: true } : rest };
  };
  const forward = async (dryRun = false): Promise<Outcome> => {
    try {
      const result = await deps.forward(paramsFor(dryRun), extra);
      if (result.isError !== true && decision?.kind !== 'stale') {
        // Stale's own rewrite remembers the fresh output; observing it here as well would count it twice.
        plan.observe({ toolName, args, output: toolOutput(result).value, now: clock.now() });
      }
      return { kind: 'result', served: result };
    } catch (error) {
      if (error instanceof UpstreamLostError) return { kind: 'error', error: error.answer.error, classifyAs: error.answer.classifyAs };
      // A connection that failed is recorded by its errno (connection_refused is not ambiguous; -32000 alone would say reset).
      return connectionErrno(error) === undefined ? { kind: 'error', error: relayedError(error) } : { kind: 'error', error: relayedError(error), classifyAs: error };
    }
  };

  const run = async (d: FaultDecision | undefined): Promise<Outcome> => {
    if (d === undefined) return forward();
    if (d.delayMs > 0 && !(await sleepOrAbandon(clock, d.delayMs, signal))) return { kind: 'abandoned', heldByFault: true };
    const upstream = d.forward ? await forward() : undefined;
    if (signal.aborted) return { kind: 'abandoned', heldByFault: d.delayMs > 0 || d.effect.type === 'timeout' };
    const effect = d.effect;
    // A fault after the call ran (commit_then_drop, a status with commit: true) follows only a call
    // that did its work: the server's own failure goes to the client as it came.
    if (upstream !== undefined && effect.type !== 'pass' && (upstream.kind !== 'result' || upstream.served.isError === true)) {
      faultApplied = false;
      return upstream;
    }
    const now = clock.now();
    switch (effect.type) {
      case 'pass':
        return upstream ?? forward();
      case 'respond':
        return fromAnswer(respondAnswer(effect, hasOutputSchema), retryAfterFrom({ headers: effect.headers }, now));
      case 'drop':
        return fromAnswer(dropAnswer(effect.code), undefined);
      case 'timeout':
        if (effect.afterMs === null) {
          await untilAborted(signal);
          return { kind: 'abandoned', heldByFault: true };
        }
        if (!(await sleepOrAbandon(clock, effect.afterMs, signal))) return { kind: 'abandoned', heldByFault: true };
        return fromAnswer(timeoutAnswer(effect.afterMs), undefined);
      case 'malformed': {
        const real = upstream ?? (await forward());
        if (real.kind !== 'result' || real.served.isError === true) {
          faultApplied = false;
          return real;
        }
        return { kind: 'result', served: malformedResult(real.served, effect.render(rawBody(real.served))), rewritten: true };
      }
      case 'rewrite': {
        const real = upstream ?? (await forward());
        if (real.kind !== 'result' || real.served.isError === true) {
          faultApplied = false;
          return real;
        }
        const output = toolOutput(real.served);
        return { kind: 'result', served: withOutput(real.served, output, effect.rewrite(output.value)), rewritten: true };
      }
      case 'dry_run': {
        // The upstream's own answer to the call run dry; a failure goes out as it came, and is no fault.
        const real = await forward(true);
        if (real.kind !== 'result' || real.served.isError === true) faultApplied = false;
        return real;
      }
    }
  };

  const outcome = await run(decision).catch((error: unknown): Outcome => {
    // A fault that fails to apply still gets an answer and a record, rather than a call that dies silently.
    const message = error instanceof Error ? error.message : String(error);
    deps.log(`applying ${decision?.kind ?? 'no'} fault to ${toolName} failed: ${message}`);
    return { kind: 'error', error: new JsonRpcError(ErrorCode.InternalError, `the proxy failed: ${message}`) };
  });
  const endedAt = clock.now();
  const final: Outcome = signal.aborted && outcome.kind !== 'abandoned' ? { kind: 'abandoned', heldByFault: false } : outcome;

  let classification: Classification | undefined;
  let shown: unknown;
  let status: 'success' | 'failure' | 'timeout' = 'failure';
  switch (final.kind) {
    case 'result': {
      shown = final.served.content;
      classification = classifyOutput(final.classified ?? final.served, endedAt);
      if (classification !== undefined) {
        if (final.type !== undefined) classification.type = final.type;
        if (final.retryAfterMs !== undefined) classification.retryAfterMs = final.retryAfterMs;
      }
      if (classification === undefined && final.rewritten === true && tool?.outputSchema !== undefined) {
        classification = outputSchemaMismatch(toolName, tool.outputSchema, final.served, deps.shaping.redactor);
      }
      status = classification === undefined ? 'success' : 'failure';
      break;
    }
    case 'error':
      shown = final.error.data;
      classification = classifyError(final.classifyAs ?? final.error, endedAt);
      break;
    case 'abandoned':
      if (final.heldByFault) {
        // The client stopped waiting for an answer the fault withheld: its own timeout, in all likelihood.
        classification = timeoutClassification(endedAt - startedAt);
        status = 'timeout';
      } else {
        classification = classifyError(new DOMException(`the client cancelled the call to ${toolName}`, 'AbortError'), endedAt);
      }
      break;
  }

  // The protocol answers an unknown tool and invalid arguments alike (-32602); the catalog says which.
  if (classification?.code === 'MCP_-32602' && tool === undefined) classification = rejection('request_build', 'parameter', 'unknown_tool', 'MCP_-32602', classification.message);

  const record = buildCallRecord(
    {
      executionId: uuidv7(startedAt),
      traceId: session.traceId,
      stepIndex,
      toolName,
      args,
      startedAt,
      endedAt,
      status,
      classification,
      shown,
      idempotent: isIdempotentTool(tool),
      // `fault` is ground truth: what the plan decided but did not do to the answer stays out of it, noted beside it as the HTTP proxy does.
      fault: faultApplied ? (decision?.fault ?? null) : null,
      context: faultApplied || decision === undefined ? session.context() : { ...session.context(), fault_not_applied: decision.fault },
    },
    deps.shaping,
  );
  const stored = deps.emit(record);
  if (stored !== undefined) await stored;

  switch (final.kind) {
    case 'result':
      return final.served;
    case 'error':
      throw final.error;
    case 'abandoned':
      // The SDK sends nothing for a request the client cancelled.
      throw new JsonRpcError(ErrorCode.ConnectionClosed, 'the client cancelled the request');
  }
}

/**
 * A rewritten result the client will refuse: an MCP client checks a tool's structured content
 * against its declared `outputSchema` (the SDK's Client throws -32602, or -32600 when there is no
 * structured content at all). The record says what the client meets, as the runtime classifies
 * an output that breaks a tool's schema; undefined when the result still fits.
 */
function outputSchemaMismatch(toolName: string, outputSchema: object, served: CallToolResult, redactor: Redactor | undefined): Classification | undefined {
  let problem: string;
  if (served.structuredContent === undefined) {
    problem = 'has an output schema but returned no structured content';
  } else {
    const checked = compileOutputValidator(outputSchema)(served.structuredContent);
    if (checked.ok) return undefined;
    // The issues quote values cut short, which the record's redaction of the message could no longer recognise.
    const issues = redactor === undefined ? checked.issues : redactIssues(checked.issues, redactor);
    problem = `returned structured content that does not match its output schema: ${describeIssues(issues)}`;
  }
  return rejection('result_parse', 'system', 'output_schema_mismatch', 'OUTPUT_SCHEMA_MISMATCH', `${toolName} ${problem}`);
}
