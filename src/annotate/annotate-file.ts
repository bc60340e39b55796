/**
 * Annotation of a log file without a store (`faultline annotate --input`): the file streams
 * through its importer, and each trajectory through the rules, the semantic judge and the outcome
 * backtrace as it comes, so memory holds one trajectory (and the importer's own state: see
 * DESIGN.md "Importers and annotation") whatever the file size. `rare_failure` marks a failure signature's first
 * occurrence in the file, in file order (the index keeps one entry per distinct signature).
 */
import { readTrajectories, type ReadTrajectoriesOptions } from '../trajectory/import-file.js';
import type { ImportFormat } from '../trajectory/importers/import-types.js';
import { annotateJudged, heuristicSemanticJudge, type JudgedAnnotation, type SemanticJudge, type SyncSemanticJudge } from './judge/judged-annotation.js';
import { RareFailureIndex } from './rare-failure.js';

/** `--judge none`: no semantic judge, only the rules, rare failures and the backtrace. */
export const NO_SEMANTIC_JUDGE: SyncSemanticJudge = { source: 'none', judgeTrajectory: () => ({ labels: [], errors: [] }) };

export interface AnnotateFileOptions extends ReadTrajectoriesOptions {
  /** Default: the offline heuristic judge, as `faultline annotate` uses. */
  judge?: SemanticJudge;
  /** Where failure signatures were first seen. Default: a new index, so "first" means first in this file. */
  rare?: RareFailureIndex;
}

/**
 * Each trajectory of `path` in `format`, annotated, in file order. The file is read only as
 * fast as the results are consumed.
 * @throws ImportInputError for a malformed line under `strict`, or an input not in the format.
 */
export async function* annotateFile(format: ImportFormat, path: string, options: AnnotateFileOptions = {}): AsyncGenerator<JudgedAnnotation> {
  const { judge = heuristicSemanticJudge(), rare = new RareFailureIndex(), ...readOptions } = options;
  for await (const trajectory of readTrajectories(format, path, readOptions)) yield await annotateJudged(trajectory, judge, rare);
}
