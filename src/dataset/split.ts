/**
 * The train/validation split: by trajectory, from a hash of its id and the seed, so one
 * trajectory's examples never land on both sides and the same seed always gives the same split.
 */
import { createHash } from 'node:crypto';
import type { Trajectory } from '../core/trajectory-types.js';

export type Split = 'train' | 'validation';

/**
 * A number in [0, 1) fixed by `trajectoryId` and `seed`: the first 48 bits of
 * sha256(`${seed}:${trajectoryId}`).
 */
export function splitPoint(trajectoryId: string, seed: number): number {
  const digest = createHash('sha256').update(`${seed}:${trajectoryId}`).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

/**
 * Which side a trajectory belongs to: validation when its split point is below `valFraction`.
 * @example splitOf('traj_1', 0, 0.1) // 'train' or 'validation', the same on every run
 */
export function splitOf(trajectoryId: string, seed: number, valFraction: number): Split {
  return splitPoint(trajectoryId, seed) < valFraction ? 'validation' : 'train';
}

/**
 * The id a trajectory is split by: its own, or for an augmented variant (`faultline augment`)
 * the id of the trajectory it was made from, so a variant always lands beside its source and
 * the same failure never shows up on both sides.
 */
export function splitKeyOf(trajectory: Trajectory): string {
  return trajectory.metadata.augmentation?.source_trajectory_id ?? trajectory.trajectory_id;
}
