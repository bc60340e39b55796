/**
 * The functions a model adapter offers besides the task's own tools. They never reach
 * `task.callTool`: their calls are how the model reports a diagnosis, waits on the scenario's
 * virtual clock, and states how the run ended.
 *
 * Ending convention: a `finish` call ends the run with the status and answer it gives; a turn of
 * plain text without tool calls ends it as `completed` with that text.
 */
import { DIAGNOSIS_CATEGORIES } from '../fault-effects.js';
import type { AgentOutcome, AgentTool, Diagnosis } from '../types.js';

export const REPORT_TOOL_FAILURE = 'report_tool_failure';
export const WAIT_SECONDS = 'wait_seconds';
export const FINISH = 'finish';
export const CONTROL_TOOL_NAMES: readonly string[] = [REPORT_TOOL_FAILURE, WAIT_SECONDS, FINISH];

/** The longest single wait the model may ask for; the scenario's own budget is far shorter. */
export const MAX_WAIT_SECONDS = 3600;


const FINAL_STATUSES: readonly AgentOutcome['status'][] = ['completed', 'gave_up', 'escalated'];

/** A function offered to the model: the common denominator of both wire formats. */
export interface FunctionSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** The task's tools as functions, followed by the control functions. */
export function functionSpecs(tools: readonly AgentTool[]): FunctionSpec[] {
  const names = tools.map((t) => t.name);
  return [...tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema })), ...controlFunctions(names)];
}

/** The control functions; `toolNames` constrains which tool a diagnosis may name. */
export function controlFunctions(toolNames: readonly string[]): FunctionSpec[] {
  return [
    {
      name: REPORT_TOOL_FAILURE,
      description:
        'Record your diagnosis of a tool failure you observed: which tool failed and why. Call it once per distinct failure, including results that succeeded but do not match the request (category "semantic"). It does not retry or fix anything.',
      parameters: {
        type: 'object',
        properties: {
          tool: toolNames.length > 0 ? { type: 'string', enum: [...toolNames], description: 'The tool that failed.' } : { type: 'string', description: 'The tool that failed.' },
          category: { type: 'string', enum: [...DIAGNOSIS_CATEGORIES], description: 'Why it failed.' },
          type: { type: 'string', description: 'A short failure type, e.g. rate_limited, unauthorized, timeout, not_found, server_error.' },
          note: { type: 'string', description: 'One sentence of evidence from the error.' },
        },
        required: ['tool', 'category'],
        additionalProperties: false,
      },
    },
    {
      name: WAIT_SECONDS,
      description: 'Wait before the next call, on the task clock. Use it to honor Retry-After and to back off before retrying.',
      parameters: {
        type: 'object',
        properties: { seconds: { type: 'number', minimum: 0, maximum: MAX_WAIT_SECONDS, description: 'How long to wait, in seconds.' } },
        required: ['seconds'],
        additionalProperties: false,
      },
    },
    {
      name: FINISH,
      description:
        'End the task. status "completed": done, the answer holds the result; "escalated": a person must act (e.g. credentials); "gave_up": it cannot be done. Say in the answer what happened.',
      parameters: {
        type: 'object',
        properties: {
          status: { type: 'string', enum: [...FINAL_STATUSES] },
          answer: { type: 'string', description: 'The final answer for the user.' },
        },
        required: ['status', 'answer'],
        additionalProperties: false,
      },
    },
  ];
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

export function parseDiagnosis(args: Record<string, unknown>, toolNames: readonly string[]): Parsed<Diagnosis> {
  const { tool, category, type, note } = args;
  if (typeof tool !== 'string' || tool === '') return { ok: false, problem: '"tool" must be the name of the tool that failed' };
  if (toolNames.length > 0 && !toolNames.includes(tool)) return { ok: false, problem: `"tool" must be one of: ${toolNames.join(', ')}` };
  if (typeof category !== 'string' || !(DIAGNOSIS_CATEGORIES as readonly string[]).includes(category)) {
    return { ok: false, problem: `"category" must be one of: ${DIAGNOSIS_CATEGORIES.join(', ')}` };
  }
  if (type !== undefined && typeof type !== 'string') return { ok: false, problem: '"type" must be a string' };
  if (note !== undefined && typeof note !== 'string') return { ok: false, problem: '"note" must be a string' };
  const diagnosis: Diagnosis = { tool, category: category as Diagnosis['category'] };
  if (type !== undefined && type !== '') diagnosis.type = type;
  if (note !== undefined && note !== '') diagnosis.note = note;
  return { ok: true, value: diagnosis };
}

/** The wait in milliseconds. */
export function parseWait(args: Record<string, unknown>): Parsed<number> {
  const { seconds } = args;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0 || seconds > MAX_WAIT_SECONDS) {
    return { ok: false, problem: `"seconds" must be a number from 0 to ${MAX_WAIT_SECONDS}` };
  }
  return { ok: true, value: Math.round(seconds * 1000) };
}

export function parseFinish(args: Record<string, unknown>): Parsed<Pick<AgentOutcome, 'status' | 'answer'>> {
  const { status, answer } = args;
  if (typeof status !== 'string' || !(FINAL_STATUSES as readonly string[]).includes(status)) {
    return { ok: false, problem: `"status" must be one of: ${FINAL_STATUSES.join(', ')}` };
  }
  if (typeof answer !== 'string') return { ok: false, problem: '"answer" must be a string' };
  return { ok: true, value: { status: status as AgentOutcome['status'], answer } };
}
