/**
 * The engine every augmentation kind shares: a plan says how tool names, object keys, strings
 * and numbers change, and {@link applyPlan} rewrites a whole trajectory with it (calls,
 * arguments, responses, decisions, annotations, labels, the instruction), leaving what makes
 * the failure pattern untouched: statuses, both taxonomies, error codes, decisions, correctness
 * and label names. Also the small deterministic helpers the plans use.
 */
import { createHash } from 'node:crypto';
import type { Trajectory, TrajectoryStep } from '../../core/trajectory-types.js';

export interface VariantPlan {
  tool(name: string): string;
  /** Object keys in arguments, argument deltas and response bodies. */
  key(name: string): string;
  /** Every string: the instruction, messages, reasons, and string values. */
  text(text: string): string;
  /** Numbers in arguments and bodies. */
  number(value: number): number;
  /** ISO timestamps (`created_at`, `started_at`). */
  timestamp(iso: string): string;
}

export const identityPlan: VariantPlan = { tool: (n) => n, key: (k) => k, text: (t) => t, number: (n) => n, timestamp: (t) => t };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value with its keys, strings and numbers rewritten by the plan. */
export function mapValue(value: unknown, plan: VariantPlan): unknown {
  if (typeof value === 'string') return plan.text(value);
  if (typeof value === 'number') return plan.number(value);
  if (Array.isArray(value)) return value.map((v) => mapValue(v, plan));
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [plan.key(k), mapValue(v, plan)]));
  return value;
}

function mapStep(step: TrajectoryStep, plan: VariantPlan): TrajectoryStep {
  const { source_ref: _sourceRef, started_at, ...rest } = step;
  const text = (t: string | undefined) => (t === undefined ? undefined : plan.text(t));
  const d = step.agent_decision;
  const out: TrajectoryStep = {
    ...rest,
    tool_name: plan.tool(step.tool_name),
    input_params: mapValue(step.input_params, plan),
    response: {
      ...(step.response.status_code === undefined ? {} : { status_code: step.response.status_code }),
      ...(step.response.error_code === undefined ? {} : { error_code: step.response.error_code }),
      ...(step.response.message === undefined ? {} : { message: plan.text(step.response.message) }),
      ...(step.response.body === undefined ? {} : { body: mapValue(step.response.body, plan) }),
    },
    agent_decision: {
      ...d,
      ...(d.params_delta === undefined ? {} : { params_delta: mapValue(d.params_delta, plan) as Record<string, unknown> }),
      ...(d.reasoning === undefined ? {} : { reasoning: text(d.reasoning)! }),
      ...(d.next_tool === undefined ? {} : { next_tool: plan.tool(d.next_tool) }),
    },
    correctness_reason: step.correctness_reason === null ? null : plan.text(step.correctness_reason),
    correct_action:
      step.correct_action === null
        ? null
        : {
            ...step.correct_action,
            ...(step.correct_action.params_delta === undefined ? {} : { params_delta: mapValue(step.correct_action.params_delta, plan) as Record<string, unknown> }),
            ...(step.correct_action.reasoning === undefined ? {} : { reasoning: plan.text(step.correct_action.reasoning) }),
          },
  };
  // The source's own call id points into the original log, not into this variant: dropped.
  if (started_at !== undefined) out.started_at = plan.timestamp(started_at);
  return out;
}

/** The trajectory rewritten by `plan`; ids and metadata are the caller's to set. */
export function applyPlan(trajectory: Trajectory, plan: VariantPlan): Trajectory {
  const out: Trajectory = {
    ...trajectory,
    task_description: trajectory.task_description === null ? null : plan.text(trajectory.task_description),
    created_at: plan.timestamp(trajectory.created_at),
    steps: trajectory.steps.map((s) => mapStep(s, plan)),
    failure_summary: structuredClone(trajectory.failure_summary),
    metadata: { ...trajectory.metadata },
  };
  if (trajectory.labels !== undefined) out.labels = trajectory.labels.map((l) => ({ ...l, reason: plan.text(l.reason) }));
  return out;
}

/** Every tool name a trajectory mentions (calls and `next_tool`), in order of first use. */
export function toolNamesOf(trajectory: Trajectory): string[] {
  const names = new Set<string>();
  for (const s of trajectory.steps) {
    names.add(s.tool_name);
    if (s.agent_decision.next_tool !== undefined) names.add(s.agent_decision.next_tool);
  }
  return [...names];
}

function collectKeys(value: unknown, into: Map<string, unknown>): void {
  if (Array.isArray(value)) for (const v of value) collectKeys(v, into);
  else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (!into.has(k)) into.set(k, v);
      collectKeys(v, into);
    }
  }
}

/** Every key in arguments (and their deltas), with its first value, in order of first use. */
export function parameterKeysOf(trajectory: Trajectory): Map<string, unknown> {
  const keys = new Map<string, unknown>();
  for (const s of trajectory.steps) {
    collectKeys(s.input_params, keys);
    collectKeys(s.agent_decision.params_delta, keys);
    collectKeys(s.correct_action?.params_delta, keys);
  }
  return keys;
}

/** Every key in response bodies that is not an argument key, in order of first use. */
export function bodyKeysOf(trajectory: Trajectory, exclude: ReadonlyMap<string, unknown>): Map<string, unknown> {
  const keys = new Map<string, unknown>();
  for (const s of trajectory.steps) collectKeys(s.response.body, keys);
  for (const k of exclude.keys()) keys.delete(k);
  return keys;
}

/** A number in [0, 1) fixed by the parts (sha256), so a choice depends on nothing but its key. */
export function unitHash(...parts: readonly (string | number)[]): number {
  return createHash('sha256').update(parts.join('\u0000')).digest().readUIntBE(0, 6) / 2 ** 48;
}

export function choose<T>(items: readonly T[], ...parts: readonly (string | number)[]): T {
  return items[Math.floor(unitHash(...parts) * items.length)]!;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Replaces each key of `map` where it stands as a whole name (not inside a longer identifier),
 * in one pass, longest first, so a replacement is never replaced again.
 */
export function wholeNameReplacer(map: ReadonlyMap<string, string>): (text: string) => string {
  const names = [...map.keys()].filter((k) => k !== '' && map.get(k) !== k).sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  if (names.length === 0) return (text) => text;
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${names.map(escapeRegExp).join('|')})(?![\\p{L}\\p{N}_])`, 'gu');
  return (text) => text.replace(pattern, (found) => map.get(found) ?? found);
}

export type NameStyle = 'snake' | 'camel';

/** The style a name is written in: camel when it has an inner capital and no separator. */
export const styleOf = (name: string): NameStyle => (/[a-z0-9][A-Z]/.test(name) && !/[_-]/.test(name) ? 'camel' : 'snake');

export function joinName(words: readonly string[], style: NameStyle): string {
  const flat = words.flatMap((w) => w.split('_'));
  if (style === 'snake') return flat.join('_');
  return flat.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}
