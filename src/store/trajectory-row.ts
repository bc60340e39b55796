/**
 * The columns every store keeps for a trajectory (besides the full JSON), and the batch
 * deduplication they share, so the three adapters agree on what "already stored" means.
 */
import type { TrajectoryStore } from '../core/store-types.js';
import type { Trajectory } from '../core/trajectory-types.js';

export interface TrajectoryRow {
  trajectory_id: string;
  source: string;
  source_id: string | null;
  task_description: string | null;
  final_outcome: string;
  created_at: string;
  /** The whole trajectory as JSON text. */
  json: string;
  step_count: number;
  failure_count: number;
}

export function trajectoryRow(t: Trajectory): TrajectoryRow {
  return {
    trajectory_id: t.trajectory_id,
    source: t.metadata.source,
    source_id: t.source_id,
    task_description: t.task_description,
    final_outcome: t.final_outcome,
    created_at: t.created_at,
    json: JSON.stringify(t),
    step_count: t.steps.length,
    failure_count: t.failure_summary.total_failures,
  };
}

const SEP = '\u001f';
export const sourceKey = (row: Pick<TrajectoryRow, 'source' | 'source_id'>): string | undefined =>
  row.source_id === null ? undefined : row.source + SEP + row.source_id;

/**
 * The batch's rows, each id and each (source, source_id) once (first wins), checked before any
 * store touches its state so a bad batch changes nothing.
 * @throws RangeError for a trajectory without an id or with an unparseable created_at.
 */
export function uniqueTrajectoryRows(trajectories: readonly Trajectory[]): TrajectoryRow[] {
  const ids = new Set<string>();
  const keys = new Set<string>();
  const rows: TrajectoryRow[] = [];
  for (const t of trajectories) {
    if (typeof t.trajectory_id !== 'string' || t.trajectory_id === '') throw new RangeError('trajectory without a trajectory_id');
    if (Number.isNaN(Date.parse(t.created_at))) throw new RangeError(`trajectory ${t.trajectory_id} has an invalid created_at: ${JSON.stringify(t.created_at)}`);
    const row = trajectoryRow(t);
    const key = sourceKey(row);
    if (ids.has(row.trajectory_id) || (key !== undefined && keys.has(key))) continue;
    ids.add(row.trajectory_id);
    if (key !== undefined) keys.add(key);
    rows.push(row);
  }
  return rows;
}

/** Whether `store` keeps trajectories (all three adapters do; wrappers and test doubles may not). */
export function hasTrajectoryStore<S extends Partial<TrajectoryStore>>(store: S): store is S & TrajectoryStore {
  return (
    typeof store.insertTrajectories === 'function' &&
    typeof store.updateTrajectories === 'function' &&
    typeof store.getTrajectory === 'function' &&
    typeof store.queryTrajectories === 'function' &&
    typeof store.countTrajectories === 'function'
  );
}
