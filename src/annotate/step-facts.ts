/**
 * Facts about steps that several annotators read: whether a call failed, whether two calls
 * are the same call, what a tool name says about its side effects, and any Retry-After the
 * response carried. Annotators read a step's `input_params` and `response.body` through
 * `jsonValue` (or the facts here): they may be imported deferred (see `DeferredJson`).
 *
 * Annotation runs over millions of steps, so facts that every rule asks for are computed once:
 * a step's argument fingerprint is cached per step object, a name's verb class per name, and the
 * "next call of the same tool" and "recovered at" positions once per trajectory in one linear
 * sweep (instead of a scan per failed step, which is quadratic on long trajectories).
 */
import { paramsHash } from '../core/params-hash.js';
import { getHeader, parseRetryAfter } from '../runtime/retry-after.js';
import { jsonValue } from '../core/deferred-json.js';
import type { Trajectory, TrajectoryStep } from '../core/trajectory-types.js';

/** A call that did not succeed. Steps without a result (`status: null`) are not failures: nothing is known. */
export const isFailed = (step: TrajectoryStep): boolean => step.status !== null && step.status !== 'success';

export const isSucceeded = (step: TrajectoryStep): boolean => step.status === 'success';

const paramsKeys = new WeakMap<TrajectoryStep, string>();

/**
 * A fingerprint of the arguments (see `paramsHash`): equal keys mean the same arguments whatever
 * the key order. Hashed, not stringified: rules compare keys, they never show them.
 */
export function paramsKey(step: TrajectoryStep): string {
  let key = paramsKeys.get(step);
  if (key === undefined) paramsKeys.set(step, (key = paramsHash(jsonValue(step.input_params) ?? null)));
  return key;
}

export const sameCall = (a: TrajectoryStep, b: TrajectoryStep): boolean => a.tool_name === b.tool_name && paramsKey(a) === paramsKey(b);

/**
 * Positions every rule reads, computed once per trajectory (keyed by its steps array: annotators
 * treat trajectories as immutable data and return copies, never edit steps in place).
 */
interface StepIndex {
  /** For each position, the position of the next call of the same tool, or -1. */
  nextSameTool: Int32Array;
  /** For each position, how many read-like calls come before it. */
  readsBefore: Int32Array;
  /** For each position, where its call was recovered (see `recoveryOf`), or -1. */
  recovery: Int32Array;
}

const stepIndexes = new WeakMap<readonly TrajectoryStep[], StepIndex>();

function stepIndexOf(steps: readonly TrajectoryStep[]): StepIndex {
  let index = stepIndexes.get(steps);
  if (index !== undefined && index.nextSameTool.length === steps.length) return index;
  const n = steps.length;
  const nextSameTool = new Int32Array(n);
  const readsBefore = new Int32Array(n + 1);
  const recovery = new Int32Array(n);
  const nextCall = new Map<string, number>();
  const nextSuccess = new Map<string, number>();
  for (let i = n - 1; i >= 0; i--) {
    const step = steps[i]!;
    nextSameTool[i] = nextCall.get(step.tool_name) ?? -1;
    const later = nextSuccess.get(step.tool_name);
    if (later !== undefined) recovery[i] = later;
    else if (step.agent_decision.action === 'switch_tool' && i + 1 < n && isSucceeded(steps[i + 1]!)) recovery[i] = i + 1;
    else recovery[i] = -1;
    nextCall.set(step.tool_name, i);
    if (isSucceeded(step)) nextSuccess.set(step.tool_name, i);
  }
  for (let i = 0; i < n; i++) readsBefore[i + 1] = readsBefore[i]! + (isReadLikeName(steps[i]!.tool_name) ? 1 : 0);
  index = { nextSameTool, readsBefore, recovery };
  stepIndexes.set(steps, index);
  return index;
}

