/**
 * Facts about steps that several annotators read: whether a call failed, whether two calls
 * are the same call, what a tool name says about its side effects, and any Retry-After the
 * response carried.
 */
import { canonicalJson } from '../record/params-hash.js';
import { getHeader, parseRetryAfter } from '../runtime/retry-after.js';
import type { Trajectory, TrajectoryStep } from '../trajectory/types.js';

/** A call that did not succeed. Steps without a result (`status: null`) are not failures: nothing is known. */
export const isFailed = (step: TrajectoryStep): boolean => step.status !== null && step.status !== 'success';

export const isSucceeded = (step: TrajectoryStep): boolean => step.status === 'success';

/** The canonical JSON of the arguments: equal text means the same arguments whatever the key order. */
export const paramsKey = (step: TrajectoryStep): string => canonicalJson(step.input_params ?? null);

export const sameCall = (a: TrajectoryStep, b: TrajectoryStep): boolean => a.tool_name === b.tool_name && paramsKey(a) === paramsKey(b);

/** The first step after position `from` (0-based) calling `tool`, with its position. */
export function nextCallOf(steps: readonly TrajectoryStep[], from: number, tool: string): { step: TrajectoryStep; at: number } | undefined {
  for (let j = from + 1; j < steps.length; j++) {
    const step = steps[j]!;
    if (step.tool_name === tool) return { step, at: j };
  }
  return undefined;
}

/** Tool names split into words: `createOrder`, `create-order` and `create_order` all give `create`, `order`. */
export function nameWords(tool: string): string[] {
  return tool
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

const WRITE_VERBS = new Set([
  'create', 'add', 'insert', 'post', 'send', 'email', 'notify', 'publish', 'submit', 'delete', 'remove', 'destroy',
  'book', 'reserve', 'cancel', 'pay', 'charge', 'refund', 'transfer', 'withdraw', 'deposit', 'purchase', 'buy', 'order',
  'place', 'checkout', 'issue', 'append', 'increment', 'exchange', 'return', 'transact',
]);
/** Writes that are safe to repeat with the same arguments (they set state rather than add to it). */
const SETTING_VERBS = new Set(['update', 'modify', 'change', 'upgrade', 'set', 'put', 'edit', 'rename', 'assign']);
const READ_VERBS = new Set([
  'get', 'list', 'search', 'find', 'read', 'fetch', 'query', 'lookup', 'look', 'check', 'verify', 'describe', 'show',
  'view', 'count', 'status', 'retrieve', 'browse',
]);
/** Tools that touch no state at all: neither a state check nor a side effect. */
const PURE_VERBS = new Set(['calculate', 'think', 'compute', 'validate', 'preview', 'estimate', 'convert', 'format', 'parse']);

/**
 * Whether the tool's name marks it as a write whose repetition may act twice (create, send,
 * delete, book, cancel, pay, refund, transfer, ...). The verb is the first word that is a known
 * read or write verb, so `get_order` is a read and `create_order` a write. The trajectory model
 * carries no per-step idempotency declaration, so the name is all there is; pass
 * `idempotent` to an annotator to declare tools.
 */
export function isNonIdempotentName(tool: string): boolean {
  for (const word of nameWords(tool)) {
    if (READ_VERBS.has(word) || PURE_VERBS.has(word) || SETTING_VERBS.has(word)) return false;
    if (WRITE_VERBS.has(word)) return true;
  }
  return false;
}

/** A name that reads state (get, list, search, check, ...): the way to verify before repeating a write. */
export function isReadLikeName(tool: string): boolean {
  for (const word of nameWords(tool)) {
    if (READ_VERBS.has(word)) return true;
    if (WRITE_VERBS.has(word) || SETTING_VERBS.has(word) || PURE_VERBS.has(word)) return false;
  }
  return false;
}

/** A read or a pure computation (think, calculate): a call that cannot do damage. */
export function isSideEffectFreeName(tool: string): boolean {
  for (const word of nameWords(tool)) {
    if (READ_VERBS.has(word) || PURE_VERBS.has(word)) return true;
    if (WRITE_VERBS.has(word) || SETTING_VERBS.has(word)) return false;
  }
  return false;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const IDEMPOTENCY_KEY = /^idempotency[-_]?key$/i;

/** The idempotency key the call carried in its arguments, if any. */
export function idempotencyKeyOf(step: TrajectoryStep): string | undefined {
  if (!isRecord(step.input_params)) return undefined;
  for (const [key, value] of Object.entries(step.input_params)) {
    if (IDEMPOTENCY_KEY.test(key) && (typeof value === 'string' || typeof value === 'number')) return String(value);
  }
  return undefined;
}

function retryAfterValue(value: unknown, nowMs: number): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return Math.round(value * 1000);
  if (typeof value === 'string') return parseRetryAfter(value, nowMs);
  return undefined;
}

function retryAfterIn(obj: Record<string, unknown>, nowMs: number): number | undefined {
  const ms = obj['retry_after_ms'] ?? obj['retryAfterMs'];
  if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) return ms;
  const header = getHeader(obj['headers'], 'retry-after');
  if (header !== undefined) return parseRetryAfter(header, nowMs);
  return retryAfterValue(obj['retry_after'] ?? obj['retryAfter'] ?? obj['Retry-After'], nowMs);
}

/**
 * The Retry-After the failure carried, in ms: from the response body's headers, its
 * `retry_after` (seconds or an HTTP-date) or `retry_after_ms`, or the same fields under
 * `error` or `feedback` (faultline's recorded feedback). HTTP-dates are taken relative to the
 * step's start, or to the epoch when it has none (which makes a date a very long wait).
 */
export function retryAfterMsOf(step: TrajectoryStep): number | undefined {
  const body = step.response.body;
  if (!isRecord(body)) return undefined;
  const nowMs = stepTimeMs(step) ?? 0;
  return (
    retryAfterIn(body, nowMs) ??
    (isRecord(body['error']) ? retryAfterIn(body['error'], nowMs) : undefined) ??
    (isRecord(body['feedback']) ? retryAfterIn(body['feedback'], nowMs) : undefined)
  );
}

/** Epoch ms the call started, when the source had times. */
export function stepTimeMs(step: TrajectoryStep): number | undefined {
  if (step.started_at === undefined) return undefined;
  const ms = Date.parse(step.started_at);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Whether the failure at position `at` was recovered: a later call of the same tool
 * succeeded, or the agent's very next call (a switch to another tool, i.e. a fallback)
 * succeeded.
 */
export function recoveryOf(trajectory: Trajectory, at: number): number | undefined {
  const steps = trajectory.steps;
  const failed = steps[at]!;
  for (let j = at + 1; j < steps.length; j++) {
    if (steps[j]!.tool_name === failed.tool_name && isSucceeded(steps[j]!)) return j;
  }
  const next = steps[at + 1];
  if (next !== undefined && failed.agent_decision.action === 'switch_tool' && isSucceeded(next)) return at + 1;
  return undefined;
}

/** Scalar argument values worth matching across calls (ids, codes, names; not flags or tiny numbers). */
export function argumentValues(params: unknown, out = new Set<string>()): Set<string> {
  if (typeof params === 'string') {
    if (params.trim().length >= 3) out.add(params.trim());
  } else if (typeof params === 'number') {
    if (Number.isFinite(params) && Math.abs(params) >= 100) out.add(String(params));
  } else if (Array.isArray(params)) {
    for (const item of params) argumentValues(item, out);
  } else if (isRecord(params)) {
    for (const value of Object.values(params)) argumentValues(value, out);
  }
  return out;
}
