/**
 * `--format few-shot`: the most frequent failures per tool, each with a fix that worked, ready to
 * paste into a prompt (the monitoring design's advice: frequent failure cases as few-shot examples, so the
 * agent knows which arguments fail and how to pass them instead). Snippets are meant to be sent
 * to a model, so every example is redacted (src/record/redact.ts) before it is written.
 *
 * Unlike the other exporters this one ranks across trajectories, so it collects a whole split
 * before writing (memory: one entry per failure group, not per failure). Each split is ranked
 * on its own trajectories only, so no trajectory's failure shows up on both sides.
 *
 * Augmented trajectories (`faultline augment`) are skipped: they repeat their source's failures,
 * and the ranking is of failures that happened.
 *
 * Grouping: every failed step (status `failure`, `timeout` or `rejected`) is counted under
 * (tool, training-taxonomy label, runtime-taxonomy category and kind). The groups of a tool are ranked by
 * failed steps (then by key), and the `top` (default 3) highest that have an observed fix are
 * written. A group with no observed fix is left out: a snippet without a fix teaches the model
 * nothing it can do, and the card's counts still show the failures.
 *
 * The observed fix of a failed step is the recovery that worked ({@link recoveryOf}: a later
 * call of the same tool that succeeded, or the immediate switch to another tool that
 * succeeded), described from the decision taken just before it: `retry`, `wait_and_retry`
 * (with `wait_seconds`), `retry_with_params` (with `params_delta`: changed arguments, null for a
 * removed one) or `switch_tool`. Decisions an annotator judged `incorrect` are never used as a
 * fix, nor are fixes whose first call carries an annotation label (`backoff_violation`,
 * `blind_retry`, …) or whose successful call is labelled `semantic_error`: they "worked" the
 * wrong way. Among a group's fixes the example is the best by: decision judged `correct` (the outcome
 * backtrace confirmed it) first, then fewest failed attempts between failure and fix, then a
 * task that succeeded, then trajectory id and step (so the choice is deterministic).
 *
 * JSONL rows (Markdown when `--out` ends in `.md`: one section per tool, the snippets in order):
 *
 * ```
 * { "tool": "get_weather", "rank": 1,                     // 1 = the tool's most frequent failure
 *   "failure_type": "parameter/syntactic" | null,          // training-taxonomy label, null when unlabelled
 *   "category": "parameter" | null, "kind": "invalid_date" | null,   // runtime taxonomy
 *   "count": 12,                  // failed steps in the group (in this split)
 *   "trajectory_count": 9,        // trajectories they came from
 *   "snippet": "<ready-to-paste text: the call, the error, the fix, the outcome>",
 *   "example": { "failed_call": { "tool", "arguments" },
 *                "error": { "status", "status_code"?, "error_code"?, "message"?, "body"?,
 *                           "evidence"?: { "confidence", "evidence": ["field:error.code=429", …] } },   // imported logs
 *                "fix": { "action", "tool", "arguments", "params_delta"?, "wait_seconds"?, "reasoning"?, "failed_attempts_between" },
 *                "result": { "status": "success", "body"? } },
 *   "example_trajectory_id": "traj_…", "example_step_index": 2,
 *   "source_trajectory_ids": [ "<the example's>", …up to 20 of the group's, sorted… ] }
 * ```
 *
 * Long values (bodies, arguments over 300 characters of JSON) are cut with `…` in the snippet and
 * replaced by their cut JSON text in `example`.
 */
import { recoveryOf } from '../annotate/step-facts.js';
import { canonicalJson } from '../core/params-hash.js';
import { defaultRedactor } from '../record/redact.js';
import type { CallStatus } from '../core/taxonomy.js';
import type { FailureEvidence, StepResponse, Trajectory, TrajectoryStep } from '../core/trajectory-types.js';

export const DEFAULT_FEW_SHOT_TOP = 3;
/** At most this many ids in `source_trajectory_ids`. */
export const FEW_SHOT_MAX_SOURCE_IDS = 20;
const MAX_VALUE_CHARS = 300;