/** The first step after position `from` (0-based) calling `tool`, with its position. */
export function nextCallOf(steps: readonly TrajectoryStep[], from: number, tool: string): { step: TrajectoryStep; at: number } | undefined {
  const from_ = steps[from];
  if (from_ !== undefined && from_.tool_name === tool) {
    const at = stepIndexOf(steps).nextSameTool[from]!;
    return at < 0 ? undefined : { step: steps[at]!, at };
  }
  for (let j = from + 1; j < steps.length; j++) {
    const step = steps[j]!;
    if (step.tool_name === tool) return { step, at: j };
  }
  return undefined;
}

/** Whether any call strictly between positions `from` and `to` has a read-like name (a state check). */
export function hasReadBetween(steps: readonly TrajectoryStep[], from: number, to: number): boolean {
  to = Math.min(to, steps.length);
  if (to <= from + 1) return false;
  const reads = stepIndexOf(steps).readsBefore;
  return reads[to]! - reads[from + 1]! > 0;
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

type VerbClass = 'read' | 'pure' | 'setting' | 'write' | 'unknown';

/** The class of the first word that is a known verb (a word in several sets: read, then pure, then setting, then write). */
function classifyName(tool: string): VerbClass {
  for (const word of nameWords(tool)) {
    if (READ_VERBS.has(word)) return 'read';
    if (PURE_VERBS.has(word)) return 'pure';
    if (SETTING_VERBS.has(word)) return 'setting';
    if (WRITE_VERBS.has(word)) return 'write';
  }
  return 'unknown';
}

// Tool names are few and asked about on every step: classify each once (bounded, in case of
// generated names).
const verbClasses = new Map<string, VerbClass>();

function verbClassOf(tool: string): VerbClass {
  let verb = verbClasses.get(tool);
  if (verb === undefined) {
    if (verbClasses.size >= 10_000) verbClasses.clear();
    verbClasses.set(tool, (verb = classifyName(tool)));
  }
  return verb;
}

/**
 * Whether the tool's name marks it as a write whose repetition may act twice (create, send,
 * delete, book, cancel, pay, refund, transfer, ...). The verb is the first word that is a known
 * read or write verb, so `get_order` is a read and `create_order` a write. The trajectory model
 * carries no per-step idempotency declaration, so the name is all there is; pass
 * `idempotent` to an annotator to declare tools.
 */
export const isNonIdempotentName = (tool: string): boolean => verbClassOf(tool) === 'write';

/** A name that reads state (get, list, search, check, ...): the way to verify before repeating a write. */
export const isReadLikeName = (tool: string): boolean => verbClassOf(tool) === 'read';

/** A read or a pure computation (think, calculate): a call that cannot do damage. */
export function isSideEffectFreeName(tool: string): boolean {
  const verb = verbClassOf(tool);
  return verb === 'read' || verb === 'pure';
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const IDEMPOTENCY_KEY = /^idempotency[-_]?key$/i;

/** The idempotency key the call carried in its arguments, if any. */
export function idempotencyKeyOf(step: TrajectoryStep): string | undefined {
  const params = jsonValue(step.input_params);
  if (!isRecord(params)) return undefined;
  for (const [key, value] of Object.entries(params)) {
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
  const body = jsonValue(step.response.body);
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
 * succeeded. Returns the first later success of the same tool, else the fallback's position.
 */
export function recoveryOf(trajectory: Trajectory, at: number): number | undefined {
  if (at < 0 || at >= trajectory.steps.length) return undefined;
  const recovered = stepIndexOf(trajectory.steps).recovery[at]!;
  return recovered < 0 ? undefined : recovered;
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

const stepArgumentValues = new WeakMap<TrajectoryStep, ReadonlySet<string>>();

/** `argumentValues` of a step's arguments, computed once per step. */
export function argumentValuesOf(step: TrajectoryStep): ReadonlySet<string> {
  let values = stepArgumentValues.get(step);
  if (values === undefined) stepArgumentValues.set(step, (values = argumentValues(jsonValue(step.input_params))));
  return values;
}
