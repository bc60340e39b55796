/**
 * One tools/call through the proxy as a ToolExecutionRecord (see wire-record.ts for the shape
 * every proxied call shares).
 */
import type { FoundSecrets, Redactor } from '../../record/redact.js';
import { toJsonText, truncateText } from '../../record/truncate.js';
import type { InjectedFault, ToolExecutionRecord } from '../../core/record-types.js';
import type { Classification } from '../../runtime/classify.js';
import type { CallStatus } from '../../core/taxonomy.js';
import { buildWireRecord } from '../wire-record.js';

export interface ProxiedCall {
  executionId: string;
  traceId: string;
  stepIndex: number;
  toolName: string;
  args: unknown;
  startedAt: number;
  endedAt: number;
  status: CallStatus;
  /** Undefined for a success. */
  classification: Classification | undefined;
  /** What `raw_output` shows: the result content, or the error's data. */
  shown: unknown;
  idempotent: boolean;
  fault: InjectedFault | null;
  context: Record<string, unknown>;
}

export interface RecordShaping {
  redactor: Redactor | undefined;
  maxOutputChars: number;
}

export function buildCallRecord(call: ProxiedCall, shaping: RecordShaping): ToolExecutionRecord {
  const { redactor, maxOutputChars } = shaping;
  const found: FoundSecrets = [];
  const redactValue = <T>(value: T): T => (redactor === undefined ? value : redactor.value(value, found));
  const params = redactValue(call.args);
  let c = call.classification;
  // Messages can quote secrets back (an echoed token); the record and the hint both get the redacted text.
  if (c !== undefined && redactor !== undefined) c = { ...c, message: redactor.text(c.message, found) };
  let rawOutput: string | null = null;
  let outputLength: number | null = null;
  if (call.shown !== undefined) {
    const text = toJsonText(redactValue(call.shown));
    outputLength = text.length;
    rawOutput = truncateText(text, maxOutputChars);
  }
  return buildWireRecord({
    executionId: call.executionId,
    traceId: call.traceId,
    stepIndex: call.stepIndex,
    toolName: call.toolName,
    params,
    status: call.status,
    classification: c,
    rawOutput,
    outputLength,
    startedAt: call.startedAt,
    endedAt: call.endedAt,
    idempotent: call.idempotent,
    fault: call.fault,
    context: redactValue(call.context),
    redactor,
    found,
  });
}