export type FixAction = 'retry' | 'wait_and_retry' | 'retry_with_params' | 'switch_tool';

export interface FewShotFix {
  action: FixAction;
  tool: string;
  arguments: unknown;
  params_delta?: Record<string, unknown>;
  wait_seconds?: number;
  reasoning?: string;
  failed_attempts_between: number;
}

export interface FewShotExample {
  failed_call: { tool: string; arguments: unknown };
  /** `evidence`: what an imported log's failure was read from (see `TrajectoryStep.failure_evidence`). */
  error: { status: CallStatus } & Omit<StepResponse, 'body'> & { body?: unknown; evidence?: FailureEvidence };
  fix: FewShotFix;
  result: { status: 'success'; body?: unknown };
}

export interface FewShotRow {
  tool: string;
  rank: number;
  failure_type: string | null;
  category: string | null;
  kind: string | null;
  count: number;
  trajectory_count: number;
  snippet: string;
  example: FewShotExample;
  example_trajectory_id: string;
  example_step_index: number;
  source_trajectory_ids: string[];
}

interface Candidate {
  example: FewShotExample;
  trajectoryId: string;
  stepIndex: number;
  /** Lower is better: [judged correct ? 0 : 1, attempts between, outcome rank]. */
  score: [number, number, number];
}

interface Group {
  tool: string;
  failureType: string | null;
  category: string | null;
  kind: string | null;
  count: number;
  trajectories: Set<string>;
  best?: Candidate;
}

const isFailedStep = (s: TrajectoryStep): boolean => s.status !== null && s.status !== 'success';
const OUTCOME_RANK: Record<Trajectory['final_outcome'], number> = { success: 0, partial: 1, unknown: 1, failure: 2 };

