/**
 * The trajectories the dashboard lists: the stored ones (`faultline import`, `annotate`, FailBench)
 * filtered by source, outcome, label and whether a step failed. The store pages trajectories by
 * id only, so the filters run here, over a bounded number of trajectories per request; a list
 * that stopped at the bound says where to continue (`after`), as one that filled its page does.
 */
import { ConfigError } from '../../core/errors.js';
import type { TrajectoryStore } from '../../core/store-types.js';
import type { CallStatus } from '../../core/taxonomy.js';
import { TRAJECTORY_SOURCES, type FinalOutcome, type Trajectory, type TrajectorySource, type TrajectoryStep } from '../../core/trajectory-types.js';
import { countParam, nameParam } from './dashboard-view.js';

export const FINAL_OUTCOMES: readonly FinalOutcome[] = ['success', 'failure', 'partial', 'unknown'];
/** `label=` values that are not a label's name. */
export const ANY_LABEL = 'any';
export const NO_LABEL = 'none';

export const DEFAULT_TRAJECTORY_LIMIT = 50;
const MAX_TRAJECTORY_LIMIT = 500;
/** Trajectories read per request at most, whatever the filters keep. */
export const TRAJECTORY_SCAN_LIMIT = 20_000;
const PAGE = 500;

export interface TrajectoryFilter {
  source: TrajectorySource | null;
  outcome: FinalOutcome | null;
  /** A label's name, {@link ANY_LABEL} (labelled at all), {@link NO_LABEL} (not labelled); null: no filter. */
  label: string | null;
  /** Only trajectories with a failed step. */
  failed: boolean;
  /** Only trajectories whose id sorts after this one (the list's next page). */
  after: string | null;
  limit: number;
}

/** One line of the list. */
export interface TrajectorySummary {
  trajectory_id: string;
  source: TrajectorySource;
  source_id: string | null;
  created_at: string;
  task_description: string | null;
  final_outcome: FinalOutcome;
  steps: number;
  /** The failed steps, in order: index, tool and how it failed. */
  failed_steps: { step_index: number; tool_name: string; status: CallStatus; failure: string | null }[];
  /** Label names with how many steps carry each, in first-step order. */
  labels: { name: string; count: number }[];
  /** Judge labels, and how many of them a reviewer decided. */
  judge_labels: number;
  reviewed: number;
}

/** `/api/trajectories`. */
export interface TrajectoryList {
  filter: TrajectoryFilter;
  trajectories: TrajectorySummary[];
  /** Trajectories read to fill the list. */
  scanned: number;
  /** Where the next page starts, or null when the store has no more. */
  next_after: string | null;
}

function oneOf<T extends string>(params: URLSearchParams, name: string, values: readonly T[]): T | null {
  const value = nameParam(params, name);
  if (value === null) return null;
  if (!(values as readonly string[]).includes(value)) throw new ConfigError(`invalid ${name} ${JSON.stringify(value)}: expected one of ${values.join(', ')}`, name);
  return value as T;
}

/** @throws ConfigError with one line for a bad value (answered with 400). */
export function parseTrajectoryFilter(params: URLSearchParams): TrajectoryFilter {
  const failed = nameParam(params, 'failed');
  if (failed !== null && failed !== '1' && failed !== '0') throw new ConfigError(`invalid failed ${JSON.stringify(failed)}: expected 1 or 0`, 'failed');
  return {
    source: oneOf(params, 'source', TRAJECTORY_SOURCES),
    outcome: oneOf(params, 'outcome', FINAL_OUTCOMES),
    label: nameParam(params, 'label'),
    failed: failed === '1',
    after: nameParam(params, 'after'),
    limit: countParam(params, 'limit', DEFAULT_TRAJECTORY_LIMIT, MAX_TRAJECTORY_LIMIT),
  };
}

export const isFailedStep = (s: TrajectoryStep): boolean => s.status !== null && s.status !== 'success';

const isJudge = (source: string | undefined): boolean => source?.startsWith('judge:') === true;

function matches(t: Trajectory, f: TrajectoryFilter): boolean {
  if (f.outcome !== null && t.final_outcome !== f.outcome) return false;
  if (f.failed && !t.steps.some(isFailedStep)) return false;
  const labels = t.labels ?? [];
  if (f.label === ANY_LABEL) return labels.length > 0;
  if (f.label === NO_LABEL) return labels.length === 0;
  return f.label === null || labels.some((l) => l.name === f.label);
}

export function summarize(t: Trajectory): TrajectorySummary {
  const counts = new Map<string, number>();
  for (const l of [...(t.labels ?? [])].sort((a, b) => a.step_index - b.step_index)) counts.set(l.name, (counts.get(l.name) ?? 0) + 1);
  const judged = (t.labels ?? []).filter((l) => isJudge(l.source));
  return {
    trajectory_id: t.trajectory_id,
    source: t.metadata.source,
    source_id: t.source_id,
    created_at: t.created_at,
    task_description: t.task_description,
    final_outcome: t.final_outcome,
    steps: t.steps.length,
    failed_steps: t.steps.filter(isFailedStep).map((s) => ({ step_index: s.step_index, tool_name: s.tool_name, status: s.status!, failure: s.failure_kind })),
    labels: [...counts].map(([name, count]) => ({ name, count })),
    judge_labels: judged.length,
    reviewed: judged.filter((l) => l.review !== undefined).length,
  };
}

/** The list for `filter`, in store order (trajectory id). */
export async function readTrajectoryList(store: TrajectoryStore, filter: TrajectoryFilter): Promise<TrajectoryList> {
  const out: TrajectorySummary[] = [];
  let scanned = 0;
  let after = filter.after ?? undefined;
  for (;;) {
    const page = await store.queryTrajectories({ limit: PAGE, ...(after === undefined ? {} : { afterId: after }), ...(filter.source === null ? {} : { source: filter.source }) });
    for (const t of page) {
      scanned++;
      after = t.trajectory_id;
      if (matches(t, filter)) out.push(summarize(t));
      // A full list, or the bound: the next page starts after the last trajectory read.
      if (out.length === filter.limit || scanned === TRAJECTORY_SCAN_LIMIT) return { filter, trajectories: out, scanned, next_after: after };
    }
    if (page.length < PAGE) return { filter, trajectories: out, scanned, next_after: null };
  }
}
