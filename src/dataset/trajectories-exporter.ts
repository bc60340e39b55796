/**
 * `--format trajectories`: the trajectories themselves, the trajectory JSON of DESIGN.md, one per line
 * (JSONL rather than one JSON array, so an export streams and a reader can stop anywhere).
 *
 * Each line is a {@link Trajectory} exactly as stored: `trajectory_id`, `source_id`,
 * `task_description`, `final_outcome` and `outcome_basis` (stated, inferred or unstated),
 * `created_at`, `steps[]` (each with `step_index`, `tool_name`, `input_params`, `response`,
 * `status`, both taxonomies, `agent_decision`, `decision_correctness`, `correctness_reason`,
 * `correct_action`, and where the source has them `intent`, `agent_observation` and
 * `failure_evidence`), `failure_summary`, `metadata`, and `labels` once annotated.
 */
import type { Trajectory } from '../core/trajectory-types.js';
import type { Exporter } from './exporter.js';

export const exportTrajectory: Exporter<Trajectory> = (trajectory) => ({ examples: [trajectory] });