/** A value as shown in an example: itself, or its JSON cut to 300 characters when longer. */
function shown(value: unknown): unknown {
  const text = JSON.stringify(value) ?? 'null';
  return text.length <= MAX_VALUE_CHARS ? value : `${text.slice(0, MAX_VALUE_CHARS)}…`;
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null'));

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The arguments that changed from `before` to `after`; a removed one is null. */
export function paramsDelta(before: unknown, after: unknown): Record<string, unknown> {
  if (!isRecord(before) || !isRecord(after)) return { arguments: after };
  const delta: Record<string, unknown> = {};
  for (const key of Object.keys(after).sort()) if (canonicalJson(before[key]) !== canonicalJson(after[key]) || !(key in before)) delta[key] = after[key];
  for (const key of Object.keys(before).sort()) if (!(key in after)) delta[key] = null;
  return delta;
}

/** The fix that worked for the failed step at position `at`, or undefined when none was observed. */
export function observedFix(trajectory: Trajectory, at: number): { fix: FewShotFix; recovery: TrajectoryStep } | undefined {
  const steps = trajectory.steps;
  const failed = steps[at]!;
  if (failed.decision_correctness === 'incorrect') return undefined;
  const r = recoveryOf(trajectory, at);
  if (r === undefined) return undefined;
  const recovery = steps[r]!;
  // A label on the call the decision made (a retry without backoff, a blind retry), or a result that missed the intent, disqualifies it.
  const labels = trajectory.labels ?? [];
  if (labels.some((l) => l.step_index === failed.step_index + 1 || (l.step_index === recovery.step_index && l.name === 'semantic_error'))) return undefined;
  const decision = steps[r - 1]!.agent_decision;
  const between = r - at - 1;
  const base = { tool: recovery.tool_name, arguments: shown(recovery.input_params), failed_attempts_between: between };
  const extras = {
    ...(decision.wait_seconds === undefined ? {} : { wait_seconds: decision.wait_seconds }),
    ...(decision.reasoning === undefined || decision.reasoning === '' ? {} : { reasoning: decision.reasoning }),
  };
  let fix: FewShotFix;
  if (recovery.tool_name !== failed.tool_name) fix = { action: 'switch_tool', ...base, ...extras };
  else if (canonicalJson(recovery.input_params ?? null) !== canonicalJson(failed.input_params ?? null)) {
    fix = { action: 'retry_with_params', ...base, params_delta: paramsDelta(failed.input_params, recovery.input_params), ...extras };
  } else fix = { action: decision.wait_seconds !== undefined || decision.action === 'wait_and_retry' ? 'wait_and_retry' : 'retry', ...base, ...extras };
  return { fix, recovery };
}

function errorOf(step: TrajectoryStep): FewShotExample['error'] {
  const { body, ...rest } = step.response;
  return { status: step.status!, ...rest, ...(body === undefined ? {} : { body: shown(body) }), ...(step.failure_evidence === undefined ? {} : { evidence: step.failure_evidence }) };
}

const cut = (text: string): string => (text.length <= MAX_VALUE_CHARS ? text : `${text.slice(0, MAX_VALUE_CHARS)}…`);

function fixText(failedTool: string, fix: FewShotFix): string {
  const lead = fix.failed_attempts_between === 0 ? '' : `after ${fix.failed_attempts_between} more failed attempt${fix.failed_attempts_between === 1 ? '' : 's'}, `;
  const wait = fix.wait_seconds === undefined ? '' : `waited ${fix.wait_seconds}s, then `;
  const call = `${fix.tool}(${cut(asText(fix.arguments))})`;
  const what =
    fix.action === 'switch_tool'
      ? `switched from ${failedTool} to ${call}`
      : fix.action === 'retry_with_params'
        ? `called ${fix.tool} again with the arguments changed to ${cut(JSON.stringify(fix.params_delta ?? {}))}`
        : `repeated the same call ${call}`;
  const why = fix.reasoning === undefined ? '' : ` (reason: ${cut(fix.reasoning)})`;
  return `${lead}${wait}${what}${why}`;
}

/** The ready-to-paste text for one group's example. */
export function renderSnippet(row: Pick<FewShotRow, 'tool' | 'failure_type' | 'category' | 'kind' | 'count' | 'example'>): string {
  const { failed_call: call, error, fix, result } = row.example;
  const label = [row.kind ?? row.failure_type ?? error.error_code ?? error.status, row.category === null ? undefined : `category ${row.category}`].filter(Boolean).join(', ');
  const errorParts = [error.status_code === undefined ? undefined : `HTTP ${error.status_code}`, error.error_code, error.message].filter((p) => p !== undefined && p !== '');
  const read = error.evidence === undefined ? '' : ` (read from ${error.evidence.evidence.slice(0, 2).join(', ')}; confidence ${error.evidence.confidence})`;
  const errorText = `${errorParts.length > 0 ? errorParts.join(': ') : cut(asText(error.body ?? error.status))}${read}`;
  return [
    `Known failure of ${row.tool} (${label}; seen ${row.count} time${row.count === 1 ? '' : 's'}):`,
    `- Call: ${call.tool}(${cut(asText(call.arguments))})`,
    `- Error: ${errorText}`,
    `- Fix that worked: ${fixText(call.tool, fix)}`,
    `- Outcome: ${result.status}${result.body === undefined ? '' : `, returned ${cut(asText(result.body))}`}`,
  ].join('\n');
}

const better = (a: Candidate, b: Candidate): boolean => {
  for (let i = 0; i < 3; i++) if (a.score[i] !== b.score[i]) return a.score[i]! < b.score[i]!;
  return a.trajectoryId !== b.trajectoryId ? a.trajectoryId < b.trajectoryId : a.stepIndex < b.stepIndex;
};

/** Collects one split's failures; {@link rows} ranks them. */
export class FewShotCollector {
  private readonly groups = new Map<string, Group>();

  /** Counts the trajectory's failures; returns why it gave none, or undefined when it gave some. */
  add(trajectory: Trajectory): string | undefined {
    // Variants repeat their source's failures: counting them would rank by augmentation, not by what happened.
    if (trajectory.metadata.source === 'augmented') return 'augmented (few-shot ranks observed failures)';
    let failures = 0;
    trajectory.steps.forEach((step, at) => {
      if (!isFailedStep(step)) return;
      failures++;
      const failureType = step.failure_type === null ? null : `${step.failure_type}/${step.failure_subtype ?? 'unknown'}`;
      const key = JSON.stringify([step.tool_name, failureType, step.failure_category, step.failure_kind]);
      let group = this.groups.get(key);
      if (group === undefined) {
        group = { tool: step.tool_name, failureType, category: step.failure_category, kind: step.failure_kind, count: 0, trajectories: new Set() };
        this.groups.set(key, group);
      }
      group.count++;
      group.trajectories.add(trajectory.trajectory_id);
      const found = observedFix(trajectory, at);
      if (found === undefined) return;
      const candidate: Candidate = {
        example: {
          failed_call: { tool: step.tool_name, arguments: shown(step.input_params) },
          error: errorOf(step),
          fix: found.fix,
          result: { status: 'success', ...(found.recovery.response.body === undefined ? {} : { body: shown(found.recovery.response.body) }) },
        },
        trajectoryId: trajectory.trajectory_id,
        stepIndex: step.step_index,
        score: [step.decision_correctness === 'correct' ? 0 : 1, found.fix.failed_attempts_between, OUTCOME_RANK[trajectory.final_outcome]],
      };
      if (group.best === undefined || better(candidate, group.best)) group.best = candidate;
    });
    return failures === 0 ? 'no failed call' : undefined;
  }

  /** The `top` most frequent failures with a fix, per tool; tools in name order. */
  rows(top: number = DEFAULT_FEW_SHOT_TOP): FewShotRow[] {
    const byTool = new Map<string, Group[]>();
    const ranked = [...this.groups].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1)).map(([, group]) => group);
    for (const group of ranked) {
      if (group.best === undefined) continue;
      const list = byTool.get(group.tool) ?? [];
      if (list.length < top) list.push(group);
      byTool.set(group.tool, list);
    }
    const rows: FewShotRow[] = [];
    for (const tool of [...byTool.keys()].sort()) {
      byTool.get(tool)!.forEach((g, i) => {
        const best = g.best!;
        const example = defaultRedactor.value(best.example);
        const others = [...g.trajectories].filter((id) => id !== best.trajectoryId).sort();
        const fields = { tool: g.tool, failure_type: g.failureType, category: g.category, kind: g.kind, count: g.count, example };
        rows.push({
          tool: g.tool,
          rank: i + 1,
          failure_type: g.failureType,
          category: g.category,
          kind: g.kind,
          count: g.count,
          trajectory_count: g.trajectories.size,
          snippet: renderSnippet(fields),
          example,
          example_trajectory_id: best.trajectoryId,
          example_step_index: best.stepIndex,
          source_trajectory_ids: [best.trajectoryId, ...others].slice(0, FEW_SHOT_MAX_SOURCE_IDS),
        });
      });
    }
    return rows;
  }
}

/** The rows as one Markdown document: a section per tool, each snippet in a text block. */
export function renderFewShotMarkdown(rows: readonly FewShotRow[], title = 'Known tool failures and the fixes that worked'): string {
  const lines = [`# ${title}`, ''];
  let tool: string | undefined;
  for (const row of rows) {
    if (row.tool !== tool) {
      tool = row.tool;
      lines.push(`## ${row.tool}`, '');
    }
    lines.push(
      `### ${row.rank}. ${row.kind ?? row.failure_type ?? 'failure'} (${row.count} failed call${row.count === 1 ? '' : 's'} in ${row.trajectory_count} trajector${row.trajectory_count === 1 ? 'y' : 'ies'})`,
      '',
      '```text',
      row.snippet.replace(/```/g, "'''"),
      '```',
      '',
      `Example from \`${row.example_trajectory_id}\` step ${row.example_step_index}.`,
      '',
    );
  }
  if (rows.length === 0) lines.push('(no failure with an observed fix)', '');
  return lines.join('\n');
}
