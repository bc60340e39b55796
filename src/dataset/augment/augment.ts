/**
 * Trajectory augmentation (`faultline augment`): deterministic variants of each failure
 * trajectory (one with at least one failed call) that keep its failure pattern: the same
 * statuses, taxonomies, error codes, decisions, correctness and label names, step for step.
 *
 * Kinds: `rename` (tool and field names, rename.ts), `domain` (another domain's tools and
 * fields, domain.ts), `perturb` (values, perturb.ts). Every variant is a new trajectory:
 *
 * - `metadata.source` is `augmented` and `metadata.augmentation` says which trajectory it was
 *   made from (`source_trajectory_id`, `source_source`), how (`kind`, `seed`, `variant`,
 *   `target_domain` for domain variants, `llm_model` when an LLM rewrote its texts);
 * - `source_id` is `<source trajectory id>:<kind>:<seed>:<variant>` (`…:llm:<model>` when
 *   rewritten), and `trajectory_id` is derived from it as importers derive theirs, so running
 *   augment again stores nothing new (the stores skip known ids);
 * - `metadata.human_verified` is false (a person checked the original, not the variant), and
 *   `source_ref` is dropped (it pointed into the original log).
 *
 * The same trajectory, kind, seed and variant number always give a byte-identical variant.
 * Variants are never augmented again.
 */
import { trajectoryIdOf } from '../../trajectory/assemble.js';
import type { AugmentationTag, Trajectory } from '../../core/trajectory-types.js';
import { domainPlan } from './domain.js';
import { perturbPlan } from './perturb.js';
import { renamePlan } from './rename.js';
import { applyPlan, type VariantPlan } from './variant-plan.js';

export type AugmentKind = AugmentationTag['kind'];

export const AUGMENT_KINDS: readonly AugmentKind[] = ['rename', 'domain', 'perturb'];

export interface AugmentOptions {
  kinds: readonly AugmentKind[];
  /** Variants per kind. */
  variants: number;
  seed: number;
}

/** A trajectory augmentation applies to: one with a failed call that is not itself a variant. */
export function isAugmentable(trajectory: Trajectory): boolean {
  return trajectory.metadata.source !== 'augmented' && trajectory.steps.some((s) => s.status !== null && s.status !== 'success');
}

/** The id a variant is stored under. */
export function variantSourceId(trajectoryId: string, kind: AugmentKind, seed: number, variant: number, llmModel?: string): string {
  return `${trajectoryId}:${kind}:${seed}:${variant}${llmModel === undefined ? '' : `:llm:${llmModel}`}`;
}

/** Ids and tags a variant made from `original` gets, `llmModel` set when its texts were rewritten. */
export function tagVariant(variant: Trajectory, original: Trajectory, tag: Omit<AugmentationTag, 'source_trajectory_id' | 'source_source'>): Trajectory {
  const sourceId = variantSourceId(original.trajectory_id, tag.kind, tag.seed, tag.variant, tag.llm_model);
  const augmentation: AugmentationTag = { source_trajectory_id: original.trajectory_id, source_source: original.metadata.source, ...tag };
  return {
    ...variant,
    trajectory_id: trajectoryIdOf('augmented', sourceId, () => sourceId),
    source_id: sourceId,
    metadata: { ...variant.metadata, source: 'augmented', human_verified: false, augmentation },
  };
}

/** The `variant`-th (from 1) variant of `kind` of the trajectory. */
export function augmentTrajectory(trajectory: Trajectory, kind: AugmentKind, seed: number, variant: number): Trajectory {
  let plan: VariantPlan;
  let targetDomain: string | undefined;
  if (kind === 'rename') plan = renamePlan(trajectory, seed, variant);
  else if (kind === 'perturb') plan = perturbPlan(trajectory, seed, variant);
  else ({ plan, target: targetDomain } = domainPlan(trajectory, seed, variant));
  const rewritten = applyPlan(trajectory, plan);
  if (targetDomain !== undefined) rewritten.metadata.domain = targetDomain;
  return tagVariant(rewritten, trajectory, { kind, seed, variant, ...(targetDomain === undefined ? {} : { target_domain: targetDomain }) });
}

/** Every variant `options` asks for, kind by kind, variant 1 first; none for a trajectory that is not augmentable. */
export function variantsOf(trajectory: Trajectory, options: AugmentOptions): Trajectory[] {
  if (!isAugmentable(trajectory)) return [];
  const out: Trajectory[] = [];
  for (const kind of options.kinds) for (let v = 1; v <= options.variants; v++) out.push(augmentTrajectory(trajectory, kind, options.seed, v));
  return out;
}
