/**
 * tau-bench's historical trajectories (https://github.com/sierra-research/tau-bench, MIT): one
 * JSON array of `{ task_id, trial, reward, info: { task: { instruction, ... } }, traj }`, where
 * `traj` is an OpenAI chat transcript. The reward gives the outcome; `task_id:trial` is the id.
 *
 * The environments report business-rule violations only as tool results of the form
 * "Error: ..." (the Python tools return `f"Error: {reason}"`), so those strings are the one
 * structure there is. The table below names the rules the airline and retail environments
 * enforce; an "Error:" it does not know is still a failure, typed `tool_reported_error`.
 */
import { assembleTrajectory } from '../assemble.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { definedExtras, stepsFromCalls } from './conversation.js';
import { outcomeParts, statedOutcome } from './stated-outcome.js';
import { nowIso, type ImportItem, type Importer, type ImportOptions } from './import-types.js';
import { readJsonArray } from './json-array-stream.js';
import { isRecord } from './json-lines.js';
import { openAiConversation } from './openai.js';
import { readResult, type ResultFailure, type ResultReading } from './tool-result.js';

/** A business rule of the tau-bench environments: the error text it produces and its type. */
export interface TauBenchRule {
  /** Matched against the text after "Error: ". */
  pattern: RegExp;
  type: 'not_found' | 'conflict' | 'precondition_failed';
  code: string;
}

export const TAU_BENCH_RULES: readonly TauBenchRule[] = [
  { pattern: /^user not found/i, type: 'not_found', code: 'TAU_USER_NOT_FOUND' },
  { pattern: /^reservation not found/i, type: 'not_found', code: 'TAU_RESERVATION_NOT_FOUND' },
  { pattern: /^(?:order|product|item)\b.*not found/i, type: 'not_found', code: 'TAU_ORDER_ITEM_NOT_FOUND' },
  { pattern: /^payment method .*not found|^payment method not found/i, type: 'not_found', code: 'TAU_PAYMENT_METHOD_NOT_FOUND' },
  { pattern: /^flight .*not found/i, type: 'not_found', code: 'TAU_FLIGHT_NOT_FOUND' },
  { pattern: /not enough seats/i, type: 'conflict', code: 'TAU_INSUFFICIENT_SEATS' },
  { pattern: /not available on date|flight .* not available/i, type: 'conflict', code: 'TAU_FLIGHT_UNAVAILABLE' },
  { pattern: /balance is not enough|not enough balance|insufficient (?:balance|funds)/i, type: 'precondition_failed', code: 'TAU_INSUFFICIENT_BALANCE' },
  { pattern: /payment amount does not add up/i, type: 'precondition_failed', code: 'TAU_PAYMENT_MISMATCH' },
  { pattern: /cannot be used to update|certificate cannot be used/i, type: 'precondition_failed', code: 'TAU_PAYMENT_NOT_ALLOWED' },
  { pattern: /cannot (?:be )?cancel|non-refundable|already (?:been )?cancel/i, type: 'precondition_failed', code: 'TAU_CANNOT_CANCEL' },
  { pattern: /cannot (?:be )?(?:changed|modified|change|modify)|basic economy/i, type: 'precondition_failed', code: 'TAU_CHANGE_NOT_ALLOWED' },
  { pattern: /non-pending|not pending|not delivered/i, type: 'precondition_failed', code: 'TAU_WRONG_ORDER_STATUS' },
];

const ERROR_PREFIX = /^\s*Error:\s*/;

/** The business failure a tau-bench tool result reports, or null for an ordinary result. */
export function tauBenchFailure(text: string): ResultFailure | null {
  const prefix = ERROR_PREFIX.exec(text);
  if (prefix === null) return null;
  const reason = text.slice(prefix[0].length).trim();
  const rule = TAU_BENCH_RULES.find((r) => r.pattern.test(reason));
  if (rule === undefined) {
    return { category: 'business', type: 'tool_reported_error', stage: 'execution', code: 'TAU_ERROR', message: text.trim(), evidence: { confidence: 0.7, evidence: ['text:Error:'] } };
  }
  // The environments' rule messages are fixed strings of their code: a stated reason, not wording.
  return { category: 'business', type: rule.type, stage: 'execution', code: rule.code, message: text.trim(), evidence: { confidence: 0.8, evidence: [`tau:${rule.code}`, 'text:Error:'] } };
}

/** A tau-bench result read: the environments' own `Error: ...` first, then what any result could state. */
export function tauBenchReading(text: string): ResultReading {
  const failure = tauBenchFailure(text);
  return failure === null ? readResult(text) : { failure };
}

/** The domain a transcript's system policy names ("# Airline Agent Policy" -> airline). */
function domainOf(traj: unknown[]): string | null {
  const system = traj.find((m) => isRecord(m) && m['role'] === 'system');
  const content = isRecord(system) && typeof system['content'] === 'string' ? system['content'] : '';
  const heading = /^#\s*(\w+)\s+agent policy/im.exec(content);
  return heading === null ? null : heading[1]!.toLowerCase();
}

export function tauBenchTrajectory(value: unknown, options?: ImportOptions): Trajectory | string {
  if (!isRecord(value)) return 'expected an object with task_id, reward and traj';
  const { task_id: taskId, trial, traj } = value;
  if (typeof taskId !== 'number' && typeof taskId !== 'string') return 'missing task_id';
  if (!Array.isArray(traj)) return 'expected "traj" to be an array of messages';
  const conversation = openAiConversation(traj);
  if (typeof conversation === 'string') return conversation;
  const task = isRecord(value['info']) && isRecord(value['info']['task']) ? value['info']['task'] : undefined;
  const instruction = typeof task?.['instruction'] === 'string' ? task['instruction'] : conversation.task;
  const steps = stepsFromCalls(conversation.calls, (call) => tauBenchReading(call.result.text));
  return assembleTrajectory({
    source: 'tau-bench',
    source_id: `${taskId}:${typeof trial === 'number' || typeof trial === 'string' ? trial : 0}`,
    task_description: instruction,
    ...outcomeParts(statedOutcome(value)),
    created_at: nowIso(options),
    steps,
    metadata: { domain: options?.domain ?? domainOf(traj) },
    ...definedExtras({ system_prompt: conversation.system, closing_turns: conversation.closing }),
  });
}

/** Reads a tau-bench results file (a JSON array), element by element. */
export const importTauBench: Importer = async function* (input, options): AsyncGenerator<ImportItem> {
  for await (const element of readJsonArray(input)) {
    if ('error' in element) {
      yield { kind: 'skipped', line: element.line, reason: element.error };
      continue;
    }
    const result = tauBenchTrajectory(element.value, options);
    if (typeof result === 'string') yield { kind: 'skipped', line: element.line, reason: `element ${element.index}: ${result}` };
    else yield { kind: 'trajectory', trajectory: result, line: element.line };
  }
};
