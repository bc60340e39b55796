/**
 * What `faultline annotate --input` writes, for a run of consecutive trajectories: their `--json`
 * lines, their `--out` lines, and the counts its summary reports. Built in the same way by the
 * one-thread path and by the parallel annotator's workers, so both write the same bytes; a worker
 * renders its block and the main thread only adds what depends on file order (rare failures) with
 * {@link withRareLabels}.
 */
import type { FinalOutcome, OutcomeSource, Trajectory, TrajectoryLabel } from '../core/trajectory-types.js';

/** One `--json` line: the same shape as `annotate --db --json`. */
export interface AnnotateJsonLine {
  trajectory_id: string;
  source_id: string | null;
  outcome: FinalOutcome;
  /** Whether the log stated the outcome, the judge inferred it from the final answer, or neither knows it. */
  outcome_source: OutcomeSource;
  labels: { name: string; step_index: number; confidence: number }[];
}

/** What a `--json` line and the tally read of an annotated trajectory. */
export type AnnotatedTrajectory = Pick<Trajectory, 'trajectory_id' | 'source_id' | 'final_outcome' | 'outcome_basis'>;

/** How a trajectory's outcome is known; one stored before bases were kept reads as stated unless unknown. */
export function outcomeSourceOf(t: Pick<Trajectory, 'final_outcome' | 'outcome_basis'>): OutcomeSource {
  return t.outcome_basis?.source ?? (t.final_outcome === 'unknown' ? 'unstated' : 'stated');
}

/** Which lines to render. */
export interface AnnotatedLinesOptions {
  /** `--json` lines. */
  json: boolean;
  /** `--out` lines (needs each trajectory's JSON). */
  out: boolean;
}

/** The labels as stored are ordered by step, then name (`annotateJudged`); the rare ones are added in the same order. */
export const byStepThenName = (a: Pick<TrajectoryLabel, 'step_index' | 'name'>, b: Pick<TrajectoryLabel, 'step_index' | 'name'>): number =>
  a.step_index - b.step_index || a.name.localeCompare(b.name);

const jsonLabel = (l: TrajectoryLabel) => ({ name: l.name, step_index: l.step_index, confidence: l.confidence });

export function jsonLineOf(t: AnnotatedTrajectory, labels: readonly TrajectoryLabel[]): string {
  const line: AnnotateJsonLine = { trajectory_id: t.trajectory_id, source_id: t.source_id, outcome: t.final_outcome, outcome_source: outcomeSourceOf(t), labels: labels.map(jsonLabel) };
  return `${JSON.stringify(line)}\n`;
}

/** An annotated trajectory's `--out` line: its JSON with the labels added last, as `{ ...trajectory, labels }` would give. */
export function outLineOf(trajectoryJson: string, labels: readonly TrajectoryLabel[]): string {
  return `${trajectoryJson.slice(0, -1)},"labels":${JSON.stringify(labels)}}\n`;
}

// Both kinds of line end with the labels array: `..."labels":[...]}\n`. Inside JSON strings every
// quote is escaped, and the labels are the last top-level key, so the last match is theirs.
const LABELS_KEY = ',"labels":[';

/**
 * A rendered line with `rare` labels merged into its labels, as if they had been there when it
 * was rendered: `--json` lines get them projected, `--out` lines in full, both sorted as stored.
 */
export function withRareLabels(line: string, rare: readonly TrajectoryLabel[], kind: 'json' | 'out'): string {
  const at = line.lastIndexOf(LABELS_KEY);
  if (at < 0 || !line.endsWith(']}\n')) throw new Error('not an annotated line');
  const labels = JSON.parse(line.slice(at + LABELS_KEY.length - 1, -2)) as TrajectoryLabel[];
  // Stable sort of the sorted labels with the new ones after them: the order a sort of all of them gives.
  const merged = [...labels, ...rare.map(kind === 'json' ? jsonLabel : (l) => l)].sort(byStepThenName);
  return `${line.slice(0, at)},"labels":${JSON.stringify(merged)}}\n`;
}

/** Counts of the summary (`annotate --input` without `--json`). */
export interface AnnotationTally {
  trajectories: number;
  /** Trajectories with at least one label. */
  labelled: number;
  /** Decisions the backtrace marked. */
  marks: number;
  /** Labels per name, names in order of first appearance. */
  counts: Map<string, number>;
  /** Trajectories by how their outcome is known. */
  outcomes: Record<OutcomeSource, number>;
}

export const emptyTally = (): AnnotationTally => ({ trajectories: 0, labelled: 0, marks: 0, counts: new Map(), outcomes: { stated: 0, inferred: 0, unstated: 0 } });

export function addLabelCounts(tally: AnnotationTally, labels: readonly Pick<TrajectoryLabel, 'name'>[]): void {
  for (const label of labels) tally.counts.set(label.name, (tally.counts.get(label.name) ?? 0) + 1);
}

/** Adds `more` (the tally of later trajectories) to `into`. */
export function addTally(into: AnnotationTally, more: AnnotationTally): void {
  into.trajectories += more.trajectories;
  into.labelled += more.labelled;
  into.marks += more.marks;
  for (const [name, n] of more.counts) into.counts.set(name, (into.counts.get(name) ?? 0) + n);
  into.outcomes.stated += more.outcomes.stated;
  into.outcomes.inferred += more.outcomes.inferred;
  into.outcomes.unstated += more.outcomes.unstated;
}

/**
 * The lines and tally of consecutive annotated trajectories, with where each trajectory's lines
 * end (so that one can be replaced, or the run cut where a skipped line falls).
 */
export class AnnotatedLines {
  json = '';
  out = '';
  readonly jsonEnds: number[] = [];
  readonly outEnds: number[] = [];
  readonly tally: AnnotationTally = emptyTally();

  constructor(readonly options: AnnotatedLinesOptions) {}

  get length(): number {
    return this.tally.trajectories;
  }

  /** Adds one trajectory: its ids and outcome, its labels as stored, its marks, and its JSON when `--out` lines are rendered. */
  add(trajectory: AnnotatedTrajectory, labels: readonly TrajectoryLabel[], marks: number, trajectoryJson?: string): void {
    const t = this.tally;
    t.trajectories += 1;
    t.marks += marks;
    t.outcomes[outcomeSourceOf(trajectory)] += 1;
    if (labels.length > 0) t.labelled += 1;
    addLabelCounts(t, labels);
    if (this.options.json) {
      this.json += jsonLineOf(trajectory, labels);
      this.jsonEnds.push(this.json.length);
    }
    if (this.options.out) {
      if (trajectoryJson === undefined) throw new Error('--out lines need the trajectory JSON');
      this.out += outLineOf(trajectoryJson, labels);
      this.outEnds.push(this.out.length);
    }
  }
}
